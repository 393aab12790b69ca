"""Element-wise ops: one table row per op gives its kernel name, dtype rule and derivative.

Derivative formulas are written in webtorch ops (so they run on every backend and can be
differentiated again). A formula's parameter names say what the node saves: `x`/`a`/`b` the
inputs, `y` the result.
"""
import math

from .. import _dtype, _prims
from .._tensor import Tensor
from ..autograd.function import Function
from ..overrides import torch_function
from ._common import (float_of, sum_to, recording, check_leaf_inplace, inplace_result, write_out,
                      check_inplace_dtype, name_of, composite_node, composite_op, check_tensor)

bool_ = _dtype.bool_
LN2, LN10 = math.log(2.0), math.log(10.0)
SQRT_PI = math.sqrt(math.pi)


def _zeros(g, x=None, y=None):
    return g * 0


# name: (dtype rule, formula(g, x, y) or None when not differentiable)
#   rule 'same': keeps the dtype; 'float': integers become the default float; 'bool': bool out
UNARY = {
    "neg": ("same", lambda g: -g),
    "abs": ("same", lambda g, x: g * x.sign()),
    "sign": ("same", _zeros),
    "exp": ("float", lambda g, y: g * y),
    "exp2": ("float", lambda g, y: g * y * LN2),
    "expm1": ("float", lambda g, y: g * (y + 1)),
    "log": ("float", lambda g, x: g / x),
    "log2": ("float", lambda g, x: g / (x * LN2)),
    "log10": ("float", lambda g, x: g / (x * LN10)),
    "log1p": ("float", lambda g, x: g / (x + 1)),
    "sqrt": ("float", lambda g, y: g / (2 * y)),
    "rsqrt": ("float", lambda g, y: g * y.pow(3) * -0.5),
    "reciprocal": ("float", lambda g, y: -g * y * y),
    "sin": ("float", lambda g, x: g * x.cos()),
    "cos": ("float", lambda g, x: -g * x.sin()),
    "tan": ("float", lambda g, y: g * (y * y + 1)),
    "asin": ("float", lambda g, x: g / (1 - x * x).sqrt()),
    "acos": ("float", lambda g, x: -g / (1 - x * x).sqrt()),
    "atan": ("float", lambda g, x: g / (x * x + 1)),
    "sinh": ("float", lambda g, x: g * x.cosh()),
    "cosh": ("float", lambda g, x: g * x.sinh()),
    "tanh": ("float", lambda g, y: g * (1 - y * y)),
    "asinh": ("float", lambda g, x: g / (x * x + 1).sqrt()),
    "acosh": ("float", lambda g, x: g / (x * x - 1).sqrt()),
    "atanh": ("float", lambda g, x: g / (1 - x * x)),
    "sigmoid": ("float", lambda g, y: g * y * (1 - y)),
    "erf": ("float", lambda g, x: g * (2 / SQRT_PI) * (-x * x).exp()),
    "erfc": ("float", lambda g, x: g * (-2 / SQRT_PI) * (-x * x).exp()),
    "erfinv": ("float", lambda g, y: g * (SQRT_PI / 2) * (y * y).exp()),
    "floor": ("same", _zeros),
    "ceil": ("same", _zeros),
    "round": ("same", _zeros),
    "trunc": ("same", _zeros),
    "frac": ("same", lambda g: g),
    "relu": ("same", lambda g, y: g * (y > 0)),
    "logical_not": ("bool", None),
    "bitwise_not": ("same", None),
    "isnan": ("bool", None),
    "isinf": ("bool", None),
    "isfinite": ("bool", None),
    "signbit": ("bool", None),
}


def _params(fn):
    return fn.__code__.co_varnames[:fn.__code__.co_argcount]


def _unary_function(op, formula):
    saves_x = "x" in _params(formula)
    saves_y = "y" in _params(formula)
    params = _params(formula)

    class Unary(Function):
        _node_name = {"log1p": "Log1PBackward0"}.get(op, op.capitalize() + "Backward0")

        @staticmethod
        def forward(ctx, x, out_dtype):
            y = _prims.ewise(op, [x], out_dtype, out_dtype, shape=x.shape)
            ctx.save_for_backward(x if saves_x else None, y if saves_y else None)
            return y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            kw = {"x": x, "y": y}
            return formula(g, *[kw[p] for p in params[1:]]), None

    Unary.__name__ = Unary.__qualname__ = op.capitalize()
    Unary.saves_self = saves_x
    return Unary


def _unary_dtype(rule, x):
    if rule == "same":
        return x.dtype
    if rule == "float":
        return float_of(x.dtype)
    return bool_


def _make_unary(op, rule, formula):
    fn = _unary_function(op, formula) if formula is not None else None

    def public(input, *, out=None):
        check_tensor(op, input)
        if op == "neg" and input.dtype is bool_:
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                               "invert a mask, use the `~` or `logical_not()` operator instead.")
        if op == "bitwise_not" and input.dtype.is_floating_point:
            raise NotImplementedError(f"\"bitwise_not_cpu\" not implemented for '{name_of(input.dtype)}'")
        dt = _unary_dtype(rule, input)
        if fn is not None and recording(input):
            r = fn.apply(input, dt)
        else:  # bool-valued tests (isnan, isinf, ...) look at the input in its own dtype
            r = _prims.ewise(op, [input], input.dtype if rule == "bool" else dt, dt, shape=input._shape)
        return r if out is None else write_out(r, out)

    def inplace(self):
        check_leaf_inplace(self)
        dt = _unary_dtype(rule, self)
        check_inplace_dtype(dt, self)
        if recording(self):
            src = self.clone() if fn.saves_self else self
            return inplace_result(self, fn.apply(src, dt))
        return _prims.ewise_into(op, self, [self], dt if dt.kind == "f" else self.dtype)

    public.__name__ = op
    inplace.__name__ = op + "_"
    return torch_function(public), torch_function(inplace)


# ------------------------------------------------------------------------------------------
# binary ops: name: (dtype rule, grad_a, grad_b). Rules: 'arith' result_type; 'div' integers
# become float; 'cmp' bool out computed in result_type; 'logical' bool out; 'int' integer only
BINARY = {
    "mul": ("arith", lambda g, b: g * b, lambda g, a: g * a),
    "div": ("div", lambda g, b: g / b, lambda g, a, b: -g * a / (b * b)),
    "floor_divide": ("arith", None, None),
    "remainder": ("arith", lambda g: g, lambda g, a, b: -g * (a / b).floor()),
    "fmod": ("arith", lambda g: g, lambda g, a, b: -g * (a / b).trunc()),
    "maximum": ("arith", lambda g, a, b: g * ((a > b) + (a == b) * 0.5),
                lambda g, a, b: g * ((b > a) + (a == b) * 0.5)),
    "minimum": ("arith", lambda g, a, b: g * ((a < b) + (a == b) * 0.5),
                lambda g, a, b: g * ((b < a) + (a == b) * 0.5)),
    "fmax": ("arith", lambda g, a, b: g * ((a >= b) | b.isnan()), lambda g, a, b: g * ((b > a) | a.isnan())),
    "fmin": ("arith", lambda g, a, b: g * ((a <= b) | b.isnan()), lambda g, a, b: g * ((b < a) | a.isnan())),
    "atan2": ("div", lambda g, a, b: g * b / (a * a + b * b), lambda g, a, b: -g * a / (a * a + b * b)),
    "eq": ("cmp", None, None), "ne": ("cmp", None, None), "lt": ("cmp", None, None),
    "le": ("cmp", None, None), "gt": ("cmp", None, None), "ge": ("cmp", None, None),
    "logical_and": ("logical", None, None), "logical_or": ("logical", None, None),
    "logical_xor": ("logical", None, None),
    "bitwise_and": ("int", None, None), "bitwise_or": ("int", None, None), "bitwise_xor": ("int", None, None),
    "lshift": ("int", None, None), "rshift": ("int", None, None),
}
NODE_NAMES = {"mul": "MulBackward0", "div": "DivBackward0", "remainder": "RemainderBackward1",
              "fmod": "FmodBackward1", "maximum": "MaximumBackward0", "minimum": "MinimumBackward0",
              "fmax": "FmaxBackward0", "fmin": "FminBackward0", "atan2": "Atan2Backward0"}


def _binary_dtypes(op, rule, a, b):
    """(compute dtype, out dtype) for a binary op, with PyTorch's errors."""
    rt = _dtype.result_type(a, b)
    if rule == "arith":
        return rt, rt
    if rule == "div":
        ft = float_of(rt)
        return ft, ft
    if rule == "cmp":
        return rt, bool_
    if rule == "logical":
        return rt, bool_
    if rt.is_floating_point:
        raise NotImplementedError(f"\"{op}_cpu\" not implemented for '{name_of(rt)}'")
    return rt, rt


def _binary_function(op, ga, gb):
    pa = _params(ga)
    pb = _params(gb)
    needs = set(pa[1:]) | set(pb[1:])

    class Binary(Function):
        _node_name = NODE_NAMES.get(op, op.capitalize() + "Backward0")
        _scalar_edges = (0, 1)

        @staticmethod
        def forward(ctx, a, b, cdt, odt):
            ctx.shapes = (a.shape if isinstance(a, Tensor) else None, b.shape if isinstance(b, Tensor) else None)
            ctx.dtypes = (a.dtype if isinstance(a, Tensor) else None, b.dtype if isinstance(b, Tensor) else None)
            y = _prims.ewise(op, [a, b], cdt, odt)
            ctx.save_for_backward(a if "a" in needs and isinstance(a, Tensor) else None,
                                  b if "b" in needs and isinstance(b, Tensor) else None)
            if "a" in needs and not isinstance(a, Tensor):
                ctx.sa = a
            if "b" in needs and not isinstance(b, Tensor):
                ctx.sb = b
            return y

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            a = a if a is not None else getattr(ctx, "sa", None)
            b = b if b is not None else getattr(ctx, "sb", None)
            kw = {"a": a, "b": b}
            ra = rb = None
            if ctx.needs_input_grad[0]:
                ra = _to(sum_to(ga(g, *[kw[p] for p in pa[1:]]), ctx.shapes[0]), ctx.dtypes[0])
            if ctx.needs_input_grad[1]:
                rb = _to(sum_to(gb(g, *[kw[p] for p in pb[1:]]), ctx.shapes[1]), ctx.dtypes[1])
            return ra, rb, None, None

    Binary.__name__ = Binary.__qualname__ = op.capitalize()
    Binary.saves_self = "a" in needs
    if op in SCALAR_NODE_NAMES:  # PyTorch's overload with a Python number: its own node, one edge
        Binary.scalar = type(Binary.__name__ + "Scalar", (Binary,), {
            "_node_name": SCALAR_NODE_NAMES[op], "_scalar_edges": (0,), "__module__": __name__})
    return Binary


SCALAR_NODE_NAMES = {"remainder": "RemainderBackward0", "fmod": "FmodBackward0"}


def _binary_node(fn, other):
    return fn.scalar if not isinstance(other, Tensor) and hasattr(fn, "scalar") else fn


def _to(t, dt):
    return t if t.dtype is dt else t.to(dt)


_OPERAND = (Tensor, bool, int, float)
# binary ops whose first argument may be a Python number (torch.remainder(2, t)); the others want a Tensor
# binary ops with no overload for a Python number at all (torch.maximum(t, 2) is a TypeError)
_TENSOR_OTHER = {"maximum", "minimum", "fmax", "fmin", "atan2", "logical_and", "logical_or", "logical_xor"}
_SCALAR_SELF = {"mul", "div", "floor_divide", "remainder", "bitwise_and", "bitwise_or", "bitwise_xor", "lshift",
                "rshift"}


def _check_operands(op, input, other):
    for x, pos in ((input, 1), (other, 2)):
        if not isinstance(x, _OPERAND):
            name = "input" if pos == 1 else "other"
            raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be Tensor, not {type(x).__name__}")


def _check_inplace_shape(self, other):
    """An in-place op's other operand must broadcast to self's shape."""
    if isinstance(other, Tensor) and other._shape != self._shape:
        shape = _prims.broadcast_shapes(self._shape, other._shape)
        if shape != tuple(self._shape):
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                               f"{list(shape)}")


def _make_binary(op, rule, ga, gb):
    fn = _binary_function(op, ga, gb) if ga is not None else None
    int_div = op in ("floor_divide", "remainder", "fmod")

    def public(input, other, *, out=None):
        if not (isinstance(input, _OPERAND) and isinstance(other, _OPERAND)):
            _check_operands(op, input, other)
        if op not in _SCALAR_SELF:
            check_tensor(op, input)
        if op in _TENSOR_OTHER:
            check_tensor(op, other, "other", 2)
        cdt, odt = _binary_dtypes(op, rule, input, other)
        if int_div and cdt.kind != "f":
            _check_int_div(other)
        if fn is not None and odt.is_floating_point and recording(input, other):
            r = _binary_node(fn, other).apply(input, other, cdt, odt)
        else:
            if not isinstance(input, Tensor) and not isinstance(other, Tensor):
                raise TypeError(f"{op}(): at least one argument must be a Tensor")
            r = _prims.ewise(op, [input, other], cdt, odt)
        return r if out is None else write_out(r, out)

    def inplace(self, other):
        check_leaf_inplace(self)
        cdt, odt = _binary_dtypes(op, rule, self, other)
        check_inplace_dtype(odt, self)
        _check_inplace_shape(self, other)
        if fn is not None and recording(self, other):
            src = self.clone() if fn.saves_self else self
            return inplace_result(self, _binary_node(fn, other).apply(src, other, cdt, odt))
        if int_div and cdt.kind != "f":
            _check_int_div(other)
        return _prims.ewise_into(op, self, [self, other], cdt)

    public.__name__ = op
    inplace.__name__ = op + "_"
    return torch_function(public), torch_function(inplace)


def _check_int_div(other):
    if isinstance(other, Tensor):
        if other.device.type == "cpu" and (other == 0).any().item():
            raise RuntimeError("ZeroDivisionError")
    elif other == 0:
        raise RuntimeError("ZeroDivisionError")


_g = globals()
for _op, (_rule, _f) in UNARY.items():
    _g[_op], _g[_op + "_"] = _make_unary(_op, _rule, _f)
for _op, (_rule, _ga, _gb) in BINARY.items():
    _g[_op], _g[_op + "_"] = _make_binary(_op, _rule, _ga, _gb)


# ---- add / sub (alpha) ----------------------------------------------------------------------
class Add(Function):
    _node_name = "AddBackward0"
    _scalar_edges = (0, 1)

    @staticmethod
    def forward(ctx, a, b, alpha, cdt):
        ctx.meta = (a.shape if isinstance(a, Tensor) else None, b.shape if isinstance(b, Tensor) else None,
                    a.dtype if isinstance(a, Tensor) else None, b.dtype if isinstance(b, Tensor) else None, alpha)
        return _add_kernel(a, b, alpha, cdt)

    @staticmethod
    def backward(ctx, g):
        sa, sb, da, db, alpha = ctx.meta
        ga = _to(sum_to(g, sa), da) if ctx.needs_input_grad[0] else None
        gb = _to(sum_to(g if alpha == 1 else g * alpha, sb), db) if ctx.needs_input_grad[1] else None
        return ga, gb, None, None


class Sub(Function):
    _node_name = "SubBackward0"
    _scalar_edges = (0, 1)

    @staticmethod
    def forward(ctx, a, b, alpha, cdt):
        ctx.meta = (a.shape if isinstance(a, Tensor) else None, b.shape if isinstance(b, Tensor) else None,
                    a.dtype if isinstance(a, Tensor) else None, b.dtype if isinstance(b, Tensor) else None, alpha)
        return _add_kernel(a, b, -alpha, cdt)

    @staticmethod
    def backward(ctx, g):
        sa, sb, da, db, alpha = ctx.meta
        ga = _to(sum_to(g, sa), da) if ctx.needs_input_grad[0] else None
        gb = _to(sum_to(-g if alpha == 1 else g * -alpha, sb), db) if ctx.needs_input_grad[1] else None
        return ga, gb, None, None


def _add_kernel(a, b, alpha, cdt):
    if alpha == 1:
        return _prims.ewise("add", [a, b], cdt, cdt)
    if alpha == -1:
        return _prims.ewise("sub", [a, b], cdt, cdt)
    if isinstance(b, Tensor):
        b = _prims.ewise("mul", [b, alpha], cdt, cdt)
    else:
        b = b * alpha
    return _prims.ewise("add", [a, b], cdt, cdt)


def _is_bool(x):
    return x.dtype is bool_ if isinstance(x, Tensor) else isinstance(x, bool)


def _add_dtype(opname, a, b, alpha):
    cdt = _dtype.result_type(a, b)
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
    return cdt


def _make_add(opname, F):
    def public(input, other, *, alpha=1, out=None):
        if not (isinstance(input, _OPERAND) and isinstance(other, _OPERAND)):
            _check_operands(opname, input, other)
        cdt = _add_dtype(opname, input, other, alpha)
        if cdt.is_floating_point and recording(input, other):
            r = F.apply(input, other, alpha, cdt)
        else:
            r = _add_kernel(input, other, alpha if opname == "add" else -alpha, cdt)
        return r if out is None else write_out(r, out)

    def inplace(self, other, *, alpha=1):
        check_leaf_inplace(self)
        cdt = _add_dtype(opname, self, other, alpha)
        check_inplace_dtype(cdt, self)
        _check_inplace_shape(self, other)
        if recording(self, other):
            return inplace_result(self, F.apply(self, other, alpha, cdt))
        if isinstance(other, Tensor) and alpha != 1:
            other = _prims.ewise("mul", [other, alpha if opname == "add" else -alpha], cdt, cdt)
            return _prims.ewise_into("add", self, [self, other], cdt)
        if not isinstance(other, Tensor):
            other = other * alpha
        return _prims.ewise_into(opname, self, [self, other], cdt)

    public.__name__ = opname
    inplace.__name__ = opname + "_"
    return torch_function(public), torch_function(inplace)


add, add_ = _make_add("add", Add)
sub, sub_ = _make_add("sub", Sub)
subtract = sub
multiply = mul
divide_ = div_
true_divide = div
negative = neg
absolute = abs
arctan2 = atan2
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


class Rsub(Function):
    """rsub(input, other, alpha) = other - alpha * input (`2 - x` is rsub(x, 2))."""
    _node_name = "RsubBackward0"
    _scalar_edges = (0, 1)

    @staticmethod
    def forward(ctx, a, b, alpha, cdt):
        ctx.meta = (a.shape, a.dtype, b.shape if isinstance(b, Tensor) else None,
                    b.dtype if isinstance(b, Tensor) else None, alpha)
        return _add_kernel(b, a, -alpha, cdt)

    @staticmethod
    def backward(ctx, g):
        sa, da, sb, db, alpha = ctx.meta
        ga = _to(sum_to(-g if alpha == 1 else g * -alpha, sa), da) if ctx.needs_input_grad[0] else None
        gb = _to(sum_to(g, sb), db) if ctx.needs_input_grad[1] else None
        return ga, gb, None, None


class RsubScalar(Rsub):
    _node_name = "RsubBackward1"
    _scalar_edges = ()


@torch_function
def rsub(input, other, *, alpha=1):
    _check_operands("rsub", input, other)
    check_tensor("rsub", input)
    cdt = _add_dtype("sub", other, input, alpha)
    if cdt.is_floating_point and recording(input, other):
        return (Rsub if isinstance(other, Tensor) else RsubScalar).apply(input, other, alpha, cdt)
    return _add_kernel(other, input, -alpha, cdt)


_div_plain = div


@torch_function
def divide(input, other, *, rounding_mode=None, out=None):
    if rounding_mode is None:
        return _div_plain(input, other, out=out)
    if rounding_mode == "floor":
        r = floor_divide(input, other) if not _dtype.result_type(input, other).is_floating_point \
            else _div_plain(input, other).floor()
    elif rounding_mode == "trunc":
        rt = _dtype.result_type(input, other)
        r = _div_plain(input, other).trunc()
        if not rt.is_floating_point:
            r = r.to(rt)
    else:
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    return write_out(r, out)


# ---- pow -------------------------------------------------------------------------------------
class PowScalar(Function):
    _node_name = "PowBackward0"

    @staticmethod
    def forward(ctx, x, e, dt):
        ctx.save_for_backward(x)
        ctx.e = e
        return _prims.ewise("pow", [x, e], dt, dt)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        e = ctx.e
        if e == 0:
            return g * 0, None, None
        return g * e * x.pow(e - 1), None, None


class PowTensor(Function):
    _node_name = "PowBackward1"

    @staticmethod
    def forward(ctx, a, b, dt):
        y = _prims.ewise("pow", [a, b], dt, dt)
        ctx.save_for_backward(a, b, y)
        ctx.meta = (a.shape, b.shape, a.dtype, b.dtype)
        return y

    @staticmethod
    def backward(ctx, g):
        a, b, y = ctx.saved_tensors
        sa, sb, da, db = ctx.meta
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = _to(sum_to(where(b == 0, 0.0, g * b * a.pow(b - 1)), sa), da)
        if ctx.needs_input_grad[1]:
            gb = _to(sum_to(where((a == 0) & (b >= 0), 0.0, g * y * a.log()), sb), db)
        return ga, gb, None


class PowScalarBase(Function):
    _node_name = "PowBackward2"

    @staticmethod
    def forward(ctx, base, x, dt):
        y = _prims.ewise("pow", [base, x], dt, dt)
        ctx.save_for_backward(y)
        ctx.base = base
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        if ctx.base == 0:
            return None, g * 0, None
        return None, g * y * math.log(ctx.base), None


def _pow_dtype(a, b):
    dt = _dtype.result_type(a, b)
    if not dt.is_floating_point:
        ev = b if not isinstance(b, Tensor) else None
        if ev is not None and ev < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
    return dt


@torch_function
def pow(input, exponent, *, out=None):
    if not isinstance(exponent, Tensor):
        check_tensor("pow", input)
    dt = _pow_dtype(input, exponent)
    if isinstance(input, Tensor) and isinstance(exponent, Tensor):
        r = PowTensor.apply(input, exponent, dt) if dt.is_floating_point and recording(input, exponent) \
            else _prims.ewise("pow", [input, exponent], dt, dt)
    elif isinstance(input, Tensor):
        r = PowScalar.apply(input, exponent, dt) if dt.is_floating_point and recording(input) \
            else _prims.ewise("pow", [input, exponent], dt, dt)
    else:
        r = PowScalarBase.apply(input, exponent, dt) if dt.is_floating_point and recording(exponent) \
            else _prims.ewise("pow", [input, exponent], dt, dt)
    return write_out(r, out)


@torch_function
def pow_(self, exponent):
    check_leaf_inplace(self)
    dt = _pow_dtype(self, exponent)
    check_inplace_dtype(dt, self)
    if recording(self, exponent):
        return inplace_result(self, pow(self.clone(), exponent))
    return _prims.ewise_into("pow", self, [self, exponent], dt)


def float_power(input, exponent):
    if not isinstance(exponent, Tensor):
        check_tensor("float_power", input)
    return pow(input.double() if isinstance(input, Tensor) else input,
               exponent.double() if isinstance(exponent, Tensor) else exponent)


# ---- where / clamp / misc -----------------------------------------------------------------------
class Where(Function):
    _node_name = "WhereBackward0"
    _scalar_edges = (1, 2)

    @staticmethod
    def forward(ctx, cond, a, b, dt):
        ctx.save_for_backward(cond)
        ctx.meta = (a.shape if isinstance(a, Tensor) else None, b.shape if isinstance(b, Tensor) else None,
                    a.dtype if isinstance(a, Tensor) else None, b.dtype if isinstance(b, Tensor) else None)
        return _prims.ewise("where", [cond, a, b], dt, dt)

    @staticmethod
    def backward(ctx, g):
        (cond,) = ctx.saved_tensors
        sa, sb, da, db = ctx.meta
        ga = _to(sum_to(where(cond, g, 0.0), sa), da) if ctx.needs_input_grad[1] else None
        gb = _to(sum_to(where(cond, 0.0, g), sb), db) if ctx.needs_input_grad[2] else None
        return None, ga, gb, None


@torch_function
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
    if dt.is_floating_point and recording(input, other):
        r = Where.apply(condition, input, other, dt)
    else:
        r = _prims.ewise("where", [condition, input, other], dt, dt)
    return write_out(r, out)


class Clamp(Function):
    _node_name = "ClampBackward1"

    @staticmethod
    def forward(ctx, x, lo, hi, dt):
        ctx.save_for_backward(x)
        ctx.bounds = (lo, hi)
        return _clamp_kernel(x, lo, hi, dt)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        lo, hi = ctx.bounds
        mask = None
        if lo is not None:
            mask = x >= lo
        if hi is not None:
            mask = (x <= hi) if mask is None else mask & (x <= hi)
        return g * mask, None, None, None


def _clamp_kernel(x, lo, hi, dt):
    r = x
    if lo is not None:
        r = _prims.ewise("maximum", [r, lo], dt, dt)
    if hi is not None:
        r = _prims.ewise("minimum", [r, hi], dt, dt)
    return r if r is not x else _prims.ewise("copy", [x], dt, dt)


@torch_function
def clamp(input, min=None, max=None, *, out=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        r = input
        if min is not None:
            r = maximum(r, min)
        if max is not None:
            r = minimum(r, max)
        return write_out(r, out)
    dt = _dtype.result_type(input, *(v for v in (min, max) if v is not None))
    if dt.is_floating_point and recording(input):
        r = Clamp.apply(input, min, max, dt)
    else:
        r = _clamp_kernel(input, min, max, dt)
    return write_out(r, out)


@torch_function
def clamp_(self, min=None, max=None):
    check_leaf_inplace(self)
    if recording(self, min, max):
        return inplace_result(self, clamp(self.clone(), min, max))
    return _prims.copy_into(self, clamp(self, min, max))


clip, clip_ = clamp, clamp_


def clamp_min(input, min):
    check_tensor("clamp_min", input)
    return clamp(input, min=min)


def clamp_max(input, max):
    check_tensor("clamp_max", input)
    return clamp(input, max=max)


def square(input):
    return input * input


def _lerp_impl(input, end, weight):
    # PyTorch's formula: from the nearer end, so lerp(a, b, 1) is b even for an infinite a
    diff = end - input
    if not isinstance(weight, Tensor):
        return input + weight * diff if -0.5 < weight < 0.5 else end - diff * (1 - weight)
    return where(weight.abs() < 0.5, input + weight * diff, end - diff * (1 - weight))


_Lerp = composite_node("LerpBackward0", _lerp_impl)
_LerpTensor = composite_node("LerpBackward1", _lerp_impl)


@torch_function
def lerp(input, end, weight):
    return (_LerpTensor if isinstance(weight, Tensor) else _Lerp).call(input, end, weight)


@composite_op("AddcmulBackward0")
def addcmul(input, tensor1, tensor2, *, value=1):
    return input + value * tensor1 * tensor2


@composite_op("AddcdivBackward0")
def addcdiv(input, tensor1, tensor2, *, value=1):
    return input + value * tensor1 / tensor2


def sgn(input):
    return sign(input)


@composite_op("XlogyBackward0")
def xlogy(input, other):
    return where(input == 0, 0.0, input * log(other) if isinstance(other, Tensor) else input * math.log(other))


@composite_op("LogaddexpBackward0")
def logaddexp(input, other):
    check_tensor("logaddexp", input)
    check_tensor("logaddexp", other, "other", 2)
    m = maximum(input, other)
    return m + ((input - m).exp() + (other - m).exp()).log()


@composite_op("HypotBackward0")
def hypot(input, other):
    check_tensor("hypot", input)
    check_tensor("hypot", other, "other", 2)
    r = (input * input + other * other).sqrt()
    return where(input.isinf() | other.isinf(), math.inf, r)     # hypot(inf, nan) is inf


def deg2rad(input):
    return input * (math.pi / 180)


def rad2deg(input):
    return input * (180 / math.pi)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    if not input.dtype.is_floating_point:
        return input.clone()
    big = {"float16": 65504.0, "float32": 3.4028234663852886e38, "float64": 1.7976931348623157e308}
    hi = posinf if posinf is not None else big.get(input.dtype.name, 0)
    lo = neginf if neginf is not None else -big.get(input.dtype.name, 0)
    r = where(input.isnan(), nan, input)
    r = where(r == math.inf, hi, r)
    return where(r == -math.inf, lo, r)


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


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


def equal(input, other):
    return tuple(input.shape) == tuple(other.shape) and bool((input == other).all().item())


div = divide  # torch.div takes rounding_mode
_round_plain = round


@torch_function
def round(input, *, decimals=0, out=None):
    if decimals == 0:
        return _round_plain(input, out=out)
    s = 10.0 ** decimals
    return write_out(_round_plain(input * s) / s, out)


arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh
bitwise_left_shift, bitwise_right_shift = lshift, rshift
fix = trunc
