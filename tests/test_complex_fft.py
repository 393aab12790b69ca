"""Complex tensors and torch.fft against PyTorch: dtypes and promotion, creation, printing, views sharing
memory, element-wise math, reductions, matmul, errors, gradients (PyTorch's conjugate Wirtinger convention)
and every torch.fft function with each norm, forward and gradient.

Complex tensors live on the numpy cpu backend here; the pure-Python cpu backend and (complex64) WebGPU hold them
too (tests/test_complex_devices.py)."""
import math

import pytest
import torch

import webtorch as wt

F32 = dict(rtol=1e-5, atol=1e-5)
F64 = dict(rtol=1e-10, atol=1e-10)


def _data(shape, lib, scale=1.0, dtype="float64"):
    n = math.prod(shape)
    return (lib.arange(n, dtype=getattr(lib, dtype)).reshape(shape) * scale).sin()


def _pair(shape, dtype="complex128"):
    """The same complex tensor in webtorch and torch (deterministic values)."""
    real = "float64" if dtype == "complex128" else "float32"
    out = []
    for lib in (wt, torch):
        out.append(lib.complex(_data(shape, lib, 0.9, real), _data(shape, lib, 2.3, real).cos()))
    return out


def _close(a, b, tol=F64):
    if isinstance(b, torch.Tensor):
        assert a.dtype.__repr__() == repr(b.dtype), (a.dtype, b.dtype)
        assert tuple(a.shape) == tuple(b.shape)
        b = b.resolve_conj()
        got = torch.tensor(a.detach().tolist(), dtype=b.dtype) if a.dim() else torch.tensor(a.item(), dtype=b.dtype)
        torch.testing.assert_close(got, b.detach(), equal_nan=True, **tol)
    else:
        assert a == b


def test_dtypes_and_promotion():
    for name in ("complex32", "complex64", "complex128", "cfloat", "cdouble", "chalf"):
        a, b = getattr(wt, name), getattr(torch, name)
        assert repr(a) == repr(b) and a.is_complex and not a.is_floating_point and a.itemsize == b.itemsize
        assert repr(a.to_real()) == repr(b.to_real()) and repr(wt.finfo(a).eps) == repr(torch.finfo(b).eps)
        assert wt.finfo(a).dtype == torch.finfo(b).dtype
    assert repr(wt.float32.to_complex()) == "torch.complex64" and repr(wt.bfloat16.to_complex()) == "torch.complex64"
    with pytest.raises(RuntimeError, match="Unknown Complex ScalarType for Int"):
        wt.int32.to_complex()
    names = ["bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex32", "complex64",
             "complex128"]
    for a in names:
        for b in names:
            assert repr(wt.promote_types(getattr(wt, a), getattr(wt, b))) == \
                repr(torch.promote_types(getattr(torch, a), getattr(torch, b))), (a, b)
    for dt in ("float16", "int32", "float64", "bool"):
        for other in (1j, 2.5):
            assert repr(wt.result_type(wt.ones(2, dtype=getattr(wt, dt)), other)) == \
                repr(torch.result_type(torch.ones(2, dtype=getattr(torch, dt)), other))
    assert repr(wt.result_type(wt.ones(2, dtype=wt.float64), wt.tensor(1j))) == "torch.complex128"


def test_creation_printing_and_views():
    vals = [[1 + 2j, -3.25 - 1e-3j], [0j, 1e5j]]
    for d in (None, "complex128"):
        a = wt.tensor(vals, dtype=getattr(wt, d) if d else None)
        b = torch.tensor(vals, dtype=getattr(torch, d) if d else None)
        assert repr(a) == repr(b)
    for v in ([1 + 2j, 3], 2 - 0j, [float("nan") + 1j]):
        assert repr(wt.tensor(v)) == repr(torch.tensor(v))
    for lib in (torch, wt):   # PyTorch's TypeError (it was a RuntimeError here)
        with pytest.raises(TypeError, match="must be real number, not complex"):
            lib.tensor([1j], dtype=lib.float32)
    assert wt.zeros(2, dtype=wt.complex64).tolist() == [0j, 0j]
    z = wt.zeros(3, dtype=wt.complex64)
    z.real = wt.tensor([1.0, 2, 3])
    z.imag[1] = 5
    r = wt.view_as_real(z)
    r[0, 1] = 7  # shares memory
    assert z.tolist() == [1 + 7j, 2 + 5j, 3 + 0j] and tuple(r.shape) == (3, 2)
    assert wt.view_as_complex(wt.ones(3, 2)).tolist() == [1 + 1j] * 3
    assert wt.is_complex(z) and z.is_complex() and not z.is_conj() and z.resolve_conj() is z
    x = wt.ones(2)
    assert wt.conj(x) is x and wt.real(x) is x


@pytest.mark.parametrize("call, kind", [
    (lambda lib: lib.view_as_real(lib.ones(2)), RuntimeError),
    (lambda lib: lib.view_as_complex(lib.ones(2, 3)), RuntimeError),
    (lambda lib: lib.view_as_complex(lib.ones(2, 2).t()), RuntimeError),
    (lambda lib: lib.view_as_complex(lib.ones(2, 2, dtype=lib.long)), RuntimeError),
    (lambda lib: lib.imag(lib.ones(2)), RuntimeError),
    (lambda lib: lib.complex(lib.ones(2), lib.ones(2, dtype=lib.float64)), RuntimeError),
    (lambda lib: lib.polar(lib.ones(2, dtype=lib.long), lib.ones(2, dtype=lib.long)), RuntimeError),
    (lambda lib: lib.tensor([1j]) < lib.tensor([2j]), NotImplementedError),
    (lambda lib: lib.tensor([1j]).abs_(), RuntimeError),
    (lambda lib: lib.fft.rfft(lib.ones(3, dtype=lib.complex64)), RuntimeError),
    (lambda lib: lib.fft.fft(lib.ones(3), n=0), RuntimeError),
    (lambda lib: lib.fft.fft(lib.ones(3), norm="bad"), RuntimeError),
    (lambda lib: lib.fft.fftn(lib.ones(3, 3), s=(2,), dim=(0, 1)), RuntimeError),
    (lambda lib: lib.fft.fft(lib.ones(3, dtype=lib.float16)), RuntimeError),
])
def test_errors_as_pytorch(call, kind):
    with pytest.raises(kind) as expected:
        call(torch)
    with pytest.raises(kind) as got:
        call(wt)
    assert str(got.value) == str(expected.value)


def test_complex_never_a_silent_real_result():
    z = wt.tensor([1j, 2])
    for f in (lambda: z.max(), lambda: z.argmin(), lambda: z.sort(), lambda: z.cummax(0)):
        with pytest.raises((RuntimeError, NotImplementedError, TypeError)):
            f()


ELEMENTWISE = ["exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sinh", "cosh", "sigmoid", "reciprocal", "neg", "abs",
               "angle", "sgn", "conj", "conj_physical", "real", "imag", "isnan", "isfinite"]


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_unary_forward_and_grad(name):
    for dt, tol in (("complex64", F32), ("complex128", F64)):
        a, b = _pair((2, 3), dt)
        _close(getattr(wt, name)(a), getattr(torch, name)(b), tol)
    a, b = (t.detach().requires_grad_() for t in _pair((5,)))
    ya, yb = getattr(wt, name)(a), getattr(torch, name)(b)
    if not yb.requires_grad:
        return
    (wt.view_as_real(ya).pow(2).sum() if ya.is_complex() else (ya * ya).sum()).backward()
    (torch.view_as_real(yb.resolve_conj()).pow(2).sum() if yb.is_complex() else (yb * yb).sum()).backward()
    _close(a.grad, b.grad)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "pow", "eq", "ne"])
def test_binary_forward_and_grad(op):
    (a, b), (c, d) = _pair((2, 3)), _pair((3,))
    for x, y, u, v in ((a, c, b, d), (a, 1.5, b, 1.5), (a, 2j, b, 2j), (wt.real(a), c, torch.real(b), d)):
        _close(getattr(wt, op)(x, y), getattr(torch, op)(u, v))
    if op in ("eq", "ne"):
        return
    a, b, c, d = (t.detach().requires_grad_() for t in (a, b, c, d))
    if op == "pow":  # a complex exponent's gradient (PowBackward1) is not written for complex yet: it raises
        c, d = 2.5, 2.5
    wt.view_as_real(getattr(wt, op)(a, c)).sin().sum().backward()
    torch.view_as_real(getattr(torch, op)(b, d)).sin().sum().backward()
    _close(a.grad, b.grad)
    if op != "pow":
        _close(c.grad, d.grad)


def test_reductions_matmul_shapes_and_constructors():
    a, b = _pair((3, 4))
    for name in ("sum", "mean", "prod"):
        _close(getattr(a, name)(), getattr(b, name)())
        if name != "prod":
            _close(getattr(a, name)(0), getattr(b, name)(0))
    _close(a @ a.mT, b @ b.mT)
    _close(wt.cat([a, a]).reshape(4, 6)[1:, ::2], torch.cat([b, b]).reshape(4, 6)[1:, ::2])
    _close(wt.stack([a, a], 1).permute(2, 0, 1).flip(0), torch.stack([b, b], 1).permute(2, 0, 1).flip(0))
    r, t = _data((3, 4), wt), _data((3, 4), torch)
    _close(wt.polar(r.abs(), r), torch.polar(t.abs(), t))
    _close(wt.complex(r, r * 2), torch.complex(t, t * 2))
    assert wt.allclose(a, a + 1e-12) and wt.equal(a, a.clone()) and wt.isclose(a, a).all()
    a, b = (t.detach().requires_grad_() for t in (a, b))
    (a @ a.mT).abs().sum().backward()
    (b @ b.mT).abs().sum().backward()
    _close(a.grad, b.grad)
    r, t = r.requires_grad_(), t.requires_grad_()
    wt.polar(r.abs() + 0.1, r * 0.5).imag.sum().backward()  # PyTorch's formula takes abs >= 0
    torch.polar(t.abs() + 0.1, t * 0.5).imag.sum().backward()
    _close(r.grad, t.grad)


def test_numpy_interop():
    np = pytest.importorskip("numpy")
    a = np.array([1 + 2j, 3 - 4j], dtype=np.complex64)
    t = wt.from_numpy(a)
    assert repr(t.dtype) == "torch.complex64" and t.numpy().tolist() == a.tolist()
    assert wt.tensor(a.astype(np.complex128)).dtype is wt.complex128


def test_webgpu_refuses_complex128(webgpu):
    """webgpu holds complex64 (tests/test_complex_devices.py), not complex128 (no float64 in WGSL)."""
    with pytest.raises(TypeError, match="complex128"):
        wt.zeros(2, dtype=wt.complex128, device=webgpu)


# ---- torch.fft ----------------------------------------------------------------------------------------
FFTS = [("fft", dict(n=8, dim=0)), ("fft", {}), ("ifft", dict(n=4)), ("fft2", {}), ("ifft2", dict(s=(3, 5))),
        ("fftn", dict(dim=(0,))), ("ifftn", {}), ("rfft", dict(n=7)), ("irfft", {}), ("irfft", dict(n=7, dim=0)),
        ("rfft2", {}), ("irfft2", {}), ("rfftn", dict(s=(3, 4))), ("irfftn", dict(s=(4, 9))), ("hfft", {}),
        ("ihfft", {}), ("hfft2", {}), ("ihfft2", {}), ("hfftn", dict(s=(3, 5))), ("ihfftn", {})]
_REAL_IN = {"rfft", "rfft2", "rfftn", "ihfft", "ihfft2", "ihfftn"}


@pytest.mark.parametrize("name, kw", FFTS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(FFTS)])
def test_fft_forward_and_grad(name, kw):
    for norm in (None, "ortho", "forward"):
        if name in _REAL_IN or name.startswith("fft"):
            x, y = _data((4, 6), wt), _data((4, 6), torch)
        else:
            x, y = _pair((4, 6))
        _close(getattr(wt.fft, name)(x, norm=norm, **kw), getattr(torch.fft, name)(y, norm=norm, **kw))
    x, y = x.requires_grad_(), y.requires_grad_()
    rx, ry = getattr(wt.fft, name)(x, norm="ortho", **kw), getattr(torch.fft, name)(y, norm="ortho", **kw)
    assert rx.grad_fn.name() == ry.grad_fn.name()
    wx = _data(tuple(rx.shape), wt, 0.7)
    wy = _data(tuple(ry.shape), torch, 0.7)
    (rx.abs() * wx).sum().backward() if rx.is_complex() else (rx * wx).sum().backward()
    (ry.abs() * wy).sum().backward() if ry.is_complex() else (ry * wy).sum().backward()
    _close(x.grad, y.grad, dict(rtol=1e-8, atol=1e-8))


def test_fft_helpers():
    for n, d in ((5, 0.5), (6, 1.0)):
        _close(wt.fft.fftfreq(n, d), torch.fft.fftfreq(n, d))
        _close(wt.fft.rfftfreq(n, d), torch.fft.rfftfreq(n, d))
    x, y = _data((3, 4), wt), _data((3, 4), torch)
    for dim in (None, 1, (0, 1)):
        _close(wt.fft.fftshift(x, dim), torch.fft.fftshift(y, dim))
        _close(wt.fft.ifftshift(x, dim), torch.fft.ifftshift(y, dim))
    assert repr(wt.fft.fft(wt.arange(4)).dtype) == "torch.complex64"


def test_large_fft_float32_accuracy():
    """A 2^16-point complex64 FFT of random data within 2e-5 of |X|'s scale (PyTorch's own float32 pocketfft)."""
    g = torch.Generator().manual_seed(0)
    re, im = torch.randn(1 << 16, generator=g), torch.randn(1 << 16, generator=g)
    got = wt.fft.fft(wt.complex(wt.tensor(re.tolist()), wt.tensor(im.tolist())))
    want = torch.fft.fft(torch.complex(re, im))
    err = (torch.tensor(wt.view_as_real(got).tolist()) - torch.view_as_real(want)).abs().max()
    assert err <= 2e-5 * want.abs().max()


STFTS = [dict(), dict(hop_length=3, win_length=6, window="cos"), dict(center=False), dict(onesided=False),
         dict(pad_mode="constant", normalized=True), dict(pad_mode="replicate", hop_length=2), dict(pad_mode="circular")]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("kw", STFTS)
def test_stft_istft(kw):
    xs = [_data((2, 20), lib, 0.37) for lib in (wt, torch)]
    kws = [{**kw, "window": (lib.arange(6, dtype=lib.float64) * 0.5).cos() + 1.5} if kw.get("window") else kw
           for lib in (wt, torch)]
    specs = [lib.stft(x, 8, return_complex=True, **k) for lib, x, k in zip((wt, torch), xs, kws)]
    _close(*specs)
    _close(xs[0][0].stft(8, return_complex=True, **kws[0]), xs[1][0].stft(8, return_complex=True, **kws[1]))
    ikws = [{k: v for k, v in k_.items() if k != "pad_mode"} for k_ in kws]
    _close(wt.istft(specs[0], 8, **ikws[0]), torch.istft(specs[1], 8, **ikws[1]))
    _close(specs[0].istft(8, length=17, **ikws[0]), specs[1].istft(8, length=17, **ikws[1]))
    xg = [x.clone().requires_grad_() for x in xs]
    for lib, x, k in zip((wt, torch), xg, kws):
        lib.stft(x, 8, return_complex=True, **k).abs().sum().backward()
    _close(xg[0].grad, xg[1].grad)
    sg = [s.detach().requires_grad_() for s in specs]
    for lib, s, k in zip((wt, torch), sg, ikws):
        lib.istft(s, 8, **k).pow(2).sum().backward()
    _close(sg[0].grad, sg[1].grad)


def test_stft_errors_and_real_format():
    for lib in (wt, torch):
        with pytest.raises(RuntimeError, match="requires the return_complex parameter"):
            lib.stft(lib.ones(10), 4)
    with pytest.warns(UserWarning):
        _close(wt.stft(_data((10,), wt), 4, return_complex=False), torch.stft(_data((10,), torch), 4,
                                                                               return_complex=False))


def test_save_load_with_pytorch(tmp_path):
    torch.save({"a": torch.tensor([1 + 2j, -3.5j]), "b": torch.tensor([[1j]], dtype=torch.complex128)},
               tmp_path / "t.pt")
    d = wt.load(tmp_path / "t.pt")
    assert d["a"].tolist() == [1 + 2j, -3.5j] and d["b"].dtype is wt.complex128
    wt.save({"a": d["a"] * 2, "b": d["b"]}, tmp_path / "w.pt")
    back = torch.load(tmp_path / "w.pt")
    assert back["a"].tolist() == [2 + 4j, -7j] and back["b"].dtype == torch.complex128


def test_conjugate_transposes():
    a, b = _pair((2, 3))
    for f in (lambda t: t.mH, lambda t: t.adjoint(), lambda t: t.H, lambda t: t.T, lambda t: t.mT):
        _close(f(a), f(b))
    x = wt.ones(2, 3)
    assert x.H.tolist() == x.t().tolist()


def test_casts_and_fills():
    assert wt.full((2,), 1 + 1j).dtype is wt.complex64 and wt.full((2,), 1 + 1j).tolist() == [1 + 1j] * 2
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        assert wt.tensor([1 + 2j]).float().tolist() == [1.0]
    r = wt.tensor([1.0, 2.0], requires_grad=True)
    (r * (1 + 1j)).abs().sum().backward()  # a real input's gradient is the real part, without the warning
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    (t * (1 + 1j)).abs().sum().backward()
    _close(r.grad, t.grad, F32)
