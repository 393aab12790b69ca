"""One record per element-wise kernel: every fact of a primitive (and of a backend fast path) in one place.

A record (`Prim`) holds the kernel's name and arity, the compute dtypes it takes, its result
dtype, its three lowerings (numpy, pure Python, WGSL), its IEEE notes, what the tests need to
know (input domain, tolerance) and, where the front end declares it from here, its declaration
(dtype rule, PyTorch's node, flags). Everything else is derived from `RECORDS`:
`backends/base.py`'s lists, the numpy table (`cpu/numpy_backend.py`), the pure-Python dispatch
(`cpu/pure.py`), the WGSL expressions (`webgpu/codegen.py`), each backend's `fast_paths`, the
declarations of `ops/pointwise.py` and the lists the backend and IEEE tests iterate.

Forms are keyed by compute kind: 'f' floating, 'i' signed integer, 'u' uint8, 'b' bool; a key
may name several ("iub") or a dtype ("float16", "int64", "bool"), which wins over its kind.
- np: a numpy ufunc's name (also called with `out=`), a function of the compute-dtype arrays, or
  (function, out-writing function). Float16 computes in float32 and rounds once, unless the
  form is keyed "float16".
- py: a function of Python scalars mapped over the elements (`same`: the input itself), or
  `ByDtype(make)`, `make(cdtype)` giving that function.
- wgsl: an expression in `{0}`, `{1}`, `{2}` of the compute type (f32 for floats, i32 for
  int32/int64, u32 for uint8/bool; results of uint8/bool kinds are wrapped into range); `helpers`
  are WGSL functions it calls, added to the prelude (`shaders/prelude.wgsl` holds the shared ones).
A kind with no form falls back to the 'f' form on the inputs converted to float (float64 on cpu,
f32 on webgpu). `kinds` lists the compute kinds the kernel is meant for (the tests run those).

`define(record)` adds a record at run time (and `remove(name)` takes it away): the backends'
tables (`follow`) and the front end's declarations follow it (`subscribe`); its WGSL helpers reach
only a webgpu backend created after it (the prelude is read once), so such a record's WGSL is an
expression of prelude functions.
"""
import cmath
import math
import operator
import struct
from collections import namedtuple

from . import _gamma, _special
from ._numpy import np

Prim = namedtuple("Prim", "name arity kinds out np py wgsl helpers zero_div fast decl domain tol specials",
                  defaults=("same", None, None, None, "", False, False, None, (-4.0, 4.0), None, ""))
Prim.__doc__ = """An element-wise kernel. kinds: compute kinds taken ('fiub'); out: 'same' or 'bool'; np, py,
wgsl: the lowerings (module docstring); helpers: WGSL functions; zero_div: an integer division by zero
raises RuntimeError("ZeroDivisionError"); fast: the kernel of a decomposed op (ops/pointwise.py's
`ref=`), a backend fast path, not a primitive: "exact" where the decomposition gives PyTorch's bits (a backend
without the kernel loses nothing), "close" where it is within the op's tolerance (sigmoid, rsqrt);
decl: ops/pointwise.py's declaration from here, {'rule': dtype rule, 'node': PyTorch's node (default
`<Name>Backward0` for a differentiable rule), flags of `unary`/`binary`}, None where pointwise.py declares
the op itself; domain: (lo, hi) of the tests' float inputs; tol: the tests' relative tolerance (None: a few
ulps); specials: IEEE notes."""


class ByDtype:
    """A pure-Python form that depends on the compute dtype: `make(cdtype)` gives the scalar function."""
    __slots__ = ("make",)

    def __init__(self, make):
        self.make = make


KIND_DTYPES = {"f": ("float16", "bfloat16", "float32", "float64"), "i": ("int8", "int16", "int32", "int64"),
               "u": ("uint8", "uint16", "uint32", "uint64"), "b": ("bool",), "c": ("complex64", "complex128")}
KIND_OF = {d: k for k, ds in KIND_DTYPES.items() for d in ds}
BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "uint8": 8, "bool": 8, "uint16": 16, "uint32": 32,
        "uint64": 64}


def form(forms, dtype):
    """(the form of `forms` for compute dtype `dtype`, whether it is keyed by the dtype itself); (None, False)."""
    if not forms:
        return None, False
    if dtype in forms:
        return forms[dtype], True
    k = KIND_OF[dtype]
    for key, f in forms.items():
        if k in key and key not in KIND_OF:
            return f, False
    return None, False


# ---- shared scalar functions (C99 / numpy results instead of Python exceptions) -------------
_INF, _NAN = math.inf, math.nan


def same(x):
    """The identity form: the input itself (no pass over the elements where a backend can tell)."""
    return x


def _fdiv(a, b):
    try:
        return a / b
    except ZeroDivisionError:
        if a != a or a == 0:
            return _NAN
        return math.copysign(_INF, a) * math.copysign(1.0, b)


def _is_odd_int(b):
    return b == b and abs(b) != _INF and b == math.floor(b) and math.fmod(b, 2.0) != 0


def _fpow(a, b):
    try:
        return math.pow(a, b)
    except OverflowError:
        if a < 0 and _is_odd_int(b):
            return -_INF
        return _INF
    except ValueError:
        if a == 0 and b < 0:
            return math.copysign(_INF, a) if _is_odd_int(b) else _INF
        return _NAN


def _guard(f, special):
    """f(*args) with math's exceptions replaced by `special(*args)`."""
    def g(*args):
        try:
            return f(*args)
        except (ValueError, OverflowError):
            return special(*args)
    return g


def _log_special(x):
    return -_INF if x == 0 else _NAN  # x < 0


def _nan(*args):
    return _NAN


def _round_int_float(f):
    """floor/ceil/trunc for floats keeping inf/nan and the sign of zero."""
    def g(x):
        if x != x or x == _INF or x == -_INF:
            return x
        r = float(f(x))
        return r if r != 0 else math.copysign(0.0, x)
    return g


def _f32(x):
    """x rounded to float32 (inf past its range, as the hardware's conversion)."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(_INF, x)


def _ffloordiv(cd):
    """c10's div_floor_floating with each step rounded to the compute precision (float32 for float32 and
    float16, which PyTorch computes in float): (a - fmod(a, b)) / b, one less where fmod's sign is not b's,
    then floored to the nearest integer."""
    rnd = float if cd == "float64" else _f32

    def f(a, b):
        if b == 0:
            return _fdiv(a, b)
        try:
            m = math.fmod(a, b)
        except ValueError:
            return _NAN
        d = rnd(rnd(a - m) / b)
        if m != 0 and (b < 0) != (m < 0):
            d = rnd(d - 1)
        if d != d or d in (_INF, -_INF):
            return d
        if d == 0:
            return math.copysign(0.0, a) * math.copysign(1.0, b)
        q = math.floor(d)
        return q + 1 if rnd(d - q) > 0.5 else q
    return f


def _frem(a, b):
    try:
        m = math.fmod(a, b)
    except ValueError:
        return _NAN
    if m != 0 and (b < 0) != (m < 0):
        m += b
    return m


def _idiv_trunc(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _ifmod(a, b):
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


def _ipow(cd):
    mod = 1 << BITS[cd]

    def p(x, y):
        if y >= 0:
            return pow(x, y, mod)
        if x == 1:
            return 1
        if x == -1:
            return -1 if y & 1 else 1
        return 0
    return p


def _shift(left):
    def make(cd):
        bits = BITS[cd]
        if left:
            return lambda x, y: x << y if 0 <= y < bits else 0
        return lambda x, y: x >> y if 0 <= y < bits else (-1 if x < 0 else 0)
    return ByDtype(make)


def _sigmoid(x):
    try:
        return 1.0 / (1.0 + math.exp(-x))
    except OverflowError:
        return 0.0


# ---- shared numpy forms (numpy is imported only where present) ------------------------------
def _np_float(f):
    """f on float64 results cast back to the input's float dtype."""
    return lambda a: f(a).astype(a.dtype)


def _np_zeros(a):
    return np.zeros(a.shape, np.bool_)


def _np_ones(a):
    return np.ones(a.shape, np.bool_)


def _np_remainder(a, b):
    m = np.fmod(a, b)
    return np.where((m != 0) & ((b < 0) != (m < 0)), m + b, m)


def _np_idiv(a, b):
    return (a - np.fmod(a, b)) // b


def _np_fpow(a, b):
    r = np.power(a, b)
    if b.ndim == 0 and b == 0.5:  # numpy's sqrt fast path differs from C pow at -inf, -0
        r = np.where(a == -np.inf, np.inf, np.where(a == 0, 0.0, r)).astype(r.dtype)
    return r


def _np_ipow(a, b):
    a, b = np.broadcast_arrays(a, b)
    neg = b < 0
    if not neg.any():
        return np.power(a, b)
    r = np.power(a, np.where(neg, 0, b).astype(b.dtype))
    one = np.ones_like(a)
    negres = np.where(a == 1, one, np.where(a == -1, np.where((b & 1) == 1, -one, one), 0 * one))
    return np.where(neg, negres, r)


def _np_shift(left, boolean=False):
    def f(a, b):
        if boolean:
            a, b = a.astype(np.uint8), b.astype(np.uint8)
        bits = a.dtype.itemsize * 8
        ok = (b >= 0) & (b < bits)
        bb = np.where(ok, b, 0).astype(b.dtype)
        if left:
            return np.where(ok, np.left_shift(a, bb), 0).astype(a.dtype)
        fill = np.where(a < 0, -1, 0) if a.dtype.kind == "i" else 0
        return np.where(ok, np.right_shift(a, bb), fill).astype(a.dtype)
    return f


def _np_relu(a):
    return np.where(a < 0, np.zeros((), a.dtype), a)  # PyTorch's: -0.0 and NaN pass through


def _np_relu_out(a, out):
    neg = a < 0
    np.copyto(out, a)
    np.copyto(out, np.zeros((), a.dtype), where=neg)


def _np_copy_out(a, out):
    np.copyto(out, a)


# ---- WGSL helpers of single records (the shared functions are shaders/prelude.wgsl's) --------------------
def _w_reduced(name, tail):
    """WGSL ``w<name>`` of a trigonometric function: NaN off the finite numbers, the builtin below 2^16,
    beyond that ``tail`` on ``d = wrempio2(x)`` (x's remainder ``d.r`` mod pi/2 and its quadrant ``d.q``)."""
    return f"""
fn w{name}(x: f32) -> f32 {{
  if (!wisfinite(x)) {{ return wnan(); }}
  if (abs(x) < 65536.0) {{ return {name}(x); }}
  let d = wrempio2(x);
{tail}
}}
"""


_W_SIN = _w_reduced("sin", """  var v = select(sin(d.r), cos(d.r), (d.q & 1u) != 0u);
  v = select(v, -v, d.q >= 2u);
  return select(v, -v, x < 0.0);""")
_W_COS = _w_reduced("cos", """  let v = select(cos(d.r), sin(d.r), (d.q & 1u) != 0u);
  return select(v, -v, d.q == 1u || d.q == 2u);""")
_W_TAN = _w_reduced("tan", """  let t = tan(d.r);
  let v = select(t, -1.0 / t, (d.q & 1u) != 0u);
  return select(v, -v, x < 0.0);""")
_W_ASIN = """
// lavapipe's asin/acos builtins are off by ~4e-4; these go through watan2
fn wasin(x: f32) -> f32 {
  if (!(abs(x) <= 1.0) || wisnan(x)) { return wnan(); }    // atan2 of NaN is not NaN there
  return watan2(x, sqrt((1.0 - x) * (1.0 + x)));
}
"""
_W_ACOS = """
fn wacos(x: f32) -> f32 {
  if (!(abs(x) <= 1.0) || wisnan(x)) { return wnan(); }
  return watan2(sqrt((1.0 - x) * (1.0 + x)), x);
}
"""
_W_SINH = """
fn wsinh(x: f32) -> f32 {
  if (abs(x) < 1.0) { return 0.5 * (wexpm1(x) - wexpm1(-x)); }
  if (abs(x) > 88.0) { return select(whalfexp(x), -whalfexp(-x), x < 0.0); }
  return 0.5 * (wexp(x) - wexp(-x));
}
"""
_W_COSH = """
fn wcosh(x: f32) -> f32 {
  if (abs(x) > 88.0) { return whalfexp(abs(x)); }
  return 0.5 * (wexp(x) + wexp(-x));
}
"""
_W_TANH = """
fn wtanh(x: f32) -> f32 {
  if (wisnan(x)) { return x; }   // clamp() below may turn NaN into a bound
  let e = wexpm1(2.0 * clamp(x, -20.0, 20.0));
  return e / (e + 2.0);
}
"""
_W_ASINH = """
fn wasinh(x: f32) -> f32 {
  let a = abs(x);
  var r: f32;
  if (a > 1e18) { r = wlog(a) + 0.6931471805599453; }
  else { r = wlog1p(a + a * a / (1.0 + sqrt(1.0 + a * a))); }
  return select(r, -r, wsignbit(x));
}
"""
_W_ACOSH = """
fn wacosh(x: f32) -> f32 {
  if (x > 1e18) { return wlog(x) + 0.6931471805599453; }
  if (x < 1.0) { return wnan(); }   // t (t + 2) overflows to inf for x below -1.8e19
  let t = x - 1.0;   // acosh(x) = log1p(t + sqrt(t (t + 2))): no cancellation near 1
  return wlog1p(t + sqrt(t * (t + 2.0)));
}
"""
_W_ATANH = """
fn watanh(x: f32) -> f32 { return 0.5 * (wlog1p(x) - wlog1p(-x)); }   // (1 + x, 1 - x exact near +-1)
"""
_W_ERFINV = """
fn werfinv(x: f32) -> f32 {
  if (wisnan(x) || abs(x) > 1.0) { return wnan(); }
  if (x == 1.0) { return winf(); }
  if (x == -1.0) { return -winf(); }
  // M. Giles, "Approximating the erfinv function" (single precision) + one Newton step
  var w = -log((1.0 - x) * (1.0 + x));
  var p: f32;
  if (w < 5.0) {
    w = w - 2.5;
    p = 2.81022636e-08; p = 3.43273939e-07 + p * w; p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w; p = 0.00021858087 + p * w; p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w; p = 0.246640727 + p * w; p = 1.50140941 + p * w;
  } else {
    w = sqrt(w) - 3.0;
    p = -0.000200214257; p = 0.000100950558 + p * w; p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w; p = 0.00573950773 + p * w; p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w; p = 1.00167406 + p * w; p = 2.83297682 + p * w;
  }
  var y = p * x;
  let err = werf(y) - x;
  y = y - err / (1.1283791670955126 * exp(-y * y));
  return y;
}
"""
_W_SIGN = """
fn wsign(x: f32) -> f32 {   // PyTorch: sign(nan) = 0, sign(-0.0) = +0 (branches gave -0.0 on lavapipe)
  return f32(x > 0.0) - f32(x < 0.0);
}
"""
_W_SIGMOID = """
fn wsigmoid(x: f32) -> f32 { return 1.0 / (1.0 + wexp(-x)); }
"""
_W_FLOOR_DIVIDE = """
fn wfloordiv(a: f32, b: f32) -> f32 {
  if (b == 0.0) { return a / b; }
  let m = wfmod(a, b);
  var d = (a - m) / b;
  if (m != 0.0 && ((b < 0.0) != (m < 0.0))) { d = d - 1.0; }
  if (wisnan(d)) { return d; }    // (naga's `!=` is ordered: false for NaN)
  if (d != 0.0) {
    var f = floor(d);
    if (d - f > 0.5) { f = f + 1.0; }
    return f;
  }
  return bitcast<f32>((bitcast<u32>(a) ^ bitcast<u32>(b)) & 0x80000000u);   // copysign(0, a / b)
}
fn ifloordiv(a: i32, b: i32) -> i32 {
  if (b == 0) { return 0; }
  var q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) { q = q - 1; }
  return q;
}
"""
_W_POW = """
fn ipow(a: i32, b: i32) -> i32 {
  if (b < 0) { if (a == 1) { return 1; } if (a == -1) { return select(-1, 1, (b & 1) == 0); } return 0; }
  var e = u32(b); var base = a; var r = 1;
  loop { if ((e & 1u) != 0u) { r = r * base; } e = e >> 1u; if (e == 0u) { break; } base = base * base; }
  return r;
}
fn upow(a: u32, b: u32) -> u32 {
  var e = b; var base = a; var r = 1u;
  loop { if ((e & 1u) != 0u) { r = r * base; } e = e >> 1u; if (e == 0u) { break; } base = base * base; }
  return r;
}
"""
_W_LSHIFT = """
fn ishl(a: i32, b: i32) -> i32 { if (b < 0 || b >= 32) { return 0; } return a << u32(b); }
fn ushl(a: u32, b: u32) -> u32 { if (b >= 32u) { return 0u; } return a << b; }
"""
_W_RSHIFT = """
fn ishr(a: i32, b: i32) -> i32 { if (b < 0 || b >= 32) { return select(0, -1, a < 0); } return a >> u32(b); }
fn ushr(a: u32, b: u32) -> u32 { if (b >= 32u) { return 0u; } return a >> b; }
"""
_W_REMAINDER = """
fn wremainder(a: f32, b: f32) -> f32 {
  var m = wfmod(a, b);
  if (m != 0.0 && ((b < 0.0) != (m < 0.0))) { m = m + b; }
  return m;
}
fn iremainder(a: i32, b: i32) -> i32 {
  if (b == 0) { return 0; }
  var r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) { r = r + b; }
  return r;
}
"""
_W_FMAX = """
fn wfmax(a: f32, b: f32) -> f32 {
  if (wisnan(a)) { return b; } if (wisnan(b)) { return a; } return select(b, a, a >= b);
}
"""
_W_FMIN = """
fn wfmin(a: f32, b: f32) -> f32 {
  if (wisnan(a)) { return b; } if (wisnan(b)) { return a; } return select(b, a, a <= b);
}
"""


# ---- erfcx: exp(x^2) erfc(x) without its overflow --------------------------------------------
# below 2.5 the product (erfc(2.5) = 4e-4 keeps its relative precision); above, Laplace's continued
# fraction 1 / sqrt(pi) / (x + (1/2) / (x + (2/2) / (x + (3/2) / ...))), 40 terms (1e-14 at 2.5)
_ERFCX_SPLIT, _ERFCX_TERMS, _INV_SQRT_PI = 2.5, 40, 1.0 / math.sqrt(math.pi)


def _erfcx(x):
    if x < _ERFCX_SPLIT:
        try:
            return math.exp(x * x) * math.erfc(x)
        except OverflowError:
            return _INF
    t = 0.0
    for k in range(_ERFCX_TERMS, 0, -1):
        t = k * 0.5 / (x + t)
    return _INV_SQRT_PI / (x + t)


def _np_erfcx(x):
    x = x.astype(np.float64)
    lo = np.minimum(x, _ERFCX_SPLIT)          # each branch sees only its own interval
    hi = np.maximum(x, _ERFCX_SPLIT)
    t = np.zeros_like(hi)
    for k in range(_ERFCX_TERMS, 0, -1):
        t = k * 0.5 / (hi + t)
    return np.where(x < _ERFCX_SPLIT, np.exp(lo * lo) * _special.np_erfc(lo), _INV_SQRT_PI / (hi + t))


_ERFCX_WGSL = f"""
fn werfcx(x: f32) -> f32 {{   // exp(x^2) erfc(x): the product below {_ERFCX_SPLIT}, Laplace's continued fraction above
  if (wisnan(x)) {{ return x; }}
  if (x < {_ERFCX_SPLIT}) {{ return wexp(x * x) * werfc(x); }}
  var t = 0.0;
  for (var k = {_ERFCX_TERMS}; k > 0; k--) {{ t = f32(k) * 0.5 / (x + t); }}
  return {_INV_SQRT_PI!r} / (x + t);
}}
"""


# ---- nextafter: the next representable value of a toward b, in a's own dtype ------------------
def _nextafter(fmt, ufmt, sign):
    """nextafter stepping through the bits of the IEEE format `fmt` (struct code; `ufmt` its unsigned
    integer, `sign` its sign bit)."""
    def f(a, b):
        if a != a or b != b:
            return _NAN
        if a == b:
            return b
        if a == 0:
            u = 1 | (sign if b < 0 else 0)
        else:
            u = struct.unpack(ufmt, struct.pack(fmt, a))[0] + (1 if (a < b) == (a > 0) else -1)
        return struct.unpack(fmt, struct.pack(ufmt, u))[0]
    return f


def _np_nextafter16(a, b):
    return np.where(a == b, b, np.nextafter(a, b))  # numpy's float16 gives a where a == b: -0.0 toward 0.0


def _np_nextafter_bf16(a, b):
    """bfloat16 (float32 values) steps by its 16 bits, the upper half of float32's: by ordered integer keys."""
    def key(x):
        u = (x.astype(np.float32).view(np.uint32) >> 16).astype(np.int32)
        return np.where(u & 0x8000, -(u & 0x7FFF), u)
    ka, kb = key(a), key(b)
    k = ka + np.sign(kb - ka)
    r = (np.where(k < 0, -k | 0x8000, k).astype(np.uint32) << 16).view(np.float32)
    return np.where((a != a) | (b != b), np.float32("nan"), np.where(a == b, b, r))


def _nextafter_bf16(a, b):
    if a != a or b != b:
        return _NAN
    if a == b:
        return b
    ka, kb = (struct.unpack("<I", struct.pack("<f", x))[0] >> 16 for x in (a, b))
    ka, kb = (-(k & 0x7FFF) if k & 0x8000 else k for k in (ka, kb))
    k = ka + (1 if kb > ka else -1)
    return struct.unpack("<f", struct.pack("<I", ((-k | 0x8000) if k < 0 else k) << 16))[0]


_NEXTAFTER_PY = {"float16": _nextafter("<e", "<H", 0x8000), "float32": _nextafter("<f", "<I", 0x80000000),
                 "bfloat16": _nextafter_bf16}
_NEXTAFTER_WGSL = """
fn wnextord(u: u32, sign: u32) -> i32 { let m = i32(u & (sign - 1u)); return select(m, -m, (u & sign) != 0u); }
fn wnextbits(ua: u32, ub: u32, sign: u32) -> u32 {   // by the bits, ordered as integers (no float compare)
  let ka = wnextord(ua, sign); let kb = wnextord(ub, sign);
  if (ka == kb) { return ub; }
  if (ka == 0) { return (ub & sign) | 1u; }
  return select(ua - 1u, ua + 1u, (ka < kb) == ((ua & sign) == 0u));
}
fn wnextafter(a: f32, b: f32) -> f32 {
  if (wisnan(a) || wisnan(b)) { return wnan(); }
  return bitcast<f32>(wnextbits(bitcast<u32>(a), bitcast<u32>(b), 0x80000000u));
}
fn wnextafter16(a: f32, b: f32) -> f32 {   // float16 computes in f32: step through its half bits
  if (wisnan(a) || wisnan(b)) { return wnan(); }
  let h = wnextbits(pack2x16float(vec2<f32>(a, 0.0)) & 0xffffu, pack2x16float(vec2<f32>(b, 0.0)) & 0xffffu, 0x8000u);
  return unpack2x16float(h).x;
}
"""


def _f(name, wgsl, np_name=None, py=None, **kw):
    """A float function: numpy's ufunc `np_name` (default name), math's guarded form, WGSL's helper."""
    return Prim(name, 1, "f", np={"f": np_name or name}, py={"f": py}, wgsl={"f": wgsl}, **kw)


_FLOAT = {"rule": "float"}

RECORDS = {r.name: r for r in (
    # ---- unary --------------------------------------------------------------------------------------
    Prim("copy", 1, "fiub", np={"fiub": (same, _np_copy_out)}, py={"fiub": same}, wgsl={"fiub": "{0}"}),
    Prim("neg", 1, "fiu", np={"fiu": "negative", "b": "logical_not"}, py={"fiu": operator.neg, "b": lambda x: 1 - x},
         wgsl={"fi": "(-{0})", "ub": "(0u - {0})", "int64": "i64_sub(0, {0})"}),
    Prim("abs", 1, "fiu", np={"fiu": "abs", "b": same}, py={"fiu": abs, "b": same},
         wgsl={"fi": "abs({0})", "ub": "{0}", "int64": "i64_abs({0})"}),
    _f("exp", "wexp({0})", py=_guard(math.exp, lambda x: _INF if x > 0 else 0.0), decl=_FLOAT, tol=2e-5),
    _f("exp2", "wexp2({0})", py=lambda x: _fpow(2.0, x), decl=_FLOAT, tol=2e-5),
    _f("expm1", "wexpm1({0})", py=_guard(math.expm1, lambda x: _INF), decl=_FLOAT, tol=2e-5),
    _f("log", "wlog({0})", py=_guard(math.log, _log_special), decl=_FLOAT, domain=(0.05, 5.0)),
    _f("log2", "wlog2({0})", py=_guard(math.log2, _log_special), decl=_FLOAT, domain=(0.05, 5.0)),
    _f("log10", "(wlog({0}) * 0.4342944819032518)", py=_guard(math.log10, _log_special), decl=_FLOAT,
       domain=(0.05, 5.0)),
    _f("log1p", "wlog1p({0})", py=_guard(math.log1p, lambda x: -_INF if x == -1 else _NAN), decl=_FLOAT,
       domain=(-0.9, 5.0)),
    _f("sqrt", "sqrt({0})", py=_guard(math.sqrt, _nan), decl=_FLOAT, domain=(0.01, 5.0)),
    _f("sin", "wsin({0})", py=_guard(math.sin, _nan), decl=_FLOAT, helpers=_W_SIN),
    _f("cos", "wcos({0})", py=_guard(math.cos, _nan), decl=_FLOAT, helpers=_W_COS),
    _f("tan", "wtan({0})", py=_guard(math.tan, _nan), decl=_FLOAT, domain=(-1.3, 1.3), tol=2e-5, helpers=_W_TAN),
    _f("asin", "wasin({0})", "arcsin", _guard(math.asin, _nan), decl=_FLOAT, domain=(-0.99, 0.99), helpers=_W_ASIN),
    _f("acos", "wacos({0})", "arccos", _guard(math.acos, _nan), decl=_FLOAT, domain=(-0.99, 0.99), helpers=_W_ACOS),
    _f("atan", "watan({0})", "arctan", math.atan, decl=_FLOAT),
    _f("sinh", "wsinh({0})", py=_guard(math.sinh, lambda x: math.copysign(_INF, x)), decl=_FLOAT, tol=2e-5,
       helpers=_W_SINH),
    _f("cosh", "wcosh({0})", py=_guard(math.cosh, lambda x: _INF), decl=_FLOAT, tol=2e-5, helpers=_W_COSH),
    _f("tanh", "wtanh({0})", py=math.tanh, decl=_FLOAT, helpers=_W_TANH),
    _f("asinh", "wasinh({0})", "arcsinh", math.asinh, decl=_FLOAT, tol=2e-5, helpers=_W_ASINH),
    _f("acosh", "wacosh({0})", "arccosh", _guard(math.acosh, _nan), decl=_FLOAT, domain=(1.01, 5.0), tol=5e-5,
       helpers=_W_ACOSH),
    _f("atanh", "watanh({0})", "arctanh",
       _guard(math.atanh, lambda x: math.copysign(_INF, x) if x in (1, -1) else _NAN), decl=_FLOAT,
       domain=(-0.95, 0.95), tol=2e-5, helpers=_W_ATANH),
    Prim("erf", 1, "f", np={"f": _np_float(_special.np_erf)}, py={"f": math.erf}, wgsl={"f": "werf({0})"},
         decl=_FLOAT),
    Prim("erfc", 1, "f", np={"f": _np_float(_special.np_erfc)}, py={"f": math.erfc}, wgsl={"f": "werfc({0})"},
         decl=_FLOAT, tol=2e-5),
    Prim("erfinv", 1, "f", np={"f": _np_float(_special.np_erfinv)}, py={"f": _special.erfinv},
         wgsl={"f": "werfinv({0})"}, decl={"rule": "float", "inplace": "method"}, domain=(-0.99, 0.99), tol=5e-5,
         helpers=_W_ERFINV),
    Prim("special_erfcx", 1, "f", np={"f": _np_float(_np_erfcx)}, py={"f": _erfcx}, wgsl={"f": "werfcx({0})"},
         helpers=_ERFCX_WGSL, decl={"rule": "float", "node": "SpecialErfcxBackward0", "exported": False,
                                    "half": False},
         domain=(-3.0, 12.0), tol=2e-5, specials="erfcx(inf) = 0, erfcx(-inf) = inf; inf below -9.4 (float32)"),
    # the gamma family (_gamma.py: PyTorch's Math.h kernels); trigamma is polygamma(1, x)'s kernel
    Prim("lgamma", 1, "f", np={"f": _gamma.np_lgamma}, py={"f": _gamma.lgamma}, wgsl={"f": "wlgamma({0})"},
         helpers=_gamma.WGSL, decl={"rule": "float", "inplace": "method"}, domain=(-4.5, 12.0), tol=1e-4,
         specials="inf at 0, the negative integers and +-inf; float32 webgpu: Stirling's series above 8"),
    Prim("digamma", 1, "f", np={"f": _gamma.np_digamma}, py={"f": _gamma.digamma}, wgsl={"f": "wdigamma({0})"},
         decl={"rule": "float", "inplace": "method"}, domain=(0.05, 12.0), tol=1e-4,
         specials="-+inf at +-0, NaN at the negative integers and -inf"),
    Prim("trigamma", 1, "f", np={"f": _gamma.np_trigamma}, wgsl={"f": "wtrigamma({0})"},
         py={"f": ByDtype(lambda cd: _gamma.trigamma if cd == "float64" else lambda x: _gamma.trigamma(x, _f32))},
         domain=(0.05, 12.0), tol=1e-4, specials="huge (pi^2 / sin(pi x)^2 rounded) at the non-positive integers"),
    Prim("floor", 1, "fiu", np={"f": "floor", "iub": same}, py={"f": _round_int_float(math.floor), "iub": same},
         wgsl={"f": "floor({0})", "iub": "{0}"}),
    Prim("ceil", 1, "fiu", np={"f": "ceil", "iub": same}, py={"f": _round_int_float(math.ceil), "iub": same},
         wgsl={"f": "ceil({0})", "iub": "{0}"}),
    Prim("round", 1, "fiu", np={"f": "rint", "iub": same}, py={"f": lambda x: round(x, 0), "iub": same},
         wgsl={"f": "round({0})", "iub": "{0}"}, specials="half to even"),
    Prim("bitwise_not", 1, "iub", np={"iub": "invert"}, py={"iu": operator.invert, "b": lambda x: 1 - x},
         wgsl={"iu": "(~{0})", "bool": "({0} ^ 1u)"}),
    Prim("signbit", 1, "fiub", out="bool", np={"fi": "signbit", "ub": _np_zeros},
         py={"f": lambda x: math.copysign(1.0, x) < 0, "i": lambda x: x < 0, "ub": lambda x: False},
         wgsl={"f": "wsignbit({0})", "i": "({0} < 0)", "ub": "false"}, decl={"rule": "bool"},
         specials="by the sign bit: -0.0 and -NaN count"),
    # fast paths: the kernels of ops declared with a decomposition in ops/pointwise.py
    Prim("trunc", 1, "fiu", np={"f": "trunc", "iub": same}, py={"f": _round_int_float(math.trunc), "iub": same},
         wgsl={"f": "trunc({0})", "iub": "{0}"}, fast="exact"),
    Prim("relu", 1, "fiu", np={"fiu": (_np_relu, _np_relu_out), "b": same},
         py={"f": lambda x: x if (x >= 0 or x != x) else 0.0, "iu": lambda x: x if x > 0 else 0, "b": same},
         wgsl={"f": "select({0}, 0.0, {0} < 0.0)", "i": "max({0}, 0)", "ub": "{0}"}, fast="exact",
         specials="-0.0 and NaN pass through"),
    Prim("sign", 1, "fiu", np={"f": lambda a: (a > 0).astype(a.dtype) - (a < 0).astype(a.dtype), "iu": "sign",
                               "b": same},
         py={"f": lambda x: 1.0 if x > 0 else (-1.0 if x < 0 else 0.0), "iu": lambda x: (x > 0) - (x < 0), "b": same},
         wgsl={"f": "wsign({0})", "i": "sign({0})", "ub": "select(0u, 1u, {0} > 0u)"}, fast="exact",
         specials="sign(NaN) = 0, sign(-0.0) = +0", helpers=_W_SIGN),
    Prim("isnan", 1, "fiub", out="bool", np={"f": "isnan", "iub": _np_zeros}, py={"f": lambda x: x != x,
                                                                                "iub": lambda x: False},
         wgsl={"f": "wisnan({0})", "iub": "false"}, fast="exact"),
    Prim("isinf", 1, "fiub", out="bool", np={"f": "isinf", "iub": _np_zeros},
         py={"f": lambda x: x == _INF or x == -_INF, "iub": lambda x: False}, wgsl={"f": "wisinf({0})", "iub": "false"},
         fast="exact"),
    Prim("isfinite", 1, "fiub", out="bool", np={"f": "isfinite", "iub": _np_ones},
         py={"f": lambda x: x == x and x != _INF and x != -_INF, "iub": lambda x: True},
         wgsl={"f": "wisfinite({0})", "iub": "true"}, fast="exact"),
    Prim("sigmoid", 1, "f", np={"f": lambda a: 1 / (1 + np.exp(-a))}, py={"f": _sigmoid}, wgsl={"f": "wsigmoid({0})"},
         fast="close", helpers=_W_SIGMOID),
    Prim("rsqrt", 1, "f", np={"f": lambda a: 1 / np.sqrt(a)}, wgsl={"f": "(1.0 / sqrt({0}))"}, fast="close",
         domain=(0.01, 5.0)),
    # ---- binary -------------------------------------------------------------------------------------
    Prim("add", 2, "fiub", np={"fiub": "add"}, py={"fiub": operator.add}, wgsl={"fiub": "({0} + {1})",
                                                                             "int64": "i64_add({0}, {1})"}),
    Prim("mul", 2, "fiub", np={"fiub": "multiply"}, py={"fiub": operator.mul},
         wgsl={"fiub": "({0} * {1})", "int64": "i64_mul({0}, {1})"},
         decl={"rule": "arith", "scalar_self": True, "opmath_scalar": True}),
    Prim("div", 2, "f", zero_div=True, np={"f": "true_divide", "iu": _np_idiv},
         py={"f": _fdiv, "iu": _idiv_trunc},
         wgsl={"f": "({0} / {1})", "i": "({0} / i64_nz({1}))", "ub": "({0} / i64_nzu({1}))",
               "int64": "i64_div({0}, i64_nz({1}))"},
         decl={"rule": "div", "scalar_self": True, "opmath_scalar": True},
         specials="integers: truncating, for divide(rounding_mode='trunc') (whose tests cover it: PyTorch's own "
                  "kernel traps on INT_MIN / -1)"),
    Prim("floor_divide", 2, "fiu", zero_div=True, np={"fiu": "floor_divide"},
         py={"f": ByDtype(_ffloordiv), "iu": operator.floordiv},
         wgsl={"f": "wfloordiv({0}, {1})", "i": "ifloordiv({0}, i64_nz({1}))", "ub": "({0} / i64_nzu({1}))",
               "int64": "i64_floordiv({0}, i64_nz({1}))"},
         decl={"rule": "arith", "node": "NotImplemented(floor_divide)", "scalar_node": "NotImplemented(floor_divide)",
               "scalar_self": True, "scalar_self_node": "NotImplemented(floor_divide)", "int_div": True,
               "opmath_scalar": True}, helpers=_W_FLOOR_DIVIDE),
    Prim("fmod", 2, "fiu", zero_div=True, np={"fiu": "fmod"}, py={"f": _guard(math.fmod, _nan), "iu": _ifmod},
         wgsl={"f": "wfmod({0}, {1})", "i": "({0} % i64_nz({1}))", "ub": "({0} % i64_nzu({1}))"},
         decl={"rule": "arith", "node": "FmodBackward1", "scalar_node": "FmodBackward0", "int_div": True},
         specials="the sign of the dividend"),
    Prim("pow", 2, "fiu", np={"f": _np_fpow, "iu": _np_ipow, "b": lambda a, b: a | ~b},
         py={"f": _fpow, "iu": ByDtype(_ipow), "b": lambda x, y: x | (1 - y)},
         wgsl={"f": "wpow({0}, {1})", "i": "ipow({0}, {1})", "ub": "upow({0}, {1})", "int64": "i64_pow({0}, {1})"},
         tol=2e-5, specials="integers: a negative exponent gives 1, +-1 or 0", helpers=_W_POW),
    Prim("maximum", 2, "fiub", np={"fiub": "maximum"},
         py={"f": lambda a, b: a if (a >= b or a != a) else b, "iub": max},
         wgsl={"f": "wmaximum({0}, {1})", "iub": "max({0}, {1})"},
         decl={"rule": "arith", "tensor_other": True, "inplace": False}, specials="NaN propagates"),
    Prim("minimum", 2, "fiub", np={"fiub": "minimum"},
         py={"f": lambda a, b: a if (a <= b or a != a) else b, "iub": min},
         wgsl={"f": "wminimum({0}, {1})", "iub": "min({0}, {1})"},
         decl={"rule": "arith", "tensor_other": True, "inplace": False}, specials="NaN propagates"),
    Prim("atan2", 2, "f", np={"f": "arctan2"}, py={"f": math.atan2},
         wgsl={"f": "watan2({0}, {1})", "i": "i32(atan2(f32({0}), f32({1})))", "ub": "u32(atan2(f32({0}), f32({1})))"},
         decl={"rule": "div", "tensor_other": True}, specials="atan2(+-0, +-0) as IEEE"),
    Prim("nextafter", 2, "f", np={"f": "nextafter", "float16": _np_nextafter16, "bfloat16": _np_nextafter_bf16},
         py={"f": ByDtype(lambda cd: _NEXTAFTER_PY.get(cd, math.nextafter))},
         wgsl={"f": "wnextafter({0}, {1})", "float16": "wnextafter16({0}, {1})"}, helpers=_NEXTAFTER_WGSL,
         decl={"rule": "float", "tensor_other": True}, domain=(-2.0, 2.0),
         specials="in the input's own dtype (float16 steps by 2^-10 at 1); NaN if either is NaN; "
                  "nextafter(x, x) is x, (0, y) the smallest subnormal toward y"),
    Prim("special_zeta", 2, "f", np={"f": _gamma.np_zeta}, py={"f": _gamma.zeta}, wgsl={"f": "wzeta({0}, {1})"},
         decl={"rule": "div", "node": "SpecialZetaBackward0", "scalar_node": "SpecialZetaBackward2",
               "scalar_self": True, "scalar_self_node": "SpecialZetaBackward1", "inplace": False, "exported": False},
         domain=(1.5, 6.0), tol=1e-4, specials="Hurwitz's zeta(x, q): inf at x = 1 and at q a non-positive integer, "
                                               "NaN for x < 1"),
    Prim("igamma", 2, "f", np={"f": _gamma.np_igamma}, py={"f": _gamma.igamma}, wgsl={"f": "wigamma({0}, {1})"},
         decl={"rule": "float", "tensor_other": True}, domain=(0.1, 12.0), tol=1e-4,
         specials="P(a, x): NaN for a < 0 or x < 0, 1 at a = 0 < x, 0 at x = 0, NaN at a = x = inf"),
    Prim("igammac", 2, "f", np={"f": _gamma.np_igammac}, py={"f": _gamma.igammac}, wgsl={"f": "wigammac({0}, {1})"},
         decl={"rule": "float", "tensor_other": True}, domain=(0.1, 12.0), tol=1e-4, specials="Q(a, x) = 1 - P(a, x)"),
    Prim("eq", 2, "fiub", out="bool", np={"fiub": "equal"}, py={"fiub": operator.eq}, wgsl={"fiub": "({0} == {1})"},
         decl={"rule": "cmp"}),
    Prim("lt", 2, "fiub", out="bool", np={"fiub": "less"}, py={"fiub": operator.lt}, wgsl={"fiub": "({0} < {1})"},
         decl={"rule": "cmp"}),
    Prim("bitwise_and", 2, "iub", np={"iub": "bitwise_and"}, py={"iub": operator.and_}, wgsl={"iub": "({0} & {1})"},
         decl={"rule": "int", "scalar_self": True}),
    Prim("bitwise_or", 2, "iub", np={"iub": "bitwise_or"}, py={"iub": operator.or_}, wgsl={"iub": "({0} | {1})"},
         decl={"rule": "int", "scalar_self": True}),
    Prim("bitwise_xor", 2, "iub", np={"iub": "bitwise_xor"}, py={"iub": operator.xor}, wgsl={"iub": "({0} ^ {1})"},
         decl={"rule": "int", "scalar_self": True}),
    Prim("lshift", 2, "iu", np={"iu": _np_shift(True), "b": _np_shift(True, True)}, py={"iub": _shift(True)},
         wgsl={"i": "ishl({0}, {1})", "ub": "ushl({0}, {1})", "int64": "i64_shl({0}, {1})"},
         decl={"rule": "int", "scalar_self": True, "names": ("bitwise_left_shift",)},
         specials="a count < 0 or >= the bit width gives 0", helpers=_W_LSHIFT),
    Prim("rshift", 2, "iu", np={"iu": _np_shift(False), "b": _np_shift(False, True)}, py={"iub": _shift(False)},
         wgsl={"i": "ishr({0}, {1})", "ub": "ushr({0}, {1})"},
         decl={"rule": "int", "scalar_self": True, "names": ("bitwise_right_shift",)},
         specials="arithmetic; a count < 0 or >= the bit width gives the sign fill", helpers=_W_RSHIFT),
    # fast paths
    Prim("sub", 2, "fiu", np={"fiu": "subtract", "b": "logical_xor"}, py={"fiu": operator.sub, "b": operator.xor},
         wgsl={"fiub": "({0} - {1})", "int64": "i64_sub({0}, {1})"}, fast="exact"),
    Prim("ne", 2, "fiub", out="bool", np={"fiub": "not_equal"}, py={"fiub": operator.ne},
         wgsl={"fiub": "(!({0} == {1}))"}, fast="exact"),
    Prim("ge", 2, "fiub", out="bool", np={"fiub": "greater_equal"}, py={"fiub": operator.ge},
         wgsl={"fiub": "({0} >= {1})"}, fast="exact"),
    Prim("remainder", 2, "fiu", zero_div=True, np={"f": _np_remainder, "iu": "remainder"},
         py={"f": _frem, "iu": operator.mod},
         wgsl={"f": "wremainder({0}, {1})", "i": "iremainder({0}, i64_nz({1}))", "ub": "({0} % i64_nzu({1}))"},
         fast="exact", specials="the sign of the divisor", helpers=_W_REMAINDER),
    Prim("fmax", 2, "fiu", np={"fiub": "fmax"}, py={"f": lambda a, b: a if (a >= b or b != b) else b, "iub": max},
         wgsl={"f": "wfmax({0}, {1})", "iub": "max({0}, {1})"}, fast="exact", specials="NaN ignored", helpers=_W_FMAX),
    Prim("fmin", 2, "fiu", np={"fiub": "fmin"}, py={"f": lambda a, b: a if (a <= b or b != b) else b, "iub": min},
         wgsl={"f": "wfmin({0}, {1})", "iub": "min({0}, {1})"}, fast="exact", specials="NaN ignored", helpers=_W_FMIN),
    Prim("logical_and", 2, "fiub", out="bool", np={"fiub": "logical_and"}, py={"fiub": lambda x, y: bool(x and y)},
         wgsl={"f": "(!(({0}) == 0.0) && !(({1}) == 0.0))", "i": "((({0}) != 0) && (({1}) != 0))",
               "ub": "((({0}) != 0u) && (({1}) != 0u))"}, fast="exact"),
    Prim("logical_or", 2, "fiub", out="bool", np={"fiub": "logical_or"}, py={"fiub": lambda x, y: bool(x or y)},
         wgsl={"f": "(!(({0}) == 0.0) || !(({1}) == 0.0))", "i": "((({0}) != 0) || (({1}) != 0))",
               "ub": "((({0}) != 0u) || (({1}) != 0u))"}, fast="exact"),
    Prim("logical_xor", 2, "fiub", out="bool", np={"fiub": "logical_xor"}, py={"fiub": lambda x, y: bool(x) != bool(y)},
         wgsl={"f": "(!(({0}) == 0.0) != !(({1}) == 0.0))", "i": "((({0}) != 0) != (({1}) != 0))",
               "ub": "((({0}) != 0u) != (({1}) != 0u))"}, fast="exact"),
    # ---- ternary: where(cond, a, b); cond is bool, a and b in the compute dtype -------------------------
    Prim("where", 3, "fiub", np={"fiub": lambda c, a, b: np.where(c, a, b)}, py={"fiub": lambda c, a, b: a if c else b},
         wgsl={"fiub": "select({2}, {1}, {0} != 0u)"}),
)}


def primitives(arity):
    """The names of the primitives (not fast paths) of an arity."""
    return [n for n, r in RECORDS.items() if r.arity == arity and not r.fast]


# ---- records added at run time ------------------------------------------------------------------
_LISTENERS = []


def subscribe(fn):
    """Call fn(record, defined) whenever a record is defined (True) or removed (False)."""
    _LISTENERS.append(fn)
    return fn


def follow(table, dtypes, kernel):
    """Fill table[name, dtype] = kernel(record, dtype) (left out where None) for every record and dtype, and
    keep it so as records are defined and removed: a backend's kernel table."""
    def update(rec, defined=True):
        for dt in dtypes:
            table.pop((rec.name, dt), None)
            k = kernel(rec, dt) if defined else None
            if k is not None:
                table[rec.name, dt] = k
    for rec in RECORDS.values():
        update(rec)
    subscribe(update)
    return table


def define(record):
    """Add an element-wise primitive: the backends compute it and, with a `decl`, the front end declares it.
    (A fast path is a record of this module: the backends' `fast_paths` are read once.)"""
    if record.name in RECORDS or record.fast:
        raise ValueError(f"element-wise record {record.name!r}: exists, or is a fast path")
    RECORDS[record.name] = record
    for fn in _LISTENERS:
        fn(record, True)


def remove(name):
    record = RECORDS.pop(name)
    for fn in reversed(_LISTENERS):
        fn(record, False)


# ---- complex forms (complex64 / complex128) ------------------------------------------------------------
# A record takes a complex compute dtype only where it has a "c" form: with none, a backend raises (a
# complex input never falls back to the float form, which would drop the imaginary part). The pure-Python
# backend computes Python complex numbers (the "c" py forms, cmath's, with C99's values where cmath raises).
# The WGSL "c" forms compute complex64 as vec2<f32> (x real, y imaginary; shaders/complex.wgsl's functions);
# a "c" form's value is a vec2<f32> (abs's in its x), a bool for a bool record.
_COMPLEX_NP = {"copy": (same, _np_copy_out), "abs": "absolute", "sigmoid": lambda a: 1 / (1 + np.exp(-a)),
               "rsqrt": lambda a: 1 / np.sqrt(a), "where": lambda c, a, b: np.where(c, a, b), "neg": "negative",
               "div": "true_divide", "mul": "multiply", "sub": "subtract", "eq": "equal",
               "pow": lambda a, b: np.exp(b * np.log(a)),  # C's cpow, as PyTorch (0 ** 0j is NaN, 0 ** 0.5j 0)
               "ne": "not_equal", "asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
               "acosh": "arccosh", "atanh": "arctanh",
               **{n: n for n in "exp log log10 log2 log1p expm1 sqrt sin cos tan sinh cosh tanh isnan isinf isfinite "
                                "add logical_and logical_or logical_xor".split()}}
for _name, _f_np in _COMPLEX_NP.items():
    _r = RECORDS[_name]
    RECORDS[_name] = _r._replace(np={**_r.np, "c": _f_np})
_COMPLEX_WGSL = {"copy": "{0}", "add": "({0} + {1})", "sub": "({0} - {1})", "neg": "(-{0})", "mul": "cmul({0}, {1})",
                 "div": "cdiv({0}, {1})", "abs": "vec2<f32>(cabs({0}), 0.0)", "exp": "cexp({0})", "log": "clog({0})",
                 "log2": "(clog({0}) * 1.4426950408889634)", "log10": "(clog({0}) * 0.4342944819032518)",
                 "sqrt": "csqrt({0})", "rsqrt": "cdiv(vec2<f32>(1.0, 0.0), csqrt({0}))", "pow": "cpow({0}, {1})",
                 "sigmoid": "cdiv(vec2<f32>(1.0, 0.0), vec2<f32>(1.0, 0.0) + cexp(-{0}))", "sin": "csin({0})",
                 "cos": "ccos({0})", "tan": "ctan({0})", "sinh": "csinh({0})", "cosh": "ccosh({0})",
                 "tanh": "ctanh({0})", "where": "select({2}, {1}, {0} != 0u)", "eq": "all({0} == {1})",
                 "ne": "(!all({0} == {1}))", "isnan": "(wisnan({0}.x) || wisnan({0}.y))",
                 "isinf": "(wisinf({0}.x) || wisinf({0}.y))", "isfinite": "(wisfinite({0}.x) && wisfinite({0}.y))",
                 "logical_and": "(cnz({0}) && cnz({1}))", "logical_or": "(cnz({0}) || cnz({1}))",
                 "logical_xor": "(cnz({0}) != cnz({1}))",
                 **{n: f"c{n}({{0}})" for n in ("expm1", "log1p", "asin", "acos", "atan", "asinh", "acosh", "atanh")}}
for _name, _f_wgsl in _COMPLEX_WGSL.items():
    _r = RECORDS[_name]
    RECORDS[_name] = _r._replace(wgsl={**_r.wgsl, "c": _f_wgsl})


def _cx_guard(f, special):
    """A cmath function with `special(z)` where cmath raises (log 0, exp overflow: C99's values, as numpy's)."""
    def g(z):
        try:
            return f(z)
        except (ValueError, OverflowError, ZeroDivisionError):
            return special(z)
    return g


def _cx_inf(z):  # an overflow: infinities in the directions of the result's parts
    return complex(math.copysign(_INF, math.cos(z.imag)), math.copysign(_INF, math.sin(z.imag)))


def _cx_div(a, b):
    try:
        return a / b
    except ZeroDivisionError:  # (1 + 1j) / 0 = inf + inf j, 0 / 0 NaN (PyTorch's)
        return complex(_fdiv(complex(a).real, 0.0), _fdiv(complex(a).imag, 0.0))


def _cx_exp(z):
    if z.real == -_INF:
        return 0j
    return _cx_guard(cmath.exp, _cx_inf)(z)


def _cx_log(z):
    return complex(-_INF, math.atan2(z.imag, z.real)) if z == 0 else cmath.log(z)


def _cx_expm1(z):  # the real part expm1(x) cos y - 2 sin^2(y/2): no cancellation at 0
    return complex(math.expm1(z.real) * math.cos(z.imag) - 2 * math.sin(z.imag / 2) ** 2, math.exp(z.real) *
                   math.sin(z.imag))


def _cx_log1p(z):  # the real part log1p(2x + x^2 + y^2) / 2 for |z| < 1/2
    if max(abs(z.real), abs(z.imag)) < 0.5:
        return complex(0.5 * math.log1p(z.real * (2 + z.real) + z.imag * z.imag), math.atan2(z.imag, 1 + z.real))
    return _cx_log(complex(1 + z.real, z.imag))   # (1 + z would add +0 to a -0 imaginary part)


def _cx_atanh(z):  # (log(1 + z) - log(1 - z)) / 2: infinite at +-1 (where cmath raises)
    return 0.5 * (_cx_log1p(z) - _cx_log1p(-z))


def _cx_atan(z):  # -i atanh(iz), by the parts (Python's 1j * z loses a zero's sign)
    r = _cx_atanh(complex(-z.imag, z.real))
    return complex(r.imag, -r.real)


_LOG2E, _LOG10E = 1 / math.log(2), 1 / math.log(10)
_COMPLEX_PY = {"copy": same, "add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": _cx_div,
               "neg": operator.neg, "abs": abs, "exp": _cx_exp, "log": _cx_log, "log2": lambda z: _cx_log(z) * _LOG2E,
               "log10": lambda z: _cx_log(z) * _LOG10E, "sqrt": cmath.sqrt,
               "pow": lambda a, b: _cx_exp(b * _cx_log(a)),
               "sigmoid": lambda z: _cx_div(1, 1 + _cx_exp(-z)),
               **{n: _cx_guard(getattr(cmath, n), _cx_inf) for n in ("sin", "cos", "tan", "sinh", "cosh", "tanh")},
               "expm1": _cx_guard(_cx_expm1, _cx_inf), "log1p": _cx_log1p,
               **{n: getattr(cmath, n) for n in ("asin", "acos", "asinh", "acosh")}, "atanh": _cx_atanh,
               "atan": _cx_atan,
               "where": lambda c, a, b: a if c else b, "eq": operator.eq, "ne": operator.ne, "isnan": cmath.isnan,
               "isinf": cmath.isinf, "isfinite": cmath.isfinite, "logical_and": lambda a, b: bool(a) and bool(b),
               "logical_or": lambda a, b: bool(a) or bool(b), "logical_xor": lambda a, b: bool(a) != bool(b)}
for _name, _f_py in _COMPLEX_PY.items():
    _r = RECORDS[_name]
    if _r.py is not None:
        RECORDS[_name] = _r._replace(py={**_r.py, "c": _f_py})
