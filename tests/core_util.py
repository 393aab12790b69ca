"""Helpers for the differential core tests: run the same code in PyTorch and in webtorch and
compare (identical shape and dtype, values within the dtype's tolerance, identical errors).

    cmp(device, lambda T, x, y: T.add(x, y), x, y)

`T` is the `torch` module in one run and `webtorch` in the other; the tensor arguments are given
as numpy arrays or torch tensors and arrive as the matching library's tensors (on `device` for
webtorch). Non-tensor arguments pass through unchanged.
"""
import contextlib
import math

import numpy as np
import pytest
import torch


import webtorch as wt  # noqa: E402

DTYPES = ["float32", "float64", "float16", "int32", "int64", "bool", "uint8"]
TOL = {"float16": (2e-3, 2e-3), "float32": (1.3e-5, 1e-5), "float64": (1e-9, 1e-12),
       "bfloat16": (1e-2, 1e-2)}
# WGSL's exp/log/sin/... are allowed a few ulp more than a CPU libm
TOL_WEBGPU = {"float16": (4e-3, 4e-3), "float32": (2e-4, 2e-5)}
_RNG = np.random.RandomState(0)


def tdt(name):
    return getattr(torch, name)


def wdt(name):
    return getattr(wt, name)


def webgpu_has_f16():
    from webtorch.backends import webgpu
    return "shader-f16" in webgpu.adapter_info()["features"]


def skip_unsupported(device, *dtypes):
    """float64 is not a WebGPU dtype (its own test checks the TypeError); float16 needs shader-f16."""
    if device != "webgpu":
        return
    for d in dtypes:
        d = getattr(d, "name", d)
        d = str(d).replace("torch.", "")
        if d == "float64":
            pytest.skip("float64 does not exist on WebGPU (creating it raises TypeError, tested separately)")
        if d == "float16" and not webgpu_has_f16():
            pytest.skip("this WebGPU adapter lacks the shader-f16 feature")


def arr(shape, dtype="float32", lo=-3, hi=3, rng=None):
    """A small random numpy array of a webtorch dtype name (ints in [lo, hi), floats in [lo, hi))."""
    rng = rng or _RNG
    if dtype == "bool":
        return np.asarray(rng.rand(*shape) < 0.5)
    if dtype in ("float32", "float64", "float16"):
        return np.asarray(rng.rand(*shape) * (hi - lo) + lo).astype(dtype)
    if dtype == "uint8":
        lo = max(lo, 0)
        hi = max(hi, lo + 1)
    return np.asarray(rng.randint(lo, hi, size=shape)).astype(dtype)


def to_torch(x):
    if isinstance(x, torch.Tensor):
        return x.clone()
    if isinstance(x, np.ndarray):
        t = torch.tensor(x)
        # torch.tensor(empty ndarray) has all-zero strides; webtorch (like torch.empty) has contiguous ones
        return t if x.size else torch.empty(x.shape, dtype=t.dtype)
    return x


def to_wt(x, device):
    if isinstance(x, torch.Tensor):
        x = x.detach().numpy()
    if isinstance(x, np.ndarray):
        skip_unsupported(device, str(x.dtype))
        t = wt.from_numpy(x.copy())
        return t.to(device) if device != "cpu" else t
    return x


def _conv(args, f):
    out = []
    for a in args:
        if isinstance(a, (list, tuple)) and any(isinstance(x, (np.ndarray, torch.Tensor)) for x in a):
            out.append(type(a)(f(x) for x in a))
        else:
            out.append(f(a))
    return out


def wt_numpy(w):
    return w.detach().cpu().numpy()


def check_same(w, t, rtol=None, atol=None, device=None, strides=False, what="result", on=None):
    """webtorch result `w` equals torch result `t` (recursively through tuples/lists)."""
    if isinstance(t, torch.Tensor):
        assert isinstance(w, wt.Tensor), f"{what}: expected a Tensor, got {type(w).__name__}"
        assert tuple(w.shape) == tuple(t.shape), f"{what}: shape {tuple(w.shape)} != torch {tuple(t.shape)}"
        tn = str(t.dtype).replace("torch.", "")
        assert w.dtype.name == tn, f"{what}: dtype {w.dtype} != torch {t.dtype}"
        if on is not None:
            assert w.device.type == on, f"{what}: device {w.device} (expected {on})"
        if strides:
            assert tuple(w.stride()) == tuple(t.stride()), f"{what}: strides {w.stride()} != torch {t.stride()}"
            assert w.storage_offset() == t.storage_offset(), f"{what}: offset {w.storage_offset()} != torch"
        a = wt_numpy(w)
        b = t.detach().numpy()
        assert a.shape == b.shape
        if tn in TOL:
            r, at = TOL[tn] if device != "webgpu" else TOL_WEBGPU.get(tn, TOL[tn])
            r, at = rtol if rtol is not None else r, atol if atol is not None else at
            np.testing.assert_allclose(a.astype("float64"), b.astype("float64"), rtol=r, atol=at, equal_nan=True,
                                       err_msg=what)
        else:
            np.testing.assert_array_equal(a, b, err_msg=what)
        return
    if isinstance(t, (tuple, list)):
        assert isinstance(w, (tuple, list)), f"{what}: expected a sequence, got {type(w).__name__}"
        assert len(w) == len(t), f"{what}: length {len(w)} != torch {len(t)}"
        for i, (a, b) in enumerate(zip(w, t)):
            check_same(a, b, rtol, atol, device, strides, what=f"{what}[{i}]", on=on)
        return
    if isinstance(t, torch.Size):
        assert tuple(w) == tuple(t)
        return
    if isinstance(t, torch.dtype):
        assert w is wdt(str(t).replace("torch.", "")), f"{what}: {w} != {t}"
        return
    if isinstance(t, float):
        assert isinstance(w, float), f"{what}: {type(w).__name__} != float"
        if math.isnan(t):
            assert math.isnan(w)
        else:
            assert w == pytest.approx(t, rel=1e-5, abs=1e-6), what
        return
    assert type(w) is type(t), f"{what}: type {type(w).__name__} != torch {type(t).__name__}"
    assert w == t, f"{what}: {w!r} != torch {t!r}"


def run_both(device, fn, *args, **kwargs):
    targs = _conv(args, to_torch)
    wargs = _conv(args, lambda a: to_wt(a, device))
    return fn(wt, *wargs, **kwargs), fn(torch, *targs, **kwargs)


def cmp(device, fn, *args, rtol=None, atol=None, strides=False, **kwargs):
    """Run fn(torch, *args) and fn(webtorch, *args) and compare the results."""
    targs = _conv(args, to_torch)
    expected = fn(torch, *targs, **kwargs)
    wargs = _conv(args, lambda a: to_wt(a, device))
    got = fn(wt, *wargs, **kwargs)
    has_tensor = any(isinstance(a, (np.ndarray, torch.Tensor)) for a in args)
    on = ("webgpu" if device == "webgpu" else "cpu") if has_tensor else None
    check_same(got, expected, rtol, atol, device, strides, on=on)
    return got, expected


def raises_like(device, fn, *args, phrase=None, **kwargs):
    """torch raises; webtorch must raise the same exception type whose message contains `phrase`
    (a key phrase that torch's own message contains too). On webgpu, index bounds errors are
    raised at the next sync point (deferred device-side checks), so the call is followed by
    webtorch.webgpu.synchronize()."""
    targs = _conv(args, to_torch)
    with pytest.raises(Exception) as te:
        fn(torch, *targs, **kwargs)
    wargs = _conv(args, lambda a: to_wt(a, device))
    with pytest.raises(Exception) as we:
        try:
            fn(wt, *wargs, **kwargs)
        finally:
            if device == "webgpu":
                wt.webgpu.synchronize()
    assert issubclass(we.type, te.type) or we.type is te.type, \
        f"webtorch raised {we.type.__name__}({we.value}); torch raised {te.type.__name__}({te.value})"
    if phrase is not None:
        assert phrase in str(te.value), f"the key phrase is not in torch's message: {te.value}"
        assert phrase in str(we.value), f"webtorch's message lacks {phrase!r}: {we.value}"
    return we.value, te.value


@contextlib.contextmanager
def fusion(device, on):
    """webgpu's lazy element-wise fusion switched on or off for a block (nothing on other devices)."""
    if device != "webgpu":
        yield
        return
    from webtorch.backends import webgpu
    old = webgpu.set_fusion(on)
    try:
        yield
    finally:
        webgpu.set_fusion(old)


@contextlib.contextmanager
def cuda_alias():
    """Run the block with "cuda" naming the WebGPU device, as `python -m webtorch --device webgpu` does."""
    wt._device.set_cuda_alias(True)
    try:
        yield
    finally:
        wt._device.set_cuda_alias(False)
