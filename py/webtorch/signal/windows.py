"""torch.signal.windows: scipy's window functions as PyTorch writes them (torch/signal/windows/windows.py),
composed of webtorch ops (linspace, exp, cos, i0), so they run on every device. `sym=False` gives the periodic
window (for spectral analysis)."""
import math

from .. import _dtype
from .._layout import strided
from ..ops._creation import arange, empty, linspace, ones, tensor
from ..ops.pointwise import minimum

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]


def _checks(name, M, dtype, layout):
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (_dtype.float32, _dtype.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")


def _points(name, M, start, step, dtype, layout, device, requires_grad, one=False):
    """(the window's points start + i step, None), or (the whole window, when M is 0 or, with `one`, 1)."""
    dtype = dtype or _dtype.get_default_dtype()
    _checks(name, M, dtype, layout)
    if M == 0:
        return None, empty(0, dtype=dtype, device=device, requires_grad=requires_grad)
    if M == 1 and one:
        return None, ones(1, dtype=dtype, device=device, requires_grad=requires_grad)
    return linspace(start, start + (M - 1) * step, M, dtype=dtype, device=device, requires_grad=requires_grad), None


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    k, w = _points("exponential", M, -center / tau, 1 / tau, dtype, layout, device, requires_grad)
    return w if k is None else (-k.abs()).exp()


def cosine(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    c = math.pi / (M + 1 if not sym and M > 1 else M) if M else 0.0
    k, w = _points("cosine", M, 0.5 * c, c, dtype, layout, device, requires_grad)
    return w if k is None else k.sin()


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    c = 1 / (std * math.sqrt(2))
    k, w = _points("gaussian", M, -(M if not sym and M > 1 else M - 1) / 2.0 * c, c, dtype, layout, device,
                   requires_grad)
    return w if k is None else (-(k ** 2)).exp()


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    _, w = _points("kaiser", min(M, 1), 0.0, 0.0, dtype, layout, device, requires_grad, one=True)
    if M <= 1:
        return w
    b = tensor(beta, dtype=w.dtype, device=device)  # beta in the window's dtype: the end is at most beta (no NaN)
    step = 2.0 * beta / (M if not sym else M - 1)
    end = minimum(b, tensor(-beta + (M - 1) * step, dtype=w.dtype, device=device)).item()
    k = linspace(-beta, end, M, dtype=w.dtype, device=device, requires_grad=requires_grad)
    return (b * b - k ** 2).sqrt().i0() / b.i0()


def general_cosine(M, *, a, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    c = 2 * math.pi / (M if not sym else M - 1) if M > 1 else 0.0
    k, w = _points("general_cosine", M, 0.0, c, dtype, layout, device, requires_grad, one=True)
    if k is None:
        return w
    if not isinstance(a, (list, tuple)) and not hasattr(a, "__iter__"):
        raise TypeError("Coefficients must be a list/tuple")
    if not len(a):
        raise ValueError("Coefficients cannot be empty")
    a_i = tensor([(-1) ** i * v for i, v in enumerate(a)], dtype=k.dtype, device=device, requires_grad=requires_grad)
    i = arange(a_i.shape[0], dtype=k.dtype, device=device)
    return (a_i.unsqueeze(-1) * (i.unsqueeze(-1) * k).cos()).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    k, w = _points("bartlett", M, -1.0, 2 / (M if not sym else M - 1) if M > 1 else 0.0, dtype, layout, device,
                   requires_grad, one=True)
    return w if k is None else 1 - k.abs()


def nuttall(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)
