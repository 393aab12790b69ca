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
import warnings

from . import _dtype
from ._tensor import Tensor
from .ops import _prims, shape as _shape
from .ops._common import composite_node, formula_node, name_of, recording, wrap_dim
from .ops._creation import arange
from .ops.complex_ops import conj, real, view_as_real
from .ops.registry import register

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


# ---- short-time Fourier transforms (torch.stft / torch.istft, Tensor.stft / istft) ------------------------
def _padded_window(window, win_length, n_fft, like):
    """The window (ones by default) centred in n_fft points."""
    if window is None:
        window = like.new_ones((win_length,))
    elif window.dim() != 1 or window.shape[0] != win_length:
        raise RuntimeError(f"stft: expected a 1D window tensor of size equal to win_length={win_length}, but got "
                           f"window with size {list(window.shape)}")
    left = (n_fft - win_length) // 2
    if left or n_fft - win_length - left:
        window = _shape.cat([window.new_zeros((left,)), window, window.new_zeros((n_fft - win_length - left,))], 0)
    return window


def _pad_signal(x, p, mode):
    """x padded by p at both ends of its last dim, as nn.functional.pad's reflect / constant / replicate / circular."""
    n = x.shape[-1]
    if mode == "reflect":
        if p >= n:
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, but "
                               f"got: padding ({p}, {p}) at dimension {x.dim() - 1} of input {list(x.shape)}")
        left, right = x.narrow(-1, 1, p).flip(-1), x.narrow(-1, n - p - 1, p).flip(-1)
    elif mode == "constant":
        left = right = x.new_zeros(tuple(x.shape[:-1]) + (p,))
    elif mode == "replicate":
        left, right = x.narrow(-1, 0, 1).expand(*x.shape[:-1], p), x.narrow(-1, n - 1, 1).expand(*x.shape[:-1], p)
    elif mode == "circular":
        left, right = x.narrow(-1, n - p, p), x.narrow(-1, 0, p)
    else:
        raise NotImplementedError(f"stft: pad_mode {mode!r} is not supported")
    return _shape.cat([left, x, right], -1)


def _frames(n_fft, hop_length, win_length, window, advice):
    """(hop_length, win_length) with their defaults; PyTorch's warning when no window is given."""
    if window is None:
        sep = "," if advice.startswith("which") else "."
        warnings.warn(f"A window was not provided. A rectangular window will be applied{sep}{advice}To suppress "
                      "this warning and use a rectangular window, explicitly set `window=torch.ones(n_fft, "
                      "device=<device>)`.", UserWarning, stacklevel=3)
    return n_fft // 4 if hop_length is None else hop_length, n_fft if win_length is None else win_length


def _stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    if return_complex is None and not input.dtype.is_complex and (window is None or not window.dtype.is_complex):
        raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                           "require that return_complex=True in a future PyTorch release.")
    hop, win_length = _frames(n_fft, hop_length, win_length, window, "which is known to cause spectral leakage. Other "
                              "windows such as torch.hann_window or torch.hamming_window are recommended to reduce "
                              "spectral leakage.")
    if return_complex is False:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                      "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
                      "still call torch.view_as_real on the complex output to recover the old return format.",
                      UserWarning, stacklevel=2)
    if not 0 < win_length <= n_fft or hop <= 0 or input.dim() not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D input, 0 < win_length <= n_fft and hop_length > 0, but got "
                           f"input of {input.dim()} dims, n_fft={n_fft}, hop_length={hop}, win_length={win_length}")
    x = input if input.dim() == 2 else input.unsqueeze(0)
    if center:
        x = _pad_signal(x, n_fft // 2, pad_mode)
    if x.shape[-1] < n_fft:
        raise RuntimeError(f"stft: expected 0 < n_fft <= {x.shape[-1]}, but got n_fft={n_fft}")
    frames = x.unfold(-1, n_fft, hop) * _padded_window(window, win_length, n_fft, x)
    complex_in = input.dtype.is_complex or (window is not None and window.dtype.is_complex)
    one = not complex_in if onesided is None else onesided
    norm = "ortho" if normalized else "backward"
    spec = (rfft(frames, norm=norm) if one else fft(frames, norm=norm)).transpose(-1, -2)
    if input.dim() == 1:
        spec = spec.squeeze(0)
    return spec if return_complex is not False else view_as_real(spec)


def _istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    hop, win_length = _frames(n_fft, hop_length, win_length, window, "Please provide the same window used by stft "
                              "to make the inversion lossless.")
    spec = input if input.dim() == 3 else input.unsqueeze(0)
    one = spec.shape[-2] != n_fft if onesided is None else onesided
    norm = "ortho" if normalized else "backward"
    if not return_complex and not one:  # PyTorch's: a real result from the one-sided half of a two-sided input
        spec = spec.narrow(-2, 0, n_fft // 2 + 1)
    frames = spec.transpose(-1, -2)
    frames = ifft(frames, n=n_fft, norm=norm) if return_complex else irfft(frames, n=n_fft, norm=norm)
    w = _padded_window(window, win_length, n_fft, frames.real if frames.is_complex() else frames)
    frames = frames * w
    n_frames = frames.shape[-2]
    total = n_fft + hop * (n_frames - 1)
    idx = (arange(n_frames, device=frames.device) * hop).unsqueeze(-1) + arange(n_fft, device=frames.device)
    idx = idx.reshape(-1)
    y = frames.new_zeros((frames.shape[0], total)).index_add(-1, idx, frames.reshape(frames.shape[0], -1))
    env = w.new_zeros((total,)).index_add(0, idx, (w * w).expand(n_frames, n_fft).reshape(-1))
    start = n_fft // 2 if center else 0
    end = total - (n_fft // 2 if center else 0) if length is None else min(start + length, total)
    y, env = y.narrow(-1, start, end - start), env.narrow(-1, start, end - start)
    if bool((env.abs() < 1e-11).any()):
        raise RuntimeError("istft: window overlap add min: the window's squares sum to 0 somewhere (nonzero overlap "
                           "add is required)")
    y = y / env
    if length is not None and y.shape[-1] < length:
        y = _shape.cat([y, y.new_zeros((y.shape[0], length - y.shape[-1]))], -1)
    return y if input.dim() == 3 else y.squeeze(0)


register(_stft, "stft")  # torch.stft and Tensor.stft, torch.istft and Tensor.istft (no torch.fft names)
register(_istft, "istft")
