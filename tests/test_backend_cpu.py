"""The CPU backends' primitives against PyTorch (the oracle), on strided, broadcast (stride 0),
offset, empty and 0-d views; the pure-Python backend must also agree with the numpy one."""
import math
import os
import random
import subprocess
import sys

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from webtorch.backends.base import Strided, EWISE_OPS, UNARY, BINARY, REDUCE_OPS, SCAN_OPS  # noqa: E402
from webtorch.backends.cpu import NumpyBackend, PureBackend, make_backend  # noqa: E402
from webtorch import _philox  # noqa: E402
from webtorch.backends.elementwise import RECORDS  # noqa: E402
from _records import (BOOL_OK, BOOL_OUT, FLOAT_ONLY, HALF_NATIVE, INT_DIV, INT_ONLY, TOLERANT, UNIT,  # noqa: E402
                      torch_oracle)

NB, PB = NumpyBackend(), PureBackend()
BACKENDS = [NB, PB]
TD = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
      "int32": torch.int32, "int64": torch.int64, "uint8": torch.uint8, "bool": torch.bool,
      "int8": torch.int8, "int16": torch.int16}
FLOATS = ("float16", "float32", "float64")
TOL = {"float16": (2e-3, 1e-3), "float32": (2e-5, 1e-6), "float64": (1e-10, 1e-12)}
BASE_N = 24

# ---- data ---------------------------------------------------------------------------------

_rng = random.Random(1234)
_F_SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, math.inf, -math.inf, math.nan,
              3.0, 0.25]
FLOAT_DATA = _F_SPECIAL + [round(_rng.uniform(-3, 3), 3) for _ in range(BASE_N - len(_F_SPECIAL))]
UNIT_DATA = [0.0, -0.0, 0.5, -0.5, 0.99, -0.999, 1.0, -1.0, 1.5, math.nan, 0.7, -0.7] + \
    [round(_rng.uniform(-1, 1), 4) for _ in range(BASE_N - 12)]
INT_DATA = {
    "int32": [0, 1, -1, 2, -2, 7, -7, 5, 3, -3, 2**31 - 1, -2**31] + [_rng.randint(-9, 9) for _ in range(12)],
    "int64": [0, 1, -1, 2, -2, 7, -7, 5, 3, -3, 2**63 - 1, -2**63] + [_rng.randint(-9, 9) for _ in range(12)],
    "uint8": [0, 1, 2, 255, 254, 7, 128, 5, 3, 9] + [_rng.randint(0, 20) for _ in range(14)],
    "int8": [0, 1, -1, 127, -128, 7, -7, 5] + [_rng.randint(-9, 9) for _ in range(16)],
    "int16": [0, 1, -1, 32767, -32768, 7, -7, 5] + [_rng.randint(-9, 9) for _ in range(16)],
    "bool": [_rng.random() < 0.5 for _ in range(BASE_N)],
}
NONZERO = {k: [v if v != 0 else 3 for v in vals] for k, vals in INT_DATA.items() if k != "bool"}
SMALL = {"int32": [_rng.randint(-6, 6) for _ in range(BASE_N)],
         "int64": [_rng.randint(-6, 6) for _ in range(BASE_N)],
         "uint8": [_rng.randint(0, 12) for _ in range(BASE_N)]}
SHIFTS = {"int32": [0, 1, 3, 31, 32, 33, -1, 5] * 3, "int64": [0, 1, 3, 63, 64, 65, -1, 5] * 3,
          "uint8": [0, 1, 3, 7, 8, 9, 200, 5] * 3}


def data_for(dtype, kind="any"):
    if dtype in FLOATS:
        return UNIT_DATA if kind == "unit" else FLOAT_DATA
    if kind == "nonzero":
        return NONZERO[dtype]
    if kind == "small":
        return SMALL[dtype]
    if kind == "shift":
        return SHIFTS[dtype]
    if kind == "exponent":
        return [v % 6 - 2 if dtype != "uint8" else v % 5 for v in SMALL[dtype]]
    return INT_DATA[dtype]


# ---- views --------------------------------------------------------------------------------
# (shape, strides, offset) layouts over a base of BASE_N elements, all viewing out shape (3, 4)
LAYOUTS = {
    "contig": ((3, 4), (4, 1), 0),
    "transposed": ((3, 4), (1, 3), 2),
    "bcast_row": ((3, 4), (0, 1), 5),
    "bcast_col": ((3, 4), (2, 0), 1),
    "gapped": ((3, 4), (7, 2), 3),
}
LAYOUT_COMBOS = [("contig", "transposed", "gapped"), ("transposed", "bcast_row", "contig"),
                 ("bcast_col", "gapped", "bcast_row"), ("gapped", "contig", "transposed")]


class Inp:
    """A test input: a strided view of a base list (backend Strided + torch tensor) or a scalar."""

    def __init__(self, base, dtype, shape, strides, offset):
        self.base, self.dtype = base, dtype
        self.shape, self.strides, self.offset = shape, strides, offset

    def view(self, be):
        buf = be.from_flat(self.base, self.dtype)
        return Strided(buf, self.shape, self.strides, self.offset, self.dtype)

    def torch(self):
        t = torch.tensor(self.base, dtype=TD[self.dtype])
        return torch.as_strided(t, self.shape, self.strides, self.offset)


def as_backend(x, be):
    return x.view(be) if isinstance(x, Inp) else x


def as_torch(x, dt):
    return x.torch().to(dt) if isinstance(x, Inp) else torch.tensor(x, dtype=dt)


def new_out(be, shape, dtype):
    n = math.prod(shape)
    return Strided(be.empty(n, dtype), tuple(shape), tuple(_contig(shape)), 0, dtype)


def _contig(shape):
    st, acc = [], 1
    for s in reversed(shape):
        st.append(acc)
        acc *= s
    return st[::-1]


def result(be, out):
    return torch.tensor(be.to_flat(out), dtype=TD[out.dtype]).reshape(out.shape)


def check(actual, expected, dtype, tol=None):
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if dtype in FLOATS:
        rtol, atol = tol or TOL[dtype]
        torch.testing.assert_close(actual.double(), expected.double(), rtol=rtol, atol=atol,
                                   equal_nan=True)
    else:
        assert torch.equal(actual, expected), (actual, expected)


# ---- the torch oracle for element-wise ops ------------------------------------------------

# every kernel: the primitives, and the backends' fast paths for decomposed ops (their records)
KERNELS = {n: r.arity for n, r in RECORDS.items() if r.np or r.py}
TORCH_EWISE = {op: torch_oracle(op) for op in KERNELS}


def torch_ewise(op, inputs, cd, out_dtype):
    tcd = TD[cd]
    args = []
    for j, x in enumerate(inputs):
        dt = torch.bool if (op == "where" and j == 0) else tcd
        t = as_torch(x, dt)
        if dt == torch.float16 and op not in HALF_NATIVE:
            t = t.float()
        args.append(t)
    if op in ("add", "sub", "mul") and cd == "bool":
        r = {"add": torch.logical_or, "sub": torch.logical_xor, "mul": torch.logical_and}[op](*args)
    else:
        r = TORCH_EWISE[op](*args)
    if cd == "float16" and r.is_floating_point():
        r = r.half()
    return r.to(TD[out_dtype])


def run_ewise(be, op, inputs, cd, out_dtype, shape):
    out = new_out(be, shape, out_dtype)
    be.ewise(op, out, [as_backend(x, be) for x in inputs], cd)
    return result(be, out)


def input_kinds(op, cd):
    """Data kind for each input of op."""
    n = KERNELS[op]
    if op == "where":
        return ["cond", "any", "any"]
    if cd in FLOATS:
        if op in UNIT:
            return ["unit"] * n
        return ["any"] * n
    if op in INT_DIV:
        return ["any", "nonzero"]
    if op == "pow":
        return ["small", "exponent"]
    if op in ("lshift", "rshift"):
        return ["any", "shift"]
    return ["any"] * n


def make_inputs(op, cd, layouts):
    ins = []
    for kind, lay in zip(input_kinds(op, cd), layouts):
        dt = cd
        if kind == "cond":
            dt, data = "bool", INT_DATA["bool"]
        else:
            data = data_for(cd, kind)
        shape, strides, off = LAYOUTS[lay]
        ins.append(Inp(data, dt, shape, strides, off))
    return ins


def ewise_cases():
    cases = []
    for op in KERNELS:
        for cd in ("float32", "float64", "float16", "int32", "int64", "uint8", "bool"):
            if cd in FLOATS and op in INT_ONLY:
                continue
            if cd not in FLOATS and op in FLOAT_ONLY:
                continue
            if cd == "bool" and op not in BOOL_OK:
                continue
            cases.append((op, cd))
    return cases


def compare_backends(results, out_dtype, op):
    """The pure backend agrees with the numpy one: exactly for integers and exactly rounded
    float ops; to a few ulps for transcendental functions."""
    a, b = results
    if out_dtype in FLOATS and op in FLOAT_ONLY | {"pow", "where"}:
        rtol = {"float16": 1e-3, "float32": 3e-7, "float64": 1e-14}[out_dtype]
        torch.testing.assert_close(b.double(), a.double(), rtol=rtol, atol=rtol, equal_nan=True)
    else:
        assert torch.equal(a, b) or (out_dtype in FLOATS and torch.equal(a.isnan(), b.isnan()) and
                                     torch.equal(a.nan_to_num(), b.nan_to_num())), (op, a, b)


TRANSCENDENTAL_TOL = {"float32": (1e-4, 1e-5), "float16": (2e-3, 2e-3), "float64": (1e-10, 1e-12)}


@pytest.mark.parametrize("op,cd", ewise_cases())
def test_ewise(op, cd):
    out_dtype = "bool" if op in BOOL_OUT else cd
    nin = KERNELS[op]
    bes = [be for be in BACKENDS if op in EWISE_OPS or op in be.fast_paths]
    tol = TRANSCENDENTAL_TOL.get(cd) if op in TOLERANT else None
    for layouts in LAYOUT_COMBOS:
        inputs = make_inputs(op, cd, layouts[:nin])
        expected = torch_ewise(op, inputs, cd, out_dtype)
        res = [run_ewise(be, op, inputs, cd, out_dtype, (3, 4)) for be in bes]
        for r in res:
            check(r, expected, out_dtype, tol)
        if len(res) == 2:
            compare_backends(res, out_dtype, op)
    # a Python scalar as the last input (and as the condition's partner for where)
    if nin >= 2:
        inputs = make_inputs(op, cd, ["transposed"] * nin)
        s = {"float32": -1.5, "float64": 2.25, "float16": 0.5, "int32": 3, "int64": -2,
             "uint8": 2, "bool": True}[cd]
        if op in ("lshift", "rshift"):
            s = 2
        if op == "pow" and cd not in FLOATS:
            s = 2
        inputs[-1] = s
        expected = torch_ewise(op, inputs, cd, out_dtype)
        res = [run_ewise(be, op, inputs, cd, out_dtype, (3, 4)) for be in bes]
        for r in res:
            check(r, expected, out_dtype, tol)
        if len(res) == 2:
            compare_backends(res, out_dtype, op)
    # 0-d views with an offset, and an empty shape
    inputs = [Inp(x.base, x.dtype, (), (), 7) for x in make_inputs(op, cd, ["contig"] * nin)]
    expected = torch_ewise(op, inputs, cd, out_dtype)
    for be in bes:
        check(run_ewise(be, op, inputs, cd, out_dtype, ()), expected, out_dtype, tol)
    inputs = [Inp(x.base, x.dtype, (0, 4), (4, 1), 3) for x in make_inputs(op, cd, ["contig"] * nin)]
    for be in bes:
        assert be.to_flat(new_out(be, (0, 4), out_dtype)) == []
        r = run_ewise(be, op, inputs, cd, out_dtype, (0, 4))
        assert r.shape == (0, 4)


@pytest.mark.parametrize("be", BACKENDS, ids=["numpy", "pure"])
def test_ewise_inplace_strided_out(be):
    """x[:, 1::2] += 10 written through a strided out Strided that is also an input."""
    base = list(range(24))
    buf = be.from_flat(base, "int32")
    v = Strided(buf, (3, 2), (8, 2), 1, "int32")
    be.ewise("add", v, [v, 10], "int32")
    t = torch.tensor(base, dtype=torch.int32)
    torch.as_strided(t, (3, 2), (8, 2), 1).add_(10)
    assert be.to_flat(Strided(buf, (24,), (1,), 0, "int32")) == t.tolist()
    # fill: copy of a Python scalar through a strided out
    be.ewise("copy", v, [-7.9], "int32")
    torch.as_strided(t, (3, 2), (8, 2), 1).fill_(-7.9)
    assert be.to_flat(Strided(buf, (24,), (1,), 0, "int32")) == t.tolist()
    fb = be.from_flat([0.0] * 6, "float16")
    be.ewise("copy", Strided(fb, (2, 3), (0, 2), 0, "float16"), [0.1], "float16")
    assert be.to_flat(Strided(fb, (6,), (1,), 0, "float16")) == [0.0999755859375, 0, 0.0999755859375, 0,
                                                             0.0999755859375, 0]


@pytest.mark.parametrize("be", BACKENDS, ids=["numpy", "pure"])
@pytest.mark.parametrize("src,dst", [("float32", "int32"), ("float32", "uint8"), ("float64", "int64"),
                                     ("float32", "bool"), ("int64", "int32"), ("int32", "uint8"),
                                     ("int64", "float16"), ("float64", "float16"),
                                     ("float16", "float32"), ("bool", "float32"), ("int32", "int8"),
                                     ("float32", "int16"), ("uint8", "int64")])
def test_copy_conversion(be, src, dst):
    if src in FLOATS:
        data = [0.0, -0.0, 1.7, -1.7, 2.5, -2.5, 300.0, -1.0, 1e5, 65519.0, 70000.0, 0.1]
        if dst in ("int32", "int64", "uint8", "int8", "int16"):
            data = [x for x in data if abs(x) < 1e5 or dst != "int16"]
    elif src == "bool":
        data = [True, False, True]
    else:
        data = [0, 1, -1, 255, 256, -129, 2**31 - 1, -2**31, 70000, 12345678]
        if src == "uint8":
            data = [0, 1, 255, 128]
        data = torch.tensor(data, dtype=torch.int64).to(TD[src]).tolist()
    x = Inp(data, src, (len(data),), (1,), 0)
    expected = x.torch().to(TD[dst])
    if src in FLOATS and dst == "uint8":  # torch wraps through int64 here
        expected = x.torch().to(torch.int64).to(torch.uint8)
    out = new_out(be, (len(data),), dst)
    be.ewise("copy", out, [x.view(be)], src)
    check(result(be, out), expected, dst)


@pytest.mark.parametrize("be", BACKENDS, ids=["numpy", "pure"])
def test_mixed_input_dtypes(be):
    """Inputs of other dtypes are converted to cdtype first; output converted to out.dtype."""
    a = Inp(INT_DATA["int32"][:12], "int32", (3, 4), (4, 1), 0)
    b = Inp(FLOAT_DATA, "float64", (3, 4), (1, 3), 2)
    out = new_out(be, (3, 4), "float32")
    be.ewise("mul", out, [a.view(be), b.view(be)], "float32")
    expected = (a.torch().float() * b.torch().float())
    check(result(be, out), expected, "float32")
    out = new_out(be, (3, 4), "int64")
    be.ewise("add", out, [a.view(be), b.view(be)], "float16")
    expected = (a.torch().half().float() + b.torch().half().float()).half().to(torch.int64)
    check(result(be, out), expected, "int64")


@pytest.mark.parametrize("be", BACKENDS, ids=["numpy", "pure"])
@pytest.mark.parametrize("op", sorted(INT_DIV))
@pytest.mark.parametrize("dt", ["int32", "int64", "uint8"])
def test_int_division_by_zero(be, op, dt):
    a = Inp([5, 6, 7, 8], dt, (4,), (1,), 0)
    b = Inp([1, 2, 0, 3], dt, (4,), (1,), 0)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        be.ewise(op, new_out(be, (4,), dt), [a.view(be), b.view(be)], dt)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        be.ewise(op, new_out(be, (4,), dt), [a.view(be), 0], dt)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):  # PyTorch agrees
        TORCH_EWISE[op](a.torch(), b.torch())


@pytest.mark.parametrize("be", BACKENDS, ids=["numpy", "pure"])
def test_float_edge_values(be):
    """Division by zero, overflow and domain errors give inf/nan silently, as in PyTorch."""
    a = Inp([1.0, -1.0, 0.0, 1e30, -8.0, 0.0, -0.0, 1e4], "float32", (8,), (1,), 0)
    b = Inp([0.0, 0.0, 0.0, 1e30, 1 / 3, -1.0, -3.0, 1e4], "float32", (8,), (1,), 0)
    for op in ("div", "pow", "floor_divide", "remainder", "fmod", "mul"):
        out = new_out(be, (8,), "float32")
        be.ewise(op, out, [a.view(be), b.view(be)], "float32")
        check(result(be, out), TORCH_EWISE[op](a.torch(), b.torch()), "float32")
    big = Inp([100.0, 1000.0, -1000.0, 0.0, -0.0, -1.0], "float32", (6,), (1,), 0)
    for op in ("exp", "sinh", "cosh", "expm1", "exp2", "log", "sigmoid", "log1p", "sqrt"):
        if op not in EWISE_OPS and op not in be.fast_paths:  # decomposed here: tests/test_ieee_specials.py
            continue
        out = new_out(be, (6,), "float32")
        be.ewise(op, out, [big.view(be)], "float32")
        check(result(be, out), TORCH_EWISE[op](big.torch()), "float32")
    for dt in ("float16", "float32"):  # float16 overflow rounds to inf
        x = Inp([60000.0, 1.0, 0.1], dt, (3,), (1,), 0)
        out = new_out(be, (3,), dt)
        be.ewise("mul", out, [x.view(be), 2.0], dt)
        check(result(be, out), torch_ewise("mul", [x, 2.0], dt, dt), dt)


# ---- reduce -------------------------------------------------------------------------------

REDUCE_DTYPES = {"sum": ["float32", "float64", "float16", "int32", "int64", "bool", "uint8"],
                 "prod": ["float32", "float64", "int32", "int64"],
                 "max": ["float32", "float64", "float16", "int32", "int64", "uint8", "bool"],
                 "min": ["float32", "float64", "float16", "int32", "int64", "uint8", "bool"],
                 "argmax": ["float32", "float64", "int32", "int64", "uint8", "bool"],
                 "argmin": ["float32", "float64", "int32", "int64", "uint8", "bool"],
                 "any": ["float32", "int32", "bool", "uint8"],
                 "all": ["float32", "int32", "bool", "uint8"]}


def reduce_out_dtype(op, dt):
    if op in ("sum", "prod"):
        return dt if dt in FLOATS else "int64"
    if op in ("argmax", "argmin"):
        return "int64"
    if op in ("any", "all"):
        return "bool"
    return dt


def torch_reduce(op, t, nout, out_dtype):
    x = t.reshape(nout, -1) if nout else t.reshape(1, -1)
    if op in ("sum", "prod"):
        acc = torch.float64 if x.is_floating_point() else torch.int64
        r = getattr(torch, op)(x.to(acc), -1)
    elif op in ("max", "min"):
        r = torch.amax(x, -1) if op == "max" else torch.amin(x, -1)
    elif op in ("argmax", "argmin"):
        r = getattr(torch, op)(x.to(torch.uint8) if x.dtype == torch.bool else x, -1)
    else:
        r = getattr(torch, op)(x, -1)
    return r.to(TD[out_dtype])


def reduce_data(dt, nan):
    if dt in FLOATS:
        d = [round(_rng.uniform(-2, 2), 2) for _ in range(80)]
        d[3] = d[17] = d[40] = 1.5  # ties
        if nan:
            d[22] = math.nan
        return d
    if dt == "bool":
        return [_rng.random() < 0.7 for _ in range(80)]
    lo = 0 if dt == "uint8" else -3
    return [_rng.randint(lo, 3) for _ in range(80)]


@pytest.mark.parametrize("op,dt", [(op, dt) for op in REDUCE_OPS for dt in REDUCE_DTYPES[op]])
def test_reduce(op, dt):
    od = reduce_out_dtype(op, dt)
    for nan in ([False, True] if dt in FLOATS else [False]):
        data = reduce_data(dt, nan)
        if op == "prod" and dt in FLOATS:
            data = [x / 2 + 1 for x in data]
        cases = []
        if op in ("argmax", "argmin"):
            cases.append(((3, 5), (1, 3), 2, 1))             # inner = one strided dim
            cases.append(((4, 6), (0, 2), 5, 1))             # broadcast outer
        else:
            cases.append(((3, 4, 5), (1, 15, 3), 2, 1))       # permuted, inner (4, 5)
            cases.append(((2, 3, 4), (0, 8, 2), 1, 1))        # broadcast outer, strided inner
            cases.append(((6,), (3,), 4, 0))                  # full reduction to 0-d
            cases.append(((), (), 9, 0))                      # 0-d in, 0-d out (no inner dims)
            if op not in ("max", "min"):  # max/min of nothing never reaches a backend
                cases.append(((3, 0), (1, 3), 0, 1))          # empty inner: identity
        for shape, strides, off, nout in cases:
            x = Inp(data, dt, shape, strides, off)
            oshape = shape[:nout]
            expected = torch_reduce(op, x.torch(), math.prod(oshape), od).reshape(oshape)
            res = []
            for be in BACKENDS:
                out = new_out(be, oshape, od)
                be.reduce(op, out, x.view(be))
                r = result(be, out)
                check(r, expected, od, (1e-3, 1e-3) if dt == "float16" else None)
                res.append(r)
            check(res[1], res[0], od, (1e-6, 1e-6) if od == "float32" else None)


# ---- scan ---------------------------------------------------------------------------------

SCAN_DTYPES = {"cumsum": ["float32", "float64", "float16", "int32", "int64", "uint8", "bool"],
               "cumprod": ["float32", "float64", "int32", "int64"],
               "cummax": ["float32", "float64", "float16", "int32", "int64", "uint8", "bool"],
               "cummin": ["float32", "float64", "int32", "int64", "uint8"],
               "logcumsumexp": ["float32", "float64", "float16"]}


@pytest.mark.parametrize("op,dt", [(op, dt) for op in SCAN_OPS for dt in SCAN_DTYPES[op]])
def test_scan(op, dt):
    od = dt if (dt in FLOATS or op in ("cummax", "cummin")) else "int64"
    for nan in ([False, True] if dt in FLOATS else [False]):
        data = reduce_data(dt, nan)
        if op == "logcumsumexp":
            data[5] = -math.inf
        for shape, strides, off in [((3, 7), (1, 3), 2), ((2, 3, 5), (0, 5, 1), 4), ((), (), 6),
                                    ((4, 0), (1, 4), 0), ((9,), (7,), 1)]:
            x = Inp(data, dt, shape, strides, off)
            t = x.torch()
            if op in ("cummax", "cummin"):
                tt = t.reshape(1) if t.dim() == 0 else t
                r = getattr(torch, op)(tt, -1)
                exp_v, exp_i = r.values.reshape(shape), r.indices.reshape(shape)
            elif op == "logcumsumexp":
                exp_v = torch.logcumsumexp(t.reshape(1) if t.dim() == 0 else t, -1).reshape(shape)
            else:
                exp_v = getattr(torch, op)(t, -1 if t.dim() else 0).to(TD[od])
            res = []
            for be in BACKENDS:
                out = new_out(be, shape, od)
                oi = new_out(be, shape, "int64") if op in ("cummax", "cummin") else None
                be.scan(op, out, x.view(be), oi)
                r = result(be, out)
                check(r, exp_v, od, (2e-3, 2e-3) if dt == "float16" else None)
                if oi is not None:
                    check(result(be, oi), exp_i, "int64")
                res.append(r)
            check(res[1], res[0], od, (1e-6, 1e-6) if od == "float32" else None)


# ---- sort ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "int32", "int64", "uint8", "bool"])
@pytest.mark.parametrize("descending", [False, True])
def test_sort(dt, descending):
    data = reduce_data(dt, dt in FLOATS)
    if dt in FLOATS:
        data[30] = math.nan
        data[31] = -math.inf
        data[32] = math.inf
    for shape, strides, off in [((4, 9), (1, 4), 3), ((2, 3, 6), (0, 1, 3), 5), ((), (), 2),
                                ((3, 0), (1, 3), 0), ((20,), (3,), 1)]:
        x = Inp(data, dt, shape, strides, off)
        t = x.torch()
        tt = t.reshape(1) if t.dim() == 0 else t
        r = torch.sort(tt, dim=-1, descending=descending, stable=True)
        ev, ei = r.values.reshape(shape), r.indices.reshape(shape)
        for be in BACKENDS:
            ov, oi = new_out(be, shape, dt), new_out(be, shape, "int64")
            be.sort(ov, oi, x.view(be), descending, True)
            check(result(be, ov), ev, dt)
            check(result(be, oi), ei, "int64")


# ---- matmul -------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "int64", "int32"])
def test_matmul(dt):
    if dt in FLOATS:
        data = [round(_rng.uniform(-2, 2), 3) for _ in range(60)]
    else:
        data = [_rng.randint(-5, 5) for _ in range(60)]
    cases = [
        # a (B,M,K) transposed inner dims; b (B,K,N) broadcast over batch (stride 0)
        (((2, 3, 4), (12, 1, 3), 1), ((2, 4, 5), (0, 5, 1), 3)),
        (((1, 4, 6), (24, 6, 1), 0), ((1, 6, 2), (12, 1, 6), 2)),   # b transposed
        (((3, 2, 0), (0, 1, 1), 0), ((3, 0, 4), (0, 4, 1), 0)),      # K == 0 -> zeros
        (((2, 0, 3), (3, 3, 1), 0), ((2, 3, 4), (12, 4, 1), 0)),      # M == 0 -> empty
    ]
    tol = {"float16": (2e-3, 2e-3), "float32": (1e-5, 1e-5)}.get(dt)
    for (sa, sb) in cases:
        a, b = Inp(data, dt, *sa), Inp(data, dt, *sb)
        if dt == "float16":
            expected = torch.matmul(a.torch().float(), b.torch().float()).half()
        elif dt in FLOATS:
            expected = torch.matmul(a.torch(), b.torch())
        else:
            expected = torch.matmul(a.torch().double(), b.torch().double()).to(TD[dt])
        oshape = (sa[0][0], sa[0][1], sb[0][2])
        res = []
        for be in BACKENDS:
            out = new_out(be, oshape, dt)
            be.matmul(out, a.view(be), b.view(be))
            r = result(be, out)
            check(r, expected, dt, tol)
            res.append(r)
        check(res[1], res[0], dt, tol)


# ---- take / put ---------------------------------------------------------------------------

@pytest.mark.parametrize("be", BACKENDS, ids=["numpy", "pure"])
@pytest.mark.parametrize("dt", ["float32", "float16", "int64", "int32", "bool", "uint8"])
def test_take_put(be, dt):
    src = FLOAT_DATA if dt in FLOATS else INT_DATA[dt]
    n = len(src)
    idx_base = [_rng.randrange(n) for _ in range(30)]
    idx = Inp(idx_base, "int64", (3, 4), (1, 3), 2)
    sb = be.from_flat(src, dt)
    st = torch.tensor(src, dtype=TD[dt])
    out = new_out(be, (3, 4), dt)
    be.take(out, sb, dt, idx.view(be))
    check(result(be, out), torch.take(st, idx.torch()), dt)
    # 0-d and empty
    out0 = new_out(be, (), dt)
    be.take(out0, sb, dt, Inp(idx_base, "int64", (), (), 4).view(be))
    check(result(be, out0), st[idx_base[4]], dt)
    be.take(new_out(be, (0,), dt), sb, dt, Inp(idx_base, "int64", (0,), (1,), 0).view(be))
    # put with accumulate (duplicates sum) from a strided values view
    vals = Inp(src, dt, (3, 4), (0, 2), 1)
    dup_idx = Inp([1, 5, 1, 7, 5, 1, 0, 2, 3, 4, 6, 8], "int64", (3, 4), (4, 1), 0)
    for accumulate in ([True, False] if dt != "bool" else [True]):
        ii = dup_idx if accumulate else Inp(list(range(12)), "int64", (3, 4), (1, 3), 0)
        db = be.from_flat(src, dt)
        be.put(db, dt, ii.view(be), vals.view(be), accumulate)
        tt = torch.tensor(src, dtype=TD[dt])
        tt.put_(ii.torch(), vals.torch().contiguous(), accumulate=accumulate)
        check(result(be, Strided(db, (n,), (1,), 0, dt)), tt, dt)
    # scalar values
    db = be.from_flat(src, dt)
    s = True if dt == "bool" else (2.5 if dt in FLOATS else 3)
    be.put(db, dt, dup_idx.view(be), s, True)
    tt = torch.tensor(src, dtype=TD[dt])
    tt.put_(dup_idx.torch(), torch.full((3, 4), s, dtype=TD[dt]), accumulate=True)
    check(result(be, Strided(db, (n,), (1,), 0, dt)), tt, dt)


# ---- arange / random / memory -------------------------------------------------------------

@pytest.mark.parametrize("be", BACKENDS, ids=["numpy", "pure"])
@pytest.mark.parametrize("dt,start,step,n", [("float32", 0.0, 0.1, 10), ("float64", -1.0, 0.25, 9),
                                             ("int64", 3, 2, 5), ("int32", 10, -3, 6),
                                             ("float16", 0.0, 0.5, 8), ("int64", 0, 1, 0),
                                             ("uint8", 250, 1, 4)])
def test_arange(be, dt, start, step, n):
    out = new_out(be, (n,), dt)
    be.arange(out, start, step)
    if dt == "uint8":
        expected = torch.arange(start, start + n, dtype=torch.int64).to(torch.uint8)
    else:
        expected = torch.arange(start, start + (n - 0.5) * step, step, dtype=TD[dt]) if n else \
            torch.zeros(0, dtype=TD[dt])
    check(result(be, out), expected, dt)


@pytest.mark.parametrize("kind", ["uniform", "normal"])
@pytest.mark.parametrize("dt", ["float32", "float64", "float16"])
def test_random(kind, dt):
    n = 1000
    seed, offset = 0x1234_5678_9ABC, 7
    ref = torch.tensor(_philox.draw(n, kind, seed, offset), dtype=torch.float64).to(TD[dt])
    res = []
    for be in BACKENDS:
        out = new_out(be, (n,), dt)
        be.random(out, kind, seed, offset)
        r = result(be, out)
        check(r, ref, dt, (1e-12, 1e-12) if dt == "float64" else (0, 0))
        res.append(r)
    r = res[0].double()
    if kind == "uniform":
        assert r.min() >= 0 and r.max() < 1 and abs(r.mean() - 0.5) < 0.05
    else:
        assert abs(r.mean()) < 0.1 and abs(r.std() - 1) < 0.1
    # a different offset gives different numbers
    out = new_out(NB, (n,), dt)
    NB.random(out, kind, seed, offset + 1)
    assert not torch.equal(result(NB, out), res[0])


@pytest.mark.parametrize("be", BACKENDS, ids=["numpy", "pure"])
def test_memory_and_to_flat(be):
    assert be.name == "cpu"
    for dt, vals, expect in [("bool", [0, 1, 2, 0.5], [False, True, True, True]),
                             ("int32", [1, -2, 2**31, 3.9], [1, -2, -2**31, 3]),
                             ("uint8", [1, 256, -1, 300.0], [1, 0, 255, 44]),
                             ("int64", [1, -2, 2**63, -5.5], [1, -2, -2**63, -5]),
                             ("float16", [1, 0.1, 70000.0, -1e6], [1.0, 0.0999755859375, math.inf, -math.inf]),
                             ("float32", [1, 0.1, True], [1.0, 0.10000000149011612, 1.0]),
                             ("float64", [1, 0.1], [1.0, 0.1]),
                             ("int8", [127, 128, -129], [127, -128, 127]),
                             ("int16", [40000], [40000 - 65536])]:
        buf = be.from_flat(vals, dt)
        v = Strided(buf, (len(vals),), (1,), 0, dt)
        flat = be.to_flat(v)
        assert flat == expect, (dt, flat)
        assert all(type(a) is type(b) for a, b in zip(flat, expect)), (dt, flat)
        assert be.to_numpy(v).tolist() == expect
    # from numpy arrays and array.array
    import numpy as np
    from array import array
    assert be.to_flat(Strided(be.from_flat(np.arange(4, dtype=np.float32), "int64"), (4,), (1,), 0,
                           "int64")) == [0, 1, 2, 3]
    assert be.to_flat(Strided(be.from_flat(array("d", [1.5, 2.5]), "float32"), (2,), (1,), 0,
                           "float32")) == [1.5, 2.5]
    buf = be.empty(6, "float32")
    assert len(buf) == 6
    be.arange(Strided(buf, (6,), (1,), 0, "float32"), 0, 1)
    v = Strided(buf, (2, 2), (1, 2), 1, "float32")
    assert be.to_flat(v) == [1.0, 3.0, 2.0, 4.0]
    nv = be.to_numpy(v)
    assert nv.shape == (2, 2) and nv.tolist() == [[1.0, 3.0], [2.0, 4.0]]
    assert be.to_flat(Strided(buf, (), (), 5, "float32")) == [5.0]
    assert be.to_numpy(Strided(buf, (), (), 5, "float32")).shape == ()
    be.synchronize()


def test_make_backend_and_no_numpy():
    assert isinstance(make_backend(), NumpyBackend)
    code = ("import sys, os; sys.path.insert(0, 'py'); sys.modules['numpy'] = None\n"
            "from webtorch.backends.cpu import make_backend, PureBackend, NumpyBackend\n"
            "from webtorch.backends.base import Strided\n"
            "be = make_backend(); assert isinstance(be, PureBackend) and NumpyBackend is None\n"
            "o = Strided(be.empty(3, 'float32'), (3,), (1,), 0, 'float32')\n"
            "be.arange(o, 1.0, 0.5); be.ewise('exp', o, [o], 'float32'); print(be.to_flat(o))\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    env = dict(os.environ, WEBTORCH_NO_NUMPY="1")
    code2 = ("import sys; sys.path.insert(0, 'py')\n"
             "from webtorch.backends.cpu import make_backend, PureBackend\n"
             "assert isinstance(make_backend(), PureBackend)\n"
             "import webtorch.backends.cpu.pure as p; src = open(p.__file__).read()\n"
             "head, tail = src.split('    def to_numpy', 1)  # numpy only inside to_numpy\n"
             "assert 'import numpy' not in head + tail.split('\\n    def ', 1)[1]\n")
    r = subprocess.run([sys.executable, "-c", code2], cwd=ROOT, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr


def test_op_tables_covered():
    cases = {op for op, _ in ewise_cases()}
    assert cases == set(KERNELS)
    assert set(UNARY) | set(BINARY) | {"where"} == set(EWISE_OPS)
    assert set(REDUCE_DTYPES) == set(REDUCE_OPS) and set(SCAN_DTYPES) == set(SCAN_OPS)


def test_numpy_backend_is_vectorized_fast():
    """Million-element strided ops run vectorized on the numpy backend: well under a second each
    (a per-element Python loop would take minutes; the bound leaves room for a loaded machine)."""
    import time
    n = 1 << 20
    buf = NB.empty(2 * n, "float32")
    NB.random(Strided(buf, (2 * n,), (1,), 0, "float32"), "normal", 1, 0)
    x = Strided(buf, (1024, 1024), (1, 2048), 0, "float32")
    out = new_out(NB, (1024, 1024), "float32")
    t0 = time.perf_counter()
    for op in ("erf", "erfinv", "sigmoid", "add"):
        NB.ewise(op, out, [x] if op != "add" else [x, x], "float32")
    o2 = new_out(NB, (1024,), "float32")
    NB.reduce("sum", o2, x)
    ov, oi = new_out(NB, (1024, 1024), "float32"), new_out(NB, (1024, 1024), "int64")
    NB.sort(ov, oi, x, True, True)
    assert time.perf_counter() - t0 < 30.0


def test_numpy_backend_no_warnings_and_user_errstate_kept():
    """Warning-prone ops (log(0), 0/0, inf-inf, overflow, float->int casts of NaN/inf) emit no
    numpy RuntimeWarning and raise nothing under the user's error state, which they leave as
    it was (also inside a user `np.errstate(all="raise")`)."""
    import warnings
    import numpy as np
    import webtorch as wt

    def run():
        f = NB.from_flat([0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 3e38, -3e38], "float32")
        v = Strided(f, (8,), (1,), 0, "float32")
        o = new_out(NB, (8,), "float32")
        for op, ins in (("log", [v]), ("div", [v, v]), ("sub", [v, v]), ("mul", [v, 1e30]),
                        ("add", [v, v]), ("exp", [v]), ("sqrt", [v]), ("atanh", [v]),
                        ("pow", [v, -1.0]), ("div", [1.0, v]), ("fmod", [v, 0.0]),
                        ("floor_divide", [v, v]), ("remainder", [v, v]), ("sigmoid", [v])):
            NB.ewise(op, o, ins, "float32")
        for dst in ("int32", "int64", "int8", "uint8", "float16", "bool"):
            NB.ewise("copy", new_out(NB, (8,), dst), [v], "float32")
            NB.ewise("mul", new_out(NB, (8,), dst), [v, 1e5], "float16" if dst == "float16" else "float32")
        s = new_out(NB, (), "float32")
        NB.reduce("sum", s, v)
        NB.reduce("prod", s, v)
        NB.reduce("sum", new_out(NB, (), "int32"), v)
        NB.scan("cumsum", new_out(NB, (8,), "float16"), v)
        m = Strided(f, (1, 2, 2), (4, 2, 1), 4, "float32")
        NB.matmul(new_out(NB, (1, 2, 2), "float32"), m, m)
        NB.matmul(new_out(NB, (1, 2, 2), "float16"), m, m)
        NB.put(f, "float32", Strided(NB.from_flat([0, 1], "int64"), (2,), (1,), 0, "int64"), 1e300, True)
        x = wt.tensor([0.0, 1.0, -1.0, float("inf"), float("nan")])
        (x.log(), x / 0, x - x, (x * 1e38) * 1e38, x.to(wt.int32), x.exp().sum(), x @ x)

    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run()
        assert np.geterr() == before
        with np.errstate(all="raise"):
            raised = np.geterr()
            run()
            assert np.geterr() == raised
        assert np.geterr() == before
    assert np.geterr() == before


def test_numpy_backend_errstate_fallback():
    """Without numpy 2's error-state context variable the backend falls back to np.errstate,
    with the same results and no warnings."""
    code = ("import sys, warnings; sys.path.insert(0, 'py')\n"
            "import numpy as np\n"
            "import types\n"
            "name = 'numpy._core._ufunc_config'\n"
            "real = sys.modules.get(name)\n"
            "sys.modules[name] = types.ModuleType(name)  # hides _extobj_contextvar\n"
            "import webtorch.backends.cpu.numpy_backend as nb\n"
            "if real is not None: sys.modules[name] = real\n"
            "else: del sys.modules[name]\n"
            "assert nb._ECV is None\n"
            "import webtorch as wt\n"
            "warnings.simplefilter('error')\n"
            "before = np.geterr()\n"
            "x = wt.tensor([0.0, 1.0, float('inf'), float('nan')])\n"
            "r = (x.log() + x / 0 - (x - x)).tolist()\n"
            "assert str(r) == '[nan, inf, nan, nan]', r\n"
            "assert x.to(wt.int32).tolist()[2:] == [-2**31, -2**31]\n"
            "assert np.geterr() == before\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
