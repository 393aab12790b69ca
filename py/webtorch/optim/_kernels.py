"""The few element-wise steps optimizers are written in, each one or two backend dispatches.

Optimizer updates run under no_grad and write parameters and state in place. They go
straight to the backend primitive (`_prims.ewise` / `ewise_into`) so a step costs exactly the
dispatches listed here and no autograd or argument-checking work. A backend that offers a
fused optimizer kernel can do a whole per-parameter update of `functional.py` (its
`fused_step` hook) without touching the optimizer classes.
"""
from .. import _dtype
from .._tensor import Tensor
from ..ops import _prims


def new(op, a, b):
    """A new tensor op(a, b) (a or b a tensor, the other a tensor or Python number)."""
    dt = (a if isinstance(a, Tensor) else b).dtype
    return _prims.ewise(op, [a, b], dt, dt)


def cmp(op, a, b):
    """A new bool tensor op(a, b) for a comparison primitive ('lt', 'ge', 'eq', ...)."""
    return _prims.ewise(op, [a, b], (a if isinstance(a, Tensor) else b).dtype, _dtype.bool_)


def where(cond, a, b):
    """A new tensor: a where cond else b (a or b a tensor, the other maybe a number)."""
    dt = (a if isinstance(a, Tensor) else b).dtype
    return _prims.ewise("where", [cond, a, b], dt, dt, shape=cond.shape)


def unary(op, a):
    return _prims.ewise(op, [a], a.dtype, a.dtype, shape=a.shape)


def inplace(op, x, b):
    """x = op(x, b) in place (1 dispatch)."""
    return _prims.ewise_into(op, x, [x, b], x.dtype)


def unary_(op, x):
    return _prims.ewise_into(op, x, [x], x.dtype)


def scaled(y, alpha):
    """alpha * y (no dispatch when alpha == 1)."""
    return y if alpha == 1 else new("mul", y, alpha)


def add_(x, y, alpha=1.0):
    """x += alpha * y as PyTorch's add_ (1 dispatch when alpha is +-1 or y a number, else 2)."""
    if not isinstance(y, Tensor):
        return inplace("add", x, y * alpha)
    if alpha in (1, -1):
        return inplace("add" if alpha == 1 else "sub", x, y)
    prod, ct = _prims.alpha_product(y, alpha, x.dtype, x)
    return _prims.ewise_into("add", x, [x, prod], ct)


def add(x, y, alpha=1.0):
    """x + alpha * y as a new tensor, as PyTorch's add."""
    if alpha in (1, -1):
        return new("add" if alpha == 1 else "sub", x, y)
    prod, ct = _prims.alpha_product(y, alpha, x.dtype, x)
    return _prims.ewise("add", [x, prod], ct, x.dtype)


def lerp_(x, end, w):
    """x += w * (end - x), PyTorch's lerp for w < 0.5; x = end - (end - x) * (1 - w) otherwise (3), in the
    opmath dtype with w unrounded."""
    ct = _dtype.opmath(x.dtype)
    d = _prims.ewise("sub", [end, x], ct, ct)
    if w < 0.5:
        return _prims.ewise_into("add", x, [x, _prims.ewise("mul", [d, w], ct, ct)], ct)
    return _prims.ewise_into("sub", x, [end, _prims.ewise("mul", [d, 1 - w], ct, ct)], ct)


def addcmul_(x, a, b, value=1.0):
    """x += value * a * b, in the opmath dtype (2-3 dispatches); float32 on the cpu as PyTorch's kernel,
    fma(value * a, b, x) rounded once (float64 holds the product exactly)."""
    ct = _dtype.opmath(x.dtype)
    prod = a if value == 1 else _prims.ewise("mul", [a, value], ct, ct)
    if ct is _dtype.float32 and x.dtype is ct and x.device.type == "cpu":
        ct = _dtype.float64
    return _prims.ewise_into("add", x, [x, _prims.ewise("mul", [prod, b], ct, ct)], ct)


def addcmul(x, a, b, value=1.0):
    """x + value * a * b as a new tensor, as PyTorch's addcmul (see addcmul_)."""
    out = _prims.ewise("copy", [x], x.dtype, x.dtype, shape=x.shape)
    return addcmul_(out, a, b, value)


def addcdiv_(x, a, b, value=1.0):
    """x += value * a / b, in PyTorch's order and opmath dtype (2-3 dispatches)."""
    ct = _dtype.opmath(x.dtype)
    prod = a if value == 1 else _prims.ewise("mul", [a, value], ct, ct)
    return _prims.ewise_into("add", x, [x, _prims.ewise("div", [prod, b], ct, ct)], ct)


def copy_(x, src):
    return _prims.ewise_into("copy", x, [src], x.dtype)
