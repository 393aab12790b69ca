"""Complex tensors on the pure-Python cpu backend (Pyodide's page without numpy): a complex64 (complex128) buf is an
array of its interleaved (real, imaginary) float32 (float64) parts, viewed through `backends/complex_parts.py`.

Element-wise ops compute Python complex numbers with the records' "c" py forms (cmath's, backends/elementwise.py)
and round each part to the result's dtype; sum, cumsum, matmul and indexing run the real kernels on the parts, prod
pairwise complex products; the FFT is radix-2 (Bluestein's chirp-z for other sizes) on Python complex numbers, in
double, rounded once.
"""
import cmath
import math

from ..._geometry import numel
from ..base import Strided
from ..complex_parts import COMPLEX, parts, unsupported
from ..elementwise import RECORDS, form, same

NAME = "cpu (pure Python)"


class PureComplex:
    """The complex element-wise kernels and FFT of a PureBackend `b` (its _read, _write, normalize, cast)."""

    def __init__(self, b, normalize, cast):
        self.b, self.normalize, self.cast = b, normalize, cast

    def read(self, view):
        """The values of a view as Python numbers: complex for a complex view, float / int for a real one."""
        if view.dtype in COMPLEX:
            return list(map(complex, self.b._read(parts(view, 0)), self.b._read(parts(view, 1))))
        return self.b._read(view)

    def write(self, out, vals):
        """Complex (or real) values into out: each part rounded to its dtype; into a real out, the real parts."""
        if out.dtype in COMPLEX:
            dt = COMPLEX[out.dtype]
            for k, get in enumerate((_real, _imag)):
                self.b._write(parts(out, k), self.normalize(list(map(get, vals)), dt))
        elif out.dtype == "bool":
            self.b._write(out, [1 if v else 0 for v in vals])
        else:
            self.b._write(out, self.cast(self.normalize(list(map(_real, vals)), "float64"), "float64", out.dtype))

    def ewise(self, op, out, inputs, cdtype):
        n = numel(out.shape)
        if n == 0:
            return
        rec = RECORDS.get(op)
        f = form(rec.py, "complex64")[0] if rec is not None and rec.py else None
        if f is None:
            raise unsupported(op, NAME)
        args = [self.read(x) if isinstance(x, Strided) else [x if op == "where" and j == 0 else complex(x)] * n
                for j, x in enumerate(inputs)]
        self.write(out, args[0] if f is same else list(map(f, *args)))

    def fft(self, out, inp, inverse):
        n = inp.shape[-1]
        vals = self.read(inp)
        res = []
        for r in range(0, len(vals), n):
            res += _dft(vals[r:r + n], inverse)
        self.write(out, res)


def _real(v):
    return v.real


def _imag(v):
    return v.imag


def _twiddles(n, inverse):
    s = 1.0 if inverse else -1.0
    return [complex(math.cos(2 * math.pi * k / n), s * math.sin(2 * math.pi * k / n)) for k in range(n // 2)]


def _radix2(x, inverse):
    """The transform of x (a power-of-two length): iterative, in place after a bit-reversed copy."""
    n = len(x)
    bits = n.bit_length() - 1
    a = [x[int(f"{i:0{bits}b}"[::-1], 2) if bits else 0] for i in range(n)]
    w = _twiddles(n, inverse)
    half = 1
    while half < n:
        step = n // (2 * half)
        for k in range(half):
            t = w[k * step]
            for j in range(k, n, 2 * half):
                u, v = a[j], a[j + half] * t
                a[j], a[j + half] = u + v, u - v
        half *= 2
    return a


def _dft(x, inverse):
    """sum_j x_j exp(-+2 pi i jk / n), unnormalized (Bluestein's convolution for a size not a power of two)."""
    n = len(x)
    if n & (n - 1) == 0:
        return _radix2(x, inverse)
    s = 1.0 if inverse else -1.0
    c = [cmath.exp(complex(0, s * math.pi * (j * j % (2 * n)) / n)) for j in range(n)]
    m = 1 << (2 * n - 2).bit_length()
    a = [x[j] * c[j] for j in range(n)] + [0j] * (m - n)
    b = [0j] * m
    for t in range(n):
        b[t] = b[(m - t) % m] = c[t].conjugate()
    conv = _radix2([u * v for u, v in zip(_radix2(a, False), _radix2(b, False), strict=True)], True)
    return [conv[k] * c[k] / m for k in range(n)]
