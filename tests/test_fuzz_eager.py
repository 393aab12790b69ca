"""The differential fuzzer of eager programs (tests/fuzz_eager.py) on fixed seeds, and the minimized
programs of the mismatches it found, each compared with PyTorch on cpu, cpu-pure and webgpu.

A failure prints each minimized program as Python source; `python tests/fuzz_eager.py --device
webgpu --n 5000 --seed 1` runs a longer fuzz."""
import pytest
import torch

import webtorch as wt
from fuzz_eager import diff, fuzz, source

# programs per device: ~45 s together on 2 cores (webgpu on lavapipe is the slow one)
N = {"cpu": 150, "cpu-pure": 40, "webgpu": 50}


@pytest.fixture
def fuzz_device(request, device):
    return request.node.callspec.params["device"], device


def test_fuzz_eager(fuzz_device):
    name, device = fuzz_device
    bad, _ = fuzz(wt, device, range(N[name]))
    report = "\n\n".join(f"# seed {seed}: {msg}\n{source(lines, device)}" for seed, msg, lines in bad)
    assert not bad, f"{len(bad)} of {N[name]} programs differ from PyTorch on {name}:\n\n{report}"


# Minimized programs of mismatches the fuzzer found (fixed at their root; each must stay equal).
REGRESSIONS = [
]


@pytest.mark.parametrize("lines", REGRESSIONS, ids=lambda lines: lines[-1][:60])
def test_fuzz_regression(lines, device):
    msg = diff(lines, wt, device, torch)
    assert msg is None, f"{msg}\n{source(lines, device)}"
