"""The special functions that are not element-wise records of their own (`backends/elementwise.py` holds
lgamma, digamma, trigamma and Hurwitz's zeta): polygamma and mvlgamma, composed as PyTorch composes them
(ATen/native/UnaryOps.cpp, Math.h). torch.special's names for them are in `webtorch/special.py`."""
import math

from . import _prims
from ._common import check_tensor, composite_node, float_of, name_of, write_out
from ._elementwise import unary
from .registry import ELEMENTWISE, register, register_method


def _polygamma(x, n):
    # PyTorch's polygamma kernel: digamma, trigamma, else (-1)^(n+1) n! zeta(n + 1, x)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if n <= 1:
        return _prims.ewise("trigamma" if n else "digamma", [x], x.dtype, x.dtype, shape=x._shape)
    try:
        scale = math.exp(math.lgamma(n + 1.0))
    except OverflowError:
        scale = math.inf
    z = _prims.ewise("special_zeta", [float(n + 1), x], x.dtype, x.dtype, shape=x._shape)
    return _prims.ewise("mul", [z, scale if n % 2 else -scale], x.dtype, x.dtype)


# Tensor.polygamma(n), Tensor.polygamma_(n): the unary op with its parameter n; not listed with the one-input
# element-wise ops (whose lists call webtorch.<op>(x)): torch.polygamma takes n first
_polygamma_method = unary("polygamma", "float", "PolygammaBackward0", ref=_polygamma, params={"n": 0},
                          inplace="method")
del ELEMENTWISE["polygamma"]


@register(method=False)
def polygamma(n, input, *, out=None):
    """torch.polygamma(n, input): the n-th derivative of digamma."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    return _polygamma_method(input, n, out=out)


def _mvlgamma(x, p):
    # PyTorch's: sum_i lgamma(x + (1 - i) / 2), i = 1..p, plus p (p - 1) / 4 log(pi)
    args = x._arange(-p * 0.5 + 0.5, 0.5, 0.5, dtype=x.dtype, device=x.device) + x.unsqueeze(-1)
    return args.lgamma().sum(-1) + p * (p - 1) * math.log(math.pi) * 0.25


_MvlgammaNode = composite_node("MvlgammaBackward0", _mvlgamma)


@register(method=False)
def mvlgamma(input, p, *, out=None):
    """The multivariate log-gamma function of dimension p."""
    check_tensor("mvlgamma", input)
    if not isinstance(p, int) or isinstance(p, bool):
        raise TypeError(f"mvlgamma(): argument 'p' (position 2) must be int, not {type(p).__name__}")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = input if input.dtype.is_floating_point else input.to(float_of(input.dtype))
    return write_out(_MvlgammaNode.call(x, p), out, input)


@register_method
def mvlgamma_(self, p):
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"mvlgamma: result type {name_of(self.dtype)} can't be cast to the desired output type "
                           f"{name_of(float_of(self.dtype))}")  # PyTorch's words
    return self.copy_(mvlgamma(self, p))


register_method(mvlgamma, "mvlgamma")
