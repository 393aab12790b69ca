"""The special functions that are not element-wise records of their own (`backends/elementwise.py` holds
lgamma, digamma, trigamma, Hurwitz's zeta, igamma, igammac): polygamma, mvlgamma, ndtr, log_ndtr, ndtri, entr,
xlog1py, composed as PyTorch composes them (ATen/native/UnaryOps.cpp, Math.h). `special_<name>` is
torch.special's only (`webtorch/special.py`)."""
import math

from .. import _dtype
from .._tensor import Tensor
from . import _cephes, _prims
from ._common import check_tensor, composite_node, float_of, name_of, write_out
from ._elementwise import binary, unary
from .pointwise import special_erfcx, special_i1, where
from .registry import ELEMENTWISE, register, register_method, routed


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


# ---- torch.special's element-wise compositions (PyTorch's CompositeImplicit kernels and Math.h) --------------
_SQRT1_2, _SQRT_2PI = math.sqrt(0.5), math.sqrt(2 * math.pi)


def _entr(x):  # -x log x; 0 at 0, -inf below 0, NaN through
    return where(x > 0, -x * x.log(), where(x == 0, 0.0, where(x < 0, -math.inf, x)))


def _log_ndtr(x):
    # Math.h's calc_log_ndtr: log(erfcx(-t) / 2) - t^2 below -1, log1p(-erfc(t) / 2) above (t = x / sqrt 2); each
    # branch sees its own interval only (no inf or NaN from the other's gradient)
    lo, hi = x.clamp_max(-1.0) * _SQRT1_2, x.clamp_min(-1.0) * _SQRT1_2
    return where(x < -1, (special_erfcx(-lo) * 0.5).log() - lo * lo, (hi.erfc() * -0.5).log1p())


def _ndtri(p):
    # the normal quantile: Abramowitz-Stegun 26.2.23's start (4.5e-4), three Newton steps on log ndtr(x) = log q
    # (each squares the error), q = min(p, 1 - p) (1 - p is exact above 1/2)
    q = where(p > 0.5, 1 - p, p).clamp(1e-300 if p.dtype.itemsize == 8 else 1e-38, 0.5)
    t = (-2 * q.log()).sqrt()
    x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1 + t * (1.432788 + t * (0.189269 + t * 0.001308))))
    logq = q.log()
    for _ in range(3):
        ln = _log_ndtr(x)
        x = x - (ln - logq) * (ln + x * x * 0.5).exp() * _SQRT_2PI
    x = where(p > 0.5, -x, where(p == 0.5, 0.0, x))
    return where(p == 0, -math.inf, where(p == 1, math.inf, where((p > 0) & (p < 1), x, math.nan)))


special_entr = unary("special_entr", "float", "SpecialEntrBackward0", ref=_entr, exported=False)
special_log_ndtr = unary("special_log_ndtr", "float", "SpecialLogNdtrBackward0", ref=_log_ndtr, exported=False)
special_ndtri = unary("special_ndtri", "float", "SpecialNdtriBackward0", ref=_ndtri, exported=False)


@routed
def special_ndtr(input, *, out=None):
    """The standard normal CDF, as PyTorch composes it: (1 + erf(x / sqrt 2)) / 2."""
    check_tensor("special_ndtr", input)
    x = input if input.dtype.is_floating_point else input.to(float_of(input.dtype))
    return write_out((1 + (x * _SQRT1_2).erf()) * 0.5, out, input)


def _xlog1py(a, b, cdt):
    # PyTorch's kernel: NaN where y is NaN, 0 where x is 0, x log1p(y) elsewhere
    t = a if isinstance(a, Tensor) else b
    a, b = (v if isinstance(v, Tensor) else t.new_full((), v, dtype=cdt) for v in (a, b))
    a, b = a.to(cdt), b.to(cdt)
    return where(b.isnan(), math.nan, where(a == 0, 0.0, a * b.log1p()))


special_xlog1py = binary("special_xlog1py", "div", "SpecialXlog1PyBackward0", ref=_xlog1py,
                         scalar_node="SpecialXlog1PyBackward2", scalar_self=True,
                         scalar_self_node="SpecialXlog1PyBackward1", inplace=False, exported=False)


# ---- the orthogonal polynomials (Math.h's *_polynomial_*_forward): P_n(x), n truncated to an integer ----------
# name: (P_1 (P_0 is 1), P_m from P_{m-1} = q and P_{m-2} = p, the trigonometric form past n_trig for |y| < 1,
# the values at y = +-1 (n, sign of y -> value) or None); y = x, or 2x - 1 for the shifted Chebyshev polynomials.
# Not differentiable (PyTorch's results do not require grad).
def _t_edge(n, pos):
    return where(pos | (n % 2 == 0), 1.0, -1.0)


def _u_edge(n, pos):
    return where(pos | (n % 2 == 0), n + 1, -(n + 1))


def _v_edge(n, pos):
    return where(pos, 1.0, where(n % 2 == 0, n + n + 1, -(n + n + 1)))


def _w_edge(n, pos):
    return where(pos, n + n + 1, where(n % 2 == 0, 1.0, -1.0))


def _chebyshev(p1, trig, edge, n_trig):
    return (p1, lambda m, y, p, q: (y + y) * q - p, trig, edge, n_trig)


def _acos(y):
    return y.clamp(-1.0, 1.0).acos()


_POLYNOMIALS = {
    "chebyshev_polynomial_t": _chebyshev(lambda y: y, lambda y, n: (n * _acos(y)).cos(), _t_edge, 6),
    "chebyshev_polynomial_u": _chebyshev(lambda y: y + y, lambda y, n: ((n + 1) * _acos(y)).sin() / _acos(y).sin(),
                                         _u_edge, 8),
    "chebyshev_polynomial_v": _chebyshev(lambda y: y + y - 1,
                                         lambda y, n: ((n + 0.5) * _acos(y)).cos() / (_acos(y) / 2).cos(), _v_edge, 8),
    "chebyshev_polynomial_w": _chebyshev(lambda y: y + y + 1,
                                         lambda y, n: ((n + 0.5) * _acos(y)).sin() / (_acos(y) / 2).sin(), _w_edge, 8),
    "hermite_polynomial_h": (lambda y: y + y, lambda m, y, p, q: (y + y) * q - 2 * (m - 1) * p,
                             None, None, None),
    "hermite_polynomial_he": (lambda y: y, lambda m, y, p, q: y * q - (m - 1) * p,
                              None, None, None),
    "laguerre_polynomial_l": (lambda y: 1 - y,
                              lambda m, y, p, q: ((2 * m - 1 - y) * q - (m - 1) * p) / m, None, None, None),
    "legendre_polynomial_p": (lambda y: y,
                              lambda m, y, p, q: ((2 * m - 1) * y * q - (m - 1) * p) / m, None,
                              _t_edge, None),
}


def _polynomial(name, shifted):
    p1, step, trig, edge, n_trig = _POLYNOMIALS[name]

    def fn(input, n, *, out=None):
        if not isinstance(input, Tensor) and not isinstance(n, Tensor):
            raise TypeError(f"special_{name}() received an invalid combination of arguments")
        t = input if isinstance(input, Tensor) else n
        dt = float_of(_dtype.result_type(input, n))
        # float32 on cpu computes in float64, rounded once: PyTorch's CPU kernel contracts x q - k p into FMAs
        cdt = _dtype.float64 if dt is _dtype.float32 and t.device.type == "cpu" else dt
        x, n = (v.detach().to(cdt) if isinstance(v, Tensor) else t.new_full((), v, dtype=cdt) for v in (input, n))
        n = n.trunc()
        y = x + x - 1 if shifted else x
        x, n, y = (v.expand(_prims.broadcast_shapes(x._shape, n._shape)) for v in (x, n, y))
        direct = (n > n_trig) & (y.abs() < 1) if trig else n < 0
        rest = n.masked_fill(direct | (n < 0), 0)
        top = int(rest.max().item()) if rest.numel() else 0
        p, q = y.new_ones(y.shape), p1(y)
        for m in range(2, top + 1):
            p, q = q, where(rest >= m, step(m, y, p, q), q)
        r = where(rest == 0, 1.0, q) if top >= 1 else y.new_ones(y.shape)
        if trig:
            r = where(direct, trig(y, n), r)
        if edge is not None:
            r = where(y.abs() == 1, edge(n, y > 0).to(cdt), r)
        if name == "laguerre_polynomial_l":
            r = where(x == 0, 1.0, r)
        return write_out(where(n < 0, 0.0, r).to(dt), out)
    fn.__name__ = "special_" + ("shifted_" if shifted else "") + name
    return routed(fn)


globals().update({f.__name__: f for f in (_polynomial(n, False) for n in _POLYNOMIALS)})
globals().update({f.__name__: f for f in (_polynomial(n, True) for n in _POLYNOMIALS if n.startswith("chebyshev"))})


# ---- Bessel functions PyTorch declares without a derivative (their results do not require grad) ---------------
def _spherical_bessel_j0(x):
    # Math.h: sin(x) / x, its Taylor series below |x| = 1/2, 0 at +-inf
    s = x.clamp(-0.5, 0.5)
    series = 0.0
    for c in (1 / 6227020800.0, -1 / 39916800.0, 1 / 362880.0, -1 / 5040.0, 1 / 120.0, -1 / 6.0):
        series = (s * s) * (series + c)
    big = where(x.abs() < 0.5, 1.0, x)
    return where(x.isinf(), 0.0, where(x.abs() < 0.5, series + 1.0, big.sin() / big))


def _no_grad_unary(name, fn):
    def f(input, *, out=None):
        check_tensor("special_" + name, input)
        x = input.detach()
        return write_out(fn(x if x.dtype.is_floating_point else x.to(float_of(x.dtype))), out, input)
    f.__name__ = "special_" + name
    return routed(f)


special_modified_bessel_i0 = _no_grad_unary("modified_bessel_i0", lambda x: x.i0())
special_modified_bessel_i1 = _no_grad_unary("modified_bessel_i1", lambda x: special_i1(x))
special_spherical_bessel_j0 = _no_grad_unary("spherical_bessel_j0", _spherical_bessel_j0)
special_modified_bessel_k0 = _no_grad_unary("modified_bessel_k0", lambda x: _cephes.bessel_k(x, 0, False))
special_modified_bessel_k1 = _no_grad_unary("modified_bessel_k1", lambda x: _cephes.bessel_k(x, 1, False))
special_scaled_modified_bessel_k0 = _no_grad_unary("scaled_modified_bessel_k0", lambda x: _cephes.bessel_k(x, 0, True))
special_scaled_modified_bessel_k1 = _no_grad_unary("scaled_modified_bessel_k1", lambda x: _cephes.bessel_k(x, 1, True))
special_bessel_j0 = _no_grad_unary("bessel_j0", lambda x: _cephes.bessel_jy(x, 0, "j"))
special_bessel_j1 = _no_grad_unary("bessel_j1", lambda x: _cephes.bessel_jy(x, 1, "j"))
special_bessel_y0 = _no_grad_unary("bessel_y0", lambda x: _cephes.bessel_jy(x, 0, "y"))
special_bessel_y1 = _no_grad_unary("bessel_y1", lambda x: _cephes.bessel_jy(x, 1, "y"))
special_airy_ai = _no_grad_unary("airy_ai", _cephes.airy_ai)
