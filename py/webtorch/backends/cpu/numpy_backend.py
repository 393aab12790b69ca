"""CPU backend on numpy: a buf is a 1-D numpy array, a Strided a strided numpy view of it.

Semantics shared with `pure.py` (and chosen to match PyTorch's CPU kernels):
- float16 ops are computed in float32 and rounded to float16 (as PyTorch's CPU does).
- bfloat16 (numpy has none) is stored as its uint16 bit patterns (the upper half of a float32): read as float32
  values, computed in float32 and rounded back to nearest even (NaN -> 0xFFFF, as PyTorch's vectorized
  conversion), like float16. `_read` gives any view's values, `_cast(values, "bfloat16")` the bits.
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

from ... import _philox
from ..._geometry import numel as _numel
from ..base import Backend, Strided, fast_paths_of
from ..elementwise import KIND_OF, follow, form

_NP = {"float32": np.dtype(np.float32), "float64": np.dtype(np.float64),
       "float16": np.dtype(np.float16), "int32": np.dtype(np.int32), "int64": np.dtype(np.int64),
       "int8": np.dtype(np.int8), "int16": np.dtype(np.int16), "uint8": np.dtype(np.uint8),
       "bool": np.dtype(np.bool_), "complex64": np.dtype(np.complex64), "complex128": np.dtype(np.complex128),
       "uint16": np.dtype(np.uint16), "uint32": np.dtype(np.uint32), "uint64": np.dtype(np.uint64)}
_NP["bfloat16"] = np.dtype(np.uint16)  # bit patterns; `_VAL` holds the dtype of the values
_VAL = dict(_NP, bfloat16=np.dtype(np.float32))
_BF16 = _NP["bfloat16"]
_HALF = ("float16", "bfloat16")  # computed in float32, rounded once
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_I64 = np.dtype(np.int64)
_C128 = np.dtype(np.complex128)
_INT_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}


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


def _bf16_values(bits):
    """bfloat16 bit patterns -> their float32 values (exact)."""
    return (bits.astype(np.uint32) << 16).view(_F32)


def _bf16_bits(a):
    """Values (a real array) -> bfloat16 bit patterns: through float32 (as c10's conversions), then rounded to
    nearest even on the upper 16 bits; NaN -> 0xFFFF (PyTorch's vectorized conversion)."""
    f = np.asarray(a, dtype=_F32)
    u = f.view(np.uint32)
    r = ((u + np.uint32(0x7FFF) + ((u >> 16) & np.uint32(1))) >> 16).astype(_BF16)
    return np.where(f != f, np.uint16(0xFFFF), r)


def _read(view):
    """The values of a Strided as a numpy array (float32 for bfloat16's bits)."""
    a = _v(view)
    return _bf16_values(a) if view.dtype == "bfloat16" else a


def _as(a, dtype):
    """Values converted to dtype, as values (bfloat16: the rounded values in float32)."""
    return _bf16_values(_cast(a, dtype)) if dtype == "bfloat16" else _cast(a, dtype)


def _cast(a, dtype):
    """`cast` for callers that already ignore floating-point errors (`_quiet`)."""
    if dtype == "bfloat16":
        return _bf16_bits(a.real if a.dtype.kind == "c" else a)
    d = _NP[dtype]
    if a.dtype == d:
        return a
    if dtype == "bool":
        return a != 0
    if a.dtype.kind == "c" and d.kind != "c":  # to a real dtype: the real part (PyTorch's copy_ and .to)
        a = a.real
    if a.dtype.kind == "f" and d.kind in "iu" and dtype in ("int8", "int16", "uint8", "uint16", "uint32", "uint64"):
        return a.astype(_I64).astype(d)
    return a.astype(d)


def cast(a, dtype):
    """Convert numpy array `a` (values) to webtorch dtype name `dtype` with the semantics above."""
    if a.dtype == _NP[dtype] and dtype != "bfloat16":
        return a
    tok = _quiet()
    try:
        return _cast(a, dtype)
    finally:
        _loud(tok)


def _scalar(x, dtype):
    """A Python scalar as a 0-d numpy array of `dtype` (ints wrap). Call inside `_quiet`."""
    d = _VAL[dtype]
    if d.kind == "c":
        return np.array(complex(x), dtype=d)
    if isinstance(x, complex):
        x = x.real
    if dtype == "bfloat16":
        return _as(np.array(float(x)), dtype)
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


# ---- element-wise kernels, from the records (backends/elementwise.py) -------------------------
# (op, cdtype) -> (f(*arrays) on arrays already in the compute dtype (float16 in float32, unless the
# record has a "float16" form: _NATIVE16), f(*arrays, out=o) or None, whether the result is bool). The
# out= form writes exactly what f returns, for results already in the out dtype (cdtype, or bool); it is
# used when out is C-contiguous (so numpy picks the same inner loops as for the temporary f allocates).
_OPS, _NATIVE16 = {}, set()


def _nonzero_check(b):
    if np.any(b == 0):
        raise _zde()


def _zero_checked(f):
    def g(a, b):
        _nonzero_check(b)
        return f(a, b)
    return g


def _in_float64(f):
    """A float form on integer/bool inputs: computed in float64 (the front end promotes them before
    reaching here, so this only matters for direct backend use)."""
    return lambda *args: f(*[a.astype(_F64) for a in args])


def _ufunc(f):
    return getattr(np, f[0] if isinstance(f, tuple) else f) if not callable(f) else f


def _kernel(rec, dtype):
    f, own = form(rec.np, dtype)
    if f is None and KIND_OF[dtype] != "c":
        g = form(rec.np, "float64")[0]
        return None if g is None else (_in_float64(_ufunc(g)), None, False)
    if f is None:
        return None
    if own and dtype == "float16":
        _NATIVE16.add(rec.name)
    out = None
    if isinstance(f, str):
        f = out = getattr(np, f)
    elif isinstance(f, tuple):
        f, out = f
    if rec.zero_div and KIND_OF[dtype] in "iu":
        return _zero_checked(f), None, False
    return f, out, rec.out == "bool"


follow(_OPS, _NP, _kernel)
_BOOL = _NP["bool"]

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
        for d, st in zip(reversed(shape), reversed(strides), strict=False):
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


def _ordered(op, x):
    """Complex numbers have no order: max, min, argmax, cummax, ... of a complex array raise (as PyTorch)."""
    if x.dtype.kind == "c" and op not in ("sum", "prod", "any", "all", "cumsum", "cumprod"):
        raise NotImplementedError(f"\"{op}\" not implemented for complex tensors")


def _put_bf16(buf, i, v, accumulate):
    """buf[i] = v (bfloat16 values) or += v, each sum rounded to bfloat16 in the order given (PyTorch's
    index_put_): the k-th occurrences of every index added in the k-th round."""
    if not accumulate:
        buf[i] = _cast(v, "bfloat16")
        return
    order = np.argsort(i, kind="stable")
    si = i[order]
    rank = np.arange(si.size) - np.searchsorted(si, si)
    for k in range(int(rank.max()) + 1):
        sel = order[rank == k]
        j = i[sel]
        buf[j] = _cast(_bf16_values(buf[j]) + v[sel], "bfloat16")


class NumpyBackend(Backend):
    numpy_buffers = True
    name = "cpu"
    fast_paths = fast_paths_of("np")  # decomposed ops computed here in one call (ops/pointwise.py's `ref=`)

    # ---- memory -----------------------------------------------------------------------
    def empty(self, numel, dtype):
        try:
            return np.empty(numel, _NP[dtype])
        except KeyError:
            raise TypeError(f"{dtype} tensors are not supported by webtorch's cpu backend") from None

    def from_flat(self, values, dtype):
        if isinstance(values, np.ndarray):
            a = values.reshape(-1)
        else:
            try:
                a = np.asarray(values)
            except OverflowError:
                a = np.asarray([int(v) & 0xFFFFFFFFFFFFFFFF for v in values], dtype=np.uint64)
            if a.dtype == object and dtype.startswith(("float", "bfloat", "complex")):
                # an int past int64's range among the numbers (numpy keeps objects): each converted as Python does
                # (float(2**70) is 1.18e21; past float's range OverflowError, as PyTorch's)
                a = np.asarray([complex(v) if dtype.startswith("complex") else float(v) for v in values])
            elif a.dtype == object or dtype == "uint64" and a.dtype.kind == "f" and all(type(v) is int for v in values):
                a = np.asarray([int(v) & 0xFFFFFFFFFFFFFFFF for v in values], dtype=np.uint64)  # past int64
            a = a.reshape(-1)
        r = cast(a, dtype)
        if isinstance(values, np.ndarray) and np.shares_memory(r, values):
            r = r.copy()
        return np.ascontiguousarray(r)

    def _v(self, view):
        """The numpy strided array for a Strided (writable when the buf is)."""
        return _v(view)

    def to_flat(self, view):
        return _read(view).ravel().tolist()

    def reinterpret(self, buf, dtype):
        return buf.view(_NP[dtype])

    def fft(self, out, inp, inverse):
        x = _v(inp)
        r = np.fft.ifft(x, axis=-1) * x.shape[-1] if inverse else np.fft.fft(x, axis=-1)
        _v(out)[...] = r

    def to_numpy(self, view):
        """A copy of the view's values (bfloat16's in float32)."""
        return np.array(_read(view), copy=True)

    def as_ndarray(self, view):
        """The view as a numpy array sharing its memory (no copy)."""
        a = _v(view)
        return a.view() if a is view.buf else a  # never hand out the buf object itself

    # ---- compute ----------------------------------------------------------------------
    def ewise(self, op, out, inputs, cdtype):
        o, contig = _vc(out)
        if o.size == 0:
            return
        cd = _VAL[cdtype]
        half = cdtype in _HALF and op not in _NATIVE16
        tok = _quiet()
        try:
            args = []
            if op == "where":
                c = inputs[0]
                args.append(_cast(_read(c), "bool") if isinstance(c, Strided) else _scalar(c, "bool"))
                inputs = inputs[1:]
            for x in inputs:
                if isinstance(x, Strided):
                    a = _read(x)
                    if a.dtype is not cd or x.dtype != cdtype:
                        a = _as(a, cdtype)
                else:
                    a = _scalar(x, cdtype)
                if half:
                    a = a.astype(_F32)
                args.append(a)
            k = _OPS.get((op, cdtype))
            if k is None:
                raise TypeError(f"cpu: op {op!r} is not supported for dtype {cdtype}")
            f, fout, bool_out = k
            if fout is not None and contig and not half and o.dtype is (_BOOL if bool_out else cd):
                fout(*args, out=o)
                return
            r = f(*args)
            if type(r) is not np.ndarray:
                r = np.asarray(r)
            if half and r.dtype.kind == "f":
                r = _as(r, cdtype) if cdtype == "bfloat16" else r.astype(np.float16)
            o[...] = _cast(r, out.dtype)
        finally:
            _loud(tok)

    def reduce(self, op, out, inp):
        o = _v(out)
        if o.size == 0:
            return
        x = _read(inp)
        no, ni = len(out.shape), len(inp.shape)
        axes = _AXES.get((no, ni))
        if axes is None:
            axes = _AXES[no, ni] = tuple(range(no, ni))
        od = _VAL[out.dtype]
        _ordered(op, x)
        tok = _quiet()
        try:
            if op == "sum" or op == "prod":
                okind = od.kind
                acc = _F64 if okind == "f" else _C128 if okind == "c" else (_I64 if okind == "b" else od)
                if x.dtype.kind == "f" and acc.kind != "f":
                    x = _cast(x, out.dtype)
                r = (np.add if op == "sum" else np.multiply).reduce(x, axis=axes, dtype=acc)
                if okind == "f" and out.dtype != "bfloat16":  # float64 -> float out: the same rounding as `cast`
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
            x, y = _as(_read(a), dt), _as(_read(b), dt)
            if dt == "float16":
                r = np.matmul(x.astype(_F32), y.astype(_F32)).astype(np.float16)
            elif dt == "bfloat16":  # accumulated in float32, rounded once
                r = np.matmul(x, y)
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
        v = src_buf[self._v(idx)]
        o[...] = v if src_dtype == out.dtype else cast(_bf16_values(v) if src_dtype == "bfloat16" else v, out.dtype)

    def put(self, dst_buf, dst_dtype, idx, values, accumulate):
        i = self._v(idx).reshape(-1)
        if i.size == 0:
            return
        with _Quiet():
            if isinstance(values, Strided):
                v = _as(_read(values), dst_dtype).reshape(-1)
            else:
                v = np.broadcast_to(_scalar(values, dst_dtype), i.shape)
            if dst_dtype == "bfloat16":
                _put_bf16(dst_buf, i, v, accumulate)
            elif accumulate:
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
        x = _read(inp)
        if x.ndim == 0:
            x, o = x.reshape(1), o.reshape(1)
        od = _VAL[out.dtype]
        _ordered(op, x)
        with _Quiet():
            if op in ("cumsum", "cumprod"):
                f = np.cumsum if op == "cumsum" else np.cumprod
                if od.kind == "f":
                    r = f(x, axis=-1, dtype=_F64)
                else:
                    r = f(cast(x, "int64" if od.kind == "b" else out.dtype), axis=-1)
            elif op in ("cummax", "cummin"):
                x = _as(x, out.dtype)
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
        x = _read(inp)
        if x.dtype.kind == "c":
            raise RuntimeError(" Sort does not support complex dtypes on CPU")
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
        od = _VAL[out.dtype]
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
