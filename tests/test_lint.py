"""`ruff check` with pyproject's rules (pyflakes') reports nothing on py/: no undefined name, no
unused import outside a package's re-exports."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_ruff_pyflakes_clean():
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "py"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
