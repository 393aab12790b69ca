"""out= arguments against PyTorch: out's dtype (cast or exact, each op's message), device, resizing
(with PyTorch's deprecation warning), memory shared with the inputs or within out, factories taking
out's dtype, and the range check on values filled into a tensor."""
import warnings

import pytest
import torch

from core_util import wt, check_same


def _e(L, d, *shape, dt="float32"):
    return L.empty(shape, dtype=getattr(L, dt), device=d)


def _r(L, d, n, dt="float32"):
    return L.arange(n, device=d).to(getattr(L, dt)) * 0.5 - 1


CASES = {
    # element-wise: casts to out's dtype where PyTorch's TensorIterator does
    "add into int64": lambda L, d: L.add(_r(L, d, 3), 1, out=_e(L, d, 3, dt="int64")),
    "add int into float": lambda L, d: L.add(_r(L, d, 3, "int64"), 1, out=_e(L, d, 3)),
    "exp into int64": lambda L, d: L.exp(_r(L, d, 3), out=_e(L, d, 3, dt="int64")),
    "abs into int32": lambda L, d: L.abs(_r(L, d, 3), out=_e(L, d, 3, dt="int32")),
    "floor of int into float": lambda L, d: L.floor(_r(L, d, 3, "int64"), out=_e(L, d, 3)),
    "clamp into int32": lambda L, d: L.clamp(_r(L, d, 3), 0, 1, out=_e(L, d, 3, dt="int32")),
    "round decimals into int32": lambda L, d: L.round(_r(L, d, 3), decimals=1, out=_e(L, d, 3, dt="int32")),
    "where into int32": lambda L, d: L.where(_r(L, d, 3) > 0, _r(L, d, 3), _r(L, d, 3),
                                             out=_e(L, d, 3, dt="int32")),
    "eq into float": lambda L, d: L.eq(_r(L, d, 3), 0, out=_e(L, d, 3)),
    "signbit into float": lambda L, d: L.signbit(_r(L, d, 3), out=_e(L, d, 3)),
    "logical_not into float": lambda L, d: L.logical_not(_r(L, d, 3), out=_e(L, d, 3)),
    # resizing: silent when out is empty, PyTorch's warning when it held elements
    "add resizes empty": lambda L, d: L.add(_r(L, d, 3), 1, out=_e(L, d, 0)),
    "add resizes with a warning": lambda L, d: L.add(_r(L, d, 3), 1, out=_e(L, d, 2, 2)),
    "mm resizes with a warning": lambda L, d: L.mm(_r(L, d, 4).reshape(2, 2), _r(L, d, 4).reshape(2, 2),
                                                   out=_e(L, d, 3)),
    # memory shared with an input (all of it: fine element-wise) or within out
    "add into its input": lambda L, d: (lambda a: L.add(a, a, out=a))(_r(L, d, 3)),
    "add into an overlapping slice": lambda L, d: (lambda a: L.add(a[:3], 1, out=a[1:4]))(_r(L, d, 5)),
    "exp into an overlapping slice": lambda L, d: (lambda a: L.exp(a[:3], out=a[1:4]))(_r(L, d, 5)),
    "add into an expanded out": lambda L, d: L.add(_r(L, d, 3), 1, out=L.zeros(1, device=d).expand(3)),
    "cat into a disjoint slice": lambda L, d: (lambda a: L.cat([a[:2], a[2:4]], out=a[4:]))(_r(L, d, 8)),
    "cat into its input": lambda L, d: (lambda a: L.cat([a[:2], a[2:]], out=a[:4]))(_r(L, d, 4)),
    "cat into an input resized over another": lambda L, d: (lambda a, b: L.cat([a, b], out=b[:1]))(
        _r(L, d, 4), _r(L, d, 4)),
    "gather into an interleaved slice": lambda L, d: (lambda a: L.gather(a[::2], 0, L.tensor([0, 1], device=d),
                                                                         out=a[1::2]))(_r(L, d, 4)),
    "index_select into an expanded out": lambda L, d: L.index_select(_r(L, d, 6).reshape(2, 3), 1,
                                                                     L.tensor([0, 1], device=d),
                                                                     out=L.zeros(1, 3, device=d).expand(2, 3)),
    "max into its input": lambda L, d: (lambda x: L.max(x, 0, out=(x[0], _e(L, d, 3, dt="int64"))))(
        _r(L, d, 9).reshape(3, 3)),
    # ops whose out= must have the result's dtype, each with PyTorch's message
    "sum in out's dtype": lambda L, d: L.sum(L.tensor([0.5, 0.5, 0.7], device=d), 0, out=_e(L, d, dt="int64")),
    "amax into int32": lambda L, d: L.amax(_r(L, d, 4).reshape(2, 2), 0, out=_e(L, d, 2, dt="int32")),
    "max values into int32": lambda L, d: L.max(_r(L, d, 4).reshape(2, 2), 0,
                                                out=(_e(L, d, 2, dt="int32"), _e(L, d, 2, dt="int64"))),
    "max indices into int32": lambda L, d: L.max(_r(L, d, 4).reshape(2, 2), 0, out=(_e(L, d, 2), _e(L, d, 2, dt="int32"))),
    "max into out": lambda L, d: L.max(_r(L, d, 4).reshape(2, 2), 0, out=(_e(L, d, 2), _e(L, d, 0, dt="int64"))),
    "aminmax into int32": lambda L, d: L.aminmax(_r(L, d, 3), out=(_e(L, d, dt="int32"), _e(L, d))),
    "kthvalue into int32": lambda L, d: L.kthvalue(_r(L, d, 3), 1, out=(_e(L, d, dt="int32"), _e(L, d, dt="int64"))),
    "kthvalue into out": lambda L, d: L.kthvalue(_r(L, d, 3), 2, out=(_e(L, d), _e(L, d, dt="int64"))),
    "sort indices into int32": lambda L, d: L.sort(_r(L, d, 3), out=(_e(L, d, 3), _e(L, d, 3, dt="int32"))),
    "sort into out": lambda L, d: L.sort(-_r(L, d, 3), out=(_e(L, d, 3), _e(L, d, 3, dt="int64"))),
    "cumsum in out's dtype": lambda L, d: L.cumsum(L.tensor([0.5, 0.5, 1.7], device=d), 0, out=_e(L, d, 3, dt="int64")),
    "mm into int32": lambda L, d: L.mm(_r(L, d, 4).reshape(2, 2), _r(L, d, 4).reshape(2, 2),
                                       out=_e(L, d, 2, 2, dt="int32")),
    "matmul of vectors into int32": lambda L, d: L.matmul(_r(L, d, 2), _r(L, d, 2), out=_e(L, d, dt="int32")),
    "mv into int32": lambda L, d: L.mv(_r(L, d, 4).reshape(2, 2), _r(L, d, 2), out=_e(L, d, 2, dt="int32")),
    "addmm into int32": lambda L, d: L.addmm(_r(L, d, 4).reshape(2, 2), _r(L, d, 4).reshape(2, 2),
                                             _r(L, d, 4).reshape(2, 2), out=_e(L, d, 2, 2, dt="int32")),
    "cat into int64": lambda L, d: L.cat([_r(L, d, 2), _r(L, d, 2)], out=_e(L, d, 4, dt="int64")),
    "stack into int64": lambda L, d: L.stack([_r(L, d, 2)], out=_e(L, d, 1, 2, dt="int64")),
    "gather into int32": lambda L, d: L.gather(_r(L, d, 3), 0, L.tensor([0, 2], device=d), out=_e(L, d, 2, dt="int32")),
    "index_select into int32": lambda L, d: L.index_select(_r(L, d, 3), 0, L.tensor([0, 2], device=d),
                                                           out=_e(L, d, 2, dt="int32")),
    "take into int32": lambda L, d: L.take(_r(L, d, 3), L.tensor([0, 2], device=d), out=_e(L, d, 2, dt="int32")),
    "masked_select into int32": lambda L, d: L.masked_select(_r(L, d, 3), _r(L, d, 3) > -1,
                                                             out=_e(L, d, 2, dt="int32")),
    "bernoulli into int64": lambda L, d: L.bernoulli(L.ones(3, device=d), out=_e(L, d, 3, dt="int64")),
    "normalize into out": lambda L, d: L.nn.functional.normalize(_r(L, d, 3), dim=0, out=_e(L, d, 3)),
    # factories take out's dtype (another dtype is an error) and resize it silently (arange: its own warning)
    "zeros into int64": lambda L, d: L.zeros(3, out=_e(L, d, 2, dt="int64")),
    "zeros of another dtype": lambda L, d: L.zeros(3, dtype=L.float32, out=_e(L, d, 3, dt="int64")),
    "full into int64": lambda L, d: L.full((2,), 1.5, out=_e(L, d, 2, dt="int64")),
    "linspace into int64": lambda L, d: L.linspace(0, 4, 5, out=_e(L, d, 5, dt="int64")),
    "eye into int32": lambda L, d: L.eye(2, out=_e(L, d, 0, dt="int32")),
    "arange resizes with its warning": lambda L, d: L.arange(4, out=_e(L, d, 2, dt="int64")),
    "arange step truncated to 0": lambda L, d: L.arange(0, 64, 0.5, out=_e(L, d, 0, dt="int64")),
    "arange of int64 truncates": lambda L, d: L.arange(0.5, 10, 1.5, dtype=L.int64, device=d),
    # a value filled into a tensor must fit its dtype
    "full int32 past its range": lambda L, d: L.full((2,), 1e20, dtype=L.int32, device=d),
    "full uint8 wraps -1": lambda L, d: L.full((2,), -1, dtype=L.uint8, device=d),
    "full uint8 past its range": lambda L, d: L.full((2,), -300, dtype=L.uint8, device=d),
    "full float32 past its range": lambda L, d: L.full((2,), 3.5e38, device=d),
    "full float32 inf": lambda L, d: L.full((2,), float("-inf"), device=d),
    "fill_ int32 NaN": lambda L, d: L.zeros(2, dtype=L.int32, device=d).fill_(float("nan")),
    "fill_ int64 2**63": lambda L, d: L.zeros(2, dtype=L.int64, device=d).fill_(2 ** 63),
    "masked_fill complex": lambda L, d: L.zeros(2, device=d).masked_fill(L.tensor([True, False], device=d), 1j),
    "masked_fill real complex into int32": lambda L, d: L.zeros(2, dtype=L.int32, device=d).masked_fill(
        L.tensor([True, False], device=d), 2 + 0j),
    "masked_fill_ int32 past its range": lambda L, d: L.zeros(2, dtype=L.int32, device=d).masked_fill_(
        L.tensor([True, False], device=d), 2 ** 31),
    # 65 dims (a view: numpy holds 64): reductions over dims given raise
    "amax of 65 dims over dim 0": lambda L, d: L.amax(L.ones(1, device=d).reshape((1,) * 65), 0),
    "sum of 65 dims over dims 0, 1": lambda L, d: L.sum(L.ones(1, device=d).reshape((1,) * 65), (0, 1)),
}


def _outcome(lib, dev, fn):
    """(result, exception, the resize warnings' messages) of fn(lib, dev)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res, exc = fn(lib, dev), None
            if lib is wt and dev == "webgpu":
                wt.webgpu.synchronize()
        except Exception as e:  # noqa: BLE001 - compared with PyTorch's
            res, exc = None, e
    resized = [str(w.message).split(" (Triggered internally")[0] for w in caught if "resized" in str(w.message)]
    return res, exc, resized


@pytest.mark.parametrize("case", list(CASES))
def test_out_like_pytorch(device, case):
    fn = CASES[case]
    t_res, t_exc, t_warn = _outcome(torch, "cpu", fn)
    w_res, w_exc, w_warn = _outcome(wt, device, fn)
    if t_exc is not None:
        assert w_exc is not None, f"PyTorch raised {type(t_exc).__name__}: {t_exc}; webtorch returned {w_res}"
        assert type(w_exc).__name__ == type(t_exc).__name__ and str(w_exc) == str(t_exc), (w_exc, t_exc)
        return
    assert w_exc is None, f"webtorch raised {type(w_exc).__name__}: {w_exc}"
    check_same(w_res, t_res, device=device)
    assert w_warn == t_warn


def test_out_is_returned_and_written(device):
    """The result is the out tensor itself (values and indices for a pair), PyTorch's values in it."""
    for lib, dev in ((torch, "cpu"), (wt, device)):
        x = lib.tensor([[3.0, 1.0], [2.0, 4.0]], device=dev)
        v, i, o, z = _e(lib, dev, 2), _e(lib, dev, 0, dt="int64"), _e(lib, dev, 2, 2), _e(lib, dev, 3)
        r = lib.max(x, 1, out=(v, i))
        assert r[0] is v and r[1] is i
        assert lib.add(x, 1, out=o) is o and lib.zeros(3, out=z) is z
        if lib is torch:
            expected = [t.tolist() for t in (v, i, o, z)]
    assert [t.tolist() for t in (v, i, o, z)] == expected


def test_out_on_another_device_raises(device):
    """PyTorch's message for an out= on another device (gather's, a structured kernel, with its meta
    device standing in for the second device here)."""
    if device != "webgpu":
        pytest.skip("needs a second device")
    with pytest.raises(RuntimeError) as te:
        torch.gather(torch.ones(2), 0, torch.tensor([0, 1]), out=torch.empty(2, device="meta"))
    for f in (lambda o: wt.gather(wt.ones(2), 0, wt.tensor([0, 1]), out=o), lambda o: wt.add(wt.ones(2), 1, out=o)):
        with pytest.raises(RuntimeError) as we:
            f(wt.empty(2, device="webgpu"))
        assert str(we.value) == str(te.value).replace("meta", str(wt.empty(0, device="webgpu").device))
