"""PyTorch's CPU random distributions, drawn from a generator's mt19937 stream (`_mt19937.py`).

Each function follows PyTorch's CPU kernel word for word (aten/src/ATen/core/DistributionsHelper.h,
TransformationHelper.h, native/cpu/DistributionTemplates.h): the same 32-bit words in the same
order, the same transformation in the same precision, so a seed gives PyTorch's numbers. The
transformations are webtorch ops, so both cpu backends (numpy, pure Python) compute them alike.
Float32 normal_ of 16 or more elements is PyTorch's AVX2 kernel (x86-64): Box-Muller on blocks of
16 with avx_mathfun.h's log/sincos polynomials, with the multiply-adds GCC fuses into FMAs.
"""
import bisect
import math
import struct

from .. import _dtype, _late, random as _random
from .._device import as_device
from .._geometry import contiguous_strides
from .._tensor import Tensor
from . import _prims

float32, float64, int64 = _dtype.float32, _dtype.float64, _dtype.int64
CPU = as_device("cpu")
_ROUND = {"float32": "<f", "float16": "<e"}
_DIGITS = {"float16": 11, "float32": 24, "float64": 53}  # std::numeric_limits<T>::digits


def generator(gen):
    """The generator a draw uses: `gen`, or the default one."""
    return gen if gen is not None else _random.default_generator


def shaped(t, shape):
    """t's values as a new tensor of `shape` (a factory's result: not a view of t)."""
    t = _prims.contiguous(t)
    return Tensor._make(t._storage, tuple(shape), contiguous_strides(shape), t._offset)


def words(gen, n):
    """The generator's next n 32-bit words as an int64 tensor (random() n times)."""
    return _prims.from_flat(gen._mt.words(n), (n,), int64, CPU)


def words64(gen, n):
    """random64() n times, as Python ints (two words each, the first high)."""
    w = gen._mt.words(2 * n)
    return [(w[2 * i] << 32) | w[2 * i + 1] for i in range(n)]


def _fma(a, b, c, dt):
    """std::fma(a, b, c) in dt. float64: rounded once, by Dekker's exact product and Boldo-Melquiond's
    sum rounded to odd. float32: the product of float32 values is exact in float64 and the sum is
    rounded to float64 then to float32, which differs from one rounding only where that float64 sum
    lands exactly on a float32 midpoint (about 2**-29 of the inexact sums; none in 4*10**6 draws compared)."""
    if dt is float32:  # computed in float64 (primitives: two ops, no dispatch), rounded to float32 once stored
        return _prims.ewise("add", [_prims.ewise("mul", [a, b], float64, float64), c], float64, float32)
    a = a.to(float64)
    uh, ul = _two_product(a, b)
    th, tl = _two_sum(c, uh)
    return th + _round_odd_sum(tl, ul)


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _two_product(a, b):
    p = a * b
    a1, a2 = _split(a)
    b1, b2 = _split(b)
    return p, ((a1 * b1 - p) + a1 * b2 + a2 * b1) + a2 * b2


def _split(a):
    t = 134217729.0 * a  # 2**27 + 1
    hi = t - (t - a)
    return hi, a - hi


def _round_odd_sum(a, b):
    """a + b rounded to odd: an inexact sum takes the neighbour whose last mantissa bit is 1."""
    s, err = _two_sum(a, b)
    even = (s.frexp()[0] * 2.0 ** 53) % 2 == 0
    return s.nextafter(err * math.inf).where((err != 0) & even, s)


# ---- uniform ----------------------------------------------------------------------------------
def unit(gen, n, dtype):
    """uniform_real_distribution<T>(0, 1) for T float32 or float64: T's mantissa bits of one word
    (of random64 for double)."""
    if dtype is float64:
        w = words(gen, 2 * n).reshape(n, 2)
        bits = ((w[:, 0] & 0x1FFFFF) << 32) | w[:, 1]
        return bits.to(float64) * 2.0 ** -53
    return (words(gen, n) & 0xFFFFFF).to(float32) * 2.0 ** -24


def uniform(gen, n, dtype, low=0.0, high=1.0):
    """uniform_(low, high): x * (to - from) + from (one FMA) in T's opmath (float for float16),
    then a value the cast to T rounds up to `to` becomes `from` (PyTorch's clamp)."""
    opmath = float64 if dtype is float64 else float32
    v = unit(gen, n, opmath)
    if (low, high) != (0.0, 1.0):
        lo, hi = stored(low, opmath), stored(high, opmath)
        v = _fma(v, stored(hi - lo, opmath), lo, opmath)
    if dtype is opmath:
        return v
    v = v.to(dtype)
    return v.masked_fill(v == stored(high, dtype), stored(low, dtype))


def stored(v, dtype):
    """The Python float v as dtype stores it (float64 as is)."""
    fmt = _ROUND.get(dtype.name)
    return struct.unpack(fmt, struct.pack(fmt, v))[0] if fmt else float(v)


# ---- normal -----------------------------------------------------------------------------------
def normal(gen, n, dtype, mean=0.0, std=1.0, contiguous=True):
    """normal_(mean, std): Box-Muller on blocks of 16 uniforms (the last block recomputed from 16
    new ones) for a contiguous tensor of 16 or more; else normal_distribution<double> per element.
    float16 computes in float, drawing each block's uniforms as it goes (no tail of the first pass)."""
    if n < 16 or not contiguous:
        return normal_double(gen, n, mean, std).to(dtype)
    opmath = float64 if dtype is float64 else float32
    full = n // 16 * 16
    u = unit(gen, n if dtype is opmath else full, opmath)  # float16 fills block by block: no tail words
    out = _box_muller16(u[:full].reshape(-1, 16), opmath, mean, std).reshape(-1)
    if n % 16:
        last = _box_muller16(unit(gen, 16, opmath).reshape(1, 16), opmath, mean, std).reshape(-1)
        out = _late.shape.cat([out[:n - 16], last])
    return out.to(dtype)


def _box_muller16(u, opmath, mean, std):
    u1, u2 = 1 - u[:, :8], u[:, 8:]
    if opmath is float32:
        radius = (_log256(u1) * -2.0).sqrt()
        s, c = _sincos256(u2 * stored(2 * math.pi, float32))
        n1, n2 = radius * c, radius * s
    else:
        radius = (u1.log() * -2.0).sqrt()
        theta = u2 * (2.0 * math.pi)
        n1, n2 = radius * theta.cos(), radius * theta.sin()
    pair = _late.shape.cat([n1, n2], 1)
    if (mean, std) == (0.0, 1.0):
        return pair
    return _fma(pair, stored(std, opmath), stored(mean, opmath), opmath)


def normal_double(gen, n, mean=0.0, std=1.0):
    """normal_distribution<double>(mean, std) n times: u1, u2 from random64; r * cos(2 pi u1) now,
    r * sin(2 pi u1) cached in the generator for the next call."""
    mt = gen._mt
    head = []
    if n and mt.next_double_normal is not None:
        head, mt.next_double_normal = [mt.next_double_normal], None
    k = (n - len(head) + 1) // 2
    vals = head
    if k:
        u = unit(gen, 2 * k, float64).reshape(k, 2)
        r = ((-u[:, 1]).log1p() * -2.0).sqrt()
        theta = u[:, 0] * (2.0 * math.pi)
        pairs = _late.shape.stack([r * theta.cos(), r * theta.sin()], 1).reshape(-1).tolist()
        if (n - len(head)) % 2:
            mt.next_double_normal = pairs.pop()
        vals = head + pairs
    out = _prims.from_flat(vals, (n,), float64, CPU)
    return out if (mean, std) == (0.0, 1.0) else _fma(out, float(std), float(mean), float64)


# ---- AVX2 float32 log and sincos (avx_mathfun.h), FMAs where GCC contracts them --------------
def _c(v):
    return stored(v, float32)


_LOG_P = tuple(_c(v) for v in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1,
                               1.4249322787E-1, -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1,
                               3.3333331174E-1))
_DP = tuple(_c(v) for v in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8))


def _log256(x):
    """log256_ps for x in (0, 1] (normal floats: no denormal cut, no NaN mask needed)."""
    m, e = x.frexp()
    e = e.to(float32)
    small = m < _c(0.707106781186547524)
    e = e - small.to(float32)
    x = (m - 1.0) + m * small.to(float32)
    z = x * x
    y = x.new_full(x.shape, _LOG_P[0])
    for p in _LOG_P[1:]:
        y = _fma(y, x, p, float32)
    y = y * x
    y = _fma(y, z, e * _c(-2.12194440e-4), float32)
    y = _fma(z, _c(-0.5), y, float32)
    return _fma(e, _c(0.693359375), x + y, float32)


def _sincos256(x):
    """sincos256_ps for x >= 0: (sin, cos)."""
    j = (x * _c(1.27323954473516)).to(_dtype.int32)
    j = (j + 1) & ~1
    y = j.to(float32)
    sin_neg = (j & 4) != 0
    cos_neg = ((j - 2) & 4) == 0
    poly = (j & 2) == 0
    for dp in _DP:
        x = _fma(y, dp, x, float32)
    z = x * x
    yc = _fma(_fma(z.new_full(z.shape, _c(2.443315711809948E-005)), z, _c(-1.388731625493765E-003), float32),
              z, _c(4.166664568298827E-002), float32) * z
    yc = _fma(yc, z, -(z * 0.5), float32) + 1.0
    ys = _fma(_fma(z.new_full(z.shape, _c(-1.9515295891E-4)), z, _c(8.3321608736E-3), float32),
              z, _c(-1.6666654611E-1), float32) * z
    ys = _fma(ys, x, x, float32)
    s, c = ys.where(poly, yc), yc.where(poly, ys)
    return s.where(~sin_neg, -s), c.where(~cos_neg, -c)


# ---- integers ---------------------------------------------------------------------------------
_WIDE = ("int64", "float64", "float32", "bfloat16")  # the dtypes whose random_ draws random64 for a wide range


def random_from_to(gen, n, dtype, low, high):
    """random_(from, to): random() % range + from, random64() when the range needs 2**32 or more.
    high None with low the int64 minimum: the full 64-bit range (random64 as int64)."""
    if high is None:
        return _prims.from_flat([v - (1 << 64) if v >> 63 else v for v in words64(gen, n)], (n,), int64, CPU) \
            .to(dtype)
    rng = high - low
    if rng >= 1 << 32 and dtype.name in _WIDE:
        return _prims.from_flat([v % rng + low for v in words64(gen, n)], (n,), int64, CPU).to(dtype)
    return (words(gen, n) % rng + low).to(dtype)


def random_bits(gen, n, dtype):
    """random_() without bounds: [0, 2**mantissa] for floats, [0, max] for integers, 0/1 for bool."""
    if dtype is _dtype.bool_:
        return (words(gen, n) & 1).to(dtype)
    if dtype is float64:
        return _prims.from_flat([v % ((1 << 53) + 1) for v in words64(gen, n)], (n,), int64, CPU).to(dtype)
    if dtype is int64:
        return _prims.from_flat([v % (1 << 63) for v in words64(gen, n)], (n,), int64, CPU)
    if dtype.is_floating_point:
        return (words(gen, n) % ((1 << _DIGITS[dtype.name]) + 1)).to(dtype)
    bits = {"uint8": 8, "int8": 7, "int16": 15, "int32": 31}[dtype.name]
    return (words(gen, n) % (1 << bits)).to(dtype)


def randperm(gen, n):
    """PyTorch's randperm_cpu for n < 2**32 / 20: swap i with i + random() % (n - i)."""
    perm = list(range(n))
    w = gen._mt.words(max(n - 1, 0))
    for i in range(n - 1):
        z = i + w[i] % (n - i)
        perm[i], perm[z] = perm[z], perm[i]
    return _prims.from_flat(perm, (n,), int64, CPU)


# ---- distributions of one uniform each ----------------------------------------------------------
def bernoulli_scalar(gen, n, p):
    """bernoulli_(p) for a Python p: uniform double < p (a bool tensor)."""
    return unit(gen, n, float64) < p


def bernoulli_tensor(gen, p):
    """bernoulli_(p) for a tensor p (already expanded, contiguous): a double p compares a double
    uniform, any other p a float uniform (24 bits)."""
    return unit(gen, p.numel(), float64 if p.dtype is float64 else float32).reshape(p.shape) < p


def exponential(gen, n, lambd):
    return (-unit(gen, n, float64)).log1p() * (-1.0 / lambd)


def geometric(gen, n, p):
    return (unit(gen, n, float64).log() / math.log1p(-p)).ceil()


def cauchy(gen, n, median, sigma):
    return _fma(((unit(gen, n, float64) - 0.5) * math.pi).tan(), float(sigma), float(median), float64)


def log_normal(gen, n, mean, std):
    return normal_double(gen, n, mean, std).exp()


def multinomial_with_replacement(gen, probs, num_samples):
    """Per row: the cumulative distribution in the input's dtype (float for float16/bfloat16),
    normalized, the last entry set to 1, then a binary search for each double uniform."""
    cdt = float64 if probs.dtype is float64 else float32
    rows = probs.to(cdt).tolist()
    out = []
    for row in rows:
        cum = _cumsum(row, cdt)
        u = unit(gen, num_samples, float64).tolist()
        cum[-1] = 1.0
        out.append([bisect.bisect_left(cum, x) for x in u])  # PyTorch's binary search: the first cum >= x
    return _prims.from_flat([i for r in out for i in r], (len(rows), num_samples), int64, CPU)


def _cumsum(row, dt):
    """Sequential sums and the division by the total, each rounded to dt (float32: via struct)."""
    rnd = (lambda v: v) if dt is float64 else (lambda v: stored(v, float32))
    cum, acc = [], 0.0
    for v in row:
        acc = rnd(acc + v)
        cum.append(acc)
    return [rnd(v / acc) for v in cum]

