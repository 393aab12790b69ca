"""complex64 on every device against PyTorch (the `device` fixture: numpy cpu, pure-Python cpu, webgpu): storage
(to/from cpu, printing, views sharing memory), element-wise math, sum/mean/cumsum/cumprod/matmul/indexing, errors
naming the op, and torch.fft with each norm, forward and gradient; on webgpu the FFT's WGSL kernels each (rows in one
dispatch per thread or per workgroup, four-step, one pass per dispatch, Bluestein).

Tolerances (float32): element-wise 2e-6 relative to |z| plus 1e-6 (a few ulps of each part: WGSL's f32 sin/cos/exp
keep ~1e-7 relative); FFT: max |error| <= log2(n) * eps * max |X| (eps = 2^-23 = 1.19e-7: a radix-2 transform's
rounding grows with its log2(n) passes; measured 2-4x below), Bluestein over its size m >= 2n - 1."""
import math

import pytest
import torch

import webtorch as wt

EPS = 2.0 ** -23


def _z(shape, seed=0, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return torch.complex(torch.randn(shape, generator=g), torch.randn(shape, generator=g)) * scale


def _on(t, device):
    return wt.tensor(t.detach().numpy()).to(device)


def _back(t):
    return torch.from_numpy(t.detach().cpu().numpy())


def _close(got, want, rtol=2e-6, atol=1e-6):
    assert repr(got.dtype) == repr(want.dtype), got.dtype
    assert tuple(got.shape) == tuple(want.shape)
    torch.testing.assert_close(_back(got), want.resolve_conj(), rtol=rtol, atol=atol, equal_nan=True)


def test_storage_printing_and_views(device):
    z = _z((2, 3))
    g = _on(z, device)
    assert repr(g.dtype) == "torch.complex64" and g.is_complex() and g.device.type == device
    assert g.tolist() == z.tolist() and _back(g).equal(z) and g.cpu().dtype is wt.complex64
    suffix = ", device='webgpu:0'" if device == "webgpu" else ""
    assert repr(wt.tensor([1 + 2j, 3 - 0.5j], device=device)) == f"tensor([1.+2.0000j, 3.-0.5000j]{suffix})"
    assert wt.zeros(2, dtype=wt.complex64, device=device).tolist() == [0j, 0j]
    assert wt.full((2,), 1 - 1j, device=device).tolist() == [1 - 1j] * 2
    # real / imag / view_as_real / view_as_complex are views of the same buffer
    g.real[0, 1] = 7.0
    g.imag.mul_(2)
    z.real[0, 1] = 7.0
    z.imag.mul_(2)
    _close(g, z)
    r = wt.view_as_real(g)
    r[1, 2, 1] = -3.0
    z.imag[1, 2] = -3.0
    _close(g, z)
    _close(wt.view_as_complex(r.transpose(0, 1).contiguous()), torch.view_as_complex(torch.view_as_real(z)
                                                                                     .transpose(0, 1).contiguous()))
    _close(g.t(), z.t())
    _close(g[:, 1:].contiguous(), z[:, 1:].contiguous())
    _close(wt.complex(g.real, g.imag), z)
    _close(wt.ones(3, device="webgpu").to(wt.complex64), torch.ones(3).to(torch.complex64))
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        _close(g.to(wt.float32), z.real.contiguous())


UNARY = ["neg", "conj", "abs", "angle", "exp", "log", "log2", "sqrt", "rsqrt", "sigmoid", "sin", "cos", "tan",
         "sinh", "cosh", "tanh", "isnan", "isfinite", "expm1", "log1p", "asin", "acos", "atan", "asinh", "acosh",
         "atanh"]


@pytest.mark.parametrize("name", UNARY)
def test_unary(name, device):
    z = _z((5, 4), scale=0.8)
    _close(getattr(_on(z, device), name)(), getattr(z, name)(), rtol=1e-5, atol=1e-5)


BINARY = ["add", "sub", "mul", "div", "pow", "eq", "ne"]


@pytest.mark.parametrize("name", BINARY)
def test_binary_broadcast_and_scalars(name, device):
    a, b = _z((4, 3), 1), _z((3,), 2)
    ga, gb = _on(a, device), _on(b, device)
    _close(getattr(ga, name)(gb), getattr(a, name)(b), rtol=1e-5, atol=1e-5)
    _close(getattr(ga, name)(2 - 1j), getattr(a, name)(2 - 1j), rtol=1e-5, atol=1e-5)
    r = b.real.contiguous()  # a real operand promotes to complex
    _close(getattr(ga, name)(_on(r, device)), getattr(a, name)(r), rtol=1e-5, atol=1e-5)


def test_scalar_powers_as_pytorch(device):
    """A complex tensor ** 2 or 3 is PyTorch's products (exact where they are, not exp(e log z)), ** 0.5 its sqrt."""
    z = torch.tensor([1 + 1j, 0.3 - 2j, 1j, -4 + 0j])
    g = _on(z, device)
    for e in (2, 3):
        assert _back(g ** e).equal(z ** e), e
    for e in (0.5, -0.5, -1, -2, 2.5, 2j):
        _close(g ** e, z ** e, rtol=1e-6, atol=1e-7)


def test_special_values(device):
    z = torch.tensor([complex(math.inf, 0), complex(0, 0), complex(-0.0, -0.0), complex(math.nan, 1),
                      complex(-4, -0.0), complex(1e30, 1e30)])
    g = _on(z, device)
    for name in ("abs", "exp", "sqrt", "isnan", "isfinite"):
        _close(getattr(g, name)(), getattr(z, name)())
    _close(g * 0.5, z * 0.5)
    z = torch.tensor([0j, 1 + 1j, -2j])
    g = _on(z, device)
    for f in (lambda t: t ** 2, lambda t: t / 0, lambda t: t.rsqrt(), lambda t: t.log()):
        _close(f(g), f(z))


def test_reductions_matmul_cumsum_indexing(device):
    a, b = _z((2, 3, 4), 3), _z((2, 4, 5), 4)
    ga, gb = _on(a, device), _on(b, device)
    _close(ga.sum(), a.sum(), rtol=1e-5, atol=1e-5)
    _close(ga.sum(1), a.sum(1), rtol=1e-5, atol=1e-5)
    _close(ga.mean((0, 2), keepdim=True), a.mean((0, 2), keepdim=True), rtol=1e-5, atol=1e-5)
    _close(ga @ gb, a @ b, rtol=1e-5, atol=1e-5)
    _close(ga[0].mT @ ga[1], a[0].mT @ a[1], rtol=1e-5, atol=1e-5)
    _close(ga.cumsum(-1), a.cumsum(-1), rtol=1e-5, atol=1e-5)
    _close(ga.cumprod(-1), a.cumprod(-1), rtol=1e-5, atol=1e-5)
    n = torch.tensor([[complex(math.nan, 0), 0j], [0j, 0j], [0j, 1j]])
    for f in (lambda t: t.any(), lambda t: t.all(1), lambda t: t.any(0), lambda t: t != 0):   # NaN is true
        _close(f(_on(n, device)), f(n))
    _close(ga.mT.cumprod(1), a.mT.cumprod(1), rtol=1e-5, atol=1e-5)
    _close(wt.linalg.vector_norm(ga, 3, dim=1), torch.linalg.vector_norm(a, 3, dim=1), rtol=1e-5, atol=1e-5)
    _close(ga.prod(1), a.prod(1), rtol=1e-5, atol=1e-5)
    _close(ga.mT.prod(), a.mT.prod(), rtol=1e-5, atol=1e-5)
    idx = torch.tensor([2, 0, 2])
    _close(ga[:, _on(idx, device)], a[:, idx])
    _close(ga.index_select(2, _on(idx, device)), a.index_select(2, idx))
    ga[0, _on(idx, device)] = 5j
    a[0, idx] = 5j
    _close(ga, a)
    _close(wt.cat([ga, ga.conj()], 1), torch.cat([a, a.conj()], 1))


@pytest.mark.parametrize("call, exc, match", [
    (lambda g: g.to(wt.complex128), TypeError, "complex128 is not supported on webgpu"),
    (lambda g: wt.zeros(2, dtype=wt.complex128, device="webgpu"), TypeError, "complex128"),
    (lambda g: g.sort(), RuntimeError, "Sort does not support complex"),
    (lambda g: g.max(), NotImplementedError, "not implemented for complex"),
    (lambda g: g.erf(), TypeError, "erf is not supported for complex"),
])
def test_errors_name_the_op(call, exc, match, webgpu):
    with pytest.raises(exc, match=match):
        call(_on(_z((3,)), webgpu))
        wt.webgpu.synchronize()


def test_errors_pure_python(device):
    if device == "webgpu" or wt.zeros(1)._backend.numpy_buffers:
        return
    with pytest.raises(TypeError, match="cpu \\(pure Python\\): erf is not supported for complex"):
        _on(_z((3,)), device).erf()
    with pytest.raises(RuntimeError, match="Sort does not support complex"):
        _on(_z((3,)), device).sort()


@pytest.mark.parametrize("name", ["mul", "div", "abs", "exp", "sqrt", "matmul", "asin", "acosh", "atan", "log1p"])
def test_gradients(name, device):
    a, b = _z((3, 3), 5), _z((3, 3), 6)
    ga, gb = _on(a, device).requires_grad_(), _on(b, device).requires_grad_()
    a.requires_grad_()
    b.requires_grad_()
    fn = {"mul": lambda x, y: x * y, "div": lambda x, y: x / y, "abs": lambda x, y: x.abs() * y.real,
          "exp": lambda x, y: x.exp() * y, "sqrt": lambda x, y: x.sqrt() + y, "matmul": lambda x, y: x @ y,
          **{f: lambda x, y, f=f: getattr(x, f)() * y for f in ("asin", "acosh", "atan", "log1p")}}[name]
    got, want = fn(ga, gb), fn(a, b)
    (got.abs() ** 2).sum().backward()
    (want.abs() ** 2).sum().backward()
    _close(ga.grad, a.grad, rtol=1e-4, atol=1e-4)
    _close(gb.grad, b.grad, rtol=1e-4, atol=1e-4)


# ---- torch.fft ------------------------------------------------------------------------------------------
def _fft_tol(n, want):
    m = n if n & (n - 1) == 0 else 1 << (2 * n - 2).bit_length()   # Bluestein's transforms are of size m
    return dict(rtol=0, atol=max(1, math.log2(m)) * EPS * float(want.abs().max()) + 1e-7)


@pytest.mark.parametrize("n", [1, 3, 8, 100, 2048, 8192, 3000])
@pytest.mark.parametrize("name", ["fft", "ifft"])
def test_fft_sizes(name, n, device):
    """Every path: on webgpu one row kernel (8, 2048), four-step (8192), Bluestein (3, 100, 3000)."""
    z = _z((3, n), n)
    want = getattr(torch.fft, name)(z)
    _close(getattr(wt.fft, name)(_on(z, device)), want, **_fft_tol(n, want))


@pytest.mark.parametrize("n", [2, 8, 2048, 8192, 3000])
def test_fft_webgpu_kernels(webgpu, monkeypatch, n):
    """The kernels the adapter does not pick: on lavapipe (radix-4 passes at every size) a GPU's rows in workgroup
    memory (2, 8, 2048), its four-step (8192) and Bluestein over them (3000); and, with 64-point rows, the passes
    past 64^2 points."""
    from webtorch.backends.webgpu import fft
    plan = wt.zeros(1, device=webgpu)._backend.cx.fft
    z = _z((3, n), n)
    for passes, row_max in ((not plan.passes_only, fft.ROW_MAX), (False, 64)):
        monkeypatch.setattr(plan, "passes_only", passes)
        monkeypatch.setattr(fft, "ROW_MAX", row_max)
        for name in ("fft", "ifft"):
            want = getattr(torch.fft, name)(z)
            _close(getattr(wt.fft, name)(_on(z, webgpu)), want, **_fft_tol(n, want))


FFTS = [("fft", dict(dim=0, norm="ortho")), ("ifft", dict(n=5, norm="forward")), ("fft2", {}),
        ("ifft2", dict(s=(3, 5))), ("fftn", dict(dim=(0,), norm="forward")), ("rfft", dict(n=7)), ("irfft", {}),
        ("irfft", dict(n=7, dim=0, norm="ortho")), ("rfft2", {}), ("irfftn", dict(s=(4, 9))), ("hfft", {}),
        ("ihfft", dict(norm="ortho"))]
_REAL_IN = {"rfft", "rfft2", "rfftn", "ihfft"}


@pytest.mark.parametrize("name, kw", FFTS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(FFTS)])
def test_fft_functions_forward_and_grad(name, kw, device):
    x = _z((4, 6), 7)
    if name in _REAL_IN:
        x = x.real.contiguous()
    gx = _on(x, device).requires_grad_()
    x.requires_grad_()
    got, want = getattr(wt.fft, name)(gx, **kw), getattr(torch.fft, name)(x, **kw)
    _close(got, want, rtol=1e-5, atol=1e-5)
    assert got.grad_fn.name() == want.grad_fn.name()
    w = _z(tuple(want.shape), 8).real
    (got.abs() * _on(w, device)).sum().backward() if got.is_complex() else (got * _on(w, device)).sum().backward()
    (want.abs() * w).sum().backward() if want.is_complex() else (want * w).sum().backward()
    _close(gx.grad, x.grad, rtol=1e-4, atol=1e-4)


def test_large_and_ill_conditioned_fft_accuracy(device):
    """2^16 points of random data, and a signal whose spectrum spans 6 orders of magnitude (a unit tone beside a
    1e-6 one): the error stays within log2(n) * eps * max |X| in float32 (the small tone's bin keeps its value to
    that absolute error, as PyTorch's own float32 transform)."""
    n = 1 << 16
    z = _z((n,), 9)
    want = torch.fft.fft(z)
    _close(wt.fft.fft(_on(z, device)), want, **_fft_tol(n, want))
    t = torch.arange(4096, dtype=torch.float64)
    x = (torch.cos(2 * math.pi * 5 * t / 4096) + 1e-6 * torch.cos(2 * math.pi * 700 * t / 4096)).float()
    want = torch.fft.rfft(x.double()).to(torch.complex64)
    got = wt.fft.rfft(_on(x, device))
    _close(got, want, **_fft_tol(4096, want))
    assert abs(_back(got)[700].real - 2048e-6) < 16 * EPS * 2048
