"""PyTorch's "Other Operations" and the search and histogram ops, composed of webtorch's ops: diff,
rot90, kron, cdist, histc, histogram, searchsorted, bucketize, tril/triu_indices,
unique_consecutive, scatter_reduce, index_reduce, cov, corrcoef, ... Their gradients are their
compositions'; each runs where its parts run (webgpu included), host reads only where the result's
size depends on the data (unique_consecutive) or PyTorch's does (histc's range from the data)."""
import builtins
import itertools
import math

from .. import _dtype
from .._tensor import Tensor
from . import _common, _creation, indexing as _indexing, shape as _shape
from ._common import check_tensor, name_of, wrap_dim
from .pointwise import _inplace, where
from .reduction import quantile_slices, return_types
from .registry import register, register_method
from .views import meshgrid

int64 = _dtype.int64


@register
def diff(input, n=1, dim=-1, prepend=None, append=None):
    check_tensor("diff", input)
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, input.dim())
    if n == 0:  # PyTorch returns the input, prepend and append unused
        return input
    parts = [p if p.dim() else p.expand(input.shape[:d] + (1,) + input.shape[d + 1:])
             for p in (prepend, input, append) if p is not None]
    x = _shape.cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        if x.shape[d] == 0:
            break
        a, b = x.narrow(d, 1, x.shape[d] - 1), x.narrow(d, 0, x.shape[d] - 1)
        x = a != b if x.dtype is _dtype.bool_ else a - b
    return x


@register
def rot90(input, k=1, dims=(0, 1)):
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.dim()}")
    d0, d1 = dims
    if d0 == d1 or abs(d0 - d1) == input.dim():
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    d0, d1 = wrap_dim(d0, input.dim()), wrap_dim(d1, input.dim())
    k %= 4
    if k == 1:
        return input.flip(d1).transpose(d0, d1)
    if k == 2:
        return input.flip((d0, d1))
    if k == 3:
        return input.flip(d0).transpose(d0, d1)
    return input.clone()


@register
def kron(input, other):
    nd = builtins.max(input.dim(), other.dim())
    a_shape = (1,) * (nd - input.dim()) + tuple(input.shape)
    b_shape = (1,) * (nd - other.dim()) + tuple(other.shape)
    a = input.reshape([s for sa in a_shape for s in (sa, 1)])
    b = other.reshape([s for sb in b_shape for s in (1, sb)])
    return (a * b).reshape([sa * sb for sa, sb in zip(a_shape, b_shape)])


@register(method=False)
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {name_of(x.dtype)}")
        if x.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: "
                           f"{x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)  # [..., P, R, M]
    if p == 0:  # the count of differing coordinates, with PyTorch's zero gradient
        return diff.abs().sign().sum(-1)
    if p == math.inf:
        return diff.abs().amax(-1) if diff.shape[-1] else diff.sum(-1)
    return diff.norm(p, -1)


def _bin_of(x, lo, hi, bins, edges):
    """Each value's bin as ATen's histc kernel finds it: linear interpolation, then one step toward the
    bin whose edges (linspace) hold it; the right edge belongs to the last bin."""
    pos = ((x - lo) * (bins / (hi - lo))).floor().clamp(0, bins - 1).to(int64)
    pos = pos - (x < edges[pos]).to(int64) + (x >= edges[(pos + 1).clamp(max=bins)]).to(int64)
    return where(x == hi, bins - 1, pos.clamp(0, bins - 1))


def _range_of(input, lo, hi, op, widen):
    """The histogram's range: (lo, hi) as given, else the data's, widened by `widen` when empty."""
    if lo == hi and input.numel():
        lo, hi = input.min().item(), input.max().item()
    if lo == hi:
        lo, hi = lo - widen, hi + widen
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"{op}: range of [{lo:g}, {hi:g}] is not finite")
    return lo, hi


def _histc_int(x, lo, hi, bins):
    """CUDA's integer histc (what webgpu follows, as code written for CUDA counts expert ids with it):
    bin (x - lo) * bins / (hi - lo) in integer arithmetic, the last edge in the last bin."""
    lo, hi = int(lo), int(hi)
    inside = (x >= lo) & (x <= hi)
    pos = (((x.to(int64) - lo) * bins) // (hi - lo)).clamp(0, bins - 1)
    counts = _creation.zeros(bins, dtype=x.dtype, device=x.device)
    return counts.index_put_((pos,), inside.to(x.dtype), accumulate=True)


@register
def histc(input, bins=100, min=0, max=0):
    integral = not input.dtype.is_floating_point
    if integral and (input.device.type != "webgpu" or input.dtype is _dtype.bool_):
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{name_of(input.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histc(): bins must be > 0, but got {bins} for dim 0")
    if min > max:
        raise RuntimeError("torch.histc(): max must be larger than min")
    lo, hi = _range_of(input, float(min), float(max), "torch.histc()", 1)
    x = input.detach().reshape(-1)
    if integral:
        return _histc_int(x, lo, hi, bins)
    edges = _creation.linspace(lo, hi, bins + 1, dtype=input.dtype, device=input.device)
    inside = (x >= lo) & (x <= hi)
    counts = _creation.zeros(bins, dtype=input.dtype, device=input.device)
    return counts.index_put_((_bin_of(x, lo, hi, bins, edges),), inside.to(input.dtype), accumulate=True)


@register
def histogram(input, bins=100, *, range=None, weight=None, density=False):
    if isinstance(bins, Tensor):
        edges = bins.to(input.dtype)
    else:
        lo, hi = _range_of(input, *(range or (0.0, 0.0)), "torch.histogram()", 0.5)
        edges = _creation.linspace(lo, hi, bins + 1, dtype=input.dtype, device=input.device)
    x = input.detach().reshape(-1)
    nb = edges.numel() - 1
    pos = (searchsorted(edges, x, right=True) - 1).clamp(0, nb - 1)
    pos = where(x == edges[-1], nb - 1, pos)
    inside = (x >= edges[0]) & (x <= edges[-1])
    w = inside.to(input.dtype) if weight is None else where(inside, weight.reshape(-1), 0)
    hist = _creation.zeros(nb, dtype=input.dtype, device=input.device).index_put_((pos,), w, accumulate=True)
    if density:
        hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
    return return_types.histogram(hist, edges)


def _search_counts(boundaries, values, right):
    """ATen's binary search as a count: lower bound = #{b : !(b >= v)}, upper bound = #{b : !(b > v)}."""
    hit = (boundaries.unsqueeze(-2) > values.unsqueeze(-1)) if right else \
        (boundaries.unsqueeze(-2) >= values.unsqueeze(-1))
    return (~hit).sum(-1)


@register(method=False)
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None, out=None):
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got side of {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
        right = side == "right"
    scalar = not isinstance(input, Tensor)
    values = _creation.tensor(input, device=sorted_sequence.device) if scalar else input
    if sorted_sequence.dim() > 1 and (values.dim() != sorted_sequence.dim()
                                      or values.shape[:-1] != sorted_sequence.shape[:-1]):
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           "dimensions of boundaries tensor and input value tensor must match, but we got "
                           f"boundaries tensor {list(sorted_sequence.shape)} and input value tensor "
                           f"{list(values.shape)}")
    seq = sorted_sequence if sorter is None else sorted_sequence.gather(-1, sorter)
    if scalar:
        values = values.reshape(1)
    r = _search_counts(seq, values.to(_dtype.result_type(seq, values)), right)
    r = r.reshape(()) if scalar else r.reshape(values.shape)
    r = r.to(_dtype.int32 if out_int32 else int64)
    return r if out is None else out.resize_(r.shape).copy_(r)


@register(method=False)
def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


def _tri_indices(row, col, keep, dtype, device):
    pairs = [(i, j) for i in builtins.range(row) for j in builtins.range(col) if keep(j - i)]
    r = _creation.tensor([[i for i, _ in pairs], [j for _, j in pairs]], dtype=dtype, device=device)
    return r.reshape(2, len(pairs))


@register(method=False)
def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False):
    return _tri_indices(row, col, lambda k: k <= offset, dtype or int64, device)


@register(method=False)
def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False):
    return _tri_indices(row, col, lambda k: k >= offset, dtype or int64, device)


@register
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    if dim is None:
        x = input.reshape(-1)
        starts = x[1:] != x[:-1]
    else:
        d = wrap_dim(dim, input.dim())
        x = input.movedim(d, 0)
        starts = (x[1:] != x[:-1]).reshape(x.shape[0] - 1 if x.shape[0] else 0, -1).any(1)
    n = x.shape[0]
    starts = _shape.cat([_creation.ones(builtins.min(n, 1), dtype=_dtype.bool_, device=input.device), starts])
    out = x[starts]
    out = out if dim is None else out.movedim(0, d)
    res = [out]
    if return_inverse:
        inv = starts.to(int64).cumsum(0) - 1
        res.append(inv.reshape(input.shape) if dim is None else inv)
    if return_counts:
        first = starts.nonzero().reshape(-1)
        res.append(diff(first, append=_creation.tensor([n], device=input.device)))
    return res[0] if len(res) == 1 else tuple(res)


_SCATTER_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _identity(reduce, dt):
    if reduce == "prod":
        return 1
    big = math.inf if dt.is_floating_point else _common.INT_RANGE.get(dt.name, (0, 1))[1] \
        if dt is not _dtype.bool_ else True
    return -big if reduce == "amax" and dt is not _dtype.bool_ else (False if reduce == "amax" else big)


def _reduce_dense(flat, targets, values, reduce):
    """reduce (prod / amax / amin) of the values aimed at each position, as a one-hot [k, n] select and a
    reduction over k: exact, differentiable as PyTorch's (amax's gradient split among ties), O(k n) memory."""
    hit = targets.unsqueeze(1) == _creation.arange(flat.numel(), device=flat.device).unsqueeze(0)
    picked = where(hit, values.unsqueeze(1), _identity(reduce, flat.dtype))
    return getattr(picked, reduce)(0) if reduce != "prod" else picked.prod(0)


@register
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    if reduce not in _SCATTER_REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    _indexing._check_index_tensor(index, "scatter_reduce")
    if src.dtype is not input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if input.dim() == 0:
        return _indexing._on_vector(scatter_reduce, input, dim, index, src, reduce, include_self=include_self)
    d = wrap_dim(dim, input.dim())
    if index.dim() != input.dim():
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    index = _indexing._check_gather_range(index, input.shape[d], d)
    targets = _indexing._scatter_offsets(input, d, index).reshape(-1)
    values = _indexing._narrow_to(src, index.shape).reshape(-1)
    flat = input.reshape(-1)
    hits = _creation.zeros(flat.numel(), dtype=int64, device=input.device).index_put(
        (targets,), _creation.ones(targets.numel(), dtype=int64, device=input.device), accumulate=True)
    if reduce in ("sum", "mean"):
        base = flat if include_self else flat.index_put((targets,), values.new_zeros(()), accumulate=False)
        r = base.index_put((targets,), values, accumulate=True)
        if reduce == "mean":
            count = (hits + int(include_self)).clamp(min=1)
            r = r / count if input.dtype.is_floating_point else r.div(count, rounding_mode="floor")
    else:
        if include_self:
            targets = _shape.cat([_creation.arange(flat.numel(), device=input.device), targets])
            values = _shape.cat([flat, values])
        r = _reduce_dense(flat, targets, values, reduce)
    return where(hits > 0, r, flat).reshape(input.shape)


@register
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    if reduce not in _SCATTER_REDUCES[1:]:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    if index.dtype not in (int64, _dtype.int32):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: {name_of(index.dtype)}")
    if input.dim() == 0:
        return index_reduce(input.reshape(1), dim, index, source.reshape(-1), reduce,
                            include_self=include_self).reshape(())
    d = wrap_dim(dim, input.dim())
    n = source.shape[d] if source.dim() else 1
    if index.numel() != n:
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.numel()}) should be equal to "
                           f"source.size(dim): ({n}), for dim: {d}")
    if index.numel() and not bool(((index >= -input.shape[d]) & (index < input.shape[d])).all()):
        raise IndexError("index out of range in self")
    idx = index.reshape([-1 if k == d else 1 for k in range(source.dim())]).expand(source.shape)
    return scatter_reduce(input, d, idx % input.shape[d], source, reduce, include_self=include_self)


register_method(_inplace(scatter_reduce), "scatter_reduce_")
register_method(_inplace(index_reduce), "index_reduce_")


# ---- joins, grids and statistics ------------------------------------------------------------------
@register(method=False)
def block_diag(*tensors):
    mats = [t.reshape(1, -1) if t.dim() < 2 else t for t in tensors]
    for i, t in enumerate(mats):
        if t.dim() != 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.dim()} dimensions")
    if not mats:
        return _creation.empty(1, 0)
    dt = _dtype.result_type(*mats)
    width = builtins.sum(t.shape[1] for t in mats)
    rows, left = [], 0
    for t in mats:
        h, w = t.shape
        z = [_creation.zeros(h, n, dtype=dt, device=t.device) for n in (left, width - left - w)]
        rows.append(_shape.cat([z[0], t.to(dt), z[1]], 1))
        left += w
    return _shape.cat(rows, 0)


@register(method=False)
def cartesian_prod(*tensors):
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return _shape.stack([g.reshape(-1) for g in grids], 1)


@register(method=False)
def combinations(input, r=2, with_replacement=False):
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty(0)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = [i for c in pick(builtins.range(input.shape[0]), r) for i in c]
    return input[_creation.tensor(idx, dtype=int64, device=input.device)].reshape(-1, r)


def _check_weights(name, w, integral, n):
    if w.dim() > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with {w.dim()} "
                           "dimensions")
    if integral == w.dtype.is_floating_point:
        raise RuntimeError(f"cov(): expected {name} to have {'integral' if integral else 'floating point'} dtype but "
                           f"got {name} with {name_of(w.dtype)} dtype")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input "
                           f"but got {w.numel()} != {n}")
    if bool((w < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


@register
def cov(input, *, correction=1, fweights=None, aweights=None):
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    if x.dtype.kind not in "fc":
        x = x.to(_dtype.get_default_dtype())
    n = x.shape[1]
    for name, wt, integral in (("fweights", fweights, True), ("aweights", aweights, False)):
        if wt is not None:
            _check_weights(name, wt, integral, n)
    w = fweights
    if aweights is not None:
        w = aweights if w is None else w * aweights
    if w is None:
        avg, w_sum = x.mean(1), n
        norm = n - correction
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        norm = w_sum - correction * ((w * aweights).sum() / w_sum if aweights is not None else 1)
    norm = norm.clamp(min=0) if isinstance(norm, Tensor) else builtins.max(norm, 0)
    xc = x - avg.unsqueeze(1)
    c = xc.matmul((xc if w is None else xc * w).t().conj()) / norm
    return c.squeeze()


@register
def corrcoef(input):
    c = cov(input)
    if c.dim() == 0:
        return c / c
    std = c.diagonal().real.sqrt()
    c = c / std.unsqueeze(1) / std.unsqueeze(0)
    if c.is_complex():  # the real and imaginary parts clipped to [-1, 1], as PyTorch
        return c.real.clamp(-1, 1) + 1j * c.imag.clamp(-1, 1)
    return c.clamp(-1, 1)


@register(method=False)
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    dev = (elements if isinstance(elements, Tensor) else test_elements).device
    e = elements if isinstance(elements, Tensor) else _creation.tensor(elements, device=dev)
    t = test_elements if isinstance(test_elements, Tensor) else _creation.tensor(test_elements, device=dev)
    hit = (e.unsqueeze(-1) == t.reshape(-1)).any(-1)
    return ~hit if invert else hit


@register
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    x, d = quantile_slices("nanquantile", input, dim)
    v = x.sort(d)[0]  # NaN last
    k = (~x.isnan()).sum(d, keepdim=True)
    qs = q if isinstance(q, Tensor) else _creation.tensor(q, dtype=input.dtype, device=input.device)
    outs = []
    for qq in (qs.reshape(-1).tolist() if qs.dim() else [qs.item()]):
        pos = (k - 1).clamp(min=0).to(input.dtype) * qq
        lo, hi = pos.floor(), pos.ceil()
        frac = {"linear": pos - lo, "lower": pos * 0, "higher": pos * 0 + 1, "midpoint": pos * 0 + 0.5,
                "nearest": (pos.round() == hi).to(input.dtype)}[interpolation]
        a, b = v.gather(d, lo.to(int64)), v.gather(d, hi.to(int64))
        r = where(k == 0, math.nan, a + (b - a) * frac if interpolation in ("linear", "midpoint") else
                  where(frac == 1, b, a))
        outs.append(r if keepdim and input.dim() else r.squeeze(d) if x.dim() else r.reshape(()))
    return _shape.stack(outs, 0) if qs.dim() else outs[0]


def unravel_index(indices, shape):
    idx = indices if isinstance(indices, Tensor) else _creation.tensor(indices)
    if idx.dtype.is_floating_point or idx.dtype is _dtype.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {idx.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    n = math.prod(shape)
    if idx.numel() and not bool(((idx >= -n) & (idx < n)).all()):
        raise RuntimeError("'indices' must be in range [-prod(shape), prod(shape))")
    rest, out = idx % builtins.max(n, 1), []
    for s in reversed(shape):
        out.append(rest % s)
        rest = rest // s
    return tuple(reversed(out))


register(unravel_index, method=False)


def _trapezoid_steps(y, x, dx, dim):
    d = wrap_dim(dim, y.dim())
    n = y.shape[d]
    a, b = y.narrow(d, 1, builtins.max(n - 1, 0)), y.narrow(d, 0, builtins.max(n - 1, 0))
    if x is None:
        return (a + b) * (dx / 2), d
    h = diff(x, dim=-1 if x.dim() == 1 else d)
    if x.dim() == 1:
        h = h.reshape([-1 if k == d else 1 for k in builtins.range(y.dim())])
    return (a + b) * h / 2, d


@register(method=False)
def trapezoid(y, x=None, *, dx=None, dim=-1):
    steps, d = _trapezoid_steps(y, x, 1 if dx is None else dx, dim)
    return steps.sum(d)


@register(method=False)
def trapz(y, x=None, *, dx=1, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


@register(method=False)
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    steps, d = _trapezoid_steps(y, x, 1 if dx is None else dx, dim)
    return steps.cumsum(d)


@register(method=False)
def vander(x, N=None, increasing=False):
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dt = _dtype.result_type(x, 1) if not x.dtype.is_floating_point else x.dtype
    dt = int64 if not dt.is_floating_point else dt
    if n == 0:
        return x.new_empty((x.shape[0], 0), dtype=dt)
    cols = [_creation.ones(x.shape[0], 1, dtype=dt, device=x.device)] + [x.to(dt).unsqueeze(1)] * (n - 1)
    r = _shape.cat(cols, 1).cumprod(1)
    return r if increasing else r.flip(1)


@register
def nonzero_static(input, *, size, fill_value=-1):
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, but got size: {size}")
    nz = input.nonzero()[:size]
    pad = _creation.full((size - nz.shape[0], input.dim()), fill_value, dtype=int64, device=input.device)
    return _shape.cat([nz, pad], 0)


def _gradient_along(f, d, h, edge_order):
    """numpy's / PyTorch's second-order accurate differences along d: h a number (uniform spacing) or the
    1-D coordinates; one-sided differences of `edge_order` at the two ends."""
    n = f.shape[d]

    def at(i, m=1):
        return f.narrow(d, i % n, m)

    if not isinstance(h, Tensor):
        inner = (at(2, n - 2) - at(0, n - 2)) / (2 * h)
        if edge_order == 1:
            first, last = (at(1) - at(0)) / h, (at(-1) - at(-2)) / h
        else:
            first = (-1.5 * at(0) + 2 * at(1) - 0.5 * at(2)) / h
            last = (0.5 * at(-3) - 2 * at(-2) + 1.5 * at(-1)) / h
        return _shape.cat([first, inner, last], d)
    shape = [-1 if k == d else 1 for k in builtins.range(f.dim())]
    dx = diff(h).to(f.dtype)
    hl, hr = dx[:-1].reshape(shape), dx[1:].reshape(shape)
    inner = (-hr / (hl * (hl + hr)) * at(0, n - 2) + (hr - hl) / (hl * hr) * at(1, n - 2)
             + hl / (hr * (hl + hr)) * at(2, n - 2))
    if edge_order == 1:
        first, last = (at(1) - at(0)) / dx[0], (at(-1) - at(-2)) / dx[-1]
    else:
        a1, a2, b1, b2 = dx[0], dx[1], dx[-2], dx[-1]
        first = (-(2 * a1 + a2) / (a1 * (a1 + a2)) * at(0) + (a1 + a2) / (a1 * a2) * at(1)
                 - a1 / (a2 * (a1 + a2)) * at(2))
        last = (b2 / (b1 * (b1 + b2)) * at(-3) - (b1 + b2) / (b1 * b2) * at(-2)
                + (2 * b2 + b1) / (b2 * (b1 + b2)) * at(-1))
    return _shape.cat([first, inner, last], d)


@register(method=False)
def gradient(input, *, spacing=1, dim=None, edge_order=1):
    dims = list(builtins.range(input.dim())) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [wrap_dim(d, input.dim()) for d in dims]
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {next(d for d in dims if dims.count(d) > 1)} appears multiple times in the list of "
                           "dims")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    spacing = list(spacing) if isinstance(spacing, (list, tuple)) else [1 if spacing is None else spacing] * len(dims)
    if len(spacing) != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           f"arguments to have the same length, but got a spacing argument of length "
                           f"{len(spacing)} and a dim argument of length {len(dims)}.")
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    for h in spacing:
        if isinstance(h, Tensor) and h.device != input.device:
            raise RuntimeError(f"torch.gradient expected each tensor to be on the same device, but got devices "
                               f"{input.device} and {h.device}!")
    f = input if input.dtype.kind in "fc" else input.to(_dtype.get_default_dtype())
    return tuple(_gradient_along(f, d, h, edge_order) for d, h in zip(dims, spacing))
