"""torch.nn.functional's resampling: interpolate, upsample, pixel (un)shuffle."""
import math
import struct
import warnings

from ...ops._common import composite_node, dispatching
from ...ops._creation import tensor as _tensor
from ._util import _gather_dim, _idx
from .pooling import _adaptive_avg_pool, _apply_along

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle", "pixel_unshuffle",
           "channel_shuffle", "native_channel_shuffle"]


# ---- resampling ------------------------------------------------------------------------------
def _f32(x):
    """x rounded to float32 (PyTorch computes nearest-neighbour source indices in float)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _interp_sizes(input, size, scale_factor, recompute_scale_factor, mode):
    """(output sizes, per-dim scale factors passed to the kernel or None), as F.interpolate computes them."""
    n_sp = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    sfs = None
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != n_sp:
                raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input "
                                 f"with spatial dimensions of {list(input.shape[2:])} and output size of {size}. "
                                 "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                                 "(o1, o2, ...,oK) format.")
            if not all(isinstance(v, int) for v in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                                f"Tuple[int, int, int], but got size with types {[type(v) for v in size]}")
            out = [int(v) for v in size]
        else:
            out = [int(size)] * n_sp
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != n_sp:
                raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got "
                                 f"input with spatial dimensions of {list(input.shape[2:])} and scale_factor of shape "
                                 f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 "scale_factor in (s1, s2, ...,sK) format.")
            sfs = [float(f) for f in scale_factor]
        else:
            sfs = [float(scale_factor)] * n_sp
        out = [int(n * f) for n, f in zip(input.shape[2:], sfs)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute_scale_factor or mode == "area":
        sfs = None
    return out, sfs or [None] * n_sp


def _src_scale(n_in, n_out, sf, align_corners):
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / sf if sf is not None and sf > 0 else n_in / n_out


def _cubic1(x, A=-0.75):
    return ((A + 2) * x - (A + 3)) * x * x + 1


def _cubic2(x, A=-0.75):
    return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A


def _interp_matrix(n_in, n_out, sf, align_corners, cubic, dtype, device):
    """(n_out, n_in) weights of PyTorch's linear or cubic-convolution (A = -0.75) interpolation along one
    dim; taps past the border read the border element."""
    scale = _src_scale(n_in, n_out, sf, align_corners)
    rows = []
    for i in range(n_out):
        src = i * scale if align_corners else scale * (i + 0.5) - 0.5
        if not cubic:
            src = max(src, 0.0)
        i0 = min(int(math.floor(src)), n_in - 1)
        t = min(max(src - i0, 0.0), 1.0)
        if cubic:
            taps = ((i0 - 1, _cubic2(t + 1)), (i0, _cubic1(t)), (i0 + 1, _cubic1(1 - t)), (i0 + 2, _cubic2(2 - t)))
        else:
            taps = ((i0, 1.0 - t), (i0 + 1, t))
        row = [0.0] * n_in
        for j, w in taps:
            row[min(max(j, 0), n_in - 1)] += w
        rows.append(row)
    return _tensor(rows, dtype=dtype, device=device)


def _triangle(x):
    x = abs(x)
    return 1.0 - x if x < 1.0 else 0.0


def _keys_cubic(x):  # the antialiased bicubic filter: cubic convolution with PIL's A = -0.5
    x = abs(x)
    return _cubic1(x, -0.5) if x < 1.0 else _cubic2(x, -0.5) if x < 2.0 else 0.0


def _lanczos3(x):  # sinc(x) sinc(x / 3) inside |x| < 3 (PIL's LANCZOS)
    if x == 0.0:
        return 1.0
    if abs(x) >= 3.0:
        return 0.0
    px = math.pi * x
    return 3.0 * math.sin(px) * math.sin(px / 3.0) / (px * px)


_AA_FILTERS = {"bilinear": (_triangle, 2), "bicubic": (_keys_cubic, 4), "lanczos": (_lanczos3, 6)}  # filter, taps


def _aa_matrix(n_in, n_out, sf, align_corners, mode, dtype, device):
    """(n_out, n_in) weights of PyTorch's antialiased interpolation along one dim (ATen's _compute_weights_aa):
    when downsampling by `scale` the filter is stretched `scale` times, so each output averages all the
    inputs it covers; each row normalized to sum 1."""
    scale = _src_scale(n_in, n_out, sf, align_corners)
    filt, size = _AA_FILTERS[mode]
    support = size / 2 * scale if scale >= 1.0 else size / 2
    inv = 1.0 / scale if scale >= 1.0 else 1.0
    rows = []
    for i in range(n_out):
        center = scale * (i + 0.5)
        lo, hi = max(int(center - support + 0.5), 0), min(int(center + support + 0.5), n_in)
        w = [filt((j - center + 0.5) * inv) for j in range(lo, hi)]
        total = sum(w)
        rows.append([0.0] * lo + [v / total if total else v for v in w] + [0.0] * (n_in - hi))
    return _tensor(rows, dtype=dtype, device=device)


def _interpolate_aa(input, out_sizes, sfs, align_corners, mode):
    x = input
    for i in range(2):
        A = _aa_matrix(input.shape[2 + i], out_sizes[i], sfs[i], bool(align_corners), mode, x.dtype, x.device)
        x = _apply_along(x, A, 2 + i)
    return x


_INTERP_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                             "bicubic | trilinear")
    n_sp = input.dim() - 2
    out_sizes, sfs = _interp_sizes(input, size, scale_factor, recompute_scale_factor, mode)
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                         "4-D tensor as input")
    if mode == "lanczos" and input.dim() == 4 and (align_corners or not antialias):
        raise ValueError("Lanczos mode does not support align_corners=True" if align_corners else
                         "Lanczos mode requires antialias=True")
    if antialias:
        return _interpolate_aa(input, out_sizes, sfs, align_corners, mode)
    want = _INTERP_DIMS.get(mode)
    if n_sp not in (1, 2, 3) or (mode == "bicubic" and n_sp != 2) or (
            want is None and mode not in ("nearest", "nearest-exact", "area")):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for "
                                  "the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
                                  f"nearest-exact (got {mode})")
    if want is not None and want != n_sp:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {want + 2}D input")
    in_sizes = list(input.shape[2:])
    x = input
    if mode in ("nearest", "nearest-exact"):
        off = 0.5 if mode == "nearest-exact" else 0.0
        for i, (n_in, n_out) in enumerate(zip(in_sizes, out_sizes)):
            if mode == "nearest" and n_in == n_out:
                continue  # as PyTorch: same size copies, whatever the scale factor
            scale = _f32(1.0 / sfs[i] if sfs[i] is not None and sfs[i] > 0 else n_in / n_out)
            src = [min(int(math.floor(_f32((j + off) * scale))), n_in - 1) for j in range(n_out)]
            x = _gather_dim(x, 2 + i, _idx(src, x.device))
        return x
    if mode == "area":
        return _adaptive_avg_pool(input, out_sizes, n_sp)
    for i in range(n_sp):
        A = _interp_matrix(in_sizes[i], out_sizes[i], sfs[i], bool(align_corners), mode == "bicubic", x.dtype,
                           x.device)
        x = _apply_along(x, A, 2 + i)
    return x


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def pixel_shuffle(input, upscale_factor):
    r = upscale_factor
    *lead, C, H, W = input.shape
    x = input.reshape(tuple(lead) + (C // (r * r), r, r, H, W))
    n = len(lead)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(tuple(lead) + (C // (r * r), H * r, W * r))


def pixel_unshuffle(input, downscale_factor):
    r = downscale_factor
    *lead, C, H, W = input.shape
    n = len(lead)
    x = input.reshape(tuple(lead) + (C, H // r, r, W // r, r))
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(tuple(lead) + (C * r * r, H // r, W // r))


def _channel_shuffle_impl(input, groups):
    N, C = input.shape[0], input.shape[1]
    rest = tuple(input.shape[2:])
    x = input.reshape((N, groups, C // groups) + rest).transpose(1, 2)
    return x.reshape((N, C) + rest)


_ChannelShuffle = composite_node("ChannelShuffleBackward0", _channel_shuffle_impl)


def channel_shuffle(input, groups):
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if input.shape[1] % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {input.shape[1]} channels and "
                           f"{groups} groups.")
    return _ChannelShuffle.call(input, groups)


native_channel_shuffle = channel_shuffle


dispatching(globals(), __all__)
