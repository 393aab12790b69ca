"""erf / erfc / erfinv of the CPU backends' element-wise records (`elementwise.py`).

Scalar versions (pure Python, `math` only) and vectorized numpy versions (float64 in, float64
out). erf/erfc follow W. J. Cody's rational Chebyshev approximations (Math. Comp. 1969,
netlib specfun CALERF), accurate to double precision. erfinv follows PyTorch's `calc_erfinv`
(ATen/native/Math.h): a rational first guess refined by two Newton steps on erf.
"""
import math

from ._numpy import np

_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
      3.20937758913846947e03, 1.85777706184603153e-1)
_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
      2.84423683343917062e03)
_C = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
      2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03,
      2.05107837782607147e03, 1.23033935479799725e03, 2.15311535474403846e-8)
_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
      1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
      3.43936767414372164e03, 1.23033935480374942e03)
_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
      1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2)
_Q = (2.56852019228982242e00, 1.87295284992346047e00, 5.27905102951428412e-1,
      6.05183413124413191e-2, 2.33520497626869185e-3)
_SQRPI = 5.6418958354775628695e-1  # 1/sqrt(pi)

# erfinv first guess (PyTorch's calc_erfinv)
_EA = (0.886226899, -1.645349621, 0.914624893, -0.140543331)
_EB = (-2.118377725, 1.442710462, -0.329097515, 0.012229801)
_EC = (-1.970840454, -1.624906493, 3.429567803, 1.641345311)
_ED = (3.543889200, 1.637067800)
_TWO_OVER_SQRTPI = 2.0 / math.sqrt(math.pi)


def erfinv(y):
    """Scalar erfinv (float in, float out)."""
    if y != y:
        return y
    ya = abs(y)
    if ya > 1.0:
        return math.nan
    if ya == 1.0:
        return math.copysign(math.inf, y)
    if ya <= 0.7:
        z = y * y
        num = ((_EA[3] * z + _EA[2]) * z + _EA[1]) * z + _EA[0]
        dem = (((_EB[3] * z + _EB[2]) * z + _EB[1]) * z + _EB[0]) * z + 1.0
        x = y * num / dem
    else:
        z = math.sqrt(-math.log((1.0 - ya) / 2.0))
        num = ((_EC[3] * z + _EC[2]) * z + _EC[1]) * z + _EC[0]
        dem = (_ED[1] * z + _ED[0]) * z + 1.0
        x = math.copysign(num, y) / dem
    for _ in range(2):
        x = x - (math.erf(x) - y) / (_TWO_OVER_SQRTPI * math.exp(-x * x))
    return x


# ---- numpy versions ------------------------------------------------------------------------

def _rational(t, p, q):
    """The numerator and denominator of CALERF's rational function of t (coefficients p, one
    more than q), in CALERF's order: ((p[-1] t + p[0]) t + ... + p[-2], (t + q[0]) t + ... + q[-1])."""
    n = len(q) - 1
    num, den = p[n + 1] * t, t
    for i in range(n):
        num = (num + p[i]) * t
        den = (den + q[i]) * t
    return num + p[n], den + q[n]


def _np_erf_erfc(x, want_erfc):
    x = np.asarray(x, dtype=np.float64)
    y = np.abs(x)
    out = np.empty_like(x)
    with np.errstate(all="ignore"):
        # |x| <= 0.46875: erf by a rational function of x^2
        m1 = y <= 0.46875
        ys = np.where(y > 1.11e-16, y * y, 0.0)
        num, den = _rational(ys, _A, _B)
        r1 = x * num / den
        # 0.46875 < |x| <= 4: erfc
        num, den = _rational(y, _C, _D)
        r2 = num / den
        # |x| > 4: asymptotic erfc
        yi = 1.0 / (y * y)
        num, den = _rational(yi, _P, _Q)
        r3 = yi * num / den
        r3 = (_SQRPI - r3) / y
        r3 = np.where(y < 26.543, r3, 0.0)
        ysq = np.trunc(16.0 * y) / 16.0
        dl = (y - ysq) * (y + ysq)
        scale = np.exp(-ysq * ysq) * np.exp(-dl)
        rc = np.where(y <= 4.0, r2, r3) * scale  # erfc(|x|) for |x| > 0.46875
        rc = np.where(y > 26.543, 0.0, rc)
        if want_erfc:
            big = np.where(x < 0, 2.0 - rc, rc)
            out = np.where(m1, 1.0 - r1, big)
        else:
            big = 1.0 - rc
            big = np.where(x < 0, -big, big)
            out = np.where(m1, r1, big)
        out = np.where(np.isnan(x), x, out)
    return out


def np_erf(x):
    return _np_erf_erfc(x, False)


def np_erfc(x):
    return _np_erf_erfc(x, True)


def np_erfinv(y):
    y = np.asarray(y, dtype=np.float64)
    with np.errstate(all="ignore"):
        ya = np.abs(y)
        z = y * y
        num = ((_EA[3] * z + _EA[2]) * z + _EA[1]) * z + _EA[0]
        dem = (((_EB[3] * z + _EB[2]) * z + _EB[1]) * z + _EB[0]) * z + 1.0
        xc = y * num / dem
        z = np.sqrt(-np.log((1.0 - ya) / 2.0))
        num = ((_EC[3] * z + _EC[2]) * z + _EC[1]) * z + _EC[0]
        dem = (_ED[1] * z + _ED[0]) * z + 1.0
        xt = np.copysign(num, y) / dem
        x = np.where(ya <= 0.7, xc, xt)
        for _ in range(2):
            x = x - (np_erf(x) - y) / (_TWO_OVER_SQRTPI * np.exp(-x * x))
        x = np.where(ya == 1.0, np.copysign(np.inf, y), x)
        x = np.where(ya > 1.0, np.nan, x)
        x = np.where(np.isnan(y), y, x)
    return x
