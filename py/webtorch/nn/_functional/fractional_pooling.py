"""torch.nn.functional's fractional max pooling (Graham, arXiv:1412.6071), 2-D and 3-D with one implementation.

Each (sample, channel) plane draws one number u in [0, 1) per spatial dim (`_random_samples`, else
torch.rand's); the windows along a dim of n inputs, k wide, o outputs start at
int((i + u) * alpha) - int(u * alpha) with alpha = (n - k) / (o - 1), the last at n - k: ATen's
generate_intervals, in the input's float type. The windows are gathered and maxed (the first maximum
wins), so the gradient is the gather's: each output's gradient added at its index, as PyTorch's."""
import math
import struct

from ... import _dtype
from ...ops import _creation, shape as _shape
from ...ops._common import dispatching
from ._util import _ntuple

__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
           "fractional_max_pool3d_with_indices"]

_DIMS = {2: ("height", "width"), 3: ("time", "height", "width")}


def _f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _starts(u, n, k, o):
    """(planes, o) window starts along one dim for the planes' samples u (planes,)."""
    last = _creation.full((u.shape[0], 1), n - k, dtype=_dtype.int64, device=u.device)
    if o <= 1:
        return last[:, :o]
    alpha = _f32(_f32(n - k) / _f32(o - 1))
    i = _creation.arange(o - 1, dtype=u.dtype, device=u.device)
    u = u.unsqueeze(1)
    first = ((i + u) * alpha).trunc() - (u * alpha).trunc()
    return _shape.cat([first.to(_dtype.int64), last], 1)


def _along(v, d, n):
    """v's last dim laid along dim d of n dims (its leading dims kept in front)."""
    return v.reshape(tuple(v.shape[:-1]) + tuple(v.shape[-1] if j == d else 1 for j in range(n)))


def _check(input, n_sp, kernel, out, samples, name):
    if input.dim() not in (n_sp + 1, n_sp + 2):
        raise RuntimeError(f"{name}: Expected {n_sp + 1}D or {n_sp + 2}D tensor, but got: {list(input.shape)}")
    for d in range(input.dim() - n_sp - 1, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(f"{name}: Expected input to have non-zero size for non-batch dimensions, but got"
                               f"{list(input.shape)} with dimension {d} being empty.")
    for dim, k, o, n in zip(_DIMS[n_sp], kernel, out, input.shape[-n_sp:]):
        if o + k - 1 > n - (n_sp == 3):  # ATen's 3-D check is strict: the last window may not end at the border
            raise RuntimeError(f"{name}: pool {dim} {k} too large relative to input {dim} {n}")
    if samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.dim()}")
    if samples.shape[1] != input.shape[-n_sp - 1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != n_sp:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {n_sp}; got {samples.shape[2]}.")


def _sizes(input, n_sp, kernel_size, output_size, output_ratio):
    name = f"fractional_max_pool{n_sp}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if n_sp == 2 and len(output_ratio) > 2:  # PyTorch's len(): a float ratio raises TypeError there
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = tuple(output_ratio) if isinstance(output_ratio, (list, tuple)) else (output_ratio,) * n_sp
        output_size = [int(input.size(d - n_sp) * r) for d, r in enumerate(ratio)]
    kernel, out = (_ntuple(n_sp)(v) for v in (kernel_size, output_size))
    for what, v in (("kernel_size", kernel), ("output_size", out)):
        if len(v) != n_sp:
            raise RuntimeError(f"{name}: {what} must either be a single Int or tuple of Ints")
    return kernel, out


def _fractional_max_pool(input, n_sp, kernel_size, output_size, output_ratio, _random_samples):
    kernel, out = _sizes(input, n_sp, kernel_size, output_size, output_ratio)
    planes = input.size(-n_sp - 1)
    if _random_samples is None:
        n_batch = 1 if input.dim() == n_sp + 1 else input.size(0)
        _random_samples = _creation.rand(n_batch, planes, n_sp, dtype=input.dtype, device=input.device)
    _check(input, n_sp, kernel, out, _random_samples, "fractional_max_pool2d()" if n_sp == 2 else
           "fractional_max_pool3d_out()")
    batch = input.shape[:-n_sp - 1]
    P = math.prod(input.shape[:-n_sp])
    x = input.reshape(P, *input.shape[-n_sp:])
    u = _random_samples[:batch[0] if batch else 1].reshape(-1, n_sp)
    order = (1, 0) if n_sp == 2 else (0, 1, 2)  # ATen's sample order: (w, h) in 2-D, (t, h, w) in 3-D
    flat = _creation.zeros((P,) + (1,) * (2 * n_sp), dtype=_dtype.int64, device=input.device)
    for d in range(n_sp):
        start = _starts(u[:, order[d]], input.shape[d - n_sp], kernel[d], out[d])
        taps = _creation.arange(kernel[d], device=input.device)
        flat = flat * input.shape[d - n_sp] + _along(start, d, 2 * n_sp) + _along(taps, n_sp + d, 2 * n_sp)
    flat = flat.reshape(P, math.prod(out), math.prod(kernel))  # (planes, outputs, window)
    vals = x.reshape(P, math.prod(x.shape[1:])).gather(1, flat.reshape(P, flat.shape[1] * flat.shape[2]))
    vals = vals.reshape(flat.shape)
    best, arg = vals.max(-1)
    idx = flat.gather(-1, arg.unsqueeze(-1)).squeeze(-1)
    shape = tuple(batch) + (planes,) + tuple(out)
    return best.reshape(shape), idx.reshape(shape)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    return _fractional_max_pool(input, 2, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    return _fractional_max_pool(input, 3, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    out = _fractional_max_pool(input, 2, kernel_size, output_size, output_ratio, _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    out = _fractional_max_pool(input, 3, kernel_size, output_size, output_ratio, _random_samples)
    return out if return_indices else out[0]


dispatching(globals(), __all__)
