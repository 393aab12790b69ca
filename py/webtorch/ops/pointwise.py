"""Element-wise ops, each declared once: the primitives from their records (`backends/elementwise.py`),
the others below, `name = unary(...)` / `name = binary(...)` (the machinery: `ops/_elementwise.py`).

A declaration owns the op's public names (function, Tensor method, in-place `name_`, out=),
its dtype rule, PyTorch's autograd node name and its derivative: a formula row in
autograd/derivatives.py keyed by the node, or, without one, the derivative of its decomposition;
None when the op is not differentiable. `ref=` gives a reference decomposition in webtorch ops (the
op is then no backend primitive); without it the op is a backend primitive (a record). How to add
one: docs/adding_an_op.md.
"""
import math
import struct

from .. import _dtype
from .._tensor import Tensor
from ..overrides import torch_function
from . import _cephes, _hotpath, _prims
from ._common import (
    OUT_DTYPE_SAME,
    check_inplace_dtype,
    check_leaf_inplace,
    check_tensor,
    check_wide_uint,
    composite_node,
    fill_value,
    float_of,
    formula_node,
    inplace_result,
    name_of,
    recording,
    scalar_to,
    write_out,
)
from ._elementwise import (  # noqa: F401 (nn)
    _OPERAND,
    _check_inplace_shape,
    _check_int_div,
    _check_operands,
    _unary_kernel,
    binary,
    declare_records,
    elementwise_node,
    unary,
)
from .registry import ELEMENTWISE, METHODS, Decl, register, register_method

bool_ = _dtype.bool_


def _logit(x, eps):
    z = x if eps is None else x.clamp(eps, 1.0 - eps)
    return (z / (1 - z)).log()


def _prim(op, x):
    """The unary primitive op(x) in x's dtype: a decomposition made of primitives calls them
    directly (no per-op checks: one host call per step); its derivative is then a formula row."""
    return _prims.ewise(op, [x], x.dtype, x.dtype, shape=x._shape)


def _sinc(x):
    px = x * math.pi
    return where(x == 0, 1.0, px.sin() / px)


def _ewise1(op, args, x, odt):
    """op(args) over x's shape, computed in x's dtype: a step of x's unary decomposition."""
    return _prims.ewise(op, args, x.dtype, odt, shape=x._shape)


def _filled(x, value):
    """A bool tensor of x's shape and device holding value (isinf/isfinite of integers)."""
    return _prims.ewise("copy", [value], bool_, bool_, shape=x._shape, device=x.device)


def _not(x):
    return _ewise1("eq", [x, 0], x, bool_)


def _trunc(x):  # toward zero: ceil below 0, floor elsewhere (-0.5 -> -0.0, -0.0 and NaN pass)
    if not x.dtype.is_floating_point:
        return _ewise1("copy", [x], x, x.dtype)
    return _ewise1("where", [_ewise1("lt", [x, 0], x, bool_), _prim("ceil", x), _prim("floor", x)], x, x.dtype)


def _relu(x):  # PyTorch's clamp_min(x, 0): NaN and -0.0 pass through
    return _ewise1("where", [_ewise1("lt", [x, 0], x, bool_), 0, x], x, x.dtype)


def _sign(x):  # (0 < x) - (x < 0): the sign of -0.0 and of NaN is 0
    if x.dtype is bool_:
        return _ewise1("copy", [x], x, bool_)
    return _ewise1("sub", [_ewise1("lt", [0, x], x, bool_), _ewise1("lt", [x, 0], x, bool_)], x, x.dtype)


def _isinf(x):
    if not x.dtype.is_floating_point:
        return _filled(x, False)
    return _ewise1("eq", [_prim("abs", x), math.inf], x, bool_)


def _isfinite(x):  # |x| < inf: False for NaN
    if not x.dtype.is_floating_point:
        return _filled(x, True)
    return _ewise1("lt", [_prim("abs", x), math.inf], x, bool_)


# ---- the primitives with a `decl` in their record: webtorch.exp, Tensor.exp, exp_, ... ------------------
_DECLARED = declare_records()
globals().update(_DECLARED)  # importable from here, as every op of this module
# the ones this module calls by name
mul, div, floor_divide, maximum, minimum, atan2, lt = (
    _DECLARED[n] for n in "mul div floor_divide maximum minimum atan2 lt".split())

# ---- unary ops: name = unary(name, dtype rule, PyTorch's node, [ref=, params=, flags]) ---------------


def _vml(op):
    return NotImplementedError, f"\"{op}_vml_cpu\" not implemented for 'Bool'"


neg = unary("neg", "same", "NegBackward0", refuse_bool=(
    RuntimeError, "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a "
                  "mask, use the `~` or `logical_not()` operator instead."))
abs = unary("abs", "real", "AbsBackward0", refuse_bool=(NotImplementedError, "\"abs_cpu\" not implemented for 'Bool'"))
floor = unary("floor", "same", "FloorBackward0", refuse_bool=_vml("floor"))
ceil = unary("ceil", "same", "CeilBackward0", refuse_bool=_vml("ceil"))
round = unary("round", "same", "RoundBackward0", refuse_bool=_vml("round"))
trunc = unary("trunc", "same", "TruncBackward0", ref=_trunc, refuse_bool=_vml("trunc"))
relu = unary("relu", "same", "ReluBackward0", ref=_relu,
             refuse_bool=(RuntimeError, "Boolean inputs not supported for relu"))
isnan = unary("isnan", "bool", ref=lambda x: _ewise1("ne", [x, x], x, bool_), inplace=False)  # NaN != NaN
isinf = unary("isinf", "bool", ref=_isinf, inplace=False)
isfinite = unary("isfinite", "bool", ref=_isfinite, inplace=False)
sign = unary("sign", "same", "SignBackward0", ref=_sign, inplace="method")
rsqrt = unary("rsqrt", "float", "RsqrtBackward0", ref=lambda x: _prims.ewise("div", [1, _prim("sqrt", x)], x.dtype,
                                                                                  x.dtype))
reciprocal = unary("reciprocal", "float", "ReciprocalBackward0", ref=lambda x: div(1, x))
sigmoid = unary("sigmoid", "float", "SigmoidBackward0", ref=lambda x: 1 / (1 + (-x).exp()))
logit = unary("logit", "float", "LogitBackward0", ref=_logit, params={"eps": None})
sinc = unary("sinc", "float", "SincBackward0", ref=_sinc)
frac = unary("frac", "same", "FracBackward0", ref=lambda x: x - x.trunc(), ints=False)
i0 = unary("i0", "float", "I0Backward0", ref=_cephes.i0)  # composite: its derivative is the expansion's
# torch.special only (special.py): no webtorch.<name> or method, no in-place form
special_i0e = unary("special_i0e", "float", "SpecialI0EBackward0", ref=_cephes.i0e, exported=False)
special_i1 = unary("special_i1", "float", "SpecialI1Backward0", ref=_cephes.i1, exported=False)
special_i1e = unary("special_i1e", "float", "SpecialI1EBackward0", ref=_cephes.i1e, exported=False)
logical_not = unary("logical_not", "bool", ref=_not, inplace="method", casts_out=True)
bitwise_not = unary("bitwise_not", "same", inplace="method", floats=False)


def _swapped(op):
    """The comparison op with swapped operands: gt(a, b) is lt(b, a), le(a, b) is ge(b, a) (a kernel
    less, the same bits)."""
    return lambda a, b, cdt: _prims.ewise(op, [b, a], cdt, bool_)


def _ne(a, b, cdt):  # not (a == b): NaN != NaN
    return _not(_prims.ewise("eq", [a, b], cdt, bool_))


def _ge(a, b, cdt):  # b < a or a == b: False where either is NaN
    return _prims.ewise("bitwise_or", [_prims.ewise("lt", [b, a], cdt, bool_), _prims.ewise("eq", [a, b], cdt, bool_)],
                        bool_, bool_)


def _nan_ignoring(op):
    """fmax/fmin: maximum/minimum, but a NaN operand gives the other operand (NaN when both are)."""
    def ref(a, b, cdt):
        m = _prims.ewise(op, [a, b], cdt, cdt)
        if not cdt.is_floating_point:
            return m
        m = _prims.ewise("where", [_prims.ewise("isnan", [b], b.dtype, bool_, shape=b._shape), a, m], cdt, cdt)
        return _prims.ewise("where", [_prims.ewise("isnan", [a], a.dtype, bool_, shape=a._shape), b, m], cdt, cdt)
    return ref


def _remainder(a, b, cdt):
    # PyTorch's kernel (integers and floats): m = fmod(a, b), plus b where m is nonzero and its sign
    # is not b's
    m = _prims.ewise("fmod", [a, b], cdt, cdt)
    b_neg = _prims.ewise("lt", [b, 0], cdt, bool_) if isinstance(b, Tensor) else b < 0
    other_sign = _prims.ewise("bitwise_xor", [_prims.ewise("lt", [m, 0], cdt, bool_), b_neg], bool_, bool_)
    fix = _prims.ewise("bitwise_and", [other_sign, _prims.ewise("ne", [m, 0], cdt, bool_)], bool_, bool_)
    return _prims.ewise("where", [fix, _prims.ewise("add", [m, b], cdt, cdt), m], cdt, cdt)


def _logical(op):
    """logical_and/or/xor: the bitwise op on a != 0 and b != 0."""
    return lambda a, b, cdt: _prims.ewise(op, [_prims.ewise("ne", [a, 0], cdt, bool_),
                                               _prims.ewise("ne", [b, 0], cdt, bool_)], bool_, bool_)


def _hypot(a, b, cdt):
    # as std::hypot: m sqrt(1 + (s / m)^2), m the larger magnitude, so no square overflows (3e38) or
    # underflows (1e-4 in float16); float16/bfloat16 computed in float32, as PyTorch's
    dt = _dtype.opmath(cdt)
    a, b = a.to(dt).abs(), b.to(dt).abs()
    m = maximum(a, b)
    q = minimum(a, b) / where(m == 0, 1.0, m)
    r = where(a.isinf() | b.isinf(), math.inf, m * (q * q + 1).sqrt())  # hypot(inf, nan) is inf
    return r if dt is cdt else r.to(cdt)


def _logaddexp2(a, b, cdt):
    # PyTorch's kernel: log2(2^a + 2^b) = max + log2(1 + 2^-|a - b|), and a where a == b = +-inf
    m = maximum(a, b)
    return where(a.isinf() & (a == b), a, m + (-(a - b).abs()).exp2().log1p() / math.log(2.0))


def _logaddexp(a, b, cdt):
    # PyTorch's kernel: max + log1p(exp(-|a - b|)), and a where a == b = +-inf (inf - inf would be NaN)
    return where(a.isinf() & (a == b), a, maximum(a, b) + (-(a - b).abs()).exp().log1p())


def _xlogy(a, b, cdt):
    # PyTorch's kernel: NaN where y is NaN, 0 where x is 0, x log(y) elsewhere; a number operand as a
    # 0-d tensor of the compute dtype (log(-1.0) is NaN)
    t = a if isinstance(a, Tensor) else b
    a, b = (v if isinstance(v, Tensor) else _prims.ewise("copy", [v], cdt, cdt, shape=(), device=t.device)
            for v in (a, b))
    dt = float_of(_dtype.result_type(a, b))  # each operand in the common dtype first (2 ** 31 is inf in float16)
    a, b = (v if v.dtype is dt else v.to(dt) for v in (a, b))
    return where(b.isnan(), math.nan, where(a == 0, 0.0, a * b.log()))


def _copysign(a, b, cdt):
    a = a.to(cdt).abs()
    if isinstance(b, Tensor):
        return where(b.signbit(), -a, a)
    return -a if math.copysign(1.0, b) < 0 else a


# ---- binary ops: name = binary(name, dtype rule, PyTorch's node, [flags]) -------------------------
remainder = binary("remainder", "arith", "RemainderBackward1", scalar_node="RemainderBackward0", scalar_self=True,
                   scalar_self_node="NotImplemented(remainder)", ref=_remainder, int_div=True)
fmax = binary("fmax", "arith", "FmaxBackward0", ref=_nan_ignoring("maximum"), tensor_other=True, inplace=False)
fmin = binary("fmin", "arith", "FminBackward0", ref=_nan_ignoring("minimum"), tensor_other=True, inplace=False)
ne = binary("ne", "cmp", ref=_ne)
le = binary("le", "cmp", ref=_swapped("ge"))
gt = binary("gt", "cmp", ref=_swapped("lt"))
ge = binary("ge", "cmp", ref=_ge)
logical_and = binary("logical_and", "logical", ref=_logical("bitwise_and"), tensor_other=True)
logical_or = binary("logical_or", "logical", ref=_logical("bitwise_or"), tensor_other=True)
logical_xor = binary("logical_xor", "logical", ref=_logical("bitwise_xor"), tensor_other=True)
hypot = binary("hypot", "float", "HypotBackward0", ref=_hypot, tensor_other=True)
logaddexp2 = binary("logaddexp2", "float", "Logaddexp2Backward0", ref=_logaddexp2, tensor_other=True, inplace=False)
logaddexp = binary("logaddexp", "float", "LogaddexpBackward0", ref=_logaddexp, tensor_other=True, inplace=False)
xlogy = binary("xlogy", "div", "XlogyBackward0", ref=_xlogy, scalar_node="XlogyBackward2", scalar_self=True,
               scalar_self_node="XlogyBackward1")
copysign = binary("copysign", "div", "CopysignBackward0", ref=_copysign, scalar_node="CopysignBackward1")
def _ldexp(a, b, cdt):
    """PyTorch's: a floating exponent through pow(2, other) in other's own dtype (a float16 2**100 is inf), an
    integer one of a floating self as C's ldexp takes it (an int32: int64 exponents wrap), of an integer
    self through pow(2.0, other) in the result's dtype (2**(2**31) is inf)."""
    if b.dtype.is_floating_point:
        return a.to(cdt) * b.exp2().to(cdt)
    if not a.dtype.is_floating_point:
        return a.to(cdt) * b.to(cdt).exp2()
    if b.dtype is bool_:
        raise NotImplementedError("\"ldexp_cpu_exp\" not implemented for 'Bool'")
    return _c_ldexp(a.to(cdt), b.to(_dtype.int32))


def _c_ldexp(x, e):
    """C's ldexp(x, e): x * 2**e rounded once, so 0 stays 0 and inf stays inf for any e (x * exp2(e) gives NaN
    where exp2(e) overflows to inf or underflows to 0). e is clamped where every result has saturated and
    applied as three powers of two that each fit the compute dtype (float32 for float16, float64 on the cpu:
    one rounding there, as a float32 x * 2**e is exact in float64)."""
    ct = _dtype.float64 if x.device.type == "cpu" else _dtype.float32
    lim = 2200 if x.dtype is _dtype.float64 else 300  # beyond: 0 or inf from any finite x
    e = e.clamp(-lim, lim)
    third = e // 3
    r = x.to(ct) * third.to(ct).exp2() * third.to(ct).exp2() * (e - 2 * third).to(ct).exp2()
    return r.to(x.dtype)


ldexp = binary("ldexp", "div", "LdexpBackward0", ref=_ldexp, tensor_other=True)
heaviside = binary("heaviside", "same", "NotImplemented(heaviside)", tensor_other=True,
                   ref=lambda a, b, cdt: where(a == 0, b, a > 0).to(cdt))


# ---- add / sub (alpha) ----------------------------------------------------------------------
def _sub(a, b, cdt):  # a + (-b), bit for bit (integers wrap alike; bool operands are refused before)
    return _prims.ewise("add", [a, _prims.ewise("neg", [b], cdt, cdt) if isinstance(b, Tensor) else -b], cdt, cdt)


def _add_kernel(a, b, alpha, cdt):
    if alpha == 1:
        return _prims.ewise("add", [a, b], cdt, cdt)
    if alpha == -1:
        return _prims.ewise("sub", [a, b], cdt, cdt)
    if not isinstance(b, Tensor):
        return _prims.ewise("add", [a, b * alpha], cdt, cdt)
    prod, ct = _prims.alpha_product(b, alpha, cdt, a)
    return _prims.ewise("add", [a, prod], ct, cdt)


def _is_bool(x):
    return x.dtype is bool_ if isinstance(x, Tensor) else isinstance(x, bool)


def _add_dtype(opname, a, b, alpha):
    cdt = _dtype.result_type(a, b)
    check_wide_uint("add", cdt)
    if opname == "sub" and (_is_bool(a) or _is_bool(b)):
        bools = [_is_bool(a), _is_bool(b)]
        if all(bools):
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                               "Use the `^` or `logical_xor()` operator instead.")
        if any(bools):
            raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                               "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    if isinstance(alpha, float) and not cdt.is_floating_point:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    scalar_to(alpha, cdt)  # PyTorch's range check (70000 for float16)
    return cdt


def _make_add(opname, F):
    def public(input, other, *, alpha=1, out=None):
        if not (isinstance(input, _OPERAND) and isinstance(other, _OPERAND)):
            _check_operands(opname, input, other)
        cdt = _add_dtype(opname, input, other, alpha)
        if cdt.kind in "fc" and recording(input, other):
            r = F.apply(input, other, alpha, cdt)
        else:
            r = _add_kernel(input, other, alpha if opname == "add" else -alpha, cdt)
        return r if out is None else write_out(r, out, input, other, full_overlap_ok=True)

    def inplace(self, other, *, alpha=1):
        check_leaf_inplace(self)
        cdt = _add_dtype(opname, self, other, alpha)
        check_inplace_dtype(cdt, self)
        _check_inplace_shape(self, other)
        if recording(self, other):
            return inplace_result(self, F.apply(self, other, alpha, cdt))
        if isinstance(other, Tensor) and alpha != 1:
            prod, ct = _prims.alpha_product(other, alpha if opname == "add" else -alpha, cdt, self)
            return _prims.ewise_into("add", self, [self, prod], ct)
        if not isinstance(other, Tensor):
            other = other * alpha
        return _prims.ewise_into(opname, self, [self, other], cdt)

    public.__name__ = opname
    inplace.__name__ = opname + "_"
    # sub is a primitive only where the backend has a kernel for it (elsewhere add and neg)
    public._fast = _hotpath.binary(opname, opname == "add", lambda a, b, dt: F.apply(a, b, 1, dt))
    return torch_function(public), torch_function(inplace)


_ADD_ARGS = ("a", "b", "alpha", "cdt")
Add = formula_node("AddBackward0", _add_kernel, _ADD_ARGS, scalar_edges=(0, 1))
Sub = formula_node("SubBackward0", lambda a, b, alpha, cdt: _add_kernel(a, b, -alpha, cdt), _ADD_ARGS, (0, 1))
add, add_ = _make_add("add", Add)
sub, sub_ = _make_add("sub", Sub)
ELEMENTWISE["sub"] = Decl("binary", "arith", "SubBackward0", _sub)
register(add)
register_method(add_)
register(sub, "sub", "subtract")
register_method(sub_, "sub_", "subtract_")
register(mul, "multiply")
register_method(METHODS["mul_"], "multiply_")
register(div, "true_divide")
register_method(METHODS["div_"], "divide_", "true_divide_")
register(neg, "negative")
register(abs, "absolute")
register(atan2, "arctan2")
register(METHODS["ldexp_"], "ldexp_", method=False)  # PyTorch's ldexp_ is a function too
for _name, _f in (("greater", gt), ("greater_equal", ge), ("less", lt), ("less_equal", le), ("not_equal", ne)):
    register(_f, _name)


# rsub(input, other, alpha) = other - alpha * input (`2 - x` is rsub(x, 2))
Rsub = formula_node("RsubBackward0", lambda a, b, alpha, cdt: _add_kernel(b, a, -alpha, cdt), _ADD_ARGS, (0, 1))
RsubScalar = formula_node("RsubBackward1", lambda a, b, alpha, cdt: _add_kernel(b, a, -alpha, cdt), _ADD_ARGS)


@register
def rsub(input, other, *, alpha=1):
    _check_operands("rsub", input, other)
    check_tensor("rsub", input)
    cdt = _add_dtype("sub", other, input, alpha)
    if cdt.kind in "fc" and recording(input, other):
        return (Rsub if isinstance(other, Tensor) else RsubScalar).apply(input, other, alpha, cdt)
    return _add_kernel(other, input, -alpha, cdt)


_div_plain = div


def _div_rounding_kernel(a, b, mode):
    """div with a rounding mode, for floats: floor from fmod as PyTorch's div_floor (floor_divide), trunc(a / b)."""
    return floor_divide(a, b) if mode == "floor" else _div_plain(a, b).trunc()


# its gradients are zeros (PyTorch's DivBackward2)
DivRounding = formula_node("DivBackward2", _div_rounding_kernel, ("a", "b", "mode"))


def divide(input, other, *, rounding_mode=None, out=None):
    if rounding_mode is None:
        return _div_plain(input, other, out=out)
    if rounding_mode not in ("floor", "trunc"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    rt = _dtype.result_type(input, other)
    if rt.is_floating_point:
        r = (DivRounding.apply if recording(input, other) else _div_rounding_kernel)(input, other, rounding_mode)
    elif rounding_mode == "floor":
        r = floor_divide(input, other)
    else:   # trunc of integers: exact division (a float quotient would round large int64 values)
        _check_int_div("div_trunc", other, rt)
        r = _prims.ewise("div", [input, other], rt, rt)
    return write_out(r, out, input, other, full_overlap_ok=True)


divide._fast = _div_plain._fast  # without rounding_mode: true division's hot path
divide = register(divide)
_div_ = METHODS["div_"]


def div_(self, other, *, rounding_mode=None):
    return _div_(self, other) if rounding_mode is None else _div_rounding_(self, other, rounding_mode=rounding_mode)


register_method(div_, "div_", "divide_")


# ---- pow -------------------------------------------------------------------------------------
def _pow_kernel(a, b, dt):
    if dt.kind == "c" and isinstance(a, Tensor) and not isinstance(b, Tensor) and b in (2, 3, 0.5, -0.5, -1, -2):
        return _complex_pow(a.to(dt), complex(b).real, dt)
    return _prims.ewise("pow", [a, b], dt, dt)


# PyTorch's pow(tensor, number) kernel takes 0.5 and -0.5 as sqrt and rsqrt: (-0.0) ** 0.5 is -0.0 and
# (-inf) ** 0.5 NaN there (C's pow: 0.0 and inf)
_ROOTS = {0.5: "sqrt", -0.5: "rsqrt"}


def _root(e, dt):
    """sqrt / rsqrt where pow(tensor of dt, number e) is one in PyTorch's kernel (float32 and float64; float16 takes
    C's pow: pow(-inf, 0.5) is inf, not NaN), else None."""
    return _ROOTS.get(e) if dt.kind == "f" and dt.itemsize >= 4 and not isinstance(e, (bool, Tensor)) else None


def _pow_scalar_kernel(x, e, dt):
    op = _root(e, dt)
    return _prims.ewise(op, [x], dt, dt) if op else _pow_kernel(x, e, dt)


def _complex_pow(x, e, dt):
    """PyTorch's complex x ** e for a scalar e of 2, 3, -1, -2 (products and a reciprocal, exact where they are) and
    +-0.5 (sqrt); other exponents are exp(e log x)."""
    if e in (0.5, -0.5):
        r = _prims.ewise("sqrt", [x], dt, dt)
    else:
        r = _prims.ewise("mul", [x, x], dt, dt) if e in (2, 3, -2) else x
        r = _prims.ewise("mul", [r, x], dt, dt) if e == 3 else r
    return _prims.ewise("div", [1, r], dt, dt) if e < 0 else r


PowScalar = formula_node("PowBackward0", _pow_scalar_kernel, ("x", "exponent", "dtype"))
PowTensor = formula_node("PowBackward1", _pow_kernel, ("a", "b", "dtype"))
PowScalarBase = formula_node("PowBackward2", _pow_kernel, ("base", "x", "dtype"))


def _pow_dtype(a, b):
    dt = _dtype.result_type(a, b)
    check_wide_uint("pow", dt)
    if dt is bool_ and isinstance(b, Tensor):  # a bool tensor ** a Python bool is computed
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    if dt.kind not in "fc":
        ev = b if not isinstance(b, Tensor) else None
        if ev is not None and ev < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
    return dt


@register
def pow(input, exponent, *, out=None):
    if not isinstance(exponent, Tensor):
        check_tensor("pow", input)
    dt = _pow_dtype(input, exponent)
    if isinstance(input, Tensor) and isinstance(exponent, Tensor):
        r = PowTensor.apply(input, exponent, dt) if dt.kind in "fc" and recording(input, exponent) \
            else _prims.ewise("pow", [input, exponent], dt, dt)
    elif isinstance(input, Tensor):
        scalar_to(exponent, dt)  # PyTorch's range check (float16 ** 70000.0 raises)
        r = PowScalar.apply(input, exponent, dt) if dt.kind in "fc" and recording(input) \
            else _pow_scalar_kernel(input, exponent, dt)
    else:
        r = PowScalarBase.apply(input, exponent, dt) if dt.kind in "fc" and recording(exponent) \
            else _prims.ewise("pow", [input, exponent], dt, dt)
    return write_out(r, out, input, exponent, full_overlap_ok=True)


@register_method
def pow_(self, exponent):
    check_leaf_inplace(self)
    dt = _pow_dtype(self, exponent)
    check_inplace_dtype(dt, self)
    if recording(self, exponent):
        return inplace_result(self, pow(self.clone(), exponent))
    if _root(exponent, dt):
        return _prims.copy_into(self, _pow_scalar_kernel(self, exponent, dt))
    return _prims.ewise_into("pow", self, [self, exponent], dt)


@register
def float_power(input, exponent):
    if not isinstance(exponent, Tensor):
        check_tensor("float_power", input)
    # double, or complex double where either side is complex
    complex_ = any(x.is_complex() if isinstance(x, Tensor) else isinstance(x, complex) for x in (input, exponent))
    dt = _dtype.complex128 if complex_ else _dtype.float64
    return pow(input.to(dt) if isinstance(input, Tensor) else input,
               exponent.to(dt) if isinstance(exponent, Tensor) else exponent)


# ---- where / clamp / misc -----------------------------------------------------------------------
Where = formula_node("WhereBackward0", lambda condition, a, b, dt: _prims.ewise("where", [condition, a, b], dt, dt),
                     ("condition", "a", "b", "dtype"), scalar_edges=(1, 2))


@register
def where(condition, input=None, other=None, *, out=None):
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    if not isinstance(condition, Tensor):
        raise TypeError(f"where(): argument 'condition' (position 1) must be Tensor, not {type(condition).__name__}")
    if condition.dtype is not bool_:
        if condition.dtype is _dtype.uint8:
            condition = condition.bool()
        else:
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                               f"{name_of(condition.dtype)}")
    dt = _dtype.result_type(input, other)
    if dt.name not in ("float16", "bfloat16"):  # a number converts as a one-element fill (unchecked for these)
        input, other = (v if isinstance(v, Tensor) else fill_value(v, dt) for v in (input, other))
    if dt.kind in "fc" and recording(input, other):
        r = Where.apply(condition, input, other, dt)
    else:
        r = _prims.ewise("where", [condition, input, other], dt, dt)
    return write_out(r, out, condition, input, other, full_overlap_ok=True,
                     exact="Expected out type to be {r} but got {o}")


def _clamp_kernel(x, lo, hi, dt):
    # PyTorch's clamp: x itself where it equals a bound (relu6(-0.0) is -0.0), NaN from x or a NaN bound
    r = x
    if lo is not None:
        r = _prims.ewise("maximum", [r, lo], dt, dt) if lo != lo else \
            _prims.ewise("where", [_prims.ewise("lt", [r, lo], dt, bool_), lo, r], dt, dt)
    if hi is not None:
        r = _prims.ewise("minimum", [r, hi], dt, dt) if hi != hi else \
            _prims.ewise("where", [_prims.ewise("lt", [hi, r], dt, bool_), hi, r], dt, dt)
    return r if r is not x else _prims.ewise("copy", [x], dt, dt)


Clamp = formula_node("ClampBackward1", _clamp_kernel, ("x", "min", "max", "dtype"))


@register
def clamp(input, min=None, max=None, *, out=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        r = input
        if min is not None:
            r = maximum(r, min)
        if max is not None:
            r = minimum(r, max)
        return write_out(r, out, input, min, max, full_overlap_ok=True, exact=OUT_DTYPE_SAME)
    dt = _dtype.result_type(input, *(v for v in (min, max) if v is not None))
    min, max = (None if v is None else scalar_to(v, dt) for v in (min, max))  # noqa: A001 (PyTorch's names)
    if dt.kind in "fc" and recording(input):
        r = Clamp.apply(input, min, max, dt)
    else:
        r = _clamp_kernel(input, min, max, dt)
    return write_out(r, out, input, full_overlap_ok=True, exact=OUT_DTYPE_SAME)


@register
def clamp_(self, min=None, max=None):
    check_leaf_inplace(self)
    if recording(self, min, max):
        return inplace_result(self, clamp(self.clone(), min, max))
    r = clamp(self, min, max)
    check_inplace_dtype(r.dtype, self)  # clamp_(bool, 0): Long can't be cast to Bool
    return _prims.copy_into(self, r)


register(clamp, "clip")
register(clamp_, "clip_")


@register
def clamp_min(input, min):
    check_tensor("clamp_min", input)
    return clamp(input, min=min)


@register
def clamp_max(input, max):
    check_tensor("clamp_max", input)
    return clamp(input, max=max)


@register
def square(input):
    return pow(input, 2)  # PyTorch's definition: the node is PowBackward0, a bool input gives int64


def _rounded(v, dt):
    """The number v as floating dtype dt holds it (inf where it overflows)."""
    if dt.itemsize == 2:
        return _prims._half(v, dt.name)
    try:
        return struct.unpack("<f", struct.pack("<f", v))[0] if dt.itemsize == 4 else float(v)
    except OverflowError:
        return math.copysign(math.inf, v)


def _fma(a, b, c):
    """a * b + c rounded once, as the fused multiply-add of PyTorch's CPU kernels: computed in float64
    where the device has it (WGSL has no f64: webgpu rounds a * b first). a may be a number."""
    if c.device.type != "cpu":
        return c + a * b
    f64 = _dtype.float64
    r = (a if not isinstance(a, Tensor) else a.to(f64)) * b.to(f64) + c.to(f64)
    return r.to(c.dtype)


def _lerp_impl(input, end, weight):
    # PyTorch's kernel: from the nearer end, so lerp(a, b, 1) is b even for an infinite a, in the
    # opmath dtype (float32 for float16), a number weight rounded to it first, one rounding:
    # fma(w, end - input, input) or fma(w - 1, end - input, end)
    dt = input.dtype
    if dt.kind == "c":  # PyTorch's complex kernel: no fused multiply-add; the end nearer by |weight|
        diff = end - input
        if not isinstance(weight, Tensor):
            return input + weight * diff if complex(weight).real ** 2 + complex(weight).imag ** 2 < 0.25 else \
                end - diff * (1 - weight)
        return where(weight.abs() < 0.5, input + weight * diff, end - diff * (1 - weight))
    ct = _dtype.opmath(dt)
    if not isinstance(weight, Tensor):
        weight = _rounded(scalar_to(weight, ct), ct)
    input, end = input.to(ct), end.to(ct)
    diff = end - input
    if not isinstance(weight, Tensor):
        r = _fma(weight, diff, input) if -0.5 < weight < 0.5 else _fma(_rounded(weight - 1, ct), diff, end)
    else:
        weight = weight.to(ct)
        r = where(weight.abs() < 0.5, _fma(weight, diff, input), _fma(weight - 1, diff, end))
    return r.to(dt)


_Lerp = formula_node("LerpBackward0", _lerp_impl, ("input", "end", "weight"))
_LerpTensor = formula_node("LerpBackward1", _lerp_impl, ("input", "end", "weight"))


_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
              "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char",
              "bool": "bool"}


@register
def lerp(input, end, weight):
    for name, t in (("end", end), ("weight", weight)):  # no promotion: one dtype, as PyTorch's kernel
        if isinstance(t, Tensor) and t.dtype is not input.dtype:
            raise RuntimeError(f"expected dtype {_CPP_NAMES[input.dtype.name]} for `{name}` but got dtype "
                               f"{_CPP_NAMES[t.dtype.name]}")
    if input.dtype.kind not in "fc":
        raise NotImplementedError(f"\"lerp_kernel_{'tensor' if isinstance(weight, Tensor) else 'scalar'}\" not "
                                  f"implemented for '{name_of(input.dtype)}'")
    if recording(input, end, weight):
        return (_LerpTensor if isinstance(weight, Tensor) else _Lerp).apply(input, end, weight)
    return _lerp_impl(input, end, weight)


def _addc(input, tensor1, tensor2, value, op):
    """input + value * tensor1 (op) tensor2 as PyTorch's kernel: value truncated for integers; float16 /
    bfloat16 computed in float32 with value unrounded, the result rounded once."""
    dt = _dtype.result_type(input, tensor1, tensor2)
    if dt is _dtype.bool_:
        raise NotImplementedError(f"\"{'addcmul' if op is mul else 'addcdiv'}_cpu_out\" not implemented for 'Bool'")
    if not dt.is_floating_point:
        value = scalar_to(value, dt)
    # the operands in the compute dtype first (an int32 tensor1 times value would wrap)
    ct = _dtype.opmath(dt)
    input, tensor1, tensor2 = (t.to(ct) for t in (input, tensor1, tensor2))
    # value * tensor1 rounded, then addcmul's fused multiply-add (one rounding), addcdiv's quotient and sum
    fused = op is mul and ct.is_floating_point
    r = _fma(value * tensor1, tensor2, input) if fused else input + op(value * tensor1, tensor2)
    return r if r.dtype is dt else r.to(dt)


_Addcmul = formula_node("AddcmulBackward0", lambda input, tensor1, tensor2, value: _addc(input, tensor1, tensor2,
                                                                                          value, mul),
                        ("input", "tensor1", "tensor2", "value"))
_Addcdiv = formula_node("AddcdivBackward0", lambda input, tensor1, tensor2, value: _addc(input, tensor1, tensor2,
                                                                                          value, div),
                        ("input", "tensor1", "tensor2", "value"))


@register
def addcmul(input, tensor1, tensor2, *, value=1):
    if recording(input, tensor1, tensor2):
        return _Addcmul.apply(input, tensor1, tensor2, value)
    return _addc(input, tensor1, tensor2, value, mul)


@register
def addcdiv(input, tensor1, tensor2, *, value=1):
    if not (tensor1.is_floating_point() or tensor2.is_floating_point()):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a "
            "true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + "
            "value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * "
            "tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")
    if recording(input, tensor1, tensor2):
        return _Addcdiv.apply(input, tensor1, tensor2, value)
    return _addc(input, tensor1, tensor2, value, div)


def _sgn(x):  # a complex x / |x|, 0 at 0
    a = abs(x)
    return where(a == 0, 0, x / a)


_Sgn = composite_node("SgnBackward0", _sgn)
# a real sgn is sign, yet PyTorch's node is SgnBackward0 (its gradient an efficient zero tensor)
_RealSgn = formula_node("SgnBackward0", lambda x: sign(x), ("x",))


@register
def sgn(input):
    if input.dtype.is_complex:
        return _Sgn.apply(input) if recording(input) else _sgn(input)
    return _RealSgn.apply(input) if recording(input) else sign(input)


def _inplace(fn):
    """`self.<fn>_(...)`: fn(self, ...) written into self, as PyTorch's in-place ops (a result
    broadcast past self's shape or of a dtype self cannot hold raises)."""
    def in_place(self, *args, **kwargs):
        check_leaf_inplace(self)
        r = fn(self.clone() if recording(self, *args, *kwargs.values()) else self, *args, **kwargs)
        if tuple(r.shape) != tuple(self.shape):
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                               f"{list(r.shape)}")
        return inplace_result(self, r)
    in_place.__name__ = fn.__name__ + "_"
    return in_place


register(_inplace(clamp_min), "clamp_min_")
register(_inplace(clamp_max), "clamp_max_")
for _f in (lerp, addcmul, addcdiv):
    register_method(_inplace(_f), _f.__name__ + "_")
_div_rounding_ = _inplace(divide)


@register
def positive(input):
    check_tensor("positive", input)
    if input.dtype is bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


@register
def deg2rad(input):
    return input * (math.pi / 180)


@register
def rad2deg(input):
    return input * (180 / math.pi)


def _nan_to_num_kernel(input, nan, posinf, neginf):
    big = {"float16": 65504.0, "float32": 3.4028234663852886e38, "float64": 1.7976931348623157e308}
    hi = posinf if posinf is not None else big.get(input.dtype.name, 0)
    lo = neginf if neginf is not None else -big.get(input.dtype.name, 0)
    r = where(input.isnan(), nan, input)
    r = where(r == math.inf, hi, r)
    return where(r == -math.inf, lo, r)


NanToNum = formula_node("NanToNumBackward0", _nan_to_num_kernel, ("input", "nan", "posinf", "neginf"))


@register
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    if not input.dtype.is_floating_point:
        return input.clone()
    if recording(input):
        return NanToNum.apply(input, nan, posinf, neginf)
    return _nan_to_num_kernel(input, nan, posinf, neginf)


@register
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    check_tensor("isclose", input)
    check_tensor("isclose", other, "other", 2)
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    diff = (input - other).abs()
    close = (input == other) | (diff <= atol + rtol * other.abs())
    if equal_nan:
        close = close | (input.isnan() & other.isnan())
    return close


@register
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


@register
def equal(input, other):
    return tuple(input.shape) == tuple(other.shape) and bool((input == other).all().item())


div = register(divide, "div")  # torch.div takes rounding_mode
_round_plain = round


@register
def round(input, *, decimals=0, out=None):
    if decimals == 0:
        return _round_plain(input, out=out)
    s = 10.0 ** decimals
    return write_out(_round_plain(input * s) / s, out, input, full_overlap_ok=True, exact=OUT_DTYPE_SAME)


for _name, _f in (("arcsin", "asin"), ("arccos", "acos"), ("arctan", "atan"), ("arcsinh", "asinh"),
                  ("arccosh", "acosh"), ("arctanh", "atanh")):
    register(_DECLARED[_f], _name)
register(trunc, "fix")
register_method(lambda self, condition, other: where(condition, self, other), "where")  # self is the input
