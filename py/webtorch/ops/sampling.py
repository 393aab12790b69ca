"""torch.grid_sampler (2-D and 3-D: bilinear/trilinear, nearest, bicubic; zeros, border and reflection
padding) and torch.affine_grid_generator, which nn.functional.grid_sample and affine_grid call.

Composed of gathers and element-wise ops (PyTorch's GridSampler.h formulas), so every backend runs
them and the gradients, to the input (the gathers' scatter-add) and to the grid (through the
interpolation weights and the padding's reflections and clips), are the compositions'; each is one
graph node named as PyTorch's."""
import itertools

from .. import _dtype
from . import pointwise as _pw, shape as _sh
from ._common import composite_op, name_of
from ._creation import linspace, ones, ones_like, zeros
from .registry import register

_MODES = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_ZEROS, _BORDER, _REFLECTION = 0, 1, 2
_CUBIC_A = -0.75


def _unnormalize(coord, size, align_corners):
    """grid_sampler_unnormalize: [-1, 1] to pixel coordinates."""
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low, twice_high):
    """reflect_coordinates: coord reflected by the borders until it lies in [low, high]."""
    if twice_low == twice_high:
        return coord * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    c = (coord - low).abs()
    extra = c.fmod(span)
    flips = (c / span).floor()
    return _pw.where(flips.fmod(2) == 0, extra + low, span - extra + low)


def _pad_coord(coord, size, padding_mode, align_corners):
    """compute_coordinates: the padding's border clip or reflection of a pixel coordinate."""
    if padding_mode == _REFLECTION:
        coord = _reflect(coord, 0, 2 * (size - 1)) if align_corners else _reflect(coord, -1, 2 * size - 1)
    if padding_mode != _ZEROS:
        coord = coord.clamp(0, size - 1)
    return coord


def _tap(flat, coords, sizes):
    """The input's values at integer pixel coordinates (float tensors of shape (N, *out), x first) and
    whether each lies inside: (values (N, C, L), inside (N, 1, L))."""
    N, C = flat.shape[0], flat.shape[1]
    idx = inside = None
    stride = 1
    for c, n in zip(coords, sizes):
        ok = (c >= 0) & (c <= n - 1)
        i = c.clamp(0, n - 1).to(_dtype.int64) * stride
        idx = i if idx is None else idx + i
        inside = ok if inside is None else inside & ok
        stride *= n
    L = idx.numel() // N if N else 0
    values = flat.gather(2, idx.reshape(N, 1, L).expand(N, C, L))
    return values, inside.reshape(N, 1, L)


def _weighted(acc, tap, w):
    """acc + the tap's values (0 outside the input) times w (N, *out)."""
    values, inside = tap
    values = _pw.where(inside, values * w.reshape(inside.shape), 0)
    return values if acc is None else acc + values


def _bicubic(flat, raw, sizes, padding_mode, align_corners):
    """cubic convolution along x in each of the 4 rows, then along y (PyTorch's order of sums); each
    tap padded by itself, as get_value_bounded."""
    lows = [c.detach().floor() for c in raw]
    wx, wy = (_cubic_weights(c - f) for c, f in zip(raw, lows))
    out = None
    for j in range(4):
        y = _pad_coord(lows[1] + (j - 1), sizes[1], padding_mode, align_corners)
        row = None
        for i in range(4):
            x = _pad_coord(lows[0] + (i - 1), sizes[0], padding_mode, align_corners)
            row = _weighted(row, _tap(flat, [x, y], sizes), wx[i])
        row = row * wy[j].reshape(row.shape[0], 1, -1)
        out = row if out is None else out + row
    return out


def _cubic_weights(t):
    """cubic convolution coefficients (A = -0.75) of the taps at -1, 0, 1, 2 from fraction t."""
    A = _CUBIC_A

    def near(x):
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def far(x):
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _sample(input, grid, mode, padding_mode, align_corners):
    N, C, *sizes = input.shape
    sizes = sizes[::-1]  # the grid's last dim is (x, y[, z]): W first
    flat = input.reshape(N, C, -1)
    raw = [_unnormalize(grid[..., k], n, align_corners) for k, n in enumerate(sizes)]
    terms = []
    if mode == 1:  # nearest: nearbyint, half to even
        coords = [_pad_coord(c, n, padding_mode, align_corners).detach().round() for c, n in zip(raw, sizes)]
        # weight 1 that depends on the grid: its gradient is zeros, as PyTorch's (not None)
        terms.append((coords, _pw.where(ones_like(raw[0], dtype=_dtype.bool_), 1, raw[0])))
    elif mode == 0:
        coords = [_pad_coord(c, n, padding_mode, align_corners) for c, n in zip(raw, sizes)]
        lows = [c.detach().floor() for c in coords]
        fracs = [c - f for c, f in zip(coords, lows)]
        for corner in itertools.product((0, 1), repeat=len(sizes)):
            w = None
            for bit, t in zip(corner[::-1], fracs):
                f = t if bit else 1 - t
                w = f if w is None else w * f
            terms.append(([f + b for f, b in zip(lows, corner[::-1])], w))
    else:
        return _bicubic(flat, raw, sizes, padding_mode, align_corners).reshape(N, C, *grid.shape[1:-1])
    out = None
    for coords, w in terms:
        out = _weighted(out, _tap(flat, coords, sizes), w)
    return out.reshape(N, C, *grid.shape[1:-1])


def _check(input, grid, interpolation_mode, spatial):
    if input.device != grid.device:
        raise RuntimeError(f"grid_sampler(): expected input and grid to be on same device, but input is on "
                           f"{input.device} and grid is on {grid.device}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.dim() - 2} in last dimension, but got "
                           f"grid with sizes {list(grid.shape)}")
    for i in range(2, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {list(input.shape)} with dimension {i} being empty")
    if input.dim() != spatial + 2 or grid.dim() != spatial + 2:
        raise RuntimeError(f"grid_sampler(): expected {spatial + 2}D input and grid with same number of dimensions, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if spatial == 3 and interpolation_mode == 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"grid_sampler_{spatial}d_cpu_kernel_impl\" not implemented for "
                                  f"'{name_of(input.dtype)}'")
    if grid.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {name_of(input.dtype)} but found {name_of(grid.dtype)}")


@composite_op("GridSampler2DBackward0")
def _grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    return _sample(input, grid, interpolation_mode, padding_mode, align_corners)


@composite_op("GridSampler3DBackward0")
def _grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    return _sample(input, grid, interpolation_mode, padding_mode, align_corners)


@register(method=False)
def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    _check(input, grid, interpolation_mode, 2)
    return _grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners)


@register(method=False)
def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    _check(input, grid, interpolation_mode, 3)
    return _grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners)


@register(method=False)
def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    fn = grid_sampler_2d if input.dim() == 4 else grid_sampler_3d
    return fn(input, grid, interpolation_mode, padding_mode, align_corners)


def _linspace_from_neg_one(n, align_corners, like):
    if n <= 1:
        return zeros((1,), dtype=like.dtype, device=like.device)
    r = linspace(-1, 1, n, dtype=like.dtype, device=like.device)
    return r if align_corners else r * (n - 1) / n


@composite_op("AffineGridGeneratorBackward0")
def _affine_grid_generator(theta, size, align_corners):
    N, spatial = size[0], list(size[2:])
    axes = []  # x (the last size), then y, then z
    for k, n in enumerate(reversed(spatial)):
        axes.append(_linspace_from_neg_one(n, align_corners, theta).reshape((n,) + (1,) * k))
    shape = tuple(spatial)
    base = _sh.stack([a.expand(shape) for a in axes] + [ones(shape, dtype=theta.dtype, device=theta.device)], -1)
    d = len(spatial) + 1
    grid = base.reshape(1, -1, d).expand(N, -1, d).bmm(theta.transpose(1, 2))
    return grid.reshape(N, *spatial, d - 1)


@register(method=False)
def affine_grid_generator(theta, size, align_corners):
    return _affine_grid_generator(theta, list(size), align_corners)
