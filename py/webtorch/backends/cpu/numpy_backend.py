"""CPU backend on numpy: a buf is a 1-D numpy array, a View a strided numpy view of it.

Semantics shared with `pure.py` (and chosen to match PyTorch's CPU kernels):
- float16 ops are computed in float32 and rounded to float16 (as PyTorch's CPU does).
- Float -> int conversion truncates toward zero; NaN/inf/out-of-range give INT_MIN for int32 and
  int64 (what x86 and PyTorch produce); int8/int16/uint8 go through int64 and wrap (so 300.0 ->
  uint8 44, -1.0 -> 255, NaN -> 0, as PyTorch). Int -> int wraps. Anything -> bool is `!= 0`.
- Integer floor_divide / remainder / fmod / div by zero raise RuntimeError("ZeroDivisionError").
  `div` with an integer cdtype is truncating division (rounding_mode='trunc').
- Integer pow with a negative exponent: 1 -> 1, -1 -> +-1, anything else -> 0 (PyTorch).
- Shifts: a shift count < 0 or >= the bit width gives 0 (lshift) or the sign fill (rshift).
- sign(NaN) = 0 (PyTorch); maximum/minimum propagate NaN, fmax/fmin ignore it.
- sum/prod of float16/float32 accumulate in float64 and round once; cumsum/cumprod of floats
  accumulate sequentially in float64 (PyTorch's CPU accumulate type).
- cummax/cummin index: the last index where the running extreme was reached (PyTorch).
- sort is always stable; NaN sorts as the largest value.
"""
import numpy as np

from ..base import Backend, View, EWISE_OPS
from ... import _philox
from . import _special

_NP = {"float32": np.dtype(np.float32), "float64": np.dtype(np.float64),
       "float16": np.dtype(np.float16), "int32": np.dtype(np.int32), "int64": np.dtype(np.int64),
       "int8": np.dtype(np.int8), "int16": np.dtype(np.int16), "uint8": np.dtype(np.uint8),
       "bool": np.dtype(np.bool_)}
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_I64 = np.dtype(np.int64)
_INT_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "uint8": 8}


def _zde():
    return RuntimeError("ZeroDivisionError")


def cast(a, dtype):
    """Convert numpy array `a` to webtorch dtype name `dtype` with the semantics above."""
    d = _NP[dtype]
    if a.dtype == d:
        return a
    with np.errstate(all="ignore"):
        if dtype == "bool":
            return a != 0
        if a.dtype.kind == "f" and d.kind in "iu":
            if dtype in ("int8", "int16", "uint8"):
                return a.astype(_I64).astype(d)
            return a.astype(d)
        return a.astype(d)


def _scalar(x, dtype):
    """A Python scalar as a 0-d numpy array of `dtype` (ints wrap)."""
    d = _NP[dtype]
    if dtype == "bool":
        return np.array(bool(x))
    if d.kind in "iu":
        if not isinstance(x, (int, np.integer)):
            return cast(np.array(x), dtype)
        bits = _INT_BITS[dtype]
        x = int(x) & ((1 << bits) - 1)
        if d.kind == "i" and x >= 1 << (bits - 1):
            x -= 1 << bits
        return np.array(x, dtype=d)
    with np.errstate(all="ignore"):
        return np.array(float(x), dtype=_F64).astype(d)


# ---- element-wise op table ------------------------------------------------------------------
# Each entry: f(k, *args) where k is the cdtype's kind ('f' float, 'i' signed, 'u' uint8,
# 'b' bool) and args are numpy arrays already in the compute dtype (float16 -> float32).

def _nonzero_check(b):
    if np.any(b == 0):
        raise _zde()


def _div(k, a, b):
    if k in "iu":
        _nonzero_check(b)
        return (a - np.fmod(a, b)) // b
    return np.true_divide(a, b)


def _floor_divide(k, a, b):
    if k in "iu":
        _nonzero_check(b)
    return np.floor_divide(a, b)


def _remainder(k, a, b):
    if k in "iu":
        _nonzero_check(b)
        return np.remainder(a, b)
    m = np.fmod(a, b)
    return np.where((m != 0) & ((b < 0) != (m < 0)), m + b, m)


def _fmod(k, a, b):
    if k in "iu":
        _nonzero_check(b)
    return np.fmod(a, b)


def _pow(k, a, b):
    if k == "f":
        r = np.power(a, b)
        if b.ndim == 0 and b == 0.5:  # numpy's sqrt fast path differs from C pow at -inf, -0
            r = np.where(a == -np.inf, np.inf, np.where(a == 0, 0.0, r)).astype(r.dtype)
        return r
    if k == "b":
        return (a | ~b)  # x**0 == 1, 0**1 == 0, 1**1 == 1
    a, b = np.broadcast_arrays(a, b)
    neg = b < 0
    if not neg.any():
        return np.power(a, b)
    r = np.power(a, np.where(neg, 0, b).astype(b.dtype))
    one = np.ones_like(a)
    negres = np.where(a == 1, one, np.where(a == -1, np.where((b & 1) == 1, -one, one), 0 * one))
    return np.where(neg, negres, r)


def _shift(k, a, b, left):
    if k == "b":
        a = a.astype(np.uint8)
        b = b.astype(np.uint8)
    bits = a.dtype.itemsize * 8
    ok = (b >= 0) & (b < bits)
    bb = np.where(ok, b, 0).astype(b.dtype)
    if left:
        return np.where(ok, np.left_shift(a, bb), 0).astype(a.dtype)
    fill = np.where(a < 0, -1, 0) if a.dtype.kind == "i" else 0
    return np.where(ok, np.right_shift(a, bb), fill).astype(a.dtype)


def _sign(k, a):
    if k == "b":
        return a
    if k == "f":
        return (a > 0).astype(a.dtype) - (a < 0).astype(a.dtype)
    return np.sign(a)


def _ident_int(f):
    def g(k, a):
        return a if k != "f" else f(a)
    return g


def _float_only(f):
    """A float function; integer/bool inputs are computed in float64 (the front end promotes
    them before reaching here, so this only matters for direct backend use)."""
    def g(k, a):
        if k != "f":
            a = a.astype(_F64)
        return f(a)
    return g


def _float_only2(f):
    def g(k, a, b):
        if k != "f":
            a, b = a.astype(_F64), b.astype(_F64)
        return f(a, b)
    return g


def _sigmoid(a):
    return 1 / (1 + np.exp(-a))


def _relu(k, a):
    if k == "b":
        return a
    return np.maximum(a, np.zeros((), a.dtype))


OPS = {
    "copy": lambda k, a: a,
    "neg": lambda k, a: np.logical_not(a) if k == "b" else np.negative(a),
    "abs": lambda k, a: a if k == "b" else np.abs(a),
    "sign": _sign,
    "exp": _float_only(np.exp), "exp2": _float_only(np.exp2), "expm1": _float_only(np.expm1),
    "log": _float_only(np.log), "log2": _float_only(np.log2), "log10": _float_only(np.log10),
    "log1p": _float_only(np.log1p), "sqrt": _float_only(np.sqrt),
    "rsqrt": _float_only(lambda a: 1 / np.sqrt(a)),
    "reciprocal": _float_only(lambda a: 1 / a),
    "sin": _float_only(np.sin), "cos": _float_only(np.cos), "tan": _float_only(np.tan),
    "asin": _float_only(np.arcsin), "acos": _float_only(np.arccos), "atan": _float_only(np.arctan),
    "sinh": _float_only(np.sinh), "cosh": _float_only(np.cosh), "tanh": _float_only(np.tanh),
    "asinh": _float_only(np.arcsinh), "acosh": _float_only(np.arccosh),
    "atanh": _float_only(np.arctanh),
    "sigmoid": _float_only(_sigmoid),
    "erf": _float_only(lambda a: _special.np_erf(a).astype(a.dtype)),
    "erfc": _float_only(lambda a: _special.np_erfc(a).astype(a.dtype)),
    "erfinv": _float_only(lambda a: _special.np_erfinv(a).astype(a.dtype)),
    "floor": _ident_int(np.floor), "ceil": _ident_int(np.ceil), "round": _ident_int(np.rint),
    "trunc": _ident_int(np.trunc),
    "frac": lambda k, a: a - np.trunc(a) if k == "f" else np.zeros_like(a),
    "relu": _relu,
    "logical_not": lambda k, a: np.logical_not(a),
    "bitwise_not": lambda k, a: np.invert(a),
    "isnan": lambda k, a: np.isnan(a) if k == "f" else np.zeros(a.shape, np.bool_),
    "isinf": lambda k, a: np.isinf(a) if k == "f" else np.zeros(a.shape, np.bool_),
    "isfinite": lambda k, a: np.isfinite(a) if k == "f" else np.ones(a.shape, np.bool_),
    "signbit": lambda k, a: np.signbit(a) if k in "fi" else np.zeros(a.shape, np.bool_),
    # binary
    "add": lambda k, a, b: np.add(a, b),
    "sub": lambda k, a, b: np.logical_xor(a, b) if k == "b" else np.subtract(a, b),
    "mul": lambda k, a, b: np.multiply(a, b),
    "div": _div, "floor_divide": _floor_divide, "remainder": _remainder, "fmod": _fmod,
    "pow": _pow,
    "maximum": lambda k, a, b: np.maximum(a, b), "minimum": lambda k, a, b: np.minimum(a, b),
    "fmax": lambda k, a, b: np.fmax(a, b), "fmin": lambda k, a, b: np.fmin(a, b),
    "atan2": _float_only2(np.arctan2),
    "eq": lambda k, a, b: np.equal(a, b), "ne": lambda k, a, b: np.not_equal(a, b),
    "lt": lambda k, a, b: np.less(a, b), "le": lambda k, a, b: np.less_equal(a, b),
    "gt": lambda k, a, b: np.greater(a, b), "ge": lambda k, a, b: np.greater_equal(a, b),
    "logical_and": lambda k, a, b: np.logical_and(a, b),
    "logical_or": lambda k, a, b: np.logical_or(a, b),
    "logical_xor": lambda k, a, b: np.logical_xor(a, b),
    "bitwise_and": lambda k, a, b: np.bitwise_and(a, b),
    "bitwise_or": lambda k, a, b: np.bitwise_or(a, b),
    "bitwise_xor": lambda k, a, b: np.bitwise_xor(a, b),
    "lshift": lambda k, a, b: _shift(k, a, b, True),
    "rshift": lambda k, a, b: _shift(k, a, b, False),
    "where": lambda k, c, a, b: np.where(c, a, b),
}
assert set(OPS) == set(EWISE_OPS), set(EWISE_OPS) ^ set(OPS)


def _kind(dtype):
    if dtype == "bool":
        return "b"
    if dtype == "uint8":
        return "u"
    return "f" if dtype.startswith("float") else "i"


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


class NumpyBackend(Backend):
    numpy_buffers = True
    name = "cpu"

    # ---- memory -----------------------------------------------------------------------
    def empty(self, numel, dtype):
        return np.empty(numel, _NP[dtype])

    def from_flat(self, values, dtype):
        if isinstance(values, np.ndarray):
            a = values.reshape(-1)
        else:
            try:
                a = np.asarray(values)
            except OverflowError:
                a = np.asarray([int(v) & 0xFFFFFFFFFFFFFFFF for v in values], dtype=np.uint64)
            if a.dtype == object:
                a = np.asarray([int(v) & 0xFFFFFFFFFFFFFFFF for v in values], dtype=np.uint64)
            a = a.reshape(-1)
        r = cast(a, dtype)
        if isinstance(values, np.ndarray) and np.shares_memory(r, values):
            r = r.copy()
        return np.ascontiguousarray(r)

    def _v(self, view):
        """The numpy strided array for a View (writable when the buf is)."""
        buf = view.buf
        shape = tuple(view.shape)
        if _numel(shape) == 0:
            return np.empty(shape, buf.dtype)
        isz = buf.itemsize
        return np.ndarray(shape, buf.dtype, buffer=buf, offset=view.offset * isz,
                          strides=tuple(s * isz for s in view.strides))

    def to_flat(self, view):
        return self._v(view).ravel().tolist()

    def to_numpy(self, view):
        return np.array(self._v(view), copy=True)

    def as_ndarray(self, view):
        """The view as a numpy array sharing its memory (no copy)."""
        return self._v(view)

    # ---- compute ----------------------------------------------------------------------
    def ewise(self, op, out, inputs, cdtype):
        o = self._v(out)
        if o.size == 0:
            return
        k = _kind(cdtype)
        args = []
        for j, x in enumerate(inputs):
            dt = "bool" if (op == "where" and j == 0) else cdtype
            if isinstance(x, View):
                a = cast(self._v(x), dt)
            else:
                a = _scalar(x, dt)
            if dt == "float16":
                a = a.astype(_F32)
            args.append(a)
        with np.errstate(all="ignore"):
            r = OPS[op](k, *args)
            r = np.asarray(r)
            if cdtype == "float16" and r.dtype.kind == "f":
                r = r.astype(np.float16)
            o[...] = cast(r, out.dtype)

    def reduce(self, op, out, inp):
        x = self._v(inp)
        o = self._v(out)
        if o.size == 0:
            return
        axes = tuple(range(len(out.shape), len(inp.shape)))
        od = _NP[out.dtype]
        with np.errstate(all="ignore"):
            if op in ("sum", "prod"):
                acc = _F64 if od.kind == "f" else (_I64 if od.kind == "b" else od)
                if x.dtype.kind == "f" and acc.kind != "f":
                    x = cast(x, out.dtype)
                f = np.sum if op == "sum" else np.prod
                r = f(x, axis=axes, dtype=acc)
            elif op == "max":
                r = np.max(x, axis=axes) if axes else x
            elif op == "min":
                r = np.min(x, axis=axes) if axes else x
            elif op == "argmax":
                r = np.argmax(x, axis=-1)
            elif op == "argmin":
                r = np.argmin(x, axis=-1)
            elif op == "any":
                r = np.any(x, axis=axes)
            elif op == "all":
                r = np.all(x, axis=axes)
            else:
                raise NotImplementedError(op)
            o[...] = cast(np.asarray(r), out.dtype)

    def matmul(self, out, a, b):
        o = self._v(out)
        if o.size == 0:
            return
        x, y = self._v(a), self._v(b)
        dt = out.dtype
        x, y = cast(x, dt), cast(y, dt)
        with np.errstate(all="ignore"):
            if dt == "float16":
                r = np.matmul(x.astype(_F32), y.astype(_F32)).astype(np.float16)
            else:
                r = np.matmul(x, y)
            o[...] = cast(r, dt)

    def take(self, out, src_buf, src_dtype, idx):
        o = self._v(out)
        if o.size == 0:
            return
        o[...] = cast(src_buf[self._v(idx)], out.dtype)

    def put(self, dst_buf, dst_dtype, idx, values, accumulate):
        i = self._v(idx).reshape(-1)
        if i.size == 0:
            return
        if isinstance(values, View):
            v = cast(self._v(values), dst_dtype).reshape(-1)
        else:
            v = np.broadcast_to(_scalar(values, dst_dtype), i.shape)
        with np.errstate(all="ignore"):
            if accumulate:
                if dst_dtype == "bool":
                    np.logical_or.at(dst_buf, i, v)
                else:
                    np.add.at(dst_buf, i, v)
            else:
                dst_buf[i] = v

    def scan(self, op, out, inp, out_idx=None):
        o = self._v(out)
        if o.size == 0:
            return
        x = self._v(inp)
        if x.ndim == 0:
            x, o = x.reshape(1), o.reshape(1)
        od = _NP[out.dtype]
        with np.errstate(all="ignore"):
            if op in ("cumsum", "cumprod"):
                f = np.cumsum if op == "cumsum" else np.cumprod
                if od.kind == "f":
                    r = f(x, axis=-1, dtype=_F64)
                else:
                    r = f(cast(x, "int64" if od.kind == "b" else out.dtype), axis=-1)
            elif op in ("cummax", "cummin"):
                x = cast(x, out.dtype)
                f = np.maximum if op == "cummax" else np.minimum
                r = f.accumulate(x, axis=-1)
                if out_idx is not None:
                    cond = x == r
                    if x.dtype.kind == "f":
                        cond |= np.isnan(x)
                    n = x.shape[-1]
                    ar = np.where(cond, np.arange(n, dtype=np.int64), 0)
                    ii = np.maximum.accumulate(ar, axis=-1)
                    oi = self._v(out_idx)
                    oi[...] = cast(ii.reshape(oi.shape), out_idx.dtype)
            elif op == "logcumsumexp":
                r = np.logaddexp.accumulate(x.astype(_F64), axis=-1)
            else:
                raise NotImplementedError(op)
            o[...] = cast(r, out.dtype)

    def sort(self, out_values, out_indices, inp, descending, stable):
        ov = self._v(out_values)
        if ov.size == 0:
            return
        oi = self._v(out_indices)
        x = self._v(inp)
        if x.ndim == 0:
            x, ov, oi = x.reshape(1), ov.reshape(1), oi.reshape(1)
        n = x.shape[-1]
        if descending:
            idx = np.argsort(x[..., ::-1], axis=-1, kind="stable")[..., ::-1]
            idx = (n - 1) - idx
        else:
            idx = np.argsort(x, axis=-1, kind="stable")
        ov[...] = cast(np.take_along_axis(x, idx, axis=-1), out_values.dtype)
        oi[...] = cast(idx, out_indices.dtype)

    def arange(self, out, start, step):
        o = self._v(out)
        n = o.size
        if n == 0:
            return
        od = _NP[out.dtype]
        if od.kind == "f" or isinstance(start, float) or isinstance(step, float):
            r = start + np.arange(n, dtype=_F64) * step
        else:
            r = np.arange(n, dtype=np.int64) * np.int64(step) + np.int64(start)
        with np.errstate(all="ignore"):
            o[...] = cast(r, out.dtype).reshape(o.shape)

    def random(self, out, kind, seed, offset):
        o = self._v(out)
        n = o.size
        if n == 0:
            return
        r = _philox.draw_numpy(n, kind, seed, offset)
        with np.errstate(all="ignore"):
            o[...] = cast(r, out.dtype).reshape(o.shape)
