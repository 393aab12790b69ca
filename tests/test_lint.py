"""`ruff check` with pyproject's rules reports nothing on py/: pyflakes (no undefined name, no unused import outside
a package's re-exports), pycodestyle's errors and warnings (lines up to 120), isort's import order, bugbear, and a
McCabe complexity of at most 15 per function. The import graph of py/webtorch, computed from the code, has no
circle, and a function body imports only optional dependencies."""
import ast
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_ruff_clean():
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "py"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


ABOVE_BACKENDS = ("webtorch.optim", "webtorch.nn", "webtorch._tensor", "webtorch.ops", "webtorch.autograd",
                  "webtorch.amp", "webtorch.random", "webtorch._device", "webtorch.webgpu", "webtorch.sparse")


def test_backends_ask_nothing_of_the_front_end():
    """backends/ is the bottom layer: it knows buffers, strides and kernels, never a Tensor. It imports none of the
    layers above (optim asks a backend for a fused step through its `fused_step` hook; webtorch.webgpu attaches
    the tensor-level kernels through `backends.webgpu.extend`)."""
    bad = [f"{m}: {t}" for m, targets in _imports()[0].items() if m.startswith("webtorch.backends")
           for t in targets if t.startswith(ABOVE_BACKENDS)]
    assert not bad, bad


def _modules():
    """{dotted name of each py/webtorch module: (its path, the package its relative imports start from)}."""
    top = os.path.join(ROOT, "py")
    mods = {}
    for d, _, files in os.walk(os.path.join(top, "webtorch")):
        for f in files:
            if f.endswith(".py"):
                name = os.path.relpath(os.path.join(d, f), top)[:-3].replace(os.sep, ".").removesuffix(".__init__")
                mods[name] = (os.path.join(d, f), name if f == "__init__.py" else name.rpartition(".")[0])
    return mods


def _imports():
    """(edges {module: modules of py/webtorch it imports}, [(module, names it imports) of each import statement
    inside a function body]); `from a import b` counts as an import of a.b when that is a module, else of a."""
    mods = _modules()
    edges, inner = {}, []
    for m, (path, package) in mods.items():
        tree = ast.parse(open(path, encoding="utf-8").read())
        in_def = {id(n) for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                  for n in ast.walk(fn) if isinstance(n, (ast.Import, ast.ImportFrom))}
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            targets = _imported_modules_of(node, package, mods)
            if id(node) in in_def:
                inner.append((m, targets))
            for t in targets:
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                if t and t != m:
                    edges.setdefault(m, set()).add(t)
    return edges, inner


def _imported_modules_of(node, package, mods):
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
    mod = ".".join(base + ([node.module] if node.module else []))
    return [f"{mod}.{a.name}" if f"{mod}.{a.name}" in mods else mod for a in node.names]


def _circles(edges):
    """The strongly connected components of more than one module (Tarjan's, iterative)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while not comp or v not in comp:
                        comp.add(stack.pop())
                    on.difference_update(comp)
                    if len(comp) > 1:
                        out.append(comp)
            elif w not in index:
                index[w] = low[w] = len(index)
                stack.append(w)
                on.add(w)
                work.append((w, iter(sorted(edges.get(w, ())))))
            elif w in on:
                low[v] = min(low[v], index[w])
    return out


# The layers import one way: API -> ops -> autograd -> backends -> drivers (docs/layers.md): no import circle.
def test_no_import_circle():
    circles = [sorted(c) for c in _circles(_imports()[0])]
    assert not circles, f"import circles (break them: layers import one way): {circles}"


# Imports inside a function body keep an optional dependency lazy; nothing else belongs there (an import cycle is
# broken by moving code to the layer that owns it, by late binding or by passing the object as an argument).
# (webtorch.backends.cpu and webtorch.serialization import numpy when present)
OPTIONAL_DEPENDENCIES = {"numpy", "wgpu", "torch", "js", "pyodide", "onnx", "onnxruntime", "sklearn",
                         "webtorch_gpu_host", "webtorch.backends.cpu", "webtorch.serialization"}


def _optional(name):
    return any(name == d or name.startswith(d + ".") for d in OPTIONAL_DEPENDENCIES)


def test_function_body_imports_only_optional_dependencies():
    inner = sorted({m for m, targets in _imports()[1] if not all(_optional(t) for t in targets)})
    assert not inner, (f"imports of webtorch's own modules inside function bodies in {inner}: move each to module "
                       f"level; only optional dependencies ({sorted(OPTIONAL_DEPENDENCIES)}) are imported lazily")
