"""`ruff check` with pyproject's rules (pyflakes') reports nothing on py/: no undefined name, no
unused import outside a package's re-exports."""
import ast
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_ruff_pyflakes_clean():
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "py"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def _imported_modules(path, package):
    """The absolute names of the modules a file imports (relative imports resolved)."""
    names = []
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            names += [mod] + [f"{mod}.{a.name}" for a in node.names]
    return names


def test_backends_ask_nothing_of_the_front_end():
    """backends/ is the bottom layer: it imports neither optim nor nn (optim asks a backend for a
    fused step through its `fused_step` hook)."""
    top = os.path.join(ROOT, "py", "webtorch", "backends")
    bad = []
    for d, _, files in os.walk(top):
        package = "webtorch." + os.path.relpath(d, os.path.join(ROOT, "py", "webtorch")).replace(os.sep, ".")
        for f in files:
            if f.endswith(".py"):
                bad += [f"{f}: {m}" for m in _imported_modules(os.path.join(d, f), package)
                        if m.startswith(("webtorch.optim", "webtorch.nn"))]
    assert not bad, bad


# Import statements inside function bodies, per top-level package (or module) of py/webtorch: each
# is a real import cycle (commented `# cycle: A -> B -> A`) or keeps an optional dependency
# (numpy, wgpu, js/pyodide, onnx, sklearn) lazy. Lower a number when you remove one; never raise it.
FUNCTION_BODY_IMPORTS = {"__init__": 1, "_device": 2, "_dynamo": 3, "_philox": 1, "_tensor": 5, "_tensor_str": 1,
                         "accelerator": 2, "amp": 2, "autograd": 13, "backends": 21, "examples": 2, "export": 2,
                         "jit": 2, "ops": 23, "optim": 1}


def _function_body_imports():
    """{top-level package or module of py/webtorch: import statements inside a def}."""
    top = os.path.join(ROOT, "py", "webtorch")
    counts = {}
    for d, _, files in os.walk(top):
        for f in files:
            if not f.endswith(".py"):
                continue
            path = os.path.join(d, f)
            key = os.path.relpath(path, top).split(os.sep)[0].removesuffix(".py")
            inner = {id(n) for fn in ast.walk(ast.parse(open(path, encoding="utf-8").read()))
                     if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                     for n in ast.walk(fn) if isinstance(n, (ast.Import, ast.ImportFrom))}
            if inner:
                counts[key] = counts.get(key, 0) + len(inner)
    return counts


def test_function_body_imports_do_not_grow():
    counts = _function_body_imports()
    grown = {k: (FUNCTION_BODY_IMPORTS.get(k, 0), n) for k, n in sorted(counts.items())
             if n > FUNCTION_BODY_IMPORTS.get(k, 0)}
    assert not grown, (f"imports inside function bodies grew (allowed, now): {grown}; move each to module level "
                       "unless an import cycle or an optional dependency forces it")
