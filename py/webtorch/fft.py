"""torch.fft: discrete Fourier transforms, every one built on one backend primitive, the unnormalized
complex-to-complex transform along the last dimension (`Backend.fft`; numpy.fft on the cpu device).

fftn transforms one dim after another; a real input is promoted to complex (rfft keeps the first n//2 + 1
outputs); a one-sided (Hermitian) input is extended to its full spectrum (irfft, hfft: the real part of the
inverse transform, which ignores the imaginary parts of the zero and Nyquist terms as PyTorch's c2r does).
`norm` scales by 1 ("backward" on the forward transform), 1/n ("forward") or 1/sqrt(n) ("ortho").
The gradient of the primitive is the primitive in the other direction (the conjugate transpose, PyTorch's
convention), a row of autograd/derivatives.py; the other ops differentiate through their composition.
"""
import math

from . import _dtype
from ._tensor import Tensor
from .ops import _prims, shape as _shape
from .ops._common import composite_node, formula_node, name_of, recording, wrap_dim
from .ops._creation import arange
from .ops.complex_ops import conj, real

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = (None, "backward", "forward", "ortho")


def _c2c_kernel(x, inverse):
    return _prims.fft(x, inverse)


_C2C = formula_node("FftC2CBackward0", _c2c_kernel, ("x", "inverse"))


def _fft_c2c(x, inverse):
    return _C2C.apply(x, inverse) if recording(x) else _c2c_kernel(x, inverse)


Tensor._fft_c2c = _fft_c2c  # for autograd/derivatives.py


def _last(x, d, inverse):
    """The unnormalized transform of x along dim d."""
    if d == x.dim() - 1:
        return _fft_c2c(x, inverse)
    return _fft_c2c(x.movedim(d, -1), inverse).movedim(-1, d)


def _scale(x, norm, n, inverse):
    if norm not in _NORMS:
        raise RuntimeError(f"Invalid normalization mode: \"{norm}\"")
    by = {None: inverse, "backward": inverse, "forward": not inverse}[norm] if norm != "ortho" else None
    if by is None:
        return x * (1.0 / math.sqrt(n))
    return x * (1.0 / n) if by else x


def _complex_input(x, fn):
    if not isinstance(x, Tensor):
        raise TypeError(f"fft_{fn}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    if x.dtype in (_dtype.float16, _dtype.complex32, _dtype.bfloat16):
        raise RuntimeError(f"Unsupported dtype {'Half' if x.dtype is _dtype.float16 else x.dtype}")
    if x.dtype.is_complex:
        return x
    return x.to(x.dtype.to_complex() if x.dtype.is_floating_point else _dtype.get_default_dtype().to_complex())


def _resize(x, d, n):
    """x along dim d cut or zero-padded to n (PyTorch's n=/s=)."""
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    m = x.shape[d]
    if n < m:
        return x.narrow(d, 0, n)
    if n > m:
        pad = list(x.shape)
        pad[d] = n - m
        return _shape.cat([x, x.new_zeros(pad)], d)
    return x


def _dims(x, s, dim, default_all=True):
    """(dims, sizes) of an n-dimensional transform, with PyTorch's checks."""
    if dim is None:
        if s is None:
            dims = list(range(x.dim())) if default_all else [x.dim() - 2, x.dim() - 1]
        else:
            dims = list(range(x.dim() - len(s), x.dim()))
    else:
        dims = [_wrap(d, x) for d in ((dim,) if isinstance(dim, int) else dim)]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    sizes = [x.shape[d] if s is None or s[i] == -1 else s[i] for i, d in enumerate(dims)]
    return dims, sizes


def _wrap(d, x):
    if x.dim() == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    return wrap_dim(d, x.dim())


def _out(r, out):
    return r if out is None else out.copy_(r)


def _c2c(x, dims, sizes, norm, inverse):
    for d, n in zip(dims, sizes):
        x = _scale(_last(_resize(x, d, n), d, inverse), norm, n, inverse)
    return x


def _r2c(x, dims, sizes, norm, onesided_inverse):
    """rfftn: a real x transformed over dims, the last one keeping n//2 + 1 terms (the inverse transform for
    ihfftn, whose result is then conjugated)."""
    if x.dtype.is_complex:
        raise RuntimeError(f"{'ihfft' if onesided_inverse else 'rfft'} expects a real input tensor, but got "
                           f"{name_of(x.dtype)}")
    x = _complex_input(x, "rfft")
    d, n = dims[-1], sizes[-1]
    x = _scale(_last(_resize(x, d, n), d, onesided_inverse), norm, n, onesided_inverse).narrow(d, 0, n // 2 + 1)
    return _c2c(x, dims[:-1], sizes[:-1], norm, onesided_inverse)


def _c2r(x, dims, sizes, norm, last_n):
    """irfftn: the inverse over dims[:-1], then the last dim's one-sided spectrum extended to its Hermitian
    whole (n = last_n, default 2 * (m - 1)) and inverse-transformed, keeping the real part."""
    x = _c2c(_complex_input(x, "irfft"), dims[:-1], sizes[:-1], norm, True)
    d = dims[-1]
    n = last_n if last_n is not None else 2 * (x.shape[d] - 1)
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    half = _resize(x, d, n // 2 + 1)
    rest = conj(half.narrow(d, 1, n - n // 2 - 1).flip(d))
    full = _shape.cat([half, rest], d)
    return real(_scale(_last(full, d, True), norm, n, True))


_FLIP = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _flip(norm):
    if norm not in _NORMS:
        raise RuntimeError(f"Invalid normalization mode: \"{norm}\"")
    return _FLIP[norm]


def _r2c_full(x, dims, sizes, norm, inverse):  # fft of a real input: the full spectrum
    return _c2c(_complex_input(x, "fft"), dims, sizes, norm, inverse)


def _ihfftn(x, dims, sizes, norm):
    return conj(_r2c(x, dims, sizes, _flip(norm), False))


# the ops, each PyTorch's node over its composition (a transform of several dims of a real input ends, in
# PyTorch, with a complex-to-complex step)
_R2C = composite_node("FftR2CBackward0", _r2c)
_C2R = composite_node("FftC2RBackward0", _c2r)
_C2CN = composite_node("FftC2CBackward0", _c2c)
_R2CFull = composite_node("FftR2CBackward0", _r2c_full)
_R2CFullN = composite_node("FftC2CBackward0", _r2c_full)
_IHFFTN = composite_node("FftC2CBackward0", _ihfftn)


def _fft_any(x, dims, sizes, norm, inverse, one_dim=False):
    """fft / ifft (one_dim) or fftn / ifftn of x: a real x of fft / ifft shows PyTorch's r2c node, of fftn its c2c."""
    if x.dtype.is_complex:
        return _C2CN.call(x, dims, sizes, norm, inverse)
    return (_R2CFull if one_dim else _R2CFullN).call(x, dims, sizes, norm, inverse)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    _complex_input(input, "fft")
    d = _wrap(dim, input)
    return _out(_fft_any(input, [d], [input.shape[d] if n is None else n], norm, False, True), out)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    _complex_input(input, "ifft")
    d = _wrap(dim, input)
    return _out(_fft_any(input, [d], [input.shape[d] if n is None else n], norm, True, True), out)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    _complex_input(input, "fftn")
    return _out(_fft_any(input, *_dims(input, s, dim), norm, False), out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    _complex_input(input, "ifftn")
    return _out(_fft_any(input, *_dims(input, s, dim), norm, True), out)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return fftn(input, s, dim, norm, out=out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return ifftn(input, s, dim, norm, out=out)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    d = _wrap(dim, input)
    return _out(_R2C.call(input, [d], [input.shape[d] if n is None else n], norm, False), out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _out(_R2C.call(input, *_dims(input, s, dim), norm, False), out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return rfftn(input, s, dim, norm, out=out)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    d = _wrap(dim, input)
    return _out(_C2R.call(input, [d], [input.shape[d]], norm, n), out)


def _c2r_dims(input, s, dim):
    dims, sizes = _dims(input, s, dim)
    last = None if s is None else sizes[-1]
    sizes[-1] = input.shape[dims[-1]]
    return dims, sizes, last


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    dims, sizes, last = _c2r_dims(input, s, dim)
    return _out(_C2R.call(input, dims, sizes, norm, last), out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return irfftn(input, s, dim, norm, out=out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The FFT of a Hermitian signal given by its one-sided half: irfft of its conjugate, norm flipped."""
    d = _wrap(dim, input)
    return _out(_C2R.call(conj(_complex_input(input, "hfft")), [d], [input.shape[d]], _flip(norm), n), out)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    dims, sizes, last = _c2r_dims(input, s, dim)
    return _out(_C2R.call(conj(_complex_input(input, "hfftn")), dims, sizes, _flip(norm), last), out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return hfftn(input, s, dim, norm, out=out)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    d = _wrap(dim, input)
    return _out(_ihfftn(input, [d], [input.shape[d] if n is None else n], norm), out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    dims, sizes = _dims(input, s, dim)
    return _out(_IHFFTN.call(input, dims, sizes, norm) if len(dims) > 1 else _ihfftn(input, dims, sizes, norm), out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return ihfftn(input, s, dim, norm, out=out)


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)."""
    k = arange(n, dtype=dtype, device=device)
    r = _shape.cat([k.narrow(0, 0, (n + 1) // 2), k.narrow(0, 0, n // 2) - n // 2], 0) * (1.0 / (d * n))
    r = r.to(dtype or _dtype.get_default_dtype())
    return _out(r.requires_grad_(requires_grad), out)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    r = (arange(n // 2 + 1, dtype=dtype, device=device) * (1.0 / (d * n))).to(dtype or _dtype.get_default_dtype())
    return _out(r.requires_grad_(requires_grad), out)


def _shift(input, dim, by):
    dims = list(range(input.dim())) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    return input.roll([by(input.shape[d]) for d in dims], dims)


def fftshift(input, dim=None):
    return _shift(input, dim, lambda n: n // 2)


def ifftshift(input, dim=None):
    return _shift(input, dim, lambda n: (n + 1) // 2)
