"""Complex views over real kernels, for a backend whose complex buffer is its real parts interleaved (real,
imaginary): the WebGPU backend (complex64 as f32 pairs) and the pure-Python cpu backend (Python floats in an
array). `parts` views a complex Strided as real ones of the same memory, and `ComplexParts` gives each primitive
that can run on them (sum, any, all, cumsum, matmul, take, put) a complex form over the backend's real primitives,
and prod and cumprod ones over its complex products; the others raise naming the op. The element-wise kernels and
the FFT, which compute complex values, are each backend's own.
"""
from .._geometry import contiguous_strides, numel
from .base import Strided

COMPLEX = {"complex64": "float32", "complex128": "float64"}   # complex dtype -> the dtype of its parts
_ORDERED = ("max", "min", "argmax", "argmin", "cummax", "cummin", "logcumsumexp")


def parts(v, k=None):
    """A complex view as real views: its (real, imaginary) pairs as a trailing dim of 2, or part k (0 real, 1
    imaginary) alone."""
    dt = COMPLEX[v.dtype]
    if k is None:
        return Strided(v.buf, (*v.shape, 2), (*(2 * s for s in v.strides), 1), 2 * v.offset, dt)
    return Strided(v.buf, tuple(v.shape), tuple(2 * s for s in v.strides), 2 * v.offset + k, dt)


def split(v):
    """(real part, imaginary part) of a complex view; (v, None) of a real one."""
    return (parts(v, 0), parts(v, 1)) if v.dtype in COMPLEX else (v, None)


def unsupported(op, backend, exc=TypeError):
    if op in _ORDERED:  # as PyTorch: complex numbers have no order
        return NotImplementedError(f"\"{op}\" not implemented for complex tensors")
    return exc(f"{backend}: {op} is not supported for complex tensors (complex tensors there compute element-wise "
               "math, sum/mean/prod, cumsum/cumprod, matmul, indexing and torch.fft); compute it on the numpy cpu "
               "device")


def _last(v, a, b):
    """Elements a..b-1 along a view's last dim."""
    return Strided(v.buf, (*v.shape[:-1], b - a), v.strides, v.offset + a * v.strides[-1], v.dtype)


def _rows(v):
    """A complex view's rows along its last dim as real rows: (..., 2, n)."""
    if not v.shape:
        v = Strided(v.buf, (1,), (1,), v.offset, v.dtype)
    st = tuple(2 * s for s in v.strides)
    return Strided(v.buf, (*v.shape[:-1], 2, v.shape[-1]), (*st[:-1], 1, st[-1]), 2 * v.offset, COMPLEX[v.dtype])


class ComplexParts:
    """The primitives of `backends/base.py` that take a complex view, over the real ones of `real` (an object with
    the backend's real reduce, scan, matmul, take, put, sort, arange, random and ewise); `empty(numel, dtype)`
    allocates temporaries; `cewise` is the backend's complex element-wise kernel. Each routes a real call to `real`
    itself."""

    def __init__(self, real, empty, name, cewise):
        self.real, self.empty, self.name, self.cewise = real, empty, name, cewise

    def _temp(self, shape, dtype):
        return Strided(self.empty(numel(shape), dtype), tuple(shape), contiguous_strides(shape), 0, dtype)

    def reduce(self, op, out, inp):
        if inp.dtype not in COMPLEX:
            return self.real.reduce(op, out, inp)
        if op == "prod":
            return self._prod(out, inp)
        if op in ("any", "all"):   # of the elements' truth: a part nonzero (or NaN)
            nz = self._temp(inp.shape, "bool")
            self.cewise("ne", nz, [inp, 0], inp.dtype)
            return self.real.reduce(op, out, nz)
        if op != "sum":
            raise unsupported(op, self.name)
        ro = len(out.shape)  # the parts' dim of 2 goes between the kept and the reduced dims
        st = tuple(2 * s for s in inp.strides)
        fin = Strided(inp.buf, (*inp.shape[:ro], 2, *inp.shape[ro:]), (*st[:ro], 1, *st[ro:]), 2 * inp.offset,
                      COMPLEX[inp.dtype])
        self.real.reduce("sum", parts(out), fin)

    def _prod(self, out, inp):
        """The products over inp's trailing dims: a contiguous copy, then halves multiplied pairwise (log2 steps)."""
        rows, n = numel(out.shape), numel(inp.shape[len(out.shape):])
        if n == 0:
            return self.cewise("copy", out, [1], out.dtype)
        t = self._temp((rows, n), inp.dtype)
        self.cewise("copy", Strided(t.buf, tuple(inp.shape), contiguous_strides(inp.shape), 0, inp.dtype), [inp],
                    inp.dtype)
        while n > 1:   # x[i] *= x[n - h + i] for i < h: the middle one of an odd n stays
            h = n // 2
            head = Strided(t.buf, (rows, h), t.strides, 0, t.dtype)
            self.cewise("mul", head, [head, Strided(t.buf, (rows, h), t.strides, n - h, t.dtype)], t.dtype)
            n -= h
        self.cewise("copy", out, [Strided(t.buf, tuple(out.shape), tuple(t.strides[0] * s for s in
                                                                              contiguous_strides(out.shape)), 0,
                                          t.dtype)], out.dtype)

    def scan(self, op, out, inp, out_idx=None):
        if inp.dtype not in COMPLEX:
            return self.real.scan(op, out, inp, out_idx)
        if op == "cumprod":
            return self._cumprod(out, inp)
        if op != "cumsum":
            raise unsupported(op, self.name)
        self.real.scan("cumsum", _rows(out), _rows(inp))

    def _cumprod(self, out, inp):
        """Products along the last dim by doubling (Hillis-Steele): x[i] * x[i - d] for d = 1, 2, 4, ..., between
        two buffers, log2(n) complex products."""
        n = inp.shape[-1] if inp.shape else 1
        self.cewise("copy", out, [inp], out.dtype)
        if n < 2:
            return
        src, dst, d = out, self._temp(out.shape, out.dtype), 1
        while d < n:
            self.cewise("copy", _last(dst, 0, d), [_last(src, 0, d)], out.dtype)
            self.cewise("mul", _last(dst, d, n), [_last(src, d, n), _last(src, 0, n - d)], out.dtype)
            src, dst, d = dst, src, 2 * d
        if src is not out:
            self.cewise("copy", out, [src], out.dtype)

    def matmul(self, out, a, b):
        if out.dtype not in COMPLEX:
            return self.real.matmul(out, a, b)
        (ar, ai), (br, bi), (o_re, o_im) = split(a), split(b), split(out)
        dt = COMPLEX[out.dtype]
        tmp = self._temp(out.shape, dt)
        for o, first, second, sign in ((o_re, (ar, br), (ai, bi), "sub"), (o_im, (ar, bi), (ai, br), "add")):
            terms = [t for t in (first, second) if t[0] is not None and t[1] is not None]
            if terms:
                self.real.matmul(o, *terms[0])
            else:
                self.real.ewise("copy", o, [0.0], dt)
            if len(terms) == 2:
                self.real.matmul(tmp, *terms[1])
                self.real.ewise(sign, o, [o, tmp], dt)

    def _pair_index(self, idx):
        """idx (flat complex offsets) as the offsets of the real parts: 2 * idx, int64, contiguous."""
        i2 = self._temp(idx.shape, "int64")
        self.real.ewise("mul", i2, [idx, 2], "int64")
        return i2

    def take(self, out, src_buf, src_dtype, idx):
        if src_dtype not in COMPLEX:
            return self.real.take(out, src_buf, src_dtype, idx)
        i2 = self._pair_index(idx)
        self.real.take(parts(out, 0), src_buf, COMPLEX[src_dtype], i2)
        self.real.ewise("add", i2, [i2, 1], "int64")
        self.real.take(parts(out, 1), src_buf, COMPLEX[src_dtype], i2)

    def put(self, dst_buf, dst_dtype, idx, values, accumulate):
        if dst_dtype not in COMPLEX:
            return self.real.put(dst_buf, dst_dtype, idx, values, accumulate)
        if isinstance(values, Strided):
            re, im = split(values)
        else:
            re, im = complex(values).real, complex(values).imag
        i2 = self._pair_index(idx)
        self.real.put(dst_buf, COMPLEX[dst_dtype], i2, re, accumulate)
        self.real.ewise("add", i2, [i2, 1], "int64")
        if im is not None or not accumulate:
            self.real.put(dst_buf, COMPLEX[dst_dtype], i2, 0.0 if im is None else im, accumulate)

    def sort(self, out_values, out_indices, inp, descending, stable):
        if inp.dtype in COMPLEX:
            raise RuntimeError(f"Sort does not support complex dtypes on {self.name}")
        return self.real.sort(out_values, out_indices, inp, descending, stable)

    def arange(self, out, start, step):
        if out.dtype in COMPLEX:
            raise unsupported("arange", self.name)
        return self.real.arange(out, start, step)

    def random(self, out, kind, seed, offset):
        if out.dtype in COMPLEX:
            raise unsupported(f"random ({kind})", self.name)
        return self.real.random(out, kind, seed, offset)
