"""The seed's examples print the same in the browser (Pyodide, WebGPU in Chromium) as natively
(CPython, WebGPU through wgpu-py, `python -m webtorch`: their `import torch` is webtorch): the same
code, the same seed, the same printed results."""
import re
import subprocess
import sys

import pytest

from pwutil import ROOT

EXAMPLES = ["01_tensor_basics", "02_autograd", "03_custom_net"]

# the playground predefines these helpers (they draw on the page); natively they draw nothing
STUBS = "show_graph = plot = plot_point = plot_clear = lambda *a, **k: None\n"


def _normalize(out):
    return re.sub(r"0x[0-9a-f]+", "0x…", out).strip()


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_prints_the_same_as_natively(name, playground, webtorch_loaded, tmp_path):
    code = (ROOT / "web" / "examples" / f"{name}.py").read_text()
    script = tmp_path / f"{name}.py"
    script.write_text(STUBS + code)
    native = subprocess.run([sys.executable, "-m", "webtorch", str(script)], capture_output=True, text=True,
                            cwd=ROOT, timeout=300, env={"PYTHONPATH": str(ROOT / "py"), "PATH": "/usr/bin:/bin"})
    assert native.returncode == 0, native.stderr
    browser = playground.run_ok(code)
    assert _normalize(browser["stdout"]) == _normalize(native.stdout)
