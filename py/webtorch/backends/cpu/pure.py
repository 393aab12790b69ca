"""CPU backend in pure Python (no numpy: it runs in Pyodide offline).

A buf is an `array.array`: float32 'f', float64 'd', float16 'f' holding values already rounded
to half (struct 'e'), bfloat16 'f' holding values already rounded to bfloat16 (float32's upper half),
int8 'b', int16 'h', int32 'i', int64 'q', uint8 'B', bool 'B' (0/1); complex64
(complex128) the interleaved parts in 'f' ('d'), computed by pure_complex.py.
An op reads each input Strided into a list (through its flat offsets, computed once per call),
computes with list comprehensions / `map`, normalizes the results to the compute dtype
(float32/float16 rounding, integer wrap-around) and writes them through the out Strided.

The semantics are the numpy backend's (see the docstring of `numpy_backend.py`).
"""
import itertools
import math
import operator
import struct
from array import array

from ... import _dtype, _philox
from ..._geometry import is_contiguous, numel as _numel
from ..base import Backend, Strided, fast_paths_of
from ..complex_parts import COMPLEX, ComplexParts
from ..elementwise import KIND_OF, RECORDS, ByDtype, follow, form, same
from .pure_complex import PureComplex

TYPECODES = {"float32": "f", "float64": "d", "float16": "f", "bfloat16": "f", "int8": "b", "int16": "h",
             "int32": "i", "int64": "q", "uint8": "B", "bool": "B", "uint16": "H", "uint32": "I", "uint64": "Q"}
_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}
_UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
_INF = math.inf
_NAN = math.nan
_FLOATS = ("float16", "bfloat16", "float32", "float64")


def offsets(shape, strides, offset):
    """Flat element offsets of a strided view in row-major order (a list or a range)."""
    if is_contiguous(shape, strides):
        return range(offset, offset + _numel(shape))
    offs = [offset]
    for n, s in zip(shape, strides, strict=False):
        if n == 1:
            continue
        steps = [i * s for i in range(n)]
        offs = [o + t for o in offs for t in steps]
    return offs


def _row(b, base, inner):
    """The elements at base + inner (a list or range of relative offsets) of buf b."""
    if isinstance(inner, range):
        return b[base + inner.start:base + inner.stop].tolist()
    return [b[base + r] for r in inner]


# ---- conversions ----------------------------------------------------------------------------

def _half1(x):
    try:
        return struct.unpack("e", struct.pack("e", struct.unpack("f", struct.pack("f", x))[0]))[0]
    except (OverflowError, struct.error):  # struct.error: an integer past float16's range (floor_divide's)
        return math.copysign(_INF, x)


def _to_half(vals):
    """vals rounded to float16 through float32, as PyTorch's float32 opmath (and its conversions)."""
    n = len(vals)
    try:
        return list(struct.unpack(f"{n}e", struct.pack(f"{n}e", *struct.unpack(f"{n}f", struct.pack(f"{n}f", *vals)))))
    except (OverflowError, struct.error):
        return [_half1(v) for v in vals]


def _bf16_bits(b):
    """float32 bits rounded to bfloat16's upper half, to nearest even (NaN stays NaN)."""
    return 0xFFFF0000 if b & 0x7FFFFFFF > 0x7F800000 else (b + 0x7FFF + ((b >> 16) & 1)) >> 16 << 16


def to_bfloat16(vals):
    """vals rounded to bfloat16 through float32 (c10's conversion), as Python floats."""
    n = len(vals)
    try:
        bits = struct.unpack(f"{n}I", struct.pack(f"{n}f", *vals))
    except (OverflowError, struct.error):  # a value past float32's range: +-inf
        return [math.copysign(_INF, v) if abs(v) > 3.4028234663852886e38 else to_bfloat16([v])[0] for v in vals]
    return list(struct.unpack(f"{n}f", struct.pack(f"{n}I", *map(_bf16_bits, bits))))


def _wrap(vals, dtype):
    """Python ints -> ints in dtype's range (two's complement wrap-around)."""
    try:
        array(TYPECODES[dtype], vals)
        return vals
    except OverflowError:
        bits = _BITS[dtype]
        mask = (1 << bits) - 1
        if dtype in _UNSIGNED:
            return [v & mask for v in vals]
        half = 1 << (bits - 1)
        return [((v + half) & mask) - half for v in vals]


def _f2i(dtype):
    """Scalar float -> int conversion for dtype (truncation; x86/PyTorch behaviour outside)."""
    if dtype in ("int32", "int64"):
        bits = _BITS[dtype]
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

        def f(v):
            if v != v or v in (_INF, -_INF):
                return lo
            t = int(v)
            return t if lo <= t <= hi else lo
        return f
    lo64, hi64 = -(1 << 63), (1 << 63) - 1
    bits = _BITS[dtype]
    mask = (1 << bits) - 1
    half = 1 << (bits - 1)
    signed = dtype not in _UNSIGNED

    def g(v):
        if v != v or v in (_INF, -_INF):
            t = lo64
        else:
            t = int(v)
            if not lo64 <= t <= hi64:
                t = lo64
        return (((t + half) & mask) - half) if signed else (t & mask)
    return g


def normalize(vals, dtype):
    """Results of a computation (Python numbers in dtype's domain) -> exactly representable
    in dtype: float32/float16 rounding, integer wrap, bool 0/1."""
    if dtype == "float64":
        return vals
    if dtype == "float32":
        return array("f", vals).tolist()
    if dtype == "float16":
        return _to_half(vals)
    if dtype == "bfloat16":
        return to_bfloat16(vals)
    if dtype == "bool":
        return [1 if v else 0 for v in vals]
    return _wrap(vals, dtype)


def cast(vals, src, dst):
    """Convert a list of values of dtype `src` (normalized) to dtype `dst` (normalized)."""
    if src == dst:
        return vals
    if dst == "bool":
        return [1 if v else 0 for v in vals]
    if dst in _FLOATS:
        if src not in _FLOATS:
            vals = [float(v) for v in vals]
        return normalize(vals, dst)
    if src in _FLOATS:
        return list(map(_f2i(dst), vals))
    return _wrap(vals, dst)


def _check_dtype(dtype):
    if dtype not in TYPECODES and dtype not in COMPLEX:
        raise TypeError(f"{dtype} is not supported on the pure-Python cpu backend (without numpy) yet")


def _py_dtype(x):
    return {"b": "bool", "i": "pyint", "f": "float64"}[_dtype._scalar_kind(x)]


def _scalar(x, dtype):
    """A Python scalar converted to dtype (ints wrap)."""
    if dtype == "bool":
        return 1 if x else 0
    if not isinstance(x, int):  # float, or a float-like such as a numpy scalar
        return cast([float(x)], "float64", dtype)[0]
    x = int(x)
    if dtype in _FLOATS:
        return normalize([float(x)], dtype)[0]
    bits = _BITS[dtype]
    mask = (1 << bits) - 1
    if dtype in _UNSIGNED:
        return x & mask
    half = 1 << (bits - 1)
    return ((x + half) & mask) - half


# ---- element-wise kernels, from the records (backends/elementwise.py) -------------------------
# (op, cdtype) -> (scalar function mapped over the elements (`same`: the input itself), result dtype,
# whether the inputs are converted to float first: a float form on integers computes in float64)
_OPS = {}


def _zde():
    return RuntimeError("ZeroDivisionError")


def _kernel(rec, dtype):
    f, _ = form(rec.py, dtype)
    tofloat = False
    if f is None and rec.py and KIND_OF[dtype] != "f":
        f, _ = form(rec.py, "float64")
        tofloat, dtype = True, "float64"
    if f is None:
        return None
    if isinstance(f, ByDtype):
        f = f.make(dtype)
    return f, "bool" if rec.out == "bool" else dtype, tofloat


follow(_OPS, TYPECODES, _kernel)
_ZERO_DIV = {n for n, r in RECORDS.items() if r.zero_div}


def _isnan(x):
    return x != x


def _sum_prod(op, vals, idt, odt):
    """(sum or product of one row, its dtype): floats in float64 (fsum), integers wrapping in int64 or odt."""
    if odt in _FLOATS:
        vals = cast(vals, idt, "float64")
        if op == "prod":
            return math.prod(vals), "float64"
        try:
            return math.fsum(vals), "float64"
        except (ValueError, OverflowError):
            return sum(vals), "float64"
    acc = "int64" if odt == "bool" else odt
    vals = cast(vals, idt, acc)
    if op == "sum":
        r = sum(vals)
    else:
        r = 1
        mask = (1 << 64) - 1
        for v in vals:
            r = (r * v) & mask
    return normalize([r], acc)[0], acc


def _reduce_row(op, vals, idt, odt):
    """(the reduction `op` of one row of values of dtype idt, the result's dtype)."""
    if op in ("sum", "prod"):
        return _sum_prod(op, vals, idt, odt)
    nan = idt in _FLOATS and any(map(_isnan, vals))
    if op in ("max", "min"):
        if not vals:
            return 0, idt
        return (_NAN if nan else max(vals) if op == "max" else min(vals)), idt
    if op in ("argmax", "argmin"):
        if nan:
            return next(i for i, v in enumerate(vals) if v != v), "int64"
        return vals.index(max(vals) if op == "argmax" else min(vals)), "int64"
    if op == "any":
        return (1 if any(vals) else 0), "bool"
    if op == "all":
        return (1 if all(vals) else 0), "bool"
    raise NotImplementedError(op)


def _cum_extreme(vals, isf, ge, res, ires):
    """cummax (ge: >=) / cummin (<=) of one row, appended to res, and the index of each extreme to ires:
    the last index where the running extreme was reached; a NaN stays the extreme."""
    cur, ci = None, 0
    for i, x in enumerate(vals):
        if i == 0 or (isf and x != x) or (cur == cur and ge(x, cur)):
            cur, ci = x, i
        res.append(cur)
        ires.append(ci)


_LN2 = math.log(2.0)


def _lae(x, y):
    """log(exp(x) + exp(y)) without overflow: logcumsumexp's step."""
    if x == y:
        return x + _LN2
    t = x - y
    if t > 0:
        return x + math.log1p(math.exp(-t))
    if t <= 0:
        return y + math.log1p(math.exp(t))
    return t


class PureBackend(Backend):
    name = "cpu"
    fast_paths = fast_paths_of("py")  # one pass instead of the decompositions' 2 to 8
    _PARTS = ("reduce", "scan", "matmul", "take", "put", "sort", "arange", "random")

    def __init__(self):
        super().__init__()
        # complex views: these primitives through ComplexParts (the real ones for real views), ewise and fft through
        # pure_complex.py
        real = type("Real", (), {n: getattr(self, n) for n in self._PARTS + ("ewise",)})
        self.cx = PureComplex(self, normalize, cast)
        parts = ComplexParts(real, self.empty, "cpu (pure Python)", self.cx.ewise)
        for n in self._PARTS:
            setattr(self, n, getattr(parts, n))
        self.fft = self.cx.fft

    # ---- memory -----------------------------------------------------------------------
    def empty(self, numel, dtype):
        _check_dtype(dtype)
        if dtype in COMPLEX:
            return self.empty(2 * numel, COMPLEX[dtype])
        return array(TYPECODES[dtype], bytes(numel * array(TYPECODES[dtype]).itemsize))

    def reinterpret(self, buf, dtype):
        """complex <-> its parts' dtype: the same array."""
        return buf

    def from_flat(self, values, dtype):
        _check_dtype(dtype)
        if dtype in COMPLEX:
            if hasattr(values, "tolist"):
                values = values.tolist()
            vals = [complex(v) for v in (values if isinstance(values, list) else [values])]
            return self.from_flat([p for v in vals for p in (v.real, v.imag)], COMPLEX[dtype])
        if hasattr(values, "tolist") and not isinstance(values, array):
            values = values.tolist()  # numpy array
            if not isinstance(values, list):
                values = [values]
        if isinstance(values, array):
            src = "float64" if values.typecode in "fd" else "pyint"
            vals = values.tolist()
        else:
            vals = list(values)
            src = None
        if dtype == "bool":
            out = [1 if v else 0 for v in vals]
        elif dtype in _FLOATS:
            out = normalize([float(v) for v in vals], dtype)
        elif src == "pyint":
            out = _wrap(vals, dtype)
        else:
            f = _f2i(dtype)
            out = _wrap([f(v) if isinstance(v, float) else int(v) for v in vals], dtype)
        return array(TYPECODES[dtype], out)

    @staticmethod
    def _offs(view):
        return offsets(view.shape, view.strides, view.offset)

    def _read(self, view):
        offs = self._offs(view)
        b = view.buf
        if isinstance(offs, range):
            return b[offs.start:offs.stop].tolist()
        return [b[i] for i in offs]

    def _write(self, view, vals):
        offs = self._offs(view)
        b = view.buf
        if isinstance(offs, range):
            b[offs.start:offs.stop] = array(b.typecode, vals)
        else:
            for i, v in zip(offs, vals, strict=False):
                b[i] = v

    def to_flat(self, view):
        if view.dtype in COMPLEX:
            return self.cx.read(view)
        vals = self._read(view)
        if view.dtype == "bool":
            return [bool(v) for v in vals]
        return vals

    def to_numpy(self, view):
        try:
            import numpy as np
        except ModuleNotFoundError:  # Pyodide's page: the one clear error for every numpy-needing call
            raise ModuleNotFoundError("numpy is not installed here (the playground's Python has no numpy): use "
                                      "tensor.tolist() or tensor.item() for the values", name="numpy") from None
        dt = "float32" if view.dtype == "bfloat16" else view.dtype  # bfloat16's values (numpy has none)
        return np.array(self.to_flat(view), dtype=dt).reshape(view.shape)

    # ---- compute ----------------------------------------------------------------------
    def _operand(self, x, dtype, n):
        if isinstance(x, Strided):
            return cast(self._read(x), x.dtype, dtype)
        return [_scalar(x, dtype)] * n

    def ewise(self, op, out, inputs, cdtype):
        if cdtype in COMPLEX or op == "copy" and getattr(inputs[0], "dtype", None) in COMPLEX:
            return self.cx.ewise(op, out, inputs, cdtype)
        n = _numel(out.shape)
        if n == 0:
            return
        try:
            f, rd, tofloat = _OPS[op, cdtype]
        except KeyError:
            raise TypeError(f"cpu: op {op!r} is not supported for dtype {cdtype}") from None
        if op == "where":
            args = [self._operand(inputs[0], "bool", n), self._operand(inputs[1], cdtype, n),
                    self._operand(inputs[2], cdtype, n)]
        else:
            args = [self._operand(x, cdtype, n) for x in inputs]
        if tofloat:
            args = [[float(v) for v in a] for a in args]
        elif op in _ZERO_DIV and cdtype not in _FLOATS and 0 in args[1]:
            raise _zde()
        res = args[0] if f is same else list(map(f, *args))
        res = normalize(res, rd)
        self._write(out, cast(res, rd, out.dtype))

    def _rows(self, view, nlead):
        """(list of base offsets over the first nlead dims, list of relative inner offsets)."""
        shape, strides = view.shape, view.strides
        bases = offsets(shape[:nlead], strides[:nlead], view.offset)
        inner = offsets(shape[nlead:], strides[nlead:], 0)
        return bases, inner

    def reduce(self, op, out, inp):
        n = _numel(out.shape)
        if n == 0:
            return
        bases, inner = self._rows(inp, len(out.shape))
        res, rd = [], out.dtype
        for base in bases:
            r, rd = _reduce_row(op, _row(inp.buf, base, inner), inp.dtype, out.dtype)
            res.append(r)
        self._write(out, cast(normalize(res, rd), rd, out.dtype))

    def matmul(self, out, a, b):
        n = _numel(out.shape)
        if n == 0:
            return
        B, M, N = out.shape
        K = a.shape[2]
        dt = out.dtype
        isf = dt in _FLOATS
        wd = "float64" if isf else ("int64" if dt == "bool" else dt)
        av = cast(cast(self._read(a), a.dtype, dt), dt, wd)
        # b transposed so that columns are contiguous lists
        bt = Strided(b.buf, (b.shape[0], b.shape[2], b.shape[1]),
                  (b.strides[0], b.strides[2], b.strides[1]), b.offset, b.dtype)
        bv = cast(cast(self._read(bt), b.dtype, dt), dt, wd)
        sumprod = getattr(math, "sumprod", None)
        res = []
        for bi in range(B):
            arows = [av[(bi * M + m) * K:(bi * M + m + 1) * K] for m in range(M)]
            bcols = [bv[(bi * N + j) * K:(bi * N + j + 1) * K] for j in range(N)]
            if sumprod is not None and isf:
                res.extend(sumprod(r, c) for r in arows for c in bcols)
            else:
                res.extend(sum(map(operator.mul, r, c)) for r in arows for c in bcols)
        if not isf:
            res = normalize(res, wd)
        self._write(out, cast(normalize(res, wd), wd, dt))

    def take(self, out, src_buf, src_dtype, idx):
        if _numel(out.shape) == 0:
            return
        ii = self._read(idx)
        vals = [src_buf[i] for i in ii]
        self._write(out, cast(vals, src_dtype, out.dtype))

    def put(self, dst_buf, dst_dtype, idx, values, accumulate):
        ii = self._read(idx)
        if not ii:
            return
        vals = self._operand(values, dst_dtype, len(ii))
        if not accumulate:
            for i, v in zip(ii, vals, strict=False):
                dst_buf[i] = v
            return
        if dst_dtype == "bool":
            for i, v in zip(ii, vals, strict=False):
                dst_buf[i] = 1 if (dst_buf[i] or v) else 0
        elif dst_dtype in ("float32", "float64"):
            for i, v in zip(ii, vals, strict=False):
                dst_buf[i] += v
        elif dst_dtype in ("float16", "bfloat16"):
            for i, v in zip(ii, vals, strict=False):
                dst_buf[i] = normalize([dst_buf[i] + v], dst_dtype)[0]
        else:
            bits = _BITS[dst_dtype]
            mask = (1 << bits) - 1
            half = 1 << (bits - 1)
            signed = dst_dtype not in _UNSIGNED
            for i, v in zip(ii, vals, strict=False):
                t = dst_buf[i] + v
                dst_buf[i] = (((t + half) & mask) - half) if signed else (t & mask)

    def scan(self, op, out, inp, out_idx=None):
        if _numel(out.shape) == 0:
            return
        if not inp.shape:
            inp = Strided(inp.buf, (1,), (1,), inp.offset, inp.dtype)
            out = Strided(out.buf, (1,), (1,), out.offset, out.dtype)
            if out_idx is not None:
                out_idx = Strided(out_idx.buf, (1,), (1,), out_idx.offset, out_idx.dtype)
        odt = out.dtype
        nl = len(inp.shape) - 1
        bases, inner = self._rows(inp, nl)
        b = inp.buf
        res, ires = [], []
        if op in ("cumsum", "cumprod"):
            wd = "float64" if odt in _FLOATS else ("int64" if odt == "bool" else odt)
            f = operator.add if op == "cumsum" else operator.mul
            for base in bases:
                vals = cast(_row(b, base, inner), inp.dtype, wd)
                res.extend(itertools.accumulate(vals, f))
            rd = wd
        elif op in ("cummax", "cummin"):
            rd = odt
            ge = operator.ge if op == "cummax" else operator.le
            for base in bases:
                _cum_extreme(cast(_row(b, base, inner), inp.dtype, odt), odt in _FLOATS, ge, res, ires)
        elif op == "logcumsumexp":
            rd = "float64"
            for base in bases:
                vals = cast(_row(b, base, inner), inp.dtype, "float64")
                res.extend(itertools.accumulate(vals, _lae))
        else:
            raise NotImplementedError(op)
        self._write(out, cast(normalize(res, rd), rd, odt))
        if out_idx is not None and ires:
            self._write(out_idx, cast(ires, "int64", out_idx.dtype))

    def sort(self, out_values, out_indices, inp, descending, stable):
        if _numel(out_values.shape) == 0:
            return
        if not inp.shape:
            inp = Strided(inp.buf, (1,), (1,), inp.offset, inp.dtype)
            out_values = Strided(out_values.buf, (1,), (1,), out_values.offset, out_values.dtype)
            out_indices = Strided(out_indices.buf, (1,), (1,), out_indices.offset,
                               out_indices.dtype)
        nl = len(inp.shape) - 1
        bases, inner = self._rows(inp, nl)
        b = inp.buf
        isf = inp.dtype in _FLOATS
        n = len(inner)
        rv, ri = [], []
        for base in bases:
            vals = _row(b, base, inner)
            keys = [(x != x, x) for x in vals] if isf else vals
            order = sorted(range(n), key=keys.__getitem__, reverse=descending)
            ri.extend(order)
            rv.extend([vals[i] for i in order])
        self._write(out_values, cast(rv, inp.dtype, out_values.dtype))
        self._write(out_indices, cast(ri, "int64", out_indices.dtype))

    def arange(self, out, start, step):
        n = _numel(out.shape)
        if n == 0:
            return
        dt = out.dtype
        if dt in _FLOATS or isinstance(start, float) or isinstance(step, float):
            vals = [start + i * step for i in range(n)]
            vals = [float(v) for v in vals]
            self._write(out, cast(vals, "float64", dt))
        else:
            vals = [start + i * step for i in range(n)]
            self._write(out, cast(normalize(vals, "int64"), "int64", dt))

    def random(self, out, kind, seed, offset):
        n = _numel(out.shape)
        if n == 0:
            return
        vals = _philox.draw(n, kind, seed, offset)
        self._write(out, cast(vals, "float64", out.dtype))
