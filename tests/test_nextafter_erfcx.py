"""torch.nextafter and torch.special.erfcx (each added as one record and one derivative row, see
docs/adding_an_op.md) against PyTorch on cpu, cpu-pure and webgpu: values (bit for bit for nextafter,
subnormals and float16 steps included; erfcx far past where exp(x^2) erfc(x) overflows), specials,
gradients, errors."""
import math

import numpy as np
import pytest
import torch
from core_util import skip_unsupported, to_wt

import webtorch as wt

SPECIALS = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 1e-30, -3.0, 65504.0, 6e-8]
ERFCX_X = np.concatenate([np.linspace(-9, 40, 200), [0.0, -0.0, 2.4999, 2.5, 2.5001, 1e4, 1e30, -26.0, -27.0, -1e3,
                                                      math.inf, -math.inf, math.nan]])


def bits_equal(w, t):
    a, b = w.cpu().numpy(), t.numpy()
    assert a.dtype == b.dtype and a.shape == b.shape
    same = (a.view(f"u{a.itemsize}") == b.view(f"u{b.itemsize}")) | (np.isnan(a) & np.isnan(b))
    assert same.all(), f"{a[~same]} vs torch {b[~same]} at {np.nonzero(~same)}"


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_nextafter_bit_for_bit(device, dtype):
    skip_unsupported(device, dtype)
    x = np.array(SPECIALS, np.float64).astype(dtype)
    a, b = x.reshape(-1, 1), x.reshape(1, -1)            # every pair
    want = torch.nextafter(torch.from_numpy(a), torch.from_numpy(b))
    bits_equal(wt.nextafter(to_wt(a, device), to_wt(b, device)), want)
    bits_equal(to_wt(a, device).nextafter(to_wt(b, device)), want)


def test_nextafter_gradient_and_errors(device):
    a = torch.tensor([1.0, 2.0, -3.0, 0.5], requires_grad=True)
    b = torch.tensor([2.0, 2.0, -4.0, 0.5], requires_grad=True)
    x, y = to_wt(a, device).requires_grad_(), to_wt(b, device).requires_grad_()
    r, w = torch.nextafter(a, b), wt.nextafter(x, y)
    assert w.grad_fn.name() == r.grad_fn.name() == "NextafterBackward0"
    (r * torch.arange(4.0)).sum().backward()
    (w * wt.arange(4.0, device=device)).sum().backward()
    np.testing.assert_array_equal(x.grad.cpu().numpy(), a.grad.numpy())  # g where a != b, else 0
    np.testing.assert_array_equal(y.grad.cpu().numpy(), b.grad.numpy())  # zeros
    with pytest.raises(NotImplementedError, match="\"nextafter_cpu\" not implemented for 'Long'"):
        wt.nextafter(wt.tensor([1], device=device), wt.tensor([2], device=device))
    with pytest.raises(TypeError):
        wt.nextafter(x, 2.0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_erfcx_values(device, dtype):
    skip_unsupported(device, dtype)
    x = ERFCX_X.astype(dtype)
    want = torch.special.erfcx(torch.from_numpy(x)).numpy()
    got = wt.special.erfcx(to_wt(x, device)).cpu().numpy()
    # float32: x^2 rounds (PyTorch computes in float32): 8e-6 relative at x = -9
    rtol = {"float32": 3e-5 if device == "webgpu" else 1e-5, "float64": 1e-13}[dtype]
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0)
    assert got.dtype == want.dtype


def test_erfcx_gradient_dtypes_and_errors(device):
    a = torch.tensor([-5.0, -1.0, 0.0, 1.0, 2.5, 3.0, 30.0, 1e4], requires_grad=True)
    x = to_wt(a, device).requires_grad_()
    r, w = torch.special.erfcx(a), wt.special.erfcx(x)
    assert w.grad_fn.name() == r.grad_fn.name() == "SpecialErfcxBackward0"
    r.sum().backward()
    w.sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), a.grad.numpy(), rtol=1e-4, atol=1e-6)
    assert wt.special.erfcx(wt.tensor([1, 2], device=device)).dtype == wt.float32  # integers: the default float
    assert not hasattr(wt, "erfcx") and not hasattr(wt.Tensor, "erfcx")        # torch.special only
    with pytest.raises(NotImplementedError, match="\"erfcx_cpu\" not implemented for 'Half'"):
        wt.special.erfcx(wt.tensor([1.0], dtype=wt.float16))


def test_gradcheck_float64():
    x = wt.tensor([-2.0, -0.5, 0.3, 2.4, 2.6, 7.0], dtype=wt.float64, requires_grad=True)
    assert wt.autograd.gradcheck(wt.special.erfcx, (x,))
    assert wt.autograd.gradgradcheck(wt.special.erfcx, (x,))
    y = wt.tensor([1.0, 0.0, -1.0, 3.0, 2.0, 8.0], dtype=wt.float64, requires_grad=True)
    assert wt.autograd.gradcheck(wt.nextafter, (x, y))
