"""`ruff check` with pyproject's rules (pyflakes') reports nothing on py/: no undefined name, no
unused import outside a package's re-exports."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_ruff_pyflakes_clean():
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "py"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def _imported_modules(path, package):
    """The absolute names of the modules a file imports (relative imports resolved)."""
    import ast
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
