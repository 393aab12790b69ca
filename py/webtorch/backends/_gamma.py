"""lgamma / digamma / trigamma / zeta of the element-wise records (`elementwise.py`): PyTorch's CPU kernels
(ATen/native/Math.h: calc_digamma, calc_trigamma, zeta (Cephes)) as scalar functions (pure Python), numpy
forms and WGSL helpers. polygamma(n >= 2, x) is (-1)^(n+1) n! zeta(n + 1, x) (ops/special.py).

digamma and trigamma compute in the input's dtype (float32 in float32, as PyTorch's kernels); zeta in
float64 (PyTorch's CPU accumulate type), rounded once; lgamma is C's (Python's math.lgamma).
"""
import math

from ._numpy import np

_INF, _NAN, _PI = math.inf, math.nan, math.pi
_PSI_10 = 2.25175258906672110764  # digamma(10)
_DIGAMMA_A = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
              -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
              8.33333333333333333333E-2)
_MACHEP = 1.11022302462515654042E-16
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15, 1.8152105401943546773e17,
           -7.1661652561756670113e18)


def _polevl(x, coeffs):
    r = 0.0 * x
    for c in coeffs:
        r = r * x + c
    return r


# ---- pure Python (float64) --------------------------------------------------------------------------
def lgamma(x):
    try:
        return math.lgamma(x)
    except (ValueError, OverflowError):  # the poles 0, -1, -2, ...; overflow
        return _INF


def digamma(x):
    if x == 0:
        return math.copysign(_INF, -x)
    result = 0.0
    if x < 0:
        if _integral(x):
            return _NAN
        result = -_PI / math.tan(_PI * (x - math.trunc(x)))
        x = 1 - x
    while x < 10:
        result -= 1 / x
        x += 1
    if x == 10:
        return result + _PSI_10
    y = 0.0
    if x < 1.0e17:
        z = 1.0 / (x * x)
        y = z * _polevl(z, _DIGAMMA_A)
    return result + math.log(x) - 0.5 / x - y


def trigamma(x, rnd=float):
    """rnd: the rounding of pi x to the compute dtype (float32: PyTorch's sin(pi x) near the poles)."""
    if x == -_INF:
        return _NAN
    sign, result = 1.0, 0.0
    if x < 0.5:
        sign = -1.0
        ss = rnd(math.sin(rnd(rnd(_PI) * x))) ** 2
        result = -(_PI * _PI) / ss if ss else -_INF
        x = 1 - x
    for _ in range(6):
        result += 1 / (x * x)
        x += 1
    ixx = 1 / (x * x)
    result += (1 + 1 / (2 * x) + ixx * (1. / 6 - ixx * (1. / 30 - ixx * (1. / 42)))) / x
    return sign * result


def _integral(v):
    """v == floor(v), as C's (true at +-inf)."""
    return math.isinf(v) or float(v).is_integer()


def _pow(a, b):
    try:
        return math.pow(a, b)
    except OverflowError:
        return _INF


def _zeta_pole(x, q):
    """zeta(x, q) where Cephes returns before its series (None elsewhere)."""
    if x == 1:
        return _INF
    if x < 1:
        return _NAN
    if q <= 0:
        if _integral(q):
            return _INF
        if not _integral(x):
            return _NAN
    return None


def zeta(x, q):
    """Hurwitz's zeta(x, q) = sum_k (k + q)^-x: Cephes' Euler-Maclaurin summation (PyTorch's zeta)."""
    pole = _zeta_pole(x, q)
    if pole is not None:
        return pole
    s = _pow(q, -x)
    a, b, i = q, 0.0, 0
    while i < 9 or a <= 9.0:
        i += 1
        a += 1.0
        b = _pow(a, -x)
        s += b
        if -_MACHEP * s < b < _MACHEP * s:
            return s
    w = a
    s += b * w / (x - 1.0)
    s -= 0.5 * b
    a, k = 1.0, 0.0
    for c in _ZETA_A:
        a *= x + k
        b /= w
        t = a * b / c
        s = s + t
        if s != 0 and abs(t / s) < _MACHEP:
            return s
        k += 1.0
        a *= x + k
        b /= w
        k += 1.0
    return s


# ---- numpy (the input's dtype for digamma and trigamma; lgamma and zeta: the scalar forms over the elements) --
def np_lgamma(a):
    return np.asarray(np.frompyfunc(lgamma, 1, 1)(a.astype(np.float64)), dtype=a.dtype)


def np_zeta(x, q):
    return np.asarray(np.frompyfunc(zeta, 2, 1)(x.astype(np.float64), q.astype(np.float64)), dtype=np.result_type(x, q))


def np_digamma(x):
    dt = x.dtype.type
    with np.errstate(all="ignore"):
        neg = x < 0
        frac = (x - np.trunc(x)).astype(np.float64)  # PyTorch: pi / tan(pi r) in double
        result = np.where(neg, -(_PI / np.tan(_PI * frac)), 0.0).astype(x.dtype)
        y = np.where(neg, 1 - x, x)
        for _ in range(10):  # y >= 10 after at most 10 steps
            low = y < 10
            result = result - np.where(low, 1 / y, dt(0))
            y = np.where(low, y + dt(1), y)
        z = 1 / (y * y)
        tail = np.where(y < dt(1e17), z * _polevl(z, [dt(c) for c in _DIGAMMA_A]), dt(0))
        r = np.where(y == 10, result + dt(_PSI_10), result + np.log(y) - dt(0.5) / y - tail)
        r = np.where(neg & (x == np.trunc(x)), dt(_NAN), r)
        return np.where(x == 0, np.copysign(dt(_INF), -x), r).astype(x.dtype)


def np_trigamma(x):
    dt = x.dtype.type
    with np.errstate(all="ignore"):
        low = x < 0.5
        s = np.sin(dt(_PI) * x)
        result = np.where(low, -(dt(_PI) * dt(_PI)) / (s * s), dt(0))
        y = np.where(low, 1 - x, x)
        for _ in range(6):
            result = result + 1 / (y * y)
            y = y + dt(1)
        ixx = 1 / (y * y)
        result = result + (1 + 1 / (2 * y) + ixx * (dt(1. / 6) - ixx * (dt(1. / 30) - ixx * dt(1. / 42)))) / y
        return np.where(low, -result, result).astype(x.dtype)


# ---- WGSL (f32) -------------------------------------------------------------------------------------------
WGSL = f"""
fn wlgamma_pos(x0: f32) -> f32 {{   // x0 >= 0.5: shifted to >= 8, then Stirling's series
  var x = x0; var p = 1.0;
  while (x < 8.0) {{ p = p * x; x = x + 1.0; }}
  let z = 1.0 / (x * x);
  let s = (0.083333333333 - z * (0.0027777777778 - z * (0.00079365079365 - z * 0.00059523809524))) / x;
  return (x - 0.5) * wlog(x) - x + 0.91893853320467 + s - wlog(p);
}}
fn wlgamma(x: f32) -> f32 {{
  if (wisnan(x)) {{ return x; }}
  if (wisinf(x)) {{ return winf(); }}
  if (x >= 0.5) {{ return wlgamma_pos(x); }}
  let r = x - floor(x);                   // |sin(pi x)| = sin(pi r)
  if (r == 0.0) {{ return winf(); }}
  return wlog({_PI!r} / sin({_PI!r} * min(r, 1.0 - r))) - wlgamma_pos(1.0 - x);
}}
fn wdigamma(x0: f32) -> f32 {{
  if (x0 == 0.0) {{ return select(-winf(), winf(), wsignbit(x0)); }}
  var x = x0; var result = 0.0;
  if (x < 0.0) {{
    if (x == trunc(x)) {{ return wnan(); }}
    result = -{_PI!r} / wtan({_PI!r} * (x - trunc(x)));
    x = 1.0 - x;
  }}
  if (wisnan(x)) {{ return x; }}
  if (wisinf(x)) {{ return x; }}
  while (x < 10.0) {{ result = result - 1.0 / x; x = x + 1.0; }}
  if (x == 10.0) {{ return result + {_PSI_10!r}; }}
  var y = 0.0;
  if (x < 1e17) {{
    let z = 1.0 / (x * x);
    var pz = 0.0;
    {"".join(f"pz = pz * z + {c!r}; " for c in _DIGAMMA_A)}
    y = z * pz;
  }}
  return result + wlog(x) - 0.5 / x - y;
}}
fn wtrigamma(x0: f32) -> f32 {{
  var x = x0; var sign = 1.0; var result = 0.0;
  if (x < 0.5) {{
    sign = -1.0;
    let s = wsin({_PI!r} * x);
    result = -{_PI * _PI!r} / (s * s);
    x = 1.0 - x;
  }}
  for (var i = 0; i < 6; i++) {{ result = result + 1.0 / (x * x); x = x + 1.0; }}
  let ixx = 1.0 / (x * x);
  result = result + (1.0 + 1.0 / (2.0 * x) + ixx * ({1 / 6!r} - ixx * ({1 / 30!r} - ixx * {1 / 42!r}))) / x;
  return sign * result;
}}
fn wzeta(x: f32, q: f32) -> f32 {{   // Cephes (PyTorch's zeta), in f32
  if (x == 1.0) {{ return winf(); }}
  if (x < 1.0) {{ return wnan(); }}
  if (q <= 0.0 && !wisnan(q)) {{
    if (q == floor(q)) {{ return winf(); }}
    if (wisnan(x) || x != floor(x)) {{ return wnan(); }}
  }}
  if (wisnan(x) || wisnan(q) || wisinf(q)) {{ return wnan(); }}
  let machep = 1.11022302462515654042e-16;
  var s = wpow(q, -x); var a = q; var b = 0.0; var i = 0;
  while (i < 9 || a <= 9.0) {{
    i = i + 1; a = a + 1.0; b = wpow(a, -x); s = s + b;
    if (-machep * s < b && b < machep * s) {{ return s; }}
  }}
  let w = a;
  s = s + b * w / (x - 1.0) - 0.5 * b;
  var aa = 1.0; var k = 0.0;
  var A = array<f32, 12>({", ".join(repr(c) for c in _ZETA_A)});
  for (var j = 0; j < 12; j++) {{
    aa = aa * (x + k); b = b / w;
    let t = aa * b / A[j];
    s = s + t;
    if (abs(t / s) < machep) {{ return s; }}
    k = k + 1.0; aa = aa * (x + k); b = b / w; k = k + 1.0;
  }}
  return s;
}}
"""
