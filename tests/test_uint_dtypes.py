"""uint16 / uint32 / uint64 tensors against PyTorch on cpu and cpu-pure: creation, casts both ways (floats wrap
through int64 as PyTorch's), printing, item/tolist, views and copies, the few ops PyTorch's CPU kernels take for
them (mul, div, eq/ne, bitwise and/or/xor, sum/prod, sort, cumsum, floating unary ops) and its NotImplementedError
for the others (add, sub, lt, max, neg, pow, flip, arange, ...), promotion errors, and torch.save/load both ways
(PyTorch's _rebuild_tensor_v3 of an UntypedStorage). On webgpu uint16 and uint32 are one WGSL u32 per element (the
same cases; int64 results past 32 bits raise webgpu's int64 overflow error), uint64 raises a TypeError."""
import io

import pytest
import torch

import webtorch as wt

DTYPES = ("uint16", "uint32", "uint64")


def _t(L, dtn, v=(1, 2, 3)):
    return L.tensor(list(v), dtype=getattr(L, dtn))


CASES = {
    "repr": lambda L, d: _t(L, d), "max value": lambda L, d: L.tensor([(1 << 8 * getattr(L, d).itemsize) - 1],
                                                                       dtype=getattr(L, d)),
    "zeros": lambda L, d: L.zeros(2, dtype=getattr(L, d)), "ones": lambda L, d: L.ones(2, 2, dtype=getattr(L, d)),
    "full": lambda L, d: L.full((2,), 7, dtype=getattr(L, d)),
    "full -1": lambda L, d: L.full((2,), -1, dtype=getattr(L, d)),
    "full 70000": lambda L, d: L.full((2,), 70000, dtype=getattr(L, d)),
    "arange": lambda L, d: L.arange(3, dtype=getattr(L, d)),
    "from float": lambda L, d: L.tensor([1.5, 70000.7, -1.0]).to(getattr(L, d)),
    "from int64": lambda L, d: L.tensor([-1, 70000]).to(getattr(L, d)), "to float": lambda L, d: _t(L, d).float(),
    "to int64": lambda L, d: _t(L, d).long(), "item": lambda L, d: _t(L, d)[0].item(),
    "tolist": lambda L, d: _t(L, d).tolist(),
    "slice": lambda L, d: _t(L, d)[1:], "view": lambda L, d: _t(L, d).view(3, 1),
    "contiguous": lambda L, d: _t(L, d).reshape(3, 1).expand(3, 2).contiguous(),
    "cat": lambda L, d: L.cat([_t(L, d), _t(L, d)]), "stack": lambda L, d: L.stack([_t(L, d), _t(L, d)]),
    "where": lambda L, d: L.where(L.tensor([True, False, True]), _t(L, d), _t(L, d, (4, 5, 6))),
    "fill_": lambda L, d: _t(L, d).fill_(5), "setitem": lambda L, d: (lambda t: (t.__setitem__(0, 9), t)[1])(_t(L, d)),
    "zeros_like": lambda L, d: L.zeros_like(_t(L, d)), "clone": lambda L, d: _t(L, d).clone(),
    "mul": lambda L, d: _t(L, d) * _t(L, d, (4, 5, 6)), "mul scalar": lambda L, d: _t(L, d) * 3,
    "mul float": lambda L, d: _t(L, d) * 2.5, "div": lambda L, d: _t(L, d) / _t(L, d, (4, 5, 6)),
    "eq": lambda L, d: _t(L, d) == _t(L, d, (1, 5, 3)), "ne scalar": lambda L, d: _t(L, d) != 2,
    "and": lambda L, d: _t(L, d) & _t(L, d, (4, 5, 6)), "or": lambda L, d: _t(L, d) | _t(L, d, (4, 5, 6)),
    "xor": lambda L, d: _t(L, d) ^ _t(L, d, (4, 5, 6)), "add float tensor": lambda L, d: _t(L, d) + L.tensor([1.0]),
    "sum": lambda L, d: _t(L, d).sum(), "sum dim": lambda L, d: _t(L, d).reshape(1, 3).sum(1),
    "prod": lambda L, d: _t(L, d).prod(), "cumsum": lambda L, d: _t(L, d).cumsum(0),
    "sort": lambda L, d: tuple(_t(L, d, (3, 1, 2)).sort()), "argmax dim": lambda L, d: _t(L, d).argmax(0),
    "sqrt": lambda L, d: _t(L, d).sqrt(), "unique": lambda L, d: _t(L, d, (2, 1, 2)).unique(),
    # PyTorch's errors
    "add": lambda L, d: _t(L, d) + 1, "sub": lambda L, d: _t(L, d) - _t(L, d), "lt": lambda L, d: _t(L, d) < _t(L, d),
    "floor_divide": lambda L, d: _t(L, d) // _t(L, d), "remainder": lambda L, d: _t(L, d) % _t(L, d),
    "shift": lambda L, d: _t(L, d) << _t(L, d), "maximum": lambda L, d: L.maximum(_t(L, d), _t(L, d)),
    "max": lambda L, d: _t(L, d).max(), "min dim": lambda L, d: _t(L, d).min(0), "amax": lambda L, d: _t(L, d).amax(),
    "argmax": lambda L, d: _t(L, d).argmax(), "neg": lambda L, d: -_t(L, d), "abs": lambda L, d: _t(L, d).abs(),
    "bitwise_not": lambda L, d: ~_t(L, d), "square": lambda L, d: _t(L, d).square(), "pow": lambda L, d: _t(L, d) ** 2,
    "mean": lambda L, d: _t(L, d).mean(), "flip": lambda L, d: _t(L, d).flip(0),
    "nonzero": lambda L, d: _t(L, d).nonzero(), "add int32": lambda L, d: _t(L, d) + L.tensor([1], dtype=L.int32),
    "add uint8": lambda L, d: _t(L, d) + L.tensor([1], dtype=L.uint8),
}


def _run(fn, L, d):
    try:
        r = fn(L, d)
    except Exception as e:  # noqa: BLE001 - compared between the two libraries
        return type(e).__name__, str(e).split("\n")[0]
    return repr(r)


@pytest.mark.parametrize("device", ["cpu", "cpu-pure"], indirect=True)  # webgpu: test_on_webgpu
@pytest.mark.parametrize("dtn", DTYPES)
def test_against_pytorch(dtn, device):
    assert {c: _run(f, wt, dtn) for c, f in CASES.items()} == {c: _run(f, torch, dtn) for c, f in CASES.items()}


def _value(r):
    """A result without its device: a tensor's values and dtype, or what _run gives."""
    if isinstance(r, tuple):
        return tuple(_value(x) for x in r)
    return (r.tolist(), str(r.dtype)) if isinstance(r, (torch.Tensor, wt.Tensor)) else r


@pytest.mark.parametrize("dtn", ("uint16", "uint32"))
def test_on_webgpu(dtn, webgpu):
    """uint16 and uint32 are one WGSL u32 per element: the same values as PyTorch's cpu, or its errors."""
    def results(L):
        return {c: _run(lambda L, d, f=f: _value(f(L, d)), L, dtn) for c, f in CASES.items()}
    prev = wt.get_default_device()
    wt.set_default_device("webgpu")
    try:
        got = results(wt)
    finally:
        wt.set_default_device(prev)
    assert got == results(torch)


def test_webgpu_int64_overflow_index_add_and_uint64(webgpu):
    t = wt.tensor([(1 << 32) - 1, 1], dtype=wt.uint32, device="webgpu")
    for f in (lambda: t.long().tolist(), lambda: t.sum().item()):  # int64 is 32-bit on webgpu: PyTorch's values or
        with pytest.raises(RuntimeError, match="int64 overflow on webgpu"):  # this error, never a wrapped one
            f()
    assert t.int().tolist() == [-1, 1] and (t * 2).tolist() == [(1 << 32) - 2, 2]
    x = wt.tensor([65535, 1, 7], dtype=wt.uint16)
    want = wt.zeros(2, dtype=wt.uint16).index_add(0, wt.tensor([0, 0, 1]), x).tolist()  # wraps to [0, 7]
    assert wt.zeros(2, dtype=wt.uint16, device="webgpu").index_add(
        0, wt.tensor([0, 0, 1], device="webgpu"), x.to("webgpu")).tolist() == want == [0, 7]
    with pytest.raises(TypeError, match="uint64 is not supported on webgpu"):
        wt.tensor([1, 2], dtype=wt.uint64, device="webgpu")
    with pytest.raises(TypeError, match="uint64 is not supported on webgpu"):
        _t(wt, "uint64").to("webgpu")


def test_save_load_both_ways():
    data = {"a": [1, 65535], "b": [(1 << 64) - 1, 0], "c": [[1, 2], [3, 4]]}
    dts = {"a": "uint16", "b": "uint64", "c": "uint32"}
    for save, load in ((wt, torch), (torch, wt), (wt, wt)):
        obj = {k: save.tensor(v, dtype=getattr(save, dts[k])) for k, v in data.items()}
        obj["c"] = obj["c"][:, 1]  # a view: its storage offset and stride saved
        buf = io.BytesIO()
        save.save(obj, buf)
        for weights_only in (True, False):
            got = load.load(io.BytesIO(buf.getvalue()), weights_only=weights_only)
            assert {k: (v.tolist(), str(v.dtype)) for k, v in got.items()} == \
                {"a": ([1, 65535], "torch.uint16"), "b": ([(1 << 64) - 1, 0], "torch.uint64"),
                 "c": ([2, 4], "torch.uint32")}
