"""The window functions of the top-level namespace (torch.hann_window, ...), composed as PyTorch's
TensorFactories.cpp composes them: arange, scale, cos / i0; `periodic` computes window_length + 1 points and
drops the last. torch.signal.windows (scipy's names) is `webtorch/signal/windows.py`."""
import math

from .. import _dtype
from .._layout import strided
from ._creation import arange, empty, ones
from .registry import register
from .shape import cat


def _checks(name, window_length, dtype, layout):
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    if layout is not None and layout is not strided:
        raise RuntimeError(f"{name} is not implemented for sparse types, got: {layout}")
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")


def _window(name, body, window_length, periodic, dtype, layout, device, requires_grad):
    """body(points in dtype, their count) over arange(window_length (+ 1 when periodic)), PyTorch's edge cases."""
    dtype = dtype or _dtype.get_default_dtype()
    _checks(name, window_length, dtype, layout)
    if window_length == 0:
        return empty(0, dtype=dtype, device=device, requires_grad=requires_grad)
    if window_length == 1:
        return ones(1, dtype=dtype, device=device, requires_grad=requires_grad)
    n = window_length + 1 if periodic else window_length
    w = body(arange(n, dtype=dtype, device=device), n)
    w = w[:n - 1] if periodic else w
    return w.requires_grad_() if requires_grad else w


@register(method=False)
def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   pin_memory=False, requires_grad=False):
    return _window("hamming_window", lambda k, n: (k * (2 * math.pi / (n - 1))).cos() * -beta + alpha,
                   window_length, periodic, dtype, layout, device, requires_grad)


@register(method=False)
def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                requires_grad=False):
    return _window("hann_window", lambda k, n: (k * (2 * math.pi / (n - 1))).cos() * -0.5 + 0.5,
                   window_length, periodic, dtype, layout, device, requires_grad)


def _blackman(k, n):
    k = k * (math.pi / (n - 1))
    return (k * 4).cos() * 0.08 - (k * 2).cos() * 0.5 + 0.42


@register(method=False)
def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    return _window("blackman_window", _blackman, window_length, periodic, dtype, layout, device, requires_grad)


def _bartlett(k, n):
    k = k * (2.0 / (n - 1))
    half = ((n - 1) >> 1) + 1  # the second half falls: 2 - k
    return cat([k[:half], 2 - k[half:]])


@register(method=False)
def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    return _window("bartlett_window", _bartlett, window_length, periodic, dtype, layout, device, requires_grad)


@register(method=False)
def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  pin_memory=False, requires_grad=False):
    def body(k, n):
        alpha = (n - 1) / 2.0
        return (((1 - ((k - alpha) / alpha) ** 2).abs().sqrt() * beta).i0() /
                k.new_full((), beta).i0())
    return _window("kaiser_window", body, window_length, periodic, dtype, layout, device, requires_grad)
