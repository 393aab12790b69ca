"""Core tensor library vs PyTorch: host interop (numpy, tolist, item), __torch_function__ on a
Tensor subclass, printing (repr equal to PyTorch's but for the device suffix), device errors."""
import math

import numpy as np
import pytest
import torch

from core_util import wt, cmp, raises_like, arr, skip_unsupported, to_wt, DTYPES


# ---- interop ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dt", DTYPES)
def test_numpy_tolist_item(device, dt):
    skip_unsupported(device, dt)
    a = arr((2, 3), dt, -5, 5)
    w, t = to_wt(a, device), torch.tensor(a)
    n = w.cpu().numpy()
    assert n.dtype == a.dtype and n.shape == a.shape
    np.testing.assert_array_equal(n, a)
    np.testing.assert_array_equal(np.asarray(w), a)  # __array__ works on every device
    assert np.asarray(w).dtype == a.dtype
    assert w.tolist() == t.tolist()
    assert type(w.tolist()[0][0]) is type(t.tolist()[0][0])
    assert w[1, 2].item() == t[1, 2].item() and type(w[1, 2].item()) is type(t[1, 2].item())
    assert w[0].tolist() == t[0].tolist() and w[0, 0].tolist() == t[0, 0].tolist()
    assert w[:, 1:].tolist() == t[:, 1:].tolist()  # a strided view
    assert wt.tensor(a).tolist() == torch.tensor(a).tolist()  # torch.tensor(ndarray)
    if dt in ("float32", "int64", "float64", "int32"):
        assert float(w[0, 0]) == float(t[0, 0]) and int(w[0, 1]) == int(t[0, 1])


def test_interop_shapes_and_errors(device):
    for a in (arr(()), arr((0, 2)), arr((1,)), arr((2, 1, 3))):
        w, t = to_wt(a, device), torch.tensor(a)
        assert w.tolist() == t.tolist()
        assert w.cpu().numpy().shape == a.shape
    s = to_wt(arr((1, 1)), device)
    assert isinstance(s.item(), float)
    raises_like(device, lambda T, x: x.item(), arr((2,)), phrase="a Tensor with 2 elements cannot be converted to "
                                                                "Scalar")
    raises_like(device, lambda T, x: bool(x), arr((2,)), phrase="Boolean value of Tensor with more than one value is "
                                                               "ambiguous")
    raises_like(device, lambda T, x: len(x), arr(()), phrase="len() of a 0-d tensor")
    raises_like(device, lambda T, x: [*x], arr(()), phrase="iteration over a 0-d tensor")
    raises_like(device, lambda T, x: x.requires_grad_().numpy(), arr((2,)),
                phrase="Can't call numpy() on Tensor that requires grad")
    if device == "webgpu":
        with pytest.raises(TypeError, match="can't convert webgpu:0 device type tensor to numpy"):
            wt.ones(2, device="webgpu").numpy()
    a = arr((2, 2))
    assert [v.tolist() for v in to_wt(a, device)] == [r.tolist() for r in torch.tensor(a)]


def test_from_numpy_shares_memory_on_cpu():
    a = np.zeros(3, dtype=np.float32)
    w = wt.tensor(a)
    a[0] = 5  # wt.tensor copies, as torch.tensor does
    assert w.tolist() == [0.0, 0.0, 0.0]


def test_devices_and_to(device):
    w = to_wt(arr((2, 2)), device)
    dev = "webgpu" if device == "webgpu" else "cpu"
    assert w.device.type == dev and str(w.device) == ("webgpu:0" if dev == "webgpu" else "cpu")
    assert w.is_cpu == (dev == "cpu") and not w.is_cuda
    c = w.cpu()
    assert c.device.type == "cpu" and c.tolist() == w.tolist()
    assert w.to("cpu").to(device if device != "cpu-pure" else "cpu").tolist() == w.tolist()
    assert w.to(wt.int64).dtype is wt.int64 and w.to(dtype=wt.int32).dtype is wt.int32
    assert w.int().dtype is wt.int32 and w.long().dtype is wt.int64 and w.bool().dtype is wt.bool
    assert w.float().dtype is wt.float32
    cmp(device, lambda T, x: (x.to(T.int64), x.long(), x.bool(), x.byte(), x.int(), x.float(), x.type(T.int32)),
        arr((5,), "float32", -3, 300))
    assert repr(wt.device("webgpu")) == "device(type='webgpu', index=0)" and repr(wt.device("cpu")) == \
        repr(torch.device("cpu"))
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):  # as PyTorch without CUDA
        wt.ones(2, device="cuda")


def test_device_mismatch_errors():
    g = wt.ones(2, 2, device="webgpu")
    c = wt.ones(2, 2)
    for f in (lambda: g + c, lambda: c * g, lambda: wt.cat([c, g]), lambda: g @ c, lambda: wt.where(c > 0, g, c),
              lambda: g.gather(0, wt.zeros(2, 2, dtype=wt.int64)), lambda: g.add_(c)):
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but found at least two "
                                               "devices"):
            f()
    assert (g + wt.tensor(2.0)).device.type == "webgpu"  # cpu 0-d tensors are scalars, as in torch
    c.copy_(g)  # copy_ is cross-device


# ---- __torch_function__ ----------------------------------------------------------------------------
def _subclass(lib):
    class Logged(lib.Tensor):
        calls = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.calls.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs or {})
    return Logged


def test_torch_function_subclass(device):
    results = {}
    for lib in (torch, wt):
        Logged = _subclass(lib)
        x = lib.tensor([[1.0, -2.0], [3.0, 4.0]])
        if lib is wt and device == "webgpu":
            x = x.to("webgpu")
        s = x.as_subclass(Logged)
        outs = [s + 1, lib.add(s, s), s.exp(), s.sum(), s[0], lib.cat([s, s]), s.reshape(4), s @ s, s.max(1)]
        results[lib] = [type(o).__name__ if not isinstance(o, tuple) else [type(v).__name__ for v in o] for o in outs]
        assert type(outs[0]) is Logged and isinstance(outs[0], lib.Tensor)
        assert Logged.calls, "the override was never called"
        assert all(c for c in Logged.calls)
        np.testing.assert_allclose(np.asarray(outs[7].cpu().detach() if lib is wt else outs[7]),
                                   np.array([[-5.0, -10.0], [15.0, 10.0]]))
    assert results[wt] == results[torch]


def test_torch_function_non_tensor_object(device):
    class Fake:
        handled = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.handled.append(func.__name__)
            return "handled"
    assert wt.add(Fake(), 1) == "handled" and torch.add(Fake(), 1) == "handled"
    assert wt.cat([Fake()]) == "handled"


# ---- printing ------------------------------------------------------------------------------------
REPRS = [
    lambda T, d: T.tensor([1, 2, 3], device=d), lambda T, d: T.tensor([[1, -20], [300, 4]], device=d), lambda T, d: T.tensor(5, device=d),
    lambda T, d: T.tensor(2.5, device=d), lambda T, d: T.tensor([1.0, 2.5, -3.25], device=d), lambda T, d: T.tensor([1.0, 2.0], device=d),
    lambda T, d: T.tensor([0.1, 0.25, 100.0], device=d), lambda T, d: T.tensor([1e-5, 1.0, 1e5], device=d), lambda T, d: T.tensor([1e10, 1.0], device=d),
    lambda T, d: T.tensor([1e-10, 3e-9], device=d), lambda T, d: T.tensor([True, False], device=d), lambda T, d: T.tensor(True, device=d),
    lambda T, d: T.tensor([], device=d), lambda T, d: T.zeros(0, 3, device=d), lambda T, d: T.zeros(2, 0, dtype=T.int64, device=d),
    lambda T, d: T.arange(2000, device=d), lambda T, d: T.arange(2000.0, device=d).reshape(40, 50) / 7, lambda T, d: T.arange(24, device=d).reshape(2, 3, 4),
    lambda T, d: T.tensor([float("nan"), float("inf"), -float("inf"), 1.5], device=d), lambda T, d: T.tensor([1, 2], dtype=T.int32, device=d),
    lambda T, d: T.tensor([1, 2], dtype=T.uint8, device=d), lambda T, d: T.tensor([1.5, 2], dtype=T.float64, device=d),
    lambda T, d: T.tensor([1.5, 2], dtype=T.float16, device=d), lambda T, d: T.tensor(3, dtype=T.int32, device=d),
    lambda T, d: T.tensor([1.0, 2.0], requires_grad=True, device=d), lambda T, d: T.tensor([1.0, 2.0], requires_grad=True, device=d) * 2,
    lambda T, d: T.tensor([1.0, 2.0], requires_grad=True, device=d).sum(), lambda T, d: T.tensor([1.0, 2.0], requires_grad=True, device=d)[0],
    lambda T, d: T.tensor([[0.001, 123.456], [-7.0, 0.5]], device=d), lambda T, d: T.tensor([-0.0, 0.0], device=d),
    lambda T, d: T.tensor([123456789.0], device=d), lambda T, d: T.tensor([1, 2], dtype=T.float64, device=d) * 1e-20,
    lambda T, d: T.ones(3, 3, dtype=T.bool, device=d), lambda T, d: T.tensor([[1.5]], device=d), lambda T, d: T.arange(1001.0, device=d),
]


@pytest.mark.parametrize("i", range(len(REPRS)))
def test_repr_matches_torch(device, i):
    make = REPRS[i]
    t = make(torch, "cpu")
    skip_unsupported(device, str(t.dtype).replace("torch.", ""))
    w = make(wt, "webgpu" if device == "webgpu" else "cpu")
    got = repr(w)
    if device == "webgpu":  # the device suffix is the one difference
        assert ", device='webgpu:0'" in got
        got = got.replace(", device='webgpu:0'", "")
    assert got == repr(t)
    assert str(w).replace(", device='webgpu:0'", "") == str(t)


def test_repr_webgpu_suffix():
    w = wt.tensor([1.0, 2.0], device="webgpu")
    assert repr(w) == "tensor([1., 2.], device='webgpu:0')"
    assert repr(wt.tensor([1, 2], device="webgpu", dtype=wt.int32)) == \
        "tensor([1, 2], device='webgpu:0', dtype=torch.int32)"


def test_printoptions():
    try:
        torch.set_printoptions(precision=2)
        wt.set_printoptions(precision=2)
        x = [1.23456, 2.5]
        assert repr(wt.tensor(x)) == repr(torch.tensor(x))
        torch.set_printoptions(sci_mode=True)
        wt.set_printoptions(sci_mode=True)
        assert repr(wt.tensor(x)) == repr(torch.tensor(x))
    finally:
        torch.set_printoptions(profile="default")
        wt.set_printoptions(profile="default")
    assert repr(wt.tensor([1.5])) == "tensor([1.5000])"


def test_size_and_dtype_repr():
    assert repr(wt.ones(2, 3).shape) == repr(torch.ones(2, 3).shape)
    assert repr(wt.ones(()).shape) == repr(torch.ones(()).shape)
    assert str(wt.float32) == str(torch.float32)
    assert f"{wt.tensor(2.5):.2f}" == f"{torch.tensor(2.5):.2f}"
    assert math.isclose(wt.tensor(0.1).item(), torch.tensor(0.1).item())


def test_from_numpy_and_numpy_share_memory_like_pytorch():
    """On the numpy CPU backend both directions share memory, as in PyTorch (the pure-Python
    backend, which has no numpy buffers, copies)."""
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = wt.from_numpy(a)
    a[0, 0] = 100.0
    assert t[0, 0].item() == 100.0
    t[1, 2] = -1.0
    assert a[1, 2] == -1.0
    n = t.numpy()
    n[0, 1] = 7.0
    assert t[0, 1].item() == 7.0
    assert not np.shares_memory(wt.from_numpy(a.T).numpy(), a)  # a non-contiguous array is copied
