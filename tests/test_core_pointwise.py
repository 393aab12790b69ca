"""Core tensor library vs PyTorch: every operator (with broadcasting, promotion, Python scalars,
0-d tensors, reflected and in-place forms) and the element-wise functions."""
import math
import operator

import numpy as np
import pytest
import torch

from _op_table import BINARY, FORWARD_RANGES, INT_RANGES, UNARY
from core_util import wt, cmp, raises_like, arr, skip_unsupported

ARITH = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
         "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow}
BITS = {"and": operator.and_, "or": operator.or_, "xor": operator.xor}
CMPS = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
        "ge": operator.ge}
SHAPES = [((2, 3), (2, 3)), ((2, 3), (3,)), ((4, 1, 3), (2, 1)), ((), (2, 2)), ((2, 2), ())]


def _operand(shape, dt, op):
    if op in ("truediv", "floordiv", "mod") and dt not in ("float32", "float64", "float16"):
        a = arr(shape, dt, 1, 5)  # no integer division by zero
        return a
    if op == "pow":
        return arr(shape, dt, 0, 3) if dt != "bool" else arr(shape, dt)
    return arr(shape, dt, -4, 5) if dt != "uint8" else arr(shape, dt, 0, 9)


@pytest.mark.parametrize("op", list(ARITH))
@pytest.mark.parametrize("dt", ["float32", "int64", "int32", "float64", "uint8", "float16"])
def test_arith_operators(device, op, dt):
    skip_unsupported(device, dt)
    f = ARITH[op]
    if dt == "float16" and op in ("floordiv", "mod", "pow"):
        tol = {"rtol": 1e-2, "atol": 1e-2}
    else:
        tol = {}
    for sa, sb in SHAPES:
        a, b = _operand(sa, dt, op), _operand(sb, dt, op)
        if op == "sub" and dt == "uint8":
            continue  # wraps around identically but is covered by int cases
        cmp(device, lambda T, x, y: f(x, y), a, b, **tol)
    x = _operand((2, 3), dt, op)
    for s in (2, 3.5, True) if op != "pow" else (2, 0.5):
        if op in ("floordiv", "mod", "truediv", "sub") and s is True:
            continue  # sub: PyTorch refuses bool operands (test_bitwise_errors)
        cmp(device, lambda T, x: f(x, s), x, **tol)      # tensor op scalar
        if op != "pow" or dt.startswith("float"):
            cmp(device, lambda T, x: f(s, x), x, **tol)  # reflected


@pytest.mark.parametrize("op", list(ARITH))
def test_inplace_operators(device, op):
    f = ARITH[op]
    ifn = getattr(operator, "i" + op)
    a, b = _operand((2, 3), "float32", op), _operand((3,), "float32", op)

    def g(T, x, y):
        x2 = x.clone()
        r = ifn(x2, y)
        assert r is x2
        ifn(x2, 2)
        return x2
    cmp(device, g, a, b)
    if op not in ("truediv", "pow"):
        ai, bi = _operand((2, 3), "int64", op), _operand((2, 3), "int64", op)
        cmp(device, g, ai, bi)
    else:
        raises_like(device, lambda T, x: ifn(x, 2.5) if op == "pow" else ifn(x, 2),
                    _operand((2, 3), "int64", op) if op == "truediv" else arr((2,), "int64"),
                    phrase="can't be cast to the desired output type Long")


def test_operator_methods_and_functions(device):
    a, b = arr((2, 3)), arr((2, 3), lo=0.5, hi=2)
    cmp(device, lambda T, x, y: T.add(x, y, alpha=2), a, b)
    cmp(device, lambda T, x, y: T.sub(x, y, alpha=0.5), a, b)
    cmp(device, lambda T, x, y: x.add_(y, alpha=-1), a, b)
    cmp(device, lambda T, x, y: T.div(x, y, rounding_mode="floor"), a, b)
    cmp(device, lambda T, x, y: T.div(x, y, rounding_mode="trunc"), a, b)
    ai, bi = arr((6,), "int64", -7, 8), arr((6,), "int64", 1, 4) * np.array([1, -1, 1, -1, 1, -1])
    for name in ("floor_divide", "remainder", "fmod"):
        cmp(device, lambda T, x, y: getattr(T, name)(x, y), ai, bi)
    cmp(device, lambda T, x, y: T.div(x, y, rounding_mode="trunc"), ai, bi)
    cmp(device, lambda T, x, y: T.div(x, y, rounding_mode="floor"), ai, bi)
    cmp(device, lambda T, x, y: T.div(x, y), ai, bi)
    cmp(device, lambda T, x: T.rsub(x, 1.0), a)
    cmp(device, lambda T, x, y: T.lerp(x, y, 0.3), a, b)
    cmp(device, lambda T, x, y: T.addcmul(x, x, y, value=0.5), a, b)
    cmp(device, lambda T, x, y: T.addcdiv(x, x, y, value=2), a, b)
    cmp(device, lambda T, x, y: T.isclose(x, y), a, a + 1e-7)
    assert wt.allclose(wt.tensor(a), wt.tensor(a)) and wt.equal(wt.tensor(a), wt.tensor(a))


@pytest.mark.parametrize("dt", ["int64", "int32", "bool", "uint8"])
def test_bitwise_operators(device, dt):
    a, b = arr((2, 3), dt, -8, 8), arr((3,), dt, -8, 8)
    for f in BITS.values():
        cmp(device, lambda T, x, y: f(x, y), a, b)
        cmp(device, lambda T, x: f(x, 5 if dt != "bool" else True), a)
        cmp(device, lambda T, x: f(5 if dt != "bool" else True, x), a)
    cmp(device, lambda T, x: ~x, a)
    cmp(device, lambda T, x: T.bitwise_not(x), a)
    if dt != "bool":
        s = arr((2, 3), dt, 0, 4)
        cmp(device, lambda T, x, y: x << y, a if dt != "uint8" else arr((2, 3), dt, 0, 8), s)
        cmp(device, lambda T, x, y: x >> y, a, s)

    def inplace(T, x, y):
        x = x.clone()
        x &= y
        x |= y
        x ^= y
        return x
    cmp(device, inplace, a, b)


def test_bitwise_errors(device):
    raises_like(device, lambda T, x: x & x, arr((2,)), phrase="\"bitwise_and_cpu\" not implemented for 'Float'")
    raises_like(device, lambda T, x: ~x, arr((2,)), phrase="~ (operator.invert) is only implemented on integer")
    raises_like(device, lambda T, x: x - x, arr((2,), "bool"), phrase="Subtraction, the `-` operator, with two bool "
                                                                     "tensors is not supported")
    raises_like(device, lambda T, x: x - True, arr((2,)), phrase="with a bool tensor is not supported")
    raises_like(device, lambda T, x: 1 - x, arr((2,), "bool"), phrase="with a bool tensor is not supported")


def test_float_only_ops_raise_on_integers(device):
    # PyTorch's kernels of these take floating inputs only (frac of an integer tensor is no 0)
    for dt in ("int64", "int32", "bool"):
        raises_like(device, lambda T, x: T.frac(x), arr((2,), dt), phrase="\"frac_cpu\" not implemented for")
        raises_like(device, lambda T, x: x.frac_(), arr((2,), dt), phrase="\"frac_cpu\" not implemented for")
        for name in ("hypot", "logaddexp2"):
            raises_like(device, lambda T, x: getattr(T, name)(x, x), arr((2,), dt),
                        phrase=f"\"{name}_cpu\" not implemented for")


def test_heaviside_takes_one_dtype(device):
    for dt in ("int64",) if device == "webgpu" else ("int64", "float64"):  # webgpu has no float64
        raises_like(device, lambda T, x, v: T.heaviside(x, v), arr((3,)), arr((3,), dt),
                    phrase="heaviside is not yet implemented for tensors with different dtypes.")


def test_positive_is_its_input(device):
    for T in (torch, wt):
        x = T.tensor([1.0, -2.0], device=device) if T is wt else T.tensor([1.0, -2.0])
        assert T.positive(x) is x and x.positive() is x
    raises_like(device, lambda T, x: T.positive(x), arr((2,), "bool"),
                phrase="The `+` operator, on a bool tensor is not supported.")


def test_ldexp_in_place_function_and_special_i0(device):
    cmp(device, lambda T, x, e: (T.ldexp_(x, e), x)[1], arr((2, 3)), arr((2, 3), "int64", -3, 4))
    cmp(device, lambda T, x: T.special.i0(x), arr((3, 4), "float32", -30, 30), rtol=1e-5)
    for name in ("expit", "exp2", "expm1", "log1p", "erf", "erfc", "sinc"):
        cmp(device, lambda T, x: getattr(T.special, name)(x), arr((3,)))


@pytest.mark.parametrize("op", list(CMPS))
def test_comparisons(device, op):
    f = CMPS[op]
    for dt in ("float32", "int64", "bool"):
        for sa, sb in SHAPES[:3]:
            cmp(device, lambda T, x, y: f(x, y), arr(sa, dt, -2, 2), arr(sb, dt, -2, 2))
        cmp(device, lambda T, x: f(x, 1), arr((5,), dt, -2, 2))
        cmp(device, lambda T, x: f(x, 0.5), arr((5,), dt, -2, 2))
        cmp(device, lambda T, x: f(1, x), arr((5,), dt, -2, 2))
    cmp(device, lambda T, x, y: f(x, y), arr((4,), "int64", -2, 2), arr((4,), "float32", -2, 2))
    cmp(device, lambda T, x: f(x, float("nan")), arr((3,)))


def test_zero_dim_and_scalars_promotion(device):
    i, f, b = arr((3,), "int64"), arr((3,)), arr((3,), "bool")
    i0, f0 = arr((), "int64"), arr((), "float32")
    cmp(device, lambda T, x, y: x + y, i, f0)  # 0-d float lifts an int tensor to float
    cmp(device, lambda T, x, y: x * y, f, i0)
    cmp(device, lambda T, x, y: x + y, b, i0)
    cmp(device, lambda T, x, y: x * y, i0, f0)
    cmp(device, lambda T, x, y: x - y, i0, i0)
    cmp(device, lambda T, x: x + 1.5, i0)
    cmp(device, lambda T, x: x * True, i)
    cmp(device, lambda T, x: x + 2, b)
    cmp(device, lambda T, x: (x + 1) / 2, b)
    cmp(device, lambda T, x: 2 ** x, i)
    cmp(device, lambda T, x: x ** 2, i)
    cmp(device, lambda T, x: x.pow(-1.5), arr((3,), lo=0.5, hi=2))


def test_cpu_zero_dim_with_webgpu():
    x = wt.tensor([1.0, 2.0], device="webgpu")
    s = wt.tensor(3.0)
    assert (x * s).tolist() == [3.0, 6.0] and (x * s).device.type == "webgpu"
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        x + wt.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        wt.tensor([1.0, 2.0]).add_(x)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        wt.matmul(wt.ones(2, 2), wt.ones(2, 2, device="webgpu"))


def test_broadcast_errors(device):
    raises_like(device, lambda T, x, y: x + y, arr((2, 3)), arr((4,)),
                phrase="The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1")
    raises_like(device, lambda T, x, y: x * y, arr((2, 3)), arr((3, 1, 2)),
                phrase="The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 2")
    raises_like(device, lambda T, x, y: x.add_(y), arr((3,)), arr((2, 3)),
                phrase="output with shape [3] doesn't match the broadcast shape [2, 3]")
    raises_like(device, lambda T, x: x.add_(1.5), arr((3,), "int64"),
                phrase="result type Float can't be cast to the desired output type Long")
    raises_like(device, lambda T, x: T.add(x, "a"), arr((3,)), phrase="add(): argument 'other' (position 2) must "
                                                                     "be Tensor")
    raises_like(device, lambda T, x: x // 0, arr((3,), "int64"), phrase="ZeroDivisionError")
    raises_like(device, lambda T, x: x ** -1, arr((3,), "int64", 1, 3), phrase="Integers to negative integer "
                                                                               "powers are not allowed")


INT_DIVS = {"//": lambda T, x, y: x // y, "%": lambda T, x, y: x % y, "rfloordiv": lambda T, x, y: 7 // y,
            "rmod": lambda T, x, y: 7 % y, "floor_divide": lambda T, x, y: T.floor_divide(x, y),
            "ifloordiv": lambda T, x, y: x.__ifloordiv__(y), "imod": lambda T, x, y: x.__imod__(y),
            "div trunc": lambda T, x, y: T.div(x, y, rounding_mode="trunc"),
            "div floor": lambda T, x, y: T.div(x, y, rounding_mode="floor"), "fmod": lambda T, x, y: T.fmod(x, y),
            "remainder": lambda T, x, y: T.remainder(x, y), "fmod_": lambda T, x, y: x.fmod_(y),
            "through a chain": lambda T, x, y: ((x + 1) * 2) // (y * 3) + 1}


@pytest.mark.parametrize("dt", ["int64", "int32", "uint8"])
def test_integer_division_by_zero_raises(device, dt):
    """PyTorch raises RuntimeError("ZeroDivisionError") for an integer divisor holding a zero; on
    webgpu the kernel flags it and the next sync raises (no wait of its own), never a silent 0
    (a webgpu result that nothing ever reads is never computed, so it raises nothing).
    Divisors without zeros give PyTorch's numbers, also right after such an error."""
    lo = 0 if dt == "uint8" else -9
    x = np.array([7, lo + 2, 9, 100], dt)
    zero, nonzero = np.array([3, 0, 2, 1], dt), np.array([3, 1 if dt == "uint8" else -4, 2, 7], dt)
    for name, f in INT_DIVS.items():
        raises_like(device, lambda T, x, y: f(T, x, y).tolist(), x, zero, phrase="ZeroDivisionError")
        cmp(device, f, x, nonzero)
    if device != "webgpu":  # exact beyond float32's 24 bits (webgpu's int64 is 32-bit: test_webgpu_limits.py)
        cmp(device, lambda T, x, y: T.div(x, y, rounding_mode="trunc"), np.array([2**40 + 1, -7], "int64"),
            np.array([3, 2], "int64"))


@pytest.mark.parametrize("op", UNARY, ids=[op.name for op in UNARY])
def test_unary(device, op):
    """Each unary row of the op table: function, method (on a strided input), in-place, float64 and
    integer inputs."""
    name = op.name
    lo, hi = FORWARD_RANGES[op.domain[0]]
    x = arr((3, 4), "float32", lo, hi)
    tol = op.tol if device == "webgpu" else {}
    cmp(device, lambda T, x: getattr(T, name)(x), x, **tol)
    cmp(device, lambda T, x: getattr(x, name)(), x[:, ::2].copy(), **tol)
    if op.inplace:
        cmp(device, lambda T, x: (getattr(x, name + "_")(), x)[1], x, **tol)
    if device != "webgpu":
        cmp(device, lambda T, x: getattr(T, name)(x), x.astype("float64"))
    # integers: float functions promote to the default dtype, the others keep the dtype
    if op.ints:
        xi = arr((5,), "int64", 1, 4) if lo > 0.5 or op.domain[0] == "any" else arr((5,), "int64", 0, 1)
        cmp(device, lambda T, x: getattr(T, name)(x), xi, **tol)


@pytest.mark.parametrize("op,dt", [(op, dt) for op in BINARY for dt in op.dtypes],
                         ids=[f"{op.name}-{dt}" for op in BINARY for dt in op.dtypes])
def test_binary(device, op, dt):
    """Each binary row of the op table, in each of its dtypes: function and method, broadcasting, a
    Python number as other, in-place."""
    name = op.name
    skip_unsupported(device, dt)
    (la, ha), (lb, hb) = [(FORWARD_RANGES if dt.startswith("float") else INT_RANGES)[d] for d in op.domain]
    a, b, bb = arr((2, 3), dt, la, ha), arr((2, 3), dt, lb, hb), arr((3,), dt, lb, hb)
    cmp(device, lambda T, x, y: getattr(T, name)(x, y), a, b)
    cmp(device, lambda T, x, y: getattr(x, name)(y), a, bb)
    if op.scalar_other:
        cmp(device, lambda T, x: getattr(T, name)(x, 2 if dt != "bool" else True), a)
    if op.inplace:  # PyTorch's result, or its error where the result's dtype cannot be written into a's
        f = (lambda T, x, y: (getattr(x, name + "_")(y), x)[1])
        try:
            f(torch, torch.tensor(a), torch.tensor(bb))
        except RuntimeError:
            raises_like(device, f, a, bb, phrase="can't be cast to the desired output type")
        else:
            cmp(device, f, a, bb)


def test_unary_special_values(device):
    x = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.5, -2.5, 0.5, -0.5, 1.5], dtype=np.float32)
    for name in ("exp", "abs", "neg", "floor", "ceil", "round", "trunc", "sign", "sigmoid", "tanh", "isnan", "isinf",
                 "isfinite", "relu", "nan_to_num", "signbit", "frac" if device != "webgpu" else "trunc"):
        cmp(device, lambda T, x: getattr(T, name)(x), x)
    cmp(device, lambda T, x: T.log(x.abs()), x)
    cmp(device, lambda T, x: T.round(x, decimals=1), np.array([0.25, 1.35, -2.45, 3.0], dtype=np.float32))


def test_clamp_and_pow(device):
    x = arr((3, 4))
    cmp(device, lambda T, x: T.clamp(x, -1, 1), x)
    cmp(device, lambda T, x: x.clamp(min=0), x)
    cmp(device, lambda T, x: x.clamp(max=0.5), x)
    cmp(device, lambda T, x: x.clip(-0.5, 0.5), x)
    cmp(device, lambda T, x, lo: T.clamp(x, min=lo), x, arr((4,)))
    cmp(device, lambda T, x: (x.clamp_(-1, 2), x)[1], x)
    cmp(device, lambda T, x: x.clamp(0, 2), arr((5,), "int64"))
    cmp(device, lambda T, x: x.clamp(0.5, 2), arr((5,), "int64"))
    cmp(device, lambda T, x: T.clamp_min(x, 0.1), x)
    raises_like(device, lambda T, x: x.clamp(), x, phrase="At least one of 'min' or 'max' must not be None")
    p = arr((3, 4), lo=0.1, hi=2)
    cmp(device, lambda T, x: T.pow(x, 2), p)
    cmp(device, lambda T, x: T.pow(x, 0.5), p)
    cmp(device, lambda T, x, y: T.pow(x, y), p, arr((4,), lo=-1, hi=2))
    cmp(device, lambda T, x: T.pow(2, x), p)
    cmp(device, lambda T, x: x.pow(3), arr((4,), "int64"))
    cmp(device, lambda T, x: x.pow(0), arr((4,), "int64"))
    cmp(device, lambda T, x: T.pow(x, 2.0), arr((4,), "int64"))
    cmp(device, lambda T, x: (x.pow_(2), x)[1], p)


def test_fast_paths_match_their_decomposition(device):
    """A backend's own kernel for a decomposed op (Backend.fast_paths) gives the decomposition's
    results (ops/pointwise.py `ref=`), on ordinary and special values (binary ops: every pair) and on
    integers; the decomposition itself is what a backend without the kernel runs
    (tests/test_decompositions.py)."""
    x = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.5, -2.5, 0.5, 1e-3, 80.0, -80.0, 7.0],
                 dtype=np.float32)
    ints = np.array([0, 1, -1, 7, -7, 3, -3, 2 ** 31 - 1, -2 ** 31], dtype=np.int32)
    for v in (x, ints):
        t = wt.tensor(v.tolist(), dtype=wt.float32 if v is x else wt.int32, device=device)
        for op in sorted(t._storage.backend.fast_paths):
            decl = wt.ops.registry.ELEMENTWISE[op]
            if v is ints and decl.rule == "float":
                continue
            if decl.kind == "unary":
                got, want = getattr(wt, op)(t), decl.ref(t)
            else:
                b = t.reshape(1, -1) if op != "remainder" or v is x else (t + (t == 0)).reshape(1, -1)
                got, want = getattr(wt, op)(t.reshape(-1, 1), b), decl.ref(t.reshape(-1, 1), b, t.dtype)
            assert got.dtype == want.dtype, op
            got, want = got.cpu().numpy(), want.cpu().numpy()
            np.testing.assert_allclose(got, want, rtol=2e-7 if device != "webgpu" else 2e-6, atol=0, equal_nan=True,
                                       err_msg=op)
            zeros = want == 0
            np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]), err_msg=op)


@pytest.mark.parametrize("name", ["i0", "i0e", "i1", "i1e"])
def test_special_bessel_functions(device, name):
    """torch.special.i0/i0e/i1/i1e (Cephes' expansions, as PyTorch's calc_*): values on both expansions, their
    boundary, signed zeros, overflow, infinities and NaN; the gradient (PyTorch's node names; d i1/dx = 1/2 at 0,
    where an expansion of |x| would give 0)."""
    x = np.array([0.0, -0.0, 1e-3, 0.5, -0.5, 2.5, -2.5, 7.9, 8.0, 8.1, -12.0, 30.0, 80.0, -80.0, 100.0,
                  np.inf, -np.inf, np.nan], np.float32)
    got = getattr(wt.special, name)(wt.tensor(x, device=device)).cpu().numpy()
    want = getattr(torch.special, name)(torch.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=2e-6 if device != "webgpu" else 3e-5, atol=0, equal_nan=True)
    assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all()
    g = np.array([0.0, -0.0, 0.3, -1.7, 5.0, 9.0, -20.0], np.float32)
    wx, tx = wt.tensor(g, device=device, requires_grad=True), torch.tensor(g, requires_grad=True)
    wy, ty = getattr(wt.special, name)(wx), getattr(torch.special, name)(tx)
    assert wy.grad_fn.name() == ty.grad_fn.name()
    wy.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(wx.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_scalar_parameters_take_the_tensors_dtype(device):
    """A Python number parameter (alpha, beta, value, min_val, ...) is converted to the op's dtype as
    PyTorch converts it: truncated for integers (the result keeps the integer dtype), PyTorch's error
    where it does not fit; bool triu/tril stay bool."""
    m, v = np.array([[1, 2], [3, 4]], np.int64), np.array([1, -2], np.int32)
    for fn in (lambda T, m: T.addmm(m, m, m, alpha=1.5, beta=2.7), lambda T, m: T.addmv(m[0], m, m[0], alpha=1.5),
               lambda T, m: T.baddbmm(m[None], m[None], m[None], beta=1.5), lambda T, m: T.addbmm(m, m[None], m[None],
                                                                                                   alpha=-1.9),
               lambda T, m: T.addcmul(m, m, m, value=1.5), lambda T, m: T.index_add(m, 0, m[0, :1], m[:1],
                                                                                    alpha=2.5),
               lambda T, m: m.bool().triu(), lambda T, m: m.bool().tril(-1), lambda T, m: T.clamp(m, 0.5, 2.5)):
        cmp(device, fn, m)
    for name, args in (("relu6", ()), ("hardtanh", (0.5, 2.5)), ("threshold", (1.5, 7.9))):
        cmp(device, lambda T, v: getattr(T.nn.functional, name)(v, *args), v)
        cmp(device, lambda T, v: getattr(T.nn.functional, name)(v.to(T.uint8), *args), np.abs(v))
    raises_like(device, lambda T, m: T.addmm(m, m, m, alpha=math.nan), m, phrase="cannot be converted to type")
    raises_like(device, lambda T, v: T.nn.functional.hardtanh(v.to(T.uint8), -1.5, 1.0), v, phrase="negative limits")
    raises_like(device, lambda T, v: T.nn.functional.threshold(v.to(T.uint8), 1.5, 300), v, phrase="uint8_t")
    raises_like(device, lambda T, v: T.nn.functional.hardtanh(v.bool()), v, phrase="Bool inputs")
    h = np.array([1.0, -0.5], np.float16)
    skip_unsupported(device, "float16")
    for fn in (lambda T, h: h.clamp(max=70000.0), lambda T, h: T.add(h, h, alpha=70000.0)):
        raises_like(device, fn, h, phrase="c10::Half without overflow")


F16_SCALAR_OPS = {
    "add": lambda T, x, s: x + s, "sub": lambda T, x, s: x - s, "rsub": lambda T, x, s: s - x,
    "mul": lambda T, x, s: x * s, "rmul": lambda T, x, s: s * x, "div": lambda T, x, s: x / s,
    "rdiv": lambda T, x, s: s / x, "floor_divide": lambda T, x, s: x // s, "remainder": lambda T, x, s: x % s,
    "fmod": lambda T, x, s: T.fmod(x, s), "pow": lambda T, x, s: x ** s, "eq/lt": lambda T, x, s: (x == s) | (x < s),
    "xlogy": lambda T, x, s: T.xlogy(x, s), "clamp": lambda T, x, s: x.clamp(max=s), "lerp": lambda T, x, s:
    T.lerp(x, x * 2, s), "addcmul": lambda T, x, s: T.addcmul(x, x, x, value=s), "add alpha": lambda T, x, s: T.add(
        x, x, alpha=s)}


def test_float16_python_scalars(device):
    """A Python number meets a float16 tensor as in PyTorch's kernels: rounded to float16 first (remainder(1.0, 0.1)
    is 2.44e-4 with 0.1 as 0.09998), except in the ops that keep it in float32 (mul, div, floor_divide: f16 -0.549 *
    70000 is -38432, not -inf); out of float16's range, PyTorch's error where it converts (clamp, pow, alpha)."""
    skip_unsupported(device, "float16")
    x = np.array([1.0, -0.549, 3.0, 0.3, 0.0, -2.5], np.float16)
    for name, fn in F16_SCALAR_OPS.items():
        for s in (0.1, 70000.0, 1.0001, -1e-8, 3):
            try:
                want = fn(torch, torch.tensor(x), s)
            except RuntimeError:
                raises_like(device, fn, x, s, phrase="without overflow")
                continue
            got = fn(wt, wt.tensor(x, device=device), s)
            assert got.dtype == getattr(wt, str(want.dtype)[6:]), (name, s)
            np.testing.assert_array_equal(got.cpu().numpy(), want.numpy(), err_msg=f"{name} {s}")


def test_float_only_activations_refuse_integers(device):
    """PyTorch's error for an activation whose kernel takes floating input only (no silent integer result)."""
    v = np.array([-2, 0, 3], np.int64)
    for name in ("elu", "selu", "celu", "gelu", "silu", "mish", "hardswish", "hardsigmoid", "softplus", "logsigmoid",
                 "leaky_relu", "softshrink", "hardshrink"):
        raises_like(device, lambda T, v: getattr(T.nn.functional, name)(v), v, phrase="not implemented for 'Long'")
    raises_like(device, lambda T, v: T.nn.functional.threshold(v.bool(), 0, 1), v, phrase="not implemented for 'Bool'")
