"""The WebGPU backend's primitives against PyTorch (native wgpu-py; lavapipe in CI).

Every primitive and every element-wise op name runs on strided / broadcast / offset views,
0-d and empty shapes, and is compared with torch on the same numbers. Also: allocator reuse,
command batching, the 65,535 workgroups-per-dimension fold, and the clear errors.
"""
import os
import sys

import numpy as np
import pytest

os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

import torch  # noqa: E402  (the oracle: a test dependency, never a reason to skip this tier)
from _records import kernels, torch_oracle  # noqa: E402
from webtorch.backends.base import Strided, EWISE_OPS  # noqa: E402
from webtorch.backends.elementwise import RECORDS  # noqa: E402
from webtorch.backends import webgpu  # noqa: E402
from webtorch import _philox  # noqa: E402

pytestmark = pytest.mark.usefixtures("webgpu")  # conftest: skipped only by WEBTORCH_SKIP_WEBGPU=1

be = webgpu.get_backend() if webgpu.is_available() else None  # no adapter: the fixture fails each test
NP = {"float32": np.float32, "float16": np.float16, "int32": np.int32, "int64": np.int64,
      "bool": np.bool_, "uint8": np.uint8}
TT = {"float32": torch.float32, "float16": torch.float16, "int32": torch.int32, "int64": torch.int64,
      "bool": torch.bool, "uint8": torch.uint8}
rng = np.random.default_rng(0)


def contig(shape):
    st, acc = [], 1
    for s in reversed(shape):
        st.append(acc)
        acc *= s
    return tuple(reversed(st))


def gpu(arr, dtype=None, layout="contig"):
    """Upload numpy `arr` and return (Strided, numpy array with the view's values).
    layout: 'contig'; 'offset' (view starts 5 elements in); 'transposed' (a column-major
    view: the buffer holds arr.T contiguous); 'strided' (every other element of a bigger
    buffer along the last dim)."""
    dtype = dtype or str(arr.dtype)
    arr = np.asarray(arr, dtype=NP[dtype])
    shape = arr.shape
    if layout == "contig" or arr.ndim == 0:
        return Strided(be.from_flat(arr.reshape(-1), dtype), shape, contig(shape), 0, dtype), arr
    if layout == "offset":
        flat = np.concatenate([np.zeros(5, arr.dtype), arr.reshape(-1)])
        return Strided(be.from_flat(flat, dtype), shape, contig(shape), 5, dtype), arr
    if layout == "transposed":
        base = np.ascontiguousarray(np.moveaxis(arr, -1, 0))       # last dim outermost
        st = contig(base.shape)
        strides = st[1:] + st[:1]
        return Strided(be.from_flat(base.reshape(-1), dtype), shape, strides, 0, dtype), arr
    if layout == "strided":
        big = np.zeros(shape[:-1] + (shape[-1] * 2,), arr.dtype)
        big[..., ::2] = arr
        st = contig(big.shape)
        return Strided(be.from_flat(big.reshape(-1), dtype), shape, st[:-1] + (2,), 0, dtype), arr
    raise ValueError(layout)


def out_view(shape, dtype):
    n = int(np.prod(shape)) if shape else 1
    return Strided(be.empty(n, dtype), tuple(shape), contig(shape), 0, dtype)


def get(v):
    return be.to_numpy(v)


def close(got, want, rtol=1e-5, atol=1e-6):
    want = want.numpy() if isinstance(want, torch.Tensor) else np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype == np.bool_ or want.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want.astype(got.dtype))
    else:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol,
                                   equal_nan=True)


# ---------------------------------------------------------------------------------------------
# element-wise
# ---------------------------------------------------------------------------------------------
torch_un = torch_oracle


# every unary kernel on floats: the primitives and the backend's fast paths (decomposed ops it computes itself)
@pytest.mark.parametrize("op", kernels(1, "f", "wgsl"))
def test_unary_float32(op):
    lo, hi = RECORDS[op].domain
    x = rng.uniform(lo, hi, size=(5, 7)).astype(np.float32)
    if op in ("round", "floor", "ceil", "trunc", "sign", "relu", "abs", "signbit"):
        x[0, :4] = [2.5, -2.5, 0.5, -0.0]
    if op in ("isnan", "isinf", "isfinite", "signbit", "copy", "neg", "abs", "relu", "sign"):
        x[1, :3] = [np.nan, np.inf, -np.inf]
    for layout in ("contig", "transposed", "offset"):
        v, a = gpu(x, layout=layout)
        want = torch_un(op)(torch.from_numpy(a.copy()))
        o = out_view(a.shape, "bool" if want.dtype == torch.bool else "float32")
        be.ewise(op, o, [v], "float32")
        tol = RECORDS[op].tol
        close(get(o), want, rtol=tol or 1e-5, atol=(tol or 1e-6) * 2)


INT_UN = kernels(1, "i", "wgsl")


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_unary_int(dtype):
    x = rng.integers(-50, 50, size=(4, 6)).astype(NP[dtype])
    v, a = gpu(x, layout="transposed")
    for op in INT_UN:
        want = torch_un(op)(torch.from_numpy(a.copy()))
        o = out_view(a.shape, "bool" if want.dtype == torch.bool else dtype)
        be.ewise(op, o, [v], dtype)
        close(get(o), want)


def test_unary_bool_uint8():
    b = rng.integers(0, 2, size=(3, 5)).astype(bool)
    v, a = gpu(b, layout="strided")
    for op in kernels(1, "b", "wgsl"):
        o = out_view(a.shape, "bool")
        be.ewise(op, o, [v], "bool")
        close(get(o), torch_un(op)(torch.from_numpy(a.copy())))
    u = rng.integers(0, 256, size=(3, 5)).astype(np.uint8)
    v, a = gpu(u, layout="offset")
    for op in kernels(1, "u", "wgsl"):
        want = torch_un(op)(torch.from_numpy(a.copy()))
        o = out_view(a.shape, "bool" if want.dtype == torch.bool else "uint8")
        be.ewise(op, o, [v], "uint8")
        close(get(o), want)


FLOAT_BIN = kernels(2, "f", "wgsl")
torch_bin = torch_oracle


@pytest.mark.parametrize("op", FLOAT_BIN)
def test_binary_float32(op):
    a = rng.uniform(-3, 3, size=(4, 1, 6)).astype(np.float32)
    b = rng.uniform(-3, 3, size=(1, 5, 6)).astype(np.float32)
    if op == "pow":
        a = np.abs(a) + 0.1
        b[0, 0, :3] = [2.0, 3.0, -1.0]
    a[0, 0, :3] = [1.5, 0.0, -2.0]
    b[0, 0, :3] = b[0, 0, :3] if op == "pow" else [1.5, 0.0, 0.5]
    if op in ("maximum", "minimum", "fmax", "fmin", "eq", "ne", "lt"):
        a[1, 0, 0] = np.nan
    va, aa = gpu(a, layout="transposed")
    vb, bb = gpu(b, layout="offset")
    shape = (4, 5, 6)
    # broadcast: stride 0 on size-1 dims
    va = Strided(va.buf, shape, (va.strides[0], 0, va.strides[2]), va.offset, "float32")
    vb = Strided(vb.buf, shape, (0, vb.strides[1], vb.strides[2]), vb.offset, "float32")
    ta, tb = torch.from_numpy(aa.copy()), torch.from_numpy(bb.copy())
    want = torch_bin(op)(ta, tb)
    o = out_view(shape, "bool" if want.dtype == torch.bool else "float32")
    be.ewise(op, o, [va, vb], "float32")
    close(get(o), want, rtol=RECORDS[op].tol or 1e-5, atol=1e-5)
    # scalar on the right
    want = torch_bin(op)(ta, torch.tensor(1.5)).expand(shape)
    be.ewise(op, o, [va, 1.5], "float32")
    close(get(o), want.to(TT[o.dtype]), rtol=RECORDS[op].tol or 1e-5, atol=1e-5)


INT_BIN = kernels(2, "i", "wgsl")


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_binary_int(dtype):
    a = rng.integers(-40, 40, size=(3, 7)).astype(NP[dtype])
    b = rng.integers(1, 9, size=(3, 7)).astype(NP[dtype]) * rng.choice([-1, 1], size=(3, 7))
    va, aa = gpu(a, layout="strided")
    vb, bb = gpu(b, layout="transposed")
    for op in INT_BIN:
        bx = bb.copy()
        if op in ("lshift", "rshift", "pow"):
            bx = np.abs(bx) % 5
            vb2, bx = gpu(bx.astype(NP[dtype]))
        else:
            vb2 = vb
        want = torch_bin(op)(torch.from_numpy(aa.copy()), torch.from_numpy(bx.copy()))
        o = out_view(a.shape, "bool" if want.dtype == torch.bool else dtype)
        be.ewise(op, o, [va, vb2], dtype)
        close(get(o), want)


def test_binary_bool_uint8():
    a = rng.integers(0, 2, size=(9,)).astype(bool)
    b = rng.integers(0, 2, size=(9,)).astype(bool)
    va, aa = gpu(a)
    vb, bb = gpu(b, layout="offset")
    for op in kernels(2, "b", "wgsl"):
        o = out_view((9,), "bool")
        be.ewise(op, o, [va, vb], "bool")
        close(get(o), torch_bin(op)(torch.from_numpy(aa), torch.from_numpy(bb)))
    a = rng.integers(0, 256, size=(9,)).astype(np.uint8)
    b = rng.integers(1, 256, size=(9,)).astype(np.uint8)
    va, aa = gpu(a)
    vb, bb = gpu(b)
    for op in kernels(2, "u", "wgsl"):
        want = torch_bin(op)(torch.from_numpy(aa), torch.from_numpy(bb))
        o = out_view((9,), "bool" if want.dtype == torch.bool else "uint8")
        be.ewise(op, o, [va, vb], "uint8")
        close(get(o), want)


def test_every_ewise_op_name_compiles():
    """each op name in base.EWISE_OPS runs on some dtype (float32 unless integer-only)"""
    for op, arity in EWISE_OPS.items():
        dt = "float32" if "f" in RECORDS[op].kinds else "int32"
        ins = [gpu(np.ones(3, NP[dt]))[0] for _ in range(arity)]
        if op == "where":
            ins[0] = gpu(np.array([True, False, True]))[0]
        o = out_view((3,), "float32")
        be.ewise(op, o, ins, dt)
        assert len(be.to_flat(o)) == 3


def test_where_and_scalars():
    c = rng.integers(0, 2, size=(4, 5)).astype(bool)
    a = rng.standard_normal((4, 5)).astype(np.float32)
    vc, cc = gpu(c, layout="transposed")
    va, aa = gpu(a, layout="offset")
    o = out_view((4, 5), "float32")
    be.ewise("where", o, [vc, va, -1.0], "float32")
    close(get(o), np.where(cc, aa, np.float32(-1)))
    be.ewise("where", o, [True, va, 2], "float32")
    close(get(o), aa)


def test_conversions():
    x = np.array([-2.7, -0.5, 0.0, 0.4, 1.5, 3.9, 255.0, 300.0], np.float32)
    v, a = gpu(x)
    for dt in ("int32", "int64", "bool", "uint8"):
        o = out_view(x.shape, dt)
        be.ewise("copy", o, [v], "float32")
        want = torch.from_numpy(a).to(TT[dt]) if dt != "uint8" else torch.from_numpy(a).to(torch.int64).to(torch.uint8)
        close(get(o), want)
    i = np.array([-3, 0, 7, 100000], np.int64)
    v, a = gpu(i)
    o = out_view(i.shape, "float32")
    be.ewise("copy", o, [v], "int64")
    close(get(o), a.astype(np.float32))
    o = out_view(i.shape, "float32")
    be.ewise("div", o, [v, 2], "float32")       # int inputs computed in float
    close(get(o), a / 2.0)


def test_inplace_strided_out():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    v, a = gpu(x)
    col = Strided(v.buf, (3,), (4,), 1, "float32")       # x[:, 1]
    be.ewise("add", col, [col, 100.0], "float32")
    a = a.copy()
    a[:, 1] += 100
    close(get(v), a)


def test_zero_d_and_empty():
    v, a = gpu(np.array(3.0, np.float32))
    o = out_view((), "float32")
    be.ewise("mul", o, [v, v], "float32")
    assert get(o).shape == () and float(get(o)) == 9.0
    assert be.to_flat(o) == [9.0]
    e = out_view((0, 3), "float32")
    be.ewise("exp", e, [Strided(be.empty(0, "float32"), (0, 3), (3, 1), 0, "float32")], "float32")
    assert get(e).shape == (0, 3) and be.to_flat(e) == []
    r = out_view((4,), "float32")
    be.reduce("sum", r, Strided(be.empty(0, "float32"), (4, 0), (0, 1), 0, "float32"))
    close(get(r), np.zeros(4, np.float32))
    r = out_view((), "float32")
    be.reduce("sum", r, v)                           # empty inner: reduce over nothing
    assert float(get(r)) == 3.0


def test_float16():
    if not be.has_f16:
        with pytest.raises(TypeError, match="shader-f16"):
            be.empty(4, "float16")
        return
    x = rng.standard_normal((4, 6)).astype(np.float16)
    v, a = gpu(x, layout="transposed")
    o = out_view((4, 6), "float16")
    be.ewise("mul", o, [v, 3.0], "float16")
    close(get(o), (torch.from_numpy(a.copy()) * 3.0), rtol=1e-3, atol=1e-3)
    be.ewise("exp", o, [v], "float16")
    close(get(o), torch.from_numpy(a.copy()).exp(), rtol=2e-3, atol=1e-3)
    r = out_view((4,), "float16")
    be.reduce("sum", r, v)
    close(get(r), torch.from_numpy(a.copy()).float().sum(1).half(), rtol=2e-3, atol=2e-3)
    o32 = out_view((4, 6), "float32")
    be.ewise("copy", o32, [v], "float16")
    close(get(o32), a.astype(np.float32))


# ---------------------------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------------------------
def torch_reduce(op, t, nd):
    dims = tuple(range(t.dim() - nd, t.dim()))
    if op in ("argmax", "argmin"):
        return getattr(torch, op)(t, dim=-1)
    if op in ("max", "min"):
        r = t
        for d in reversed(dims):
            r = getattr(torch, "amax" if op == "max" else "amin")(r, dim=d)
        return r
    if op == "prod":
        r = t
        for d in reversed(dims):
            r = r.prod(d)
        return r
    if op in ("any", "all"):
        return getattr(torch, op)(t.flatten(t.dim() - nd) if nd else t.unsqueeze(-1), dim=-1)
    return t.sum(dim=dims) if nd else t


@pytest.mark.parametrize("op", ["sum", "prod", "max", "min", "argmax", "argmin", "any", "all"])
def test_reduce(op):
    x = rng.uniform(0.5, 1.5, size=(3, 4, 5)).astype(np.float32)
    x[0, 1, 2] = 7.0
    x[2, 0, :] = 1.25                           # ties: first index wins
    nd = 1 if op.startswith("arg") else 2
    for layout in ("contig", "transposed", "offset"):
        v, a = gpu(x, layout=layout)
        t = torch.from_numpy(a.copy())
        want = torch_reduce(op, t, nd)
        odt = {"argmax": "int64", "argmin": "int64", "any": "bool", "all": "bool"}.get(op, "float32")
        o = out_view(tuple(want.shape), odt)
        if op in ("any", "all"):
            vb = out_view(x.shape, "bool")
            be.ewise("lt", vb, [1.0, v], "float32")
            want = torch_reduce(op, t > 1.0, nd)
            be.reduce(op, o, vb)
        else:
            be.reduce(op, o, v)
        close(get(o), want, rtol=1e-5)


def test_reduce_nan_int_and_multipass():
    x = rng.standard_normal((3, 10)).astype(np.float32)
    x[1, 3] = np.nan
    x[1, 6] = np.nan
    v, a = gpu(x)
    for op in ("max", "min", "argmax", "argmin"):
        o = out_view((3,), "int64" if op.startswith("arg") else "float32")
        be.reduce(op, o, v)
        t = torch.from_numpy(a)
        want = getattr(torch, op)(t, dim=1) if op.startswith("arg") else getattr(torch, "a" + op)(t, dim=1)
        close(get(o), want)
    i = rng.integers(-100, 100, size=(4, 9)).astype(np.int64)
    v, a = gpu(i, layout="transposed")
    for op in ("sum", "max", "argmin"):
        o = out_view((4,), "int64")
        be.reduce(op, o, v)
        t = torch.from_numpy(a.copy())
        close(get(o), t.sum(1) if op == "sum" else t.amax(1) if op == "max" else t.argmin(1))
    # large inner extent, few outputs: two passes
    big = rng.standard_normal((2, 300000)).astype(np.float32)
    big[1, 123456] = 50.0
    v, a = gpu(big)
    o = out_view((2,), "float32")
    be.reduce("sum", o, v)
    close(get(o), a.astype(np.float64).sum(1), rtol=1e-4, atol=1e-2)
    oi = out_view((2,), "int64")
    be.reduce("argmax", oi, v)
    close(get(oi), a.argmax(1))
    o1 = out_view((), "float32")
    be.reduce("max", o1, Strided(v.buf, (600000,), (1,), 0, "float32"))
    assert float(get(o1)) == 50.0


# ---------------------------------------------------------------------------------------------
# matmul
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("B,M,K,N", [(1, 64, 64, 64), (2, 33, 20, 12), (1, 1, 7, 5), (3, 70, 130, 68),
                                     (1, 5, 0, 3), (2, 36, 40, 52), (1, 132, 64, 100), (1, 264, 32, 30)])
def test_matmul(B, M, K, N):
    a = rng.standard_normal((B, M, K)).astype(np.float32)
    b = rng.standard_normal((B, K, N)).astype(np.float32)
    want = torch.from_numpy(a) @ torch.from_numpy(b)
    for la, lb in (("contig", "contig"), ("transposed", "offset"), ("offset", "transposed")):
        va, _ = gpu(a, layout=la)
        vb, _ = gpu(b, layout=lb)
        o = out_view((B, M, N), "float32")
        be.matmul(o, va, vb)
        close(get(o), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("la,lb", [("contig", "contig"), ("transposed", "contig"), ("contig", "transposed"),
                                   ("transposed", "transposed")])
@pytest.mark.parametrize("lavapipe", [True, False], ids=["lavapipe", "other-cpu-adapter"])
def test_matmul_register_block_edges(la, lb, lavapipe, monkeypatch):
    """the plain register-block kernel (REG_LARGE's block on lavapipe, REG_SMALL's for these small
    products on other CPU adapters) on products whose sizes are not multiples of the block, with
    each operand read as stored or transposed, vec4 and scalar out"""
    if not be.is_lavapipe:
        pytest.skip("the blocks chosen for CPU adapters: this adapter is not lavapipe")
    monkeypatch.setattr(be, "is_lavapipe", lavapipe)
    reg = be.prims.REG_LARGE if lavapipe else be.prims.REG_SMALL
    tm, tn = reg["TM"], reg["TN"]
    ran, reg = [], be.prims._matmul_reg
    monkeypatch.setattr(be.prims, "_matmul_reg", lambda *a, **k: ran.append(k.get("epi")) or reg(*a, **k))
    for B, M, K, N in ((2, tm + 4, 40, tn + 20), (1, 3 * tm + 4, 64, 2 * tn + 4), (1, 8 * tm + 4, 64, tn - 2)):
        a = rng.standard_normal((B, M, K)).astype(np.float32)
        b = rng.standard_normal((B, K, N)).astype(np.float32)
        o = out_view((B, M, N), "float32")
        be.matmul(o, gpu(a, layout=la)[0], gpu(b, layout=lb)[0])
        close(get(o), torch.from_numpy(a) @ torch.from_numpy(b), rtol=1e-4, atol=1e-4)
    assert len(ran) >= 2 and ran[0] is None, "the plain register-block kernel did not run"


@pytest.mark.parametrize("cpu_adapter", [True, False], ids=["matmul_block", "matmul_tiled"])
@pytest.mark.parametrize("dtype", ["float32", "int64", "float16"])
def test_matmul_general_kernels(cpu_adapter, dtype, monkeypatch):
    """the general product (any strides and dtypes): matmul_block.wgsl on CPU adapters, matmul_tiled.wgsl on GPUs
    (run here by taking this adapter for a GPU), on sizes that are not multiples of either's tiles and on
    transposed and offset operands; the same values as PyTorch (integers exactly)"""
    if dtype == "float16" and not be.has_f16:
        pytest.skip("no shader-f16")
    monkeypatch.setattr(be, "is_cpu_adapter", cpu_adapter)
    ran, general = [], be.prims._matmul_general
    monkeypatch.setattr(be.prims, "_matmul_general", lambda *a, **k: ran.append(1) or general(*a, **k))
    for B, M, K, N in ((1, 1, 3, 1), (2, 33, 7, 65), (1, 70, 130, 10), (3, 5, 1, 37)):
        if dtype == "int64":
            a, b = rng.integers(-9, 9, size=(B, M, K)), rng.integers(-9, 9, size=(B, K, N))
        else:
            a, b = rng.standard_normal((B, M, K)), rng.standard_normal((B, K, N))
        a, b = a.astype(NP[dtype]), b.astype(NP[dtype])
        for la, lb in (("contig", "transposed"), ("offset", "contig")):
            o = out_view((B, M, N), dtype)
            be.matmul(o, gpu(a, layout=la)[0], gpu(b, layout=lb)[0])
            want = torch.from_numpy(a.astype(np.float32)) @ torch.from_numpy(b.astype(np.float32))
            close(get(o), want.to(TT[dtype]) if dtype == "int64" else want, rtol=1e-2 if dtype == "float16" else 1e-5,
                  atol=1e-2 if dtype == "float16" else 1e-5)
    assert ran, "the general kernel did not run"


def test_matmul_broadcast_int_f16():
    a = rng.standard_normal((1, 16, 8)).astype(np.float32)
    b = rng.standard_normal((3, 8, 12)).astype(np.float32)
    va, _ = gpu(a)
    va = Strided(va.buf, (3, 16, 8), (0, 8, 1), 0, "float32")      # batch-broadcast a
    vb, _ = gpu(b)
    o = out_view((3, 16, 12), "float32")
    be.matmul(o, va, vb)
    close(get(o), torch.from_numpy(a) @ torch.from_numpy(b), rtol=1e-4, atol=1e-4)
    ai = rng.integers(-5, 5, size=(1, 6, 7)).astype(np.int64)
    bi = rng.integers(-5, 5, size=(1, 7, 3)).astype(np.int64)
    o = out_view((1, 6, 3), "int64")
    be.matmul(o, gpu(ai)[0], gpu(bi)[0])
    close(get(o), ai @ bi)
    if be.has_f16:
        ah, bh = a[0].astype(np.float16)[None], b[:1].astype(np.float16)
        o = out_view((1, 16, 12), "float16")
        be.matmul(o, gpu(ah)[0], gpu(bh)[0])
        close(get(o), ah.astype(np.float32) @ bh.astype(np.float32), rtol=1e-2, atol=1e-2)


# ---------------------------------------------------------------------------------------------
# take / put
# ---------------------------------------------------------------------------------------------
def test_take():
    src = rng.standard_normal(50).astype(np.float32)
    sv, _ = gpu(src)
    idx = rng.integers(0, 50, size=(4, 6)).astype(np.int64)
    iv, ia = gpu(idx, layout="transposed")
    o = out_view((4, 6), "float32")
    be.take(o, sv.buf, "float32", iv)
    close(get(o), src[ia])
    isrc = np.arange(10, dtype=np.int64) * 3
    o = out_view((3,), "int64")
    be.take(o, gpu(isrc)[0].buf, "int64", gpu(np.array([9, 0, 9], np.int64))[0])
    close(get(o), isrc[[9, 0, 9]])


@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "bool", "float16"])
def test_put(dtype):
    if dtype == "float16" and not be.has_f16:
        pytest.skip("no shader-f16")
    dst = np.zeros(11, NP[dtype])
    idx = np.array([1, 3, 3, 3, 10, 0, 2, 2], np.int64)
    vals = (np.arange(8) % 5 + 1).astype(NP[dtype])
    for acc in (False, True):
        dv, _ = gpu(dst)
        iv, _ = gpu(idx.reshape(2, 4), layout="transposed")
        vv, _ = gpu(vals.reshape(2, 4), layout="transposed")
        be.put(dv.buf, dtype, iv, vv, acc)
        want = torch.zeros(11, dtype=TT[dtype]).index_put_(
            (torch.from_numpy(idx),), torch.from_numpy(vals), accumulate=acc)
        got = get(dv)
        if acc:
            close(got, want)
        else:   # duplicates: any one of the written values may win (as in PyTorch)
            for k in set(idx.tolist()):
                assert got[k] in vals[idx == k]
    dv, _ = gpu(dst)
    be.put(dv.buf, dtype, gpu(np.array([4, 4, 4], np.int64))[0], 1, True)
    assert get(dv)[4] == (True if dtype == "bool" else 3)


# ---------------------------------------------------------------------------------------------
# scan / sort
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"])
def test_scan(op):
    for L in (7, 600):
        x = rng.uniform(0.9, 1.1 if op == "cumprod" else 3, size=(3, L)).astype(np.float32)
        x[:, 3] = x[:, 1]                                    # ties
        v, a = gpu(x, layout="transposed")
        t = torch.from_numpy(a.copy())
        o = out_view(x.shape, "float32")
        if op in ("cummax", "cummin"):
            oi = out_view(x.shape, "int64")
            be.scan(op, o, v, oi)
            want = getattr(torch, op)(t, dim=1)
            close(get(o), want.values)
            close(get(oi), want.indices)
        else:
            be.scan(op, o, v)
            close(get(o), getattr(torch, op)(t, dim=1), rtol=1e-4, atol=1e-4)
    xi = rng.integers(-5, 5, size=(2, 9)).astype(np.int64)
    v, a = gpu(xi)
    o = out_view(xi.shape, "int64")
    if op in ("cumsum", "cumprod"):
        be.scan(op, o, v)
        close(get(o), getattr(torch, op)(torch.from_numpy(a), dim=1))


@pytest.mark.parametrize("L", [1, 5, 64, 1000, 3000])
def test_sort(L):
    x = rng.integers(0, max(2, L // 3), size=(3, L)).astype(np.float32)    # many ties
    if L > 4:
        x[1, 2] = np.nan
    for desc in (False, True):
        v, a = gpu(x, layout="transposed" if L < 100 else "contig")
        ov, oi = out_view(x.shape, "float32"), out_view(x.shape, "int64")
        be.sort(ov, oi, v, desc, True)
        want = torch.sort(torch.from_numpy(a.copy()), dim=1, descending=desc, stable=True)
        close(get(ov), want.values)
        close(get(oi), want.indices)
    xi = rng.integers(-1000, 1000, size=(2, L)).astype(np.int32)
    ov, oi = out_view(xi.shape, "int32"), out_view(xi.shape, "int64")
    be.sort(ov, oi, gpu(xi)[0], False, True)
    want = torch.sort(torch.from_numpy(xi), dim=1, stable=True)
    close(get(ov), want.values)
    close(get(oi), want.indices)


# ---------------------------------------------------------------------------------------------
# creation: arange, random
# ---------------------------------------------------------------------------------------------
def test_arange():
    o = out_view((10,), "float32")
    be.arange(o, 0.5, 0.25)
    close(get(o), torch.arange(10) * 0.25 + 0.5)
    o = out_view((7,), "int64")
    be.arange(o, -3, 2)
    close(get(o), torch.arange(-3, 11, 2))


def test_random_matches_cpu_recipe():
    seed, off = 0x123456789ABC, 7
    o = out_view((1000,), "float32")
    be.random(o, "uniform", seed, off)
    want = _philox.draw_numpy(1000, "uniform", seed, off).astype(np.float32)
    np.testing.assert_array_equal(get(o), want)                        # bit for bit
    assert get(o).min() >= 0 and get(o).max() < 1
    be.random(o, "normal", seed, off)
    close(get(o), _philox.draw_numpy(1000, "normal", seed, off), rtol=1e-4, atol=1e-4)
    assert np.array_equal(np.array(_philox.draw(5, "uniform", seed, off), np.float32), want[:5])


# ---------------------------------------------------------------------------------------------
# runtime: allocator, batching, grid folding, errors
# ---------------------------------------------------------------------------------------------
def test_allocator_reuses_freed_buffers():
    import gc
    b = be.empty(1000, "float32")
    h = b.handle
    del b
    gc.collect()
    before = be.alloc.reuses
    b2 = be.empty(1000, "float32")
    assert be.alloc.reuses == before + 1
    assert b2.handle is h


def test_batching_one_submit():
    be.synchronize()
    x, a = gpu(np.ones(100, np.float32))
    be.synchronize()
    s0, d0 = webgpu.submit_count(), webgpu.dispatch_count()
    o = out_view((100,), "float32")
    for _ in range(50):
        be.ewise("add", o, [x, o if _ else 0.0], "float32")
    assert webgpu.submit_count() == s0                 # nothing submitted yet
    assert be.to_flat(o)[0] == 50.0
    assert webgpu.dispatch_count() - d0 == 50
    assert webgpu.submit_count() - s0 == 1


def test_workgroup_grid_folds_past_65535():
    # force a tiny per-dimension cap so the fold is exercised cheaply, then a real one
    old = be.max_wg
    be.max_wg = 7
    try:
        n = 256 * 7 * 7 * 3 + 11            # needs x, y and z
        o = out_view((n,), "float32")
        be.arange(o, 0, 1)
        a = get(o)
        assert a[-1] == n - 1 and np.array_equal(a, np.arange(n, dtype=np.float32))
    finally:
        be.max_wg = old
    n = 65535 * 256 + 1000
    x = Strided(be.empty(n, "int32"), (n,), (1,), 0, "int32")
    be.arange(x, 0, 1)
    o = Strided(be.empty(n, "int32"), (n,), (1,), 0, "int32")
    be.ewise("add", o, [x, 1], "int32")
    raw = be.commands.read_buffer(o.buf.handle, (n - 2000) * 4, 2000 * 4)
    tail = np.frombuffer(bytes(raw), np.int32)
    assert np.array_equal(tail, np.arange(n - 2000, n, dtype=np.int32) + 1)


def test_errors():
    with pytest.raises(TypeError, match="float64 is not supported on webgpu"):
        be.empty(3, "float64")
    with pytest.raises(TypeError, match="float64 is not supported on webgpu"):
        be.from_flat([1.0], "float64")
    with pytest.raises(RuntimeError, match="does not fit in int32"):
        be.from_flat([1, 2**40], "int64")
    with pytest.raises(RuntimeError, match="does not fit in int32"):
        be.from_flat(np.array([1, -2**35], np.int64), "int64")
    with pytest.raises(RuntimeError, match=r"^WebGPU out of memory:.*\d+ bytes"):
        be.empty(be.max_bytes // 4 + 1, "float32")


def test_adapter_info_and_counters():
    info = webgpu.adapter_info()
    assert "vendor" in info and "limits" in info and "max-buffer-size" in info["limits"]
    c = webgpu.counters()
    assert c["dispatches"] > 0 and c["pipelines"] > 0


def test_device_lost_is_a_clear_error():
    import subprocess
    code = (
        "import sys, os; sys.path.insert(0, %r); os.environ.setdefault('XDG_RUNTIME_DIR', '/tmp')\n"
        "from webtorch.backends.base import Strided\n"
        "from webtorch.backends import webgpu\n"
        "be = webgpu.get_backend()\n"
        "x = Strided(be.from_flat([1.0, 2.0], 'float32'), (2,), (1,), 0, 'float32')\n"
        "be.driver.device.destroy()\n"
        "for f in (lambda: be.ewise('add', x, [x, 1.0], 'float32'), lambda: be.to_flat(x)):\n"
        "    try:\n"
        "        f(); print('NOERROR')\n"
        "    except RuntimeError as e:\n"
        "        print('LOST' if 'WebGPU device was lost' in str(e) else 'OTHER: ' + str(e))\n"
    ) % os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "py")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.stdout.split() == ["LOST", "LOST"], r.stdout + r.stderr


def test_aliased_buffers_bound_once():
    """in-place ops, x * x and x @ x.T bind each buffer once (browsers reject a writable
    buffer bound twice in one dispatch)"""
    x = rng.standard_normal((8, 12)).astype(np.float32)
    v, a = gpu(x)
    o = out_view((8, 12), "float32")
    be.ewise("mul", o, [v, v], "float32")
    close(get(o), a * a)
    be.ewise("add", v, [v, v], "float32")                                           # x += x
    close(get(v), a + a)
    v, a = gpu(x)
    for (m, k, n) in ((8, 12, 8),):
        va = Strided(v.buf, (1, m, k), (0, k, 1), 0, "float32")
        vt = Strided(v.buf, (1, k, n), (0, 1, k), 0, "float32")
        o = out_view((1, m, n), "float32")
        be.matmul(o, va, vt)
        close(get(o), (a @ a.T)[None], rtol=1e-4, atol=1e-4)


def test_kernel_prelude_cut_to_what_it_reaches():
    """A kernel keeps, of the helper prelude every generated kernel embeds, only the items its own code reaches
    (directly or through other items), in their order; a kernel that reaches none keeps none, and a source without
    the prelude is left as it is. Every kernel the tests build compiles from the cut text (kernels.py)."""
    from webtorch.backends.webgpu.codegen import prelude, shake
    p = prelude()
    src = "// head\n" + p + "fn main() { let y = werf(1.0); }\n"
    cut = shake(src, p)
    assert "fn werf(" in cut and "fn werfc_pos(" in cut and "fn wisnan(" in cut  # werf's, and what it calls
    assert "fn wzeta(" not in cut and "fn wlgamma(" not in cut and len(cut) < len(src) // 4
    assert cut.startswith("// head\n") and cut.endswith("fn main() { let y = werf(1.0); }\n")
    assert cut.index("fn wisnan(") < cut.index("fn werfc_pos(") < cut.index("fn werf(")
    bare = shake("// head\n" + p + "fn main() { }\n", p)
    assert "fn " not in bare.replace("fn main()", "")
    assert shake("fn main() { }", p) == "fn main() { }"
    assert "fn werf(" not in shake(src.replace("werf(1.0)", "1.0 // werf(1.0)"), p)  # a comment reaches nothing
