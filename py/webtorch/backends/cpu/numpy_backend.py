"""CPU backend on numpy: a buf is a 1-D numpy array, a Strided a strided numpy view of it.

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

from ..base import Backend, Strided, EWISE_OPS, KERNEL_FAST_PATHS
from ... import _philox
from ..._geometry import numel as _numel
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


# ---- floating-point error state --------------------------------------------------------------
# Every primitive runs with numpy's floating-point errors ignored (inf/NaN results are the
# semantics, not warnings), scoped to the call: the user's np.geterr() is never changed.
# `np.errstate` costs ~0.7 us per entry, so on numpy >= 2 (whose error state is a context
# variable) the "all ignored" state is built once per distinct outer state and set/reset on
# the context variable directly (what `np.errstate.__enter__/__exit__` do); older numpy falls
# back to `np.errstate`.
try:
    from numpy._core._ufunc_config import _extobj_contextvar as _ECV, _make_extobj
    _ECV_get, _ECV_set, _ECV_reset = _ECV.get, _ECV.set, _ECV.reset
except ImportError:  # numpy < 2
    _ECV = None

if _ECV is not None:
    _QUIET = (None, None)  # (outer error state, the same state with all errors ignored)

    def _quiet():
        """Ignore numpy floating-point errors until `_loud(token)`; returns the token."""
        global _QUIET
        cur = _ECV_get()
        q = _QUIET
        if cur is q[0] or cur is q[1]:
            return _ECV_set(q[1])
        ign = _make_extobj(all="ignore")  # inherits the current bufsize and errcall
        _QUIET = (cur, ign)
        return _ECV_set(ign)

    _loud = _ECV_reset
else:
    def _quiet():
        e = np.errstate(all="ignore")
        e.__enter__()
        return e

    def _loud(e):
        e.__exit__(None, None, None)


class _Quiet:
    """`with _Quiet():` is `with np.errstate(all="ignore"):`, through `_quiet`."""
    __slots__ = ("tok",)

    def __enter__(self):
        self.tok = _quiet()

    def __exit__(self, *exc):
        _loud(self.tok)


def _cast(a, dtype):
    """`cast` for callers that already ignore floating-point errors (`_quiet`)."""
    d = _NP[dtype]
    if a.dtype == d:
        return a
    if dtype == "bool":
        return a != 0
    if a.dtype.kind == "f" and d.kind in "iu" and dtype in ("int8", "int16", "uint8"):
        return a.astype(_I64).astype(d)
    return a.astype(d)


def cast(a, dtype):
    """Convert numpy array `a` to webtorch dtype name `dtype` with the semantics above."""
    if a.dtype == _NP[dtype]:
        return a
    tok = _quiet()
    try:
        return _cast(a, dtype)
    finally:
        _loud(tok)


def _scalar(x, dtype):
    """A Python scalar as a 0-d numpy array of `dtype` (ints wrap). Call inside `_quiet`."""
    d = _NP[dtype]
    if d.kind == "f":
        return np.array(float(x), dtype=d)  # one rounding from the double, as via float64
    if dtype == "bool":
        return np.array(bool(x))
    if not isinstance(x, (int, np.integer)):
        return _cast(np.array(x), dtype)
    bits = _INT_BITS[dtype]
    x = int(x) & ((1 << bits) - 1)
    if d.kind == "i" and x >= 1 << (bits - 1):
        x -= 1 << bits
    return np.array(x, dtype=d)


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
    return np.where(a < 0, np.zeros((), a.dtype), a)  # PyTorch's: -0.0 and NaN pass through


OPS = {
    "copy": lambda k, a: a,
    "neg": lambda k, a: np.logical_not(a) if k == "b" else np.negative(a),
    "abs": lambda k, a: a if k == "b" else np.abs(a),
    "sign": _sign,
    "exp": _float_only(np.exp), "exp2": _float_only(np.exp2), "expm1": _float_only(np.expm1),
    "log": _float_only(np.log), "log2": _float_only(np.log2), "log10": _float_only(np.log10),
    "log1p": _float_only(np.log1p), "sqrt": _float_only(np.sqrt),
    "rsqrt": _float_only(lambda a: 1 / np.sqrt(a)),  # a fast path (FAST_PATHS)
    "sin": _float_only(np.sin), "cos": _float_only(np.cos), "tan": _float_only(np.tan),
    "asin": _float_only(np.arcsin), "acos": _float_only(np.arccos), "atan": _float_only(np.arctan),
    "sinh": _float_only(np.sinh), "cosh": _float_only(np.cosh), "tanh": _float_only(np.tanh),
    "asinh": _float_only(np.arcsinh), "acosh": _float_only(np.arccosh),
    "atanh": _float_only(np.arctanh),
    "sigmoid": _float_only(_sigmoid),  # a fast path (NumpyBackend.fast_paths): one pass, f16 rounded once
    "erf": _float_only(lambda a: _special.np_erf(a).astype(a.dtype)),
    "erfc": _float_only(lambda a: _special.np_erfc(a).astype(a.dtype)),
    "erfinv": _float_only(lambda a: _special.np_erfinv(a).astype(a.dtype)),
    "floor": _ident_int(np.floor), "ceil": _ident_int(np.ceil), "round": _ident_int(np.rint),
    "trunc": _ident_int(np.trunc),
    "relu": _relu,
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
    "lt": lambda k, a, b: np.less(a, b), "ge": lambda k, a, b: np.greater_equal(a, b),
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
# decomposed ops computed here in one call (ops/pointwise.py, their `ref=`; the same results)
FAST_PATHS = KERNEL_FAST_PATHS | {"sigmoid", "rsqrt"}
assert set(OPS) == set(EWISE_OPS) | FAST_PATHS, (set(EWISE_OPS) | FAST_PATHS) ^ set(OPS)


def _kind(dtype):
    if dtype == "bool":
        return "b"
    if dtype == "uint8":
        return "u"
    return "f" if dtype.startswith("float") else "i"


_KIND = {d: _kind(d) for d in _NP}
_BOOL = _NP["bool"]

# ---- fast paths --------------------------------------------------------------------------
# (op, kind) -> f(*args, out=o) writing exactly what OPS[op](kind, *args) returns, for results
# already in the out dtype (cdtype, or bool for tests); used when out is C-contiguous (so numpy
# picks the same inner loops as for the temporary OPS would allocate).
_ZERO = {d: np.zeros((), d) for d in _NP.values()}


def _relu_out(a, out):  # PyTorch's: -0.0 and NaN pass through
    neg = a < 0
    np.copyto(out, a)
    np.copyto(out, _ZERO[a.dtype], where=neg)


def _copy_out(a, out):
    np.copyto(out, a)


_FAST = {}
for _k in "fiub":
    for _op, _f in (("add", np.add), ("mul", np.multiply), ("maximum", np.maximum),
                    ("minimum", np.minimum), ("fmax", np.fmax), ("fmin", np.fmin),
                    ("copy", _copy_out)):
        _FAST[_op, _k] = (_f, False)
    for _op, _f in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("ge", np.greater_equal),
                    ("logical_and", np.logical_and), ("logical_or", np.logical_or),
                    ("logical_xor", np.logical_xor)):
        _FAST[_op, _k] = (_f, True)
    if _k != "b":
        _FAST["sub", _k] = (np.subtract, False)
        _FAST["neg", _k] = (np.negative, False)
        _FAST["abs", _k] = (np.abs, False)
        _FAST["relu", _k] = (_relu_out, False)
    if _k != "f":
        for _op, _f in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                        ("bitwise_xor", np.bitwise_xor), ("bitwise_not", np.invert)):
            _FAST[_op, _k] = (_f, False)
for _op, _f in (("exp", np.exp), ("exp2", np.exp2), ("expm1", np.expm1), ("log", np.log),
                ("log2", np.log2), ("log10", np.log10), ("log1p", np.log1p), ("sqrt", np.sqrt),
                ("sin", np.sin), ("cos", np.cos), ("tan", np.tan), ("asin", np.arcsin),
                ("acos", np.arccos), ("atan", np.arctan), ("sinh", np.sinh), ("cosh", np.cosh),
                ("tanh", np.tanh), ("asinh", np.arcsinh), ("acosh", np.arccosh),
                ("atanh", np.arctanh), ("floor", np.floor), ("ceil", np.ceil),
                ("round", np.rint), ("trunc", np.trunc), ("div", np.true_divide),
                ("floor_divide", np.floor_divide), ("fmod", np.fmod), ("atan2", np.arctan2)):
    _FAST[_op, "f"] = (_f, False)
for _op, _f in (("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite),
                ("signbit", np.signbit)):
    _FAST[_op, "f"] = (_f, True)
_FAST["signbit", "i"] = (np.signbit, True)
del _k, _op, _f

# (shape, strides) -> (numel when C-contiguous (size-1 dims' strides ignored) or empty, else -1;
#                      the shape as a plain tuple, which numpy takes faster than a Size)
_LAYOUT = {}


def _layout(shape, strides):
    try:
        key = (shape, strides)
        info = _LAYOUT.get(key)
    except TypeError:  # unhashable (lists)
        key = (tuple(shape), tuple(strides))
        info = _LAYOUT.get(key)
    if info is None:
        shape = tuple(shape)
        n = _numel(shape)  # 0 (empty) whatever the strides
        expect = 1
        for d, st in zip(reversed(shape), reversed(strides)):
            if n and d != 1 and st != expect:
                n = -1
                break
            expect *= d
        if len(_LAYOUT) > 4096:
            _LAYOUT.clear()
        info = _LAYOUT[key] = (n, shape)
    return info


def _vc(view):
    """(numpy array for the Strided, whether it is C-contiguous). A contiguous view is the buf
    itself when it spans it, else a reshaped slice; other layouts are strided ndarrays."""
    buf, shape, strides, off, _ = view
    n, shape = _layout(shape, strides)
    if n > 0 and buf.ndim == 1:
        if off == 0 and n == buf.shape[0]:
            if len(shape) == 1:
                return buf, True
            return buf.reshape(shape), True
        return buf[off:off + n].reshape(shape), True
    if n == 0:
        return np.empty(shape, buf.dtype), True
    isz = buf.itemsize
    return np.ndarray(shape, buf.dtype, buffer=buf, offset=off * isz,
                      strides=tuple([st * isz for st in strides])), False


def _v(view):
    return _vc(view)[0]


_AXES = {}  # (len(out.shape), len(inp.shape)) -> the reduced axes


class NumpyBackend(Backend):
    numpy_buffers = True
    name = "cpu"
    fast_paths = FAST_PATHS

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
        """The numpy strided array for a Strided (writable when the buf is)."""
        return _v(view)

    def to_flat(self, view):
        return _v(view).ravel().tolist()

    def to_numpy(self, view):
        return np.array(_v(view), copy=True)

    def as_ndarray(self, view):
        """The view as a numpy array sharing its memory (no copy)."""
        a = _v(view)
        return a.view() if a is view.buf else a  # never hand out the buf object itself

    # ---- compute ----------------------------------------------------------------------
    def ewise(self, op, out, inputs, cdtype):
        o, contig = _vc(out)
        if o.size == 0:
            return
        k = _KIND[cdtype]
        cd = _NP[cdtype]
        f16 = k == "f" and cdtype == "float16"
        tok = _quiet()
        try:
            args = []
            if op == "where":
                c = inputs[0]
                args.append(_cast(_v(c), "bool") if isinstance(c, Strided) else _scalar(c, "bool"))
                inputs = inputs[1:]
            for x in inputs:
                if isinstance(x, Strided):
                    a = _v(x)
                    if a.dtype is not cd:
                        a = _cast(a, cdtype)
                else:
                    a = _scalar(x, cdtype)
                if f16:
                    a = a.astype(_F32)
                args.append(a)
            if contig and not f16:
                fast = _FAST.get((op, k))
                if fast is not None and o.dtype is (_BOOL if fast[1] else cd):
                    fast[0](*args, out=o)
                    return
            r = OPS[op](k, *args)
            if type(r) is not np.ndarray:
                r = np.asarray(r)
            if f16 and r.dtype.kind == "f":
                r = r.astype(np.float16)
            o[...] = _cast(r, out.dtype)
        finally:
            _loud(tok)

    def reduce(self, op, out, inp):
        o = _v(out)
        if o.size == 0:
            return
        x = _v(inp)
        no, ni = len(out.shape), len(inp.shape)
        axes = _AXES.get((no, ni))
        if axes is None:
            axes = _AXES[no, ni] = tuple(range(no, ni))
        od = o.dtype
        tok = _quiet()
        try:
            if op == "sum" or op == "prod":
                okind = od.kind
                acc = _F64 if okind == "f" else (_I64 if okind == "b" else od)
                if x.dtype.kind == "f" and acc.kind != "f":
                    x = _cast(x, out.dtype)
                r = (np.add if op == "sum" else np.multiply).reduce(x, axis=axes, dtype=acc)
                if okind == "f":  # float64 -> float out: the same rounding as `cast`
                    o[...] = r
                    return
            elif op == "max":
                r = np.maximum.reduce(x, axis=axes) if axes else x
            elif op == "min":
                r = np.minimum.reduce(x, axis=axes) if axes else x
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
            if type(r) is not np.ndarray:
                r = np.asarray(r)
            o[...] = _cast(r, out.dtype)
        finally:
            _loud(tok)

    def matmul(self, out, a, b):
        o, contig = _vc(out)
        if o.size == 0:
            return
        dt = out.dtype
        tok = _quiet()
        try:
            x, y = _cast(_v(a), dt), _cast(_v(b), dt)
            if dt == "float16":
                r = np.matmul(x.astype(_F32), y.astype(_F32)).astype(np.float16)
            elif contig and o.dtype == x.dtype:
                np.matmul(x, y, out=o)  # out C-contiguous: the loop a temporary would get
                return
            else:
                r = np.matmul(x, y)
            o[...] = _cast(r, dt)
        finally:
            _loud(tok)

    def take(self, out, src_buf, src_dtype, idx):
        o = self._v(out)
        if o.size == 0:
            return
        o[...] = cast(src_buf[self._v(idx)], out.dtype)

    def put(self, dst_buf, dst_dtype, idx, values, accumulate):
        i = self._v(idx).reshape(-1)
        if i.size == 0:
            return
        with _Quiet():
            if isinstance(values, Strided):
                v = cast(self._v(values), dst_dtype).reshape(-1)
            else:
                v = np.broadcast_to(_scalar(values, dst_dtype), i.shape)
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
        with _Quiet():
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
        with _Quiet():
            o[...] = cast(r, out.dtype).reshape(o.shape)

    def random(self, out, kind, seed, offset):
        o = self._v(out)
        n = o.size
        if n == 0:
            return
        r = _philox.draw_numpy(n, kind, seed, offset)
        with _Quiet():
            o[...] = cast(r, out.dtype).reshape(o.shape)
