"""The pure-Python CPU fallback with numpy really absent (as in Pyodide offline): every
differentiable op of the core — the table in _autograd_cases.py, forward and gradient — is
computed by webtorch in a child process where `import numpy` fails, and compared here with
PyTorch on the same inputs and cotangents."""
import json
import os
import subprocess
import sys
import zlib

import numpy as np
import pytest
import torch

from _autograd_cases import CASES, build, case_arrays, float_outputs

TESTS = os.path.dirname(os.path.abspath(__file__))
PY = os.path.join(os.path.dirname(TESTS), "py")

CHILD = r"""
import json, sys
sys.modules["numpy"] = None  # `import numpy` now raises ImportError everywhere
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import webtorch as wt
from _autograd_cases import CASES, float_outputs
assert type(wt.tensor(1.0)._backend).__name__ == "PureBackend"
payload = json.load(sys.stdin)
result = {}
for case in CASES:
    if case.name not in payload:
        continue
    data = iter(payload[case.name]["inputs"])
    args, leaves = [], []
    for spec in case.args:
        if spec[0] == "f":
            t = wt.tensor(next(data), requires_grad=True)
            leaves.append(t)
            args.append(t)
        else:
            args.append(wt.tensor(spec[1], dtype=wt.int64 if spec[0] == "i" else wt.bool))
    outs = float_outputs(case.fn(wt, *args))
    cots = [wt.tensor(c) for c in payload[case.name]["cots"]]
    grads = wt.autograd.grad(outs, leaves, cots, allow_unused=True)
    result[case.name] = {"outs": [o.tolist() for o in outs],
                         "grads": [None if g is None else g.tolist() for g in grads]}
json.dump(result, sys.stdout)
"""


def _torch_side(case):
    arrays = case_arrays(case)
    args, leaves = build(torch, case, "cpu", torch.float32)
    outs = float_outputs(case.fn(torch, *args))
    rng = np.random.RandomState(zlib.crc32(case.name.encode()) + 1)
    cots = [rng.standard_normal(tuple(o.shape)).astype(np.float32) for o in outs]
    grads = torch.autograd.grad(outs, leaves, [torch.tensor(c) for c in cots], allow_unused=True)
    payload = {"inputs": [a.astype(np.float32).tolist() for a in arrays], "cots": [c.tolist() for c in cots]}
    return payload, outs, grads


@pytest.fixture(scope="module")
def results():
    payload, expected = {}, {}
    for case in CASES:
        payload[case.name], *expected[case.name] = _torch_side(case)
    env = dict(os.environ, WEBTORCH_NO_NUMPY="1")
    proc = subprocess.run([sys.executable, "-c", CHILD, PY, TESTS], input=json.dumps(payload),
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout), expected


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_op_and_gradient_without_numpy(case, results):
    got, expected = results
    outs, grads = expected[case.name]
    mine = got[case.name]
    assert len(mine["outs"]) == len(outs)
    for w, t in zip(mine["outs"], outs):
        np.testing.assert_allclose(np.array(w, dtype=np.float64).reshape(tuple(t.shape)), t.detach().numpy(),
                                   rtol=1e-4, atol=1e-4)
    for k, (g, e) in enumerate(zip(mine["grads"], grads)):
        if e is None:
            assert g is None or not np.any(np.array(g)), f"input {k}: torch gives no gradient"
            continue
        assert g is not None, f"input {k}: webtorch gives no gradient"
        np.testing.assert_allclose(np.array(g, dtype=np.float64).reshape(tuple(e.shape)), e.numpy(force=True),
                                   rtol=1e-3, atol=1e-4, err_msg=f"gradient of input {k}")
