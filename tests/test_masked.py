"""torch.masked (all 23 names) against PyTorch on cpu, cpu-pure and webgpu: the reductions and normalizations
with mask= (fully masked-out rows included), MaskedTensor's basics (data, mask, printing, element-wise ops,
reductions, errors)."""
import math
import warnings

import numpy as np
import pytest
import torch

import webtorch as wt

X = np.array([[1.0, 5.0, 3.0, -2.0], [2.0, 0.0, 4.0, 1.5], [-1.0, 7.0, 0.5, 2.0]], np.float32)
M = np.array([[True, False, True, True], [False, False, False, False], [True, True, False, True]])
CASES = {  # name: (args after input, kwargs)
    "sum": ((1,), {}), "prod": ((1,), {}), "amax": ((1,), {}), "amin": ((0,), {"keepdim": True}),
    "argmax": ((1,), {}), "argmin": ((1,), {}), "mean": ((1,), {}), "median": ((1,), {}), "var": ((1,), {}),
    "std": ((0,), {"correction": 0}), "norm": ((2.0, 1), {}), "logsumexp": ((1,), {}), "cumsum": ((1,), {}),
    "cumprod": ((1,), {}), "softmax": ((1,), {}), "log_softmax": ((1,), {}), "softmin": ((1,), {}),
    "normalize": ((2.0, 1), {}),
}


def close(got, want):
    a, b = got.cpu().numpy().astype("float64"), want.numpy().astype("float64")
    assert a.shape == b.shape and str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", CASES)
def test_masked_ops(device, name):
    args, kw = CASES[name]
    want = getattr(torch.masked, name)(torch.from_numpy(X), *args, mask=torch.from_numpy(M), **kw)
    got = getattr(wt.masked, name)(wt.tensor(X, device=device), *args, mask=wt.tensor(M, device=device), **kw)
    close(got, want)
    close(getattr(wt.masked, name)(wt.tensor(X, device=device), *args, **kw),
          getattr(torch.masked, name)(torch.from_numpy(X), *args, **kw))
    row = wt.tensor(M[0], device=device)  # a mask broadcast over the rows
    close(getattr(wt.masked, name)(wt.tensor(X, device=device), *args, mask=row, **kw),
          getattr(torch.masked, name)(torch.from_numpy(X), *args, mask=torch.from_numpy(M[0]), **kw))


def test_masked_logaddexp_and_errors():
    a, b = torch.from_numpy(X), torch.from_numpy(X[::-1].copy())
    want = torch.masked.logaddexp(a, b, input_mask=torch.from_numpy(M), other_mask=torch.from_numpy(M[::-1].copy()))
    close(wt.masked.logaddexp(wt.tensor(X), wt.tensor(X[::-1].copy()), input_mask=wt.tensor(M),
                              other_mask=wt.tensor(M[::-1].copy())), want)
    assert sorted(wt.masked.__all__) == sorted(torch.masked.__all__)
    with pytest.raises(ValueError, match="mean\\(\\): Could not infer output dtype"):
        wt.masked.mean(wt.tensor([1, 2]), mask=wt.tensor([True, False]))
    with pytest.raises(IndexError, match="expected broadcastable mask"):
        wt.masked.sum(wt.tensor([1.0, 2.0]), mask=wt.tensor([[True, False]]))
    with pytest.raises(RuntimeError, match="dim=1 appears multiple times"):
        wt.masked.sum(wt.tensor(X), (1, 1), mask=wt.tensor(M))


def test_masked_tensor(device):
    warnings.simplefilter("ignore")  # PyTorch's prototype warning
    d, m = X[:2, :3], M[:2, :3]
    t = torch.masked.masked_tensor(torch.from_numpy(d), torch.from_numpy(m))
    w = wt.masked.masked_tensor(wt.tensor(d, device=device), wt.tensor(m, device=device))
    assert wt.masked.is_masked_tensor(w) and not wt.masked.is_masked_tensor(wt.tensor(d))
    assert repr(w) == repr(t)
    for f in (lambda v: v.sum(), lambda v: v.sum(1), lambda v: v.amax(0), lambda v: v.mean(), lambda v: v * 2 + v,
              lambda v: v.sin(), lambda v: -v, lambda v: v / 4.0):
        assert repr(f(w)) == repr(f(t))
    close(w.to_tensor(0.0), t.to_tensor(0.0))
    close(w.get_mask(), t.get_mask())
    close(wt.masked.as_masked_tensor(wt.tensor(d, device=device), wt.tensor(m, device=device)).get_data(),
          t.get_data())
    with pytest.raises(ValueError, match="Input masks must match"):
        w + wt.masked.masked_tensor(wt.tensor(d, device=device), ~wt.tensor(m, device=device))
    with pytest.raises(TypeError, match="mask must have dtype bool."):
        wt.masked.masked_tensor(wt.tensor(d), wt.tensor(m).int())
    with pytest.raises(ValueError, match="data.dim\\(\\) must equal mask.dim\\(\\)"):
        wt.masked.masked_tensor(wt.tensor(d), wt.tensor(m[0]))
    assert math.isclose(float(w.sum().get_data()), float(t.sum().get_data()), rel_tol=1e-6)
