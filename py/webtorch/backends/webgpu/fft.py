"""torch.fft's primitive on WebGPU (`Backend.fft`): the unnormalized complex64 transform along the last dim.

Power-of-two sizes, with twiddles exp(-2 pi i t / M) from a float32 table computed in double on the host once per
size (a constant, like cuFFT's; the inverse conjugates them). On GPUs:
* rows of up to 2048 points: one dispatch for all rows, a row per workgroup, radix-2 Stockham passes in workgroup
  memory (shaders/fft_local.wgsl);
* up to 2048^2 points: the four-step FFT, n = n1 * n2: n2 transforms of n1 points down the columns, each output
  multiplied by its twiddle, then n1 transforms of n2 points along the rows, written transposed: two dispatches;
* longer: one radix-4 Stockham pass per dispatch (shaders/fft_pass.wgsl; a radix-2 one first where log2(n) is odd),
  ping-ponging between two buffers.
On CPU adapters such as lavapipe, where a workgroup barrier costs more than a pass over the data, every size takes
the radix-4 passes (measured there: about as fast as a row per invocation, and faster than a row per workgroup).
Other sizes: Bluestein's chirp-z transform, a cyclic convolution of power-of-two size m >= 2n - 1 (two transforms
of size m and three element-wise products, on the device; the chirp and its kernel's transform cached per size).
"""
import math
from array import array

from ..._geometry import contiguous_strides, numel
from ..base import Strided
from .codegen import fill

ROW_MAX = 2048     # points of a row transformed in one kernel (16 KiB of vec2<f32>: WebGPU's default workgroup memory)


def _pow2(n):
    return n & (n - 1) == 0


class FFT:
    def __init__(self, k, cx):
        self.k, self.cx = k, cx    # the backend's plumbing; its complex element-wise kernels (Bluestein's products)
        self._tw = {}              # m -> twiddle table exp(-2 pi i t / m), t < m (GPUBuffer of f32 pairs)
        self._chirps = {}          # (n, inverse) -> (chirp view (n,), its kernel's transform / m view (m,))
        self.passes_only = k.is_cpu_adapter   # CPU adapters: radix-4 passes at every size

    def __call__(self, out, inp, inverse):
        n = inp.shape[-1]
        rows = numel(out.shape) // n
        x = self._contiguous(inp)
        if n == 1:
            self.cx.ewise("copy", out, [x], "complex64")
        elif _pow2(n):
            self._pow2(out.buf, out.offset, x.buf, x.offset, rows, n, inverse)
        else:
            self._bluestein(out, x, rows, n, inverse)

    def _contiguous(self, v):
        if tuple(v.strides) == contiguous_strides(v.shape):
            return v
        c = self._empty(tuple(v.shape))
        self.cx.ewise("copy", c, [v], "complex64")
        return c

    def _empty(self, shape):
        return Strided(self.k.empty(numel(shape), "complex64"), shape, contiguous_strides(shape), 0, "complex64")

    def _twiddles(self, m):
        t = self._tw.get(m)
        if t is None:
            vals = array("f")
            for j in range(m):
                a = -2.0 * math.pi * j / m
                vals.extend((math.cos(a), math.sin(a)))
            t = self._tw[m] = self.k.from_flat(vals, "float32")
        return t

    def _pow2(self, dst, dst_off, src, src_off, rows, n, inverse):
        """dst (a buffer other than src) from complex element dst_off on = the transforms of `rows` contiguous rows of n
        points (a power of two) of src from src_off."""
        if self.passes_only or n > ROW_MAX ** 2:
            return self._passes(dst, dst_off, src, src_off, rows, n, inverse)
        if n <= ROW_MAX:
            geo = (rows, 1, (src_off, n, 0, 1), (dst_off, n, 0, 1))
            return self._rows(dst, src, geo, n, self._twiddles(n), 1, False, inverse)
        n1 = 1 << ((n.bit_length() - 1) // 2)
        n2, tw = n // n1, self._twiddles(n)
        tmp = self.k.empty(rows * n, "complex64")
        # x[n2 * j1 + j2] -> columns j2: tmp[n2 * k1 + j2] = W_n^(j2 k1) sum_j1 x[n2 * j1 + j2] W_n1^(j1 k1)
        self._rows(tmp, src, (rows * n2, n2, (src_off, n, 1, n2), (0, n, 1, n2)), n1, tw, n2, True, inverse)
        # rows k1 of tmp -> X[k1 + n1 * k2] = sum_j2 tmp[n2 * k1 + j2] W_n2^(j2 k2)
        self._rows(dst, tmp, (rows * n1, n1, (0, n, n2, 1), (dst_off, n, 1, n1)), n2, tw, n1, False, inverse)

    def _rows(self, dst, src, geo, n, tw, g, twiddle, inverse):
        """The n-point transforms of rows geo[0] (row r = (b, q) = (r // Q, r % Q), Q = geo[1]; geo[2] and geo[3]:
        src's and dst's (offset, batch, row and element strides)), reading twiddle t of n as tw[t * g]; with
        `twiddle`, output k of row q multiplied by tw[q * k]."""
        wg = min(n // 2, 256)
        pipe = self.k.kernel(("fft_local", n, inverse, twiddle), lambda: fill(
            "fft_local.wgsl", N=n, H=n // 2, WG=wg, PER=n // 2 // wg, SIGN="-1.0" if inverse else "1.0",
            TWIDDLE="true" if twiddle else "false"))
        self.k.run(pipe, [src, dst, tw], [geo[0], geo[1], g, *geo[2], *geo[3]], geo[0])

    def _passes(self, dst, dst_off, src, src_off, rows, n, inverse):
        """One Stockham pass per dispatch: radix 4, a radix-2 pass first where log2(n) is odd."""
        sign = "-1.0" if inverse else "1.0"
        tw, lg = self._twiddles(n), n.bit_length() - 1
        radices = [2] * (lg % 2) + [4] * (lg // 2)
        tmp = self.k.empty(rows * n, "complex64")
        cur, cur_off, ns = src, src_off, 1
        for p, r in enumerate(radices):   # the last pass writes dst
            pipe = self.k.kernel(("fft_pass", r, inverse), lambda r=r: fill("fft_pass.wgsl", R=r, SIGN=sign))
            to, to_off = (dst, dst_off) if (len(radices) - 1 - p) % 2 == 0 else (tmp, 0)
            q = n // r
            self.k.run(pipe, [cur, to, tw], [rows * q, q.bit_length() - 1, ns, n // (r * ns), 2 * cur_off,
                                             2 * to_off], -(-rows * q // 256))
            cur, cur_off, ns = to, to_off, ns * r

    def _chirp(self, n, m, inverse):
        """c_j = exp(-+ i pi j^2 / n) (j < n; j^2 taken mod 2n, exactly), and the transform of the convolution
        kernel b (b_t = b_{m - t} = conj(c_t)) divided by m."""
        key = (n, inverse)
        if key not in self._chirps:
            sign = 1.0 if inverse else -1.0
            c = [complex(math.cos(a), sign * math.sin(a)) for a in (math.pi * (j * j % (2 * n)) / n for j in range(n))]
            b = [0j] * m
            for t in range(n):
                b[t] = b[(m - t) % m] = c[t].conjugate()
            chirp, kern = self._upload(c), self._upload(b)
            ft = self._empty((m,))
            self._pow2(ft.buf, 0, kern.buf, 0, 1, m, False)
            self.cx.ewise("mul", ft, [ft, 1.0 / m], "complex64")
            self._chirps[key] = (chirp, ft)
        return self._chirps[key]

    def _upload(self, values):
        flat = array("f")
        for z in values:
            flat.extend((z.real, z.imag))
        return Strided(self.k.from_flat(flat, "float32"), (len(values),), (1,), 0, "complex64")

    def _bluestein(self, out, x, rows, n, inverse):
        """X_k = c_k sum_j (x_j c_j) conj(c_{k - j}): the sum a cyclic convolution of size m, by transforms."""
        m = 1 << (2 * n - 2).bit_length()
        chirp, kern = self._chirp(n, m, inverse)
        a, f = self._empty((rows, m)), self._empty((rows, m))
        head = Strided(a.buf, (rows, n), (m, 1), 0, "complex64")
        self.cx.ewise("copy", Strided(a.buf, (rows, m - n), (m, 1), n, "complex64"), [0.0], "complex64")
        self.cx.ewise("mul", head, [Strided(x.buf, (rows, n), (n, 1), x.offset, "complex64"), _rows_of(chirp, rows)],
                      "complex64")
        self._pow2(f.buf, 0, a.buf, 0, rows, m, False)
        self.cx.ewise("mul", f, [f, _rows_of(kern, rows)], "complex64")
        self._pow2(a.buf, 0, f.buf, 0, rows, m, True)
        self.cx.ewise("mul", Strided(out.buf, (rows, n), (n, 1), out.offset, "complex64"),
                      [head, _rows_of(chirp, rows)], "complex64")


def _rows_of(v, rows):
    """A 1-d view repeated as `rows` rows (stride 0)."""
    return Strided(v.buf, (rows, v.shape[0]), (0, 1), v.offset, v.dtype)
