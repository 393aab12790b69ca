"""The reference decompositions of the ops that were backend primitives (`backends/base.py`
KERNEL_FAST_PATHS: sub, ne, ge, remainder, trunc, isnan, ...), run WITHOUT any backend kernel of
their own: the pure-Python backend with `fast_paths` emptied, as a new backend that implements only
the primitive set would run them. Against PyTorch, bit for bit, on NaN, ±inf, -0.0, integer
extremes (wrap-around), uint8 and bool, for every dtype the op takes, forward and gradient."""
import math

import numpy as np
import pytest
import torch

import webtorch as wt
from webtorch import _device
from webtorch.backends.base import EWISE_OPS, KERNEL_FAST_PATHS
from webtorch.backends.cpu import PureBackend
from webtorch.backends import webgpu as wg
from webtorch.ops import registry

DECOMPOSED = sorted(KERNEL_FAST_PATHS)
UNARY = [op for op in DECOMPOSED if registry.ELEMENTWISE[op].kind == "unary"]
BINARY = [op for op in DECOMPOSED if registry.ELEMENTWISE[op].kind == "binary"]
DTYPES = ["float32", "float64", "float16", "int32", "int64", "uint8", "bool"]
FLOATS = [math.nan, math.inf, -math.inf, -0.0, 0.0, 0.5, -0.5, 2.5, -2.0, 3.0, 7.0, -7.0, 1e-3]
INTS = {"int32": [-2 ** 31, 2 ** 31 - 1, -7, -3, -1, 0, 1, 2, 3, 7],
        "int64": [-2 ** 63, 2 ** 63 - 1, -7, -3, -1, 0, 1, 2, 3, 7],
        "uint8": [0, 1, 2, 3, 7, 128, 254, 255], "bool": [False, True]}
SCALARS = {"float32": -1.5, "float64": 2.25, "float16": 0.5, "int32": 3, "int64": -2, "uint8": 2, "bool": True}


@pytest.fixture
def bare():
    """The cpu device on the pure-Python backend without fast paths: only the primitive set."""
    prev = _device._backends.get("cpu")
    be = PureBackend()
    be.fast_paths = frozenset()
    kernels = be.ewise

    def primitives_only(op, out, inputs, cdtype):  # what a backend without these kernels is asked
        assert op in EWISE_OPS, f"{op} reached the backend"
        return kernels(op, out, inputs, cdtype)
    be.ewise = primitives_only
    _device._backends["cpu"] = be
    try:
        yield be
    finally:
        if prev is None:
            _device._backends.pop("cpu", None)
        else:
            _device._backends["cpu"] = prev


def test_decomposed_ops_are_not_primitives():
    for op in DECOMPOSED:
        assert op not in EWISE_OPS and registry.ELEMENTWISE[op].ref is not None, op


def values(dtype):
    return FLOATS if dtype.startswith("float") else INTS[dtype]


def same(w, t, what, zero_sign=True):
    """Equal dtype and shape; NaN where torch has NaN; every other element equal, the sign of a zero too
    (unless not zero_sign)."""
    assert str(w.dtype) == str(t.dtype) and tuple(w.shape) == tuple(t.shape), (what, w.dtype, t.dtype)
    got = torch.tensor(w.tolist(), dtype=t.dtype).reshape(t.shape)
    if not t.is_floating_point():
        assert torch.equal(got, t), f"{what}\n{got}\n{t}"
        return
    assert torch.equal(got.isnan(), t.isnan()), f"{what}: NaN\n{got}\n{t}"
    ok = ~t.isnan()
    assert torch.equal(got[ok], t[ok]), f"{what}\n{got}\n{t}"
    assert not zero_sign or torch.equal(got[ok].signbit(), t[ok].signbit()), f"{what}: sign of zero\n{got}\n{t}"


def run(fn, *args):
    """fn(torch, *torch tensors) and fn(webtorch, *webtorch tensors): equal results, or the same
    exception type from both."""
    targs = [torch.tensor(a[0], dtype=getattr(torch, a[1])) if isinstance(a, tuple) else a for a in args]
    wargs = [wt.tensor(a[0], dtype=getattr(wt, a[1])) if isinstance(a, tuple) else a for a in args]
    try:
        want = fn(torch, *targs)
    except Exception as e:  # noqa: BLE001 - the type is compared below
        with pytest.raises(type(e)):
            fn(wt, *wargs)
        return
    same(fn(wt, *wargs), want, args)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", UNARY)
def test_unary_decomposition(bare, op, dtype):
    x = (values(dtype), dtype)
    run(lambda T, x: getattr(T, op)(x), x)
    if hasattr(torch.Tensor, op + "_"):
        run(lambda T, x: getattr(x, op + "_")(), x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", BINARY)
def test_binary_decomposition(bare, op, dtype):
    v = values(dtype)
    other = v if op != "remainder" or dtype.startswith("float") else [u for u in v if u]  # integer % 0 raises
    a, b = ([[u] for u in v], dtype), ([other], dtype)          # every pair by broadcasting
    fn = getattr(torch, op).__name__
    run(lambda T, a, b: getattr(T, fn)(a, b), a, b)
    if op in ("sub", "ne", "ge", "remainder"):                   # a Python number operand
        run(lambda T, a: getattr(T, fn)(a, SCALARS[dtype]), a)
        if op == "remainder":
            run(lambda T, b: T.remainder(SCALARS[dtype], b), b)
    if op not in ("fmax", "fmin"):                               # PyTorch has no fmax_
        run(lambda T, a, b: getattr(a.clone(), op + "_")(b[0]), a, b)


def test_mixed_dtypes(bare):
    """The decompositions compute in the promoted dtype, as the kernels did."""
    f, i, u, b = (FLOATS[:8], "float32"), ([-3, -1, 0, 1, 2, 3, 7, 9], "int64"), ([0, 1, 2, 3, 7, 128, 254, 255], "uint8"), \
        ([True, False] * 4, "bool")
    for x, y in ((f, i), (i, f), (u, i), (b, i), (f, b), (u, f)):
        for op in ("sub", "ne", "ge", "fmax", "fmin", "logical_and", "logical_or", "logical_xor"):
            run(lambda T, x, y: getattr(T, op)(x, y), x, y)
        run(lambda T, x, y: T.remainder(x, y + 10 * (y == 0)), x, y)


@pytest.mark.parametrize("op", sorted(op for op in DECOMPOSED if registry.ELEMENTWISE[op].node))
def test_gradient(bare, op):
    """Forward and gradient in float64 (points off the kinks), as PyTorch's."""
    rng = np.random.RandomState(0)
    xs = rng.uniform(-3, 3, 12).round(2) + 0.005
    ys = rng.uniform(-3, 3, 12).round(2) + 0.0025
    g = rng.uniform(-1, 1, 12)
    grads = []
    for T in (torch, wt):
        x = T.tensor(xs.tolist(), dtype=T.float64, requires_grad=True)
        y = T.tensor(ys.tolist(), dtype=T.float64, requires_grad=True)
        args = (x,) if registry.ELEMENTWISE[op].kind == "unary" else (x, y)
        out = getattr(T, op)(*args)
        (out * T.tensor(g.tolist(), dtype=T.float64)).sum().backward()
        grads.append([out.tolist()] + [a.grad.tolist() if a.grad is not None else None for a in args])
    np.testing.assert_allclose(np.array(grads[1][0]), np.array(grads[0][0]), rtol=1e-12, atol=1e-12)
    for gw, gt in zip(grads[1][1:], grads[0][1:]):
        np.testing.assert_allclose(np.array(gw), np.array(gt), rtol=1e-12, atol=1e-12)


BIT_TESTS = ("isnan", "isinf", "isfinite")  # WGSL may assume finite floats: webgpu keeps its kernels for these


@pytest.mark.parametrize("op", DECOMPOSED)
def test_webgpu_decomposition_is_one_dispatch(webgpu, op):
    """Without webgpu's own kernel the fusion still runs the decomposition as one dispatch (operands
    of one shape: the fusion splits at broadcasts), and its results are the kernel's and PyTorch's
    (NaN, ±inf, -0.0 among the inputs, except for the bit tests)."""
    vals = [v for v in FLOATS if op not in BIT_TESTS or math.isfinite(v)]
    a, b = np.repeat(np.float32(vals), len(vals)), np.tile(np.float32(vals), len(vals))  # every pair, one shape
    x, y = wt.tensor(a, device="webgpu"), wt.tensor(b, device="webgpu")
    args, targs = ((x,), (torch.from_numpy(a),)) if op in UNARY else ((x, y), (torch.from_numpy(a), torch.from_numpy(b)))
    want = getattr(torch, getattr(torch, op).__name__)(*targs)
    kernel = torch.tensor(getattr(wt, op)(*args).tolist(), dtype=want.dtype)
    be = x._storage.backend
    kept = be.fast_paths
    be.fast_paths = kept - KERNEL_FAST_PATHS
    try:
        wg.synchronize()
        d0 = wg.dispatch_count()
        r = getattr(wt, op)(*args).cpu()
        assert wg.dispatch_count() - d0 == 1, op
    finally:
        be.fast_paths = kept
    # which of two equal zeros webgpu's maximum/minimum/fmax/fmin return is not PyTorch's
    # (tests/test_ieee_specials.py)
    zero_sign = op not in ("fmax", "fmin")
    same(r, kernel, op, zero_sign)
    if op != "remainder":  # WGSL's float % is x - y * trunc(x / y): the kernel's too differs from C's fmod
        same(r, want, op, zero_sign)
