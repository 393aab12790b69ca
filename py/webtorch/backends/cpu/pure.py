"""CPU backend in pure Python (no numpy: it runs in Pyodide offline).

A buf is an `array.array`: float32 'f', float64 'd', float16 'f' holding values already rounded
to half (struct 'e'), int8 'b', int16 'h', int32 'i', int64 'q', uint8 'B', bool 'B' (0/1).
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

from ..base import Backend, Strided, KERNEL_FAST_PATHS
from ... import _dtype, _philox
from ..._geometry import numel as _numel, is_contiguous
from . import _special

TYPECODES = {"float32": "f", "float64": "d", "float16": "f", "int8": "b", "int16": "h",
             "int32": "i", "int64": "q", "uint8": "B", "bool": "B"}
_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "uint8": 8}
_INF = math.inf
_NAN = math.nan
_FLOATS = ("float16", "float32", "float64")


def _kind(dtype):
    if dtype == "bool":
        return "b"
    if dtype == "uint8":
        return "u"
    return "f" if dtype in _FLOATS else "i"


def offsets(shape, strides, offset):
    """Flat element offsets of a strided view in row-major order (a list or a range)."""
    if is_contiguous(shape, strides):
        return range(offset, offset + _numel(shape))
    offs = [offset]
    for n, s in zip(shape, strides):
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
        return struct.unpack("e", struct.pack("e", x))[0]
    except OverflowError:
        return math.copysign(_INF, x)


def _to_half(vals):
    n = len(vals)
    try:
        return list(struct.unpack(f"{n}e", struct.pack(f"{n}e", *vals)))
    except OverflowError:
        return [_half1(v) for v in vals]


def _wrap(vals, dtype):
    """Python ints -> ints in dtype's range (two's complement wrap-around)."""
    try:
        array(TYPECODES[dtype], vals)
        return vals
    except OverflowError:
        bits = _BITS[dtype]
        mask = (1 << bits) - 1
        if dtype == "uint8":
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
    signed = dtype != "uint8"

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
    if dtype == "uint8":
        return x & mask
    half = 1 << (bits - 1)
    return ((x + half) & mask) - half


# ---- safe scalar float functions (C99 / numpy results instead of Python exceptions) ---------

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
    """f(x) with math's exceptions replaced by `special(x)`."""
    def g(x):
        try:
            return f(x)
        except (ValueError, OverflowError):
            return special(x)
    return g


def _log_special(x):
    if x == 0:
        return -_INF
    return _NAN  # x < 0


def _log1p_special(x):
    if x == -1:
        return -_INF
    return _NAN


def _exp_special(x):
    return _INF if x > 0 else 0.0


def _nan(x):
    return _NAN


def _sinh_special(x):
    return math.copysign(_INF, x)


def _atanh_special(x):
    if x == 1 or x == -1:
        return math.copysign(_INF, x)
    return _NAN


def _exp2(x):
    return _fpow(2.0, x)


def _sigmoid(x):
    try:
        return 1.0 / (1.0 + math.exp(-x))
    except OverflowError:
        return 0.0


def _round_int_float(f):
    """floor/ceil/trunc for floats keeping inf/nan and the sign of zero."""
    def g(x):
        if x != x or x == _INF or x == -_INF:
            return x
        r = float(f(x))
        return r if r != 0 else math.copysign(0.0, x)
    return g


_ffloor = _round_int_float(math.floor)
_fceil = _round_int_float(math.ceil)
_ftrunc = _round_int_float(math.trunc)

_FUN1 = {
    "exp": _guard(math.exp, _exp_special),
    "exp2": _exp2,
    "expm1": _guard(math.expm1, lambda x: _INF),
    "log": _guard(math.log, _log_special),
    "log2": _guard(math.log2, _log_special),
    "log10": _guard(math.log10, _log_special),
    "log1p": _guard(math.log1p, _log1p_special),
    "sqrt": _guard(math.sqrt, _nan),
    "sin": _guard(math.sin, _nan), "cos": _guard(math.cos, _nan), "tan": _guard(math.tan, _nan),
    "asin": _guard(math.asin, _nan), "acos": _guard(math.acos, _nan), "atan": math.atan,
    "sinh": _guard(math.sinh, _sinh_special), "cosh": _guard(math.cosh, lambda x: _INF),
    "tanh": math.tanh, "asinh": math.asinh, "acosh": _guard(math.acosh, _nan),
    "atanh": _guard(math.atanh, _atanh_special),
    "sigmoid": _sigmoid, "erf": math.erf, "erfc": math.erfc, "erfinv": _special.erfinv,
}


def _frem(a, b):
    try:
        m = math.fmod(a, b)
    except ValueError:
        return _NAN
    if m != 0 and (b < 0) != (m < 0):
        m += b
    return m


def _ffmod(a, b):
    try:
        return math.fmod(a, b)
    except ValueError:
        return _NAN


def _ffloordiv(rnd):
    """c10's div_floor_floating with each step rounded by `rnd` (to float32 for float32 and float16,
    which PyTorch computes in float): (a - fmod(a, b)) / b, one less where fmod's sign is not b's,
    then floored to the nearest integer."""
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


def _f32(x):
    return array("f", (x,))[0]


def _zde():
    return RuntimeError("ZeroDivisionError")


def _nonzero_check(b):
    if 0 in b:
        raise _zde()


def _idiv_trunc(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _ifmod(a, b):
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


def _maximum(a, b):
    return a if (a >= b or a != a) else b


def _minimum(a, b):
    return a if (a <= b or a != a) else b


def _fmax(a, b):
    return a if (a >= b or b != b) else b


def _fmin(a, b):
    return a if (a <= b or b != b) else b


def _isnan(x):
    return x != x


def _isinf(x):
    return x == _INF or x == -_INF


def _isfinite(x):
    return x == x and x != _INF and x != -_INF


def _signbit(x):
    return math.copysign(1.0, x) < 0


def _map2(f, a, b):
    return list(map(f, a, b))


class _Ops:
    """op(cd, kind, *lists) -> (result list, result dtype)."""

    @staticmethod
    def unary(op, cd, k, a):
        if op == "copy":
            return a, cd
        if op == "neg":
            return ([1 - x for x in a] if k == "b" else [-x for x in a]), cd
        if op == "abs":
            return (a if k == "b" else list(map(abs, a))), cd
        if op == "sign":
            if k == "b":
                return a, cd
            if k == "f":
                return [1.0 if x > 0 else (-1.0 if x < 0 else 0.0) for x in a], cd
            return [(x > 0) - (x < 0) for x in a], cd
        if op in _FUN1:
            f = _FUN1[op]
            if k != "f":
                a = [float(x) for x in a]
                cd = "float64"
            return list(map(f, a)), cd
        if op in ("floor", "ceil", "round", "trunc"):
            if k != "f":
                return a, cd
            if op == "round":
                return [round(x, 0) for x in a], cd
            f = {"floor": _ffloor, "ceil": _fceil, "trunc": _ftrunc}[op]
            return list(map(f, a)), cd
        if op == "relu":
            if k == "b":
                return a, cd
            if k == "f":
                return [x if (x >= 0 or x != x) else 0.0 for x in a], cd
            return [x if x > 0 else 0 for x in a], cd
        if op == "bitwise_not":
            if k == "b":
                return [1 - x for x in a], cd
            return [~x for x in a], cd
        if op in ("isnan", "isinf", "isfinite", "signbit"):
            if k == "f":
                f = {"isnan": _isnan, "isinf": _isinf, "isfinite": _isfinite,
                     "signbit": _signbit}[op]
                return list(map(f, a)), "bool"
            if op == "isfinite":
                return [1] * len(a), "bool"
            if op == "signbit" and k == "i":
                return [x < 0 for x in a], "bool"
            return [0] * len(a), "bool"
        raise NotImplementedError(op)

    @staticmethod
    def binary(op, cd, k, a, b):
        if op == "add":
            return _map2(operator.add, a, b), cd
        if op == "sub":
            if k == "b":
                return _map2(operator.xor, a, b), cd
            return _map2(operator.sub, a, b), cd
        if op == "mul":
            return _map2(operator.mul, a, b), cd
        if op in ("eq", "ne", "lt", "ge"):
            return _map2(getattr(operator, op), a, b), "bool"
        if op == "logical_and":
            return [1 if (x and y) else 0 for x, y in zip(a, b)], "bool"
        if op == "logical_or":
            return [1 if (x or y) else 0 for x, y in zip(a, b)], "bool"
        if op == "logical_xor":
            return [1 if (bool(x) != bool(y)) else 0 for x, y in zip(a, b)], "bool"
        if op in ("bitwise_and", "bitwise_or", "bitwise_xor"):
            f = {"bitwise_and": operator.and_, "bitwise_or": operator.or_,
                 "bitwise_xor": operator.xor}[op]
            return _map2(f, a, b), cd
        if op in ("maximum", "minimum", "fmax", "fmin"):
            if k == "f":
                f = {"maximum": _maximum, "minimum": _minimum, "fmax": _fmax, "fmin": _fmin}[op]
            else:
                f = max if op in ("maximum", "fmax") else min
            return _map2(f, a, b), cd
        if k == "f":
            if op == "div":
                try:
                    return _map2(operator.truediv, a, b), cd
                except ZeroDivisionError:
                    return _map2(_fdiv, a, b), cd
            if op == "floor_divide":
                return _map2(_ffloordiv(float if cd == "float64" else _f32), a, b), cd
            if op == "remainder":
                return _map2(_frem, a, b), cd
            if op == "fmod":
                return _map2(_ffmod, a, b), cd
            if op == "pow":
                return _map2(_fpow, a, b), cd
            if op == "atan2":
                return _map2(math.atan2, a, b), cd
            raise NotImplementedError(f"{op} on {cd}")
        # integer / bool compute dtypes
        if op == "atan2":
            return _map2(math.atan2, [float(x) for x in a], [float(y) for y in b]), "float64"
        if op in ("div", "floor_divide", "remainder", "fmod"):
            _nonzero_check(b)
            f = {"div": _idiv_trunc, "floor_divide": operator.floordiv,
                 "remainder": operator.mod, "fmod": _ifmod}[op]
            return _map2(f, a, b), cd
        if op == "pow":
            if k == "b":
                return [x | (1 - y) for x, y in zip(a, b)], cd
            mod = 1 << _BITS[cd]

            def p(x, y):
                if y >= 0:
                    return pow(x, y, mod)
                if x == 1:
                    return 1
                if x == -1:
                    return -1 if y & 1 else 1
                return 0
            return _map2(p, a, b), cd
        if op in ("lshift", "rshift"):
            bits = 8 if k == "b" else _BITS[cd]
            if op == "lshift":
                return [x << y if 0 <= y < bits else 0 for x, y in zip(a, b)], cd
            return [x >> y if 0 <= y < bits else (-1 if x < 0 else 0) for x, y in zip(a, b)], cd
        raise NotImplementedError(f"{op} on {cd}")


class PureBackend(Backend):
    name = "cpu"
    fast_paths = KERNEL_FAST_PATHS | {"sigmoid"}  # one pass instead of the decompositions' 2 to 8

    # ---- memory -----------------------------------------------------------------------
    def empty(self, numel, dtype):
        return array(TYPECODES[dtype], bytes(numel * array(TYPECODES[dtype]).itemsize))

    def from_flat(self, values, dtype):
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
            for i, v in zip(offs, vals):
                b[i] = v

    def to_flat(self, view):
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
        return np.array(self.to_flat(view), dtype=view.dtype).reshape(view.shape)

    # ---- compute ----------------------------------------------------------------------
    def _operand(self, x, dtype, n):
        if isinstance(x, Strided):
            return cast(self._read(x), x.dtype, dtype)
        return [_scalar(x, dtype)] * n

    def ewise(self, op, out, inputs, cdtype):
        n = _numel(out.shape)
        if n == 0:
            return
        k = _kind(cdtype)
        if op == "where":
            c = self._operand(inputs[0], "bool", n)
            a = self._operand(inputs[1], cdtype, n)
            b = self._operand(inputs[2], cdtype, n)
            res, rd = [x if t else y for t, x, y in zip(c, a, b)], cdtype
        else:
            args = [self._operand(x, cdtype, n) for x in inputs]
            if len(args) == 1:
                res, rd = _Ops.unary(op, cdtype, k, args[0])
            else:
                res, rd = _Ops.binary(op, cdtype, k, args[0], args[1])
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
        nl = len(out.shape)
        bases, inner = self._rows(inp, nl)
        b = inp.buf
        idt, odt = inp.dtype, out.dtype
        isf = idt in _FLOATS
        res = []
        rd = odt
        for base in bases:
            vals = _row(b, base, inner)
            if op in ("sum", "prod"):
                if odt in _FLOATS:
                    vals = cast(vals, idt, "float64")
                    if op == "sum":
                        try:
                            r = math.fsum(vals)
                        except (ValueError, OverflowError):
                            r = sum(vals)
                    else:
                        r = math.prod(vals)
                    rd = "float64"
                else:
                    acc = "int64" if odt == "bool" else odt
                    vals = cast(vals, idt, acc)
                    if op == "sum":
                        r = sum(vals)
                    else:
                        r = 1
                        mask = (1 << 64) - 1
                        for v in vals:
                            r = (r * v) & mask
                    r = normalize([r], acc)[0]
                    rd = acc
            elif op in ("max", "min"):
                rd = idt
                if not vals:
                    r = 0
                elif isf and any(map(_isnan, vals)):
                    r = _NAN
                else:
                    r = max(vals) if op == "max" else min(vals)
            elif op in ("argmax", "argmin"):
                rd = "int64"
                if isf and any(map(_isnan, vals)):
                    r = next(i for i, v in enumerate(vals) if v != v)
                else:
                    r = vals.index(max(vals) if op == "argmax" else min(vals))
            elif op == "any":
                rd, r = "bool", 1 if any(vals) else 0
            elif op == "all":
                rd, r = "bool", 1 if all(vals) else 0
            else:
                raise NotImplementedError(op)
            res.append(r)
        self._write(out, cast(normalize(res, rd), rd, odt))

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
            for i, v in zip(ii, vals):
                dst_buf[i] = v
            return
        if dst_dtype == "bool":
            for i, v in zip(ii, vals):
                dst_buf[i] = 1 if (dst_buf[i] or v) else 0
        elif dst_dtype in ("float32", "float64"):
            for i, v in zip(ii, vals):
                dst_buf[i] += v
        elif dst_dtype == "float16":
            for i, v in zip(ii, vals):
                dst_buf[i] = _half1(dst_buf[i] + v)
        else:
            bits = _BITS[dst_dtype]
            mask = (1 << bits) - 1
            half = 1 << (bits - 1)
            signed = dst_dtype != "uint8"
            for i, v in zip(ii, vals):
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
            isf = odt in _FLOATS
            ge = operator.ge if op == "cummax" else operator.le
            for base in bases:
                vals = cast(_row(b, base, inner), inp.dtype, odt)
                cur, ci = None, 0
                for i, x in enumerate(vals):
                    if i == 0 or (isf and x != x) or (cur == cur and ge(x, cur)):
                        cur, ci = x, i
                    res.append(cur)
                    ires.append(ci)
        elif op == "logcumsumexp":
            rd = "float64"
            ln2 = math.log(2.0)

            def lae(x, y):
                if x == y:
                    return x + ln2
                t = x - y
                if t > 0:
                    return x + math.log1p(math.exp(-t))
                if t <= 0:
                    return y + math.log1p(math.exp(t))
                return t
            for base in bases:
                vals = cast(_row(b, base, inner), inp.dtype, "float64")
                res.extend(itertools.accumulate(vals, lae))
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
