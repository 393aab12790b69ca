"""Gradients of every differentiable op equal PyTorch's: same inputs, a random cotangent,
`autograd.grad` in both libraries, on every device (float32)."""
import zlib

import numpy as np
import pytest
import torch

import webtorch as wt
from _autograd_cases import CASES, build, float_outputs


def _grads(T, case, device):
    args, leaves = build(T, case, device, T.float32)
    outs = float_outputs(case.fn(T, *args))
    rng = np.random.RandomState(zlib.crc32(case.name.encode()) + 1)
    cots = [T.tensor(rng.standard_normal(tuple(o.shape)).tolist(), dtype=T.float32, device=device)
            for o in outs]
    grads = T.autograd.grad(outs, leaves, cots, allow_unused=True)
    return outs, grads


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_grad_matches_torch(case, device):
    t_outs, expected = _grads(torch, case, "cpu")
    w_outs, got = _grads(wt, case, device)
    assert len(w_outs) == len(t_outs)
    for w, t in zip(w_outs, t_outs):
        assert tuple(w.shape) == tuple(t.shape)
        np.testing.assert_allclose(np.array(w.detach().cpu().tolist()), t.detach().numpy(), rtol=1e-4, atol=1e-4)
    for k, (g, e) in enumerate(zip(got, expected)):
        if e is None:
            assert g is None or not np.any(np.array(g.cpu().tolist())), f"input {k}: torch gives no gradient"
            continue
        assert g is not None, f"input {k}: webtorch gives no gradient"
        assert tuple(g.shape) == tuple(e.shape), f"input {k}"
        assert g.dtype is wt.float32 and g.device.type == wt.device(device).type
        np.testing.assert_allclose(np.array(g.cpu().tolist()), e.numpy(force=True), rtol=1e-3, atol=1e-4,
                                   err_msg=f"gradient of input {k}")
