"""Reductions into bins and segments, composed of webtorch's ops: histogramdd (the D-dimensional histogram,
torch.histogram's rule per dim) and segment_reduce (sum, mean, prod, max, min over consecutive segments of a
dim given their lengths or offsets). segment_reduce is differentiable through its composition (max/min share
a gradient evenly among ties, as PyTorch's). Host reads: histogramdd's range from the data (as PyTorch's),
segment_reduce's check that the lengths cover the dim (PyTorch's, when not `unsafe`)."""
import builtins
import math

from .. import _dtype
from .._tensor import Tensor
from . import _creation
from ._common import wrap_dim
from .other_ops import _range_of, searchsorted
from .pointwise import where
from .reduction import return_types
from .registry import register


def _edges_of(x, k, bins, rng):
    """Dim k's bin edges: a tensor of edges as given, else `bins` equal bins over rng[k] or the data's range."""
    if isinstance(bins[k], Tensor):
        return bins[k].to(x.dtype)
    lo, hi = _range_of(x[:, k], *(rng[2 * k:2 * k + 2] if rng else (0.0, 0.0)), "torch.histogramdd()", 0.5)
    return _creation.linspace(lo, hi, bins[k] + 1, dtype=x.dtype, device=x.device)


@register(method=False)
def histogramdd(input, bins, *, range=None, weight=None, density=False):
    D = input.shape[-1]
    bins = [bins] * D if isinstance(bins, int) else list(bins)
    if len(bins) != D:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    x = input.detach().reshape(-1, D)
    edges = [_edges_of(x, k, bins, range) for k in builtins.range(D)]
    sizes = [e.numel() - 1 for e in edges]
    flat = _creation.zeros((), dtype=_dtype.int64, device=input.device)
    inside = _creation.ones((), dtype=_dtype.bool_, device=input.device)
    for k, e in enumerate(edges):
        v, nb = x[:, k], sizes[k]
        pos = where(v == e[-1], nb - 1, (searchsorted(e, v.contiguous(), right=True) - 1).clamp(0, nb - 1))
        flat = flat * nb + pos
        inside = inside & (v >= e[0]) & (v <= e[-1])
    w = inside.to(input.dtype) if weight is None else where(inside, weight.reshape(-1), 0)
    hist = _creation.zeros(math.prod(sizes), dtype=input.dtype, device=input.device)
    hist = hist.index_put_((flat.expand(w.shape),), w, accumulate=True).reshape(sizes)
    if density:
        width = hist.new_ones(())
        for e in edges:
            width = width.unsqueeze(-1) * (e[1:] - e[:-1])
        hist = hist / (hist.sum() * width)
    return return_types.histogramdd(hist, tuple(edges))


_SEGMENT_IDENTITY = {"sum": 0.0, "mean": 0.0, "prod": 1.0, "max": float("-inf"), "min": float("inf")}


def _segment_lengths(data, axis, lengths, indices, offsets, unsafe):
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if (lengths is None) == (offsets is None):
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined")
    if lengths is None:
        lengths = offsets[..., 1:] - offsets[..., :-1]
    if not unsafe and bool((lengths.sum(-1) != data.shape[lengths.dim() - 1]).any()):
        raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum to "
                           "data.size(lengths.dim()-1) when !unsafe.")
    return lengths


@register(method=False)
def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    """The reduction of each segment of data's dim `axis`: segment s is the lengths[..., s] elements after the
    previous segments (lengths has data's leading dims, then the segments); an empty one gives `initial`."""
    if reduce not in _SEGMENT_IDENTITY:
        raise RuntimeError(f"segment_reduce(): reduce must be one of sum, mean, prod, max, min, got {reduce}")
    axis = wrap_dim(axis, data.dim())
    lengths = _segment_lengths(data, axis, lengths, indices, offsets, unsafe)
    ends = lengths.cumsum(-1)
    pos = _creation.arange(data.shape[axis], device=data.device)
    member = (pos >= (ends - lengths).unsqueeze(-1)) & (pos < ends.unsqueeze(-1))  # [..., S, N]
    member = member.reshape(member.shape + (1,) * (data.dim() - axis - 1))
    picked = where(member, data.unsqueeze(axis), _SEGMENT_IDENTITY[reduce])
    op = {"max": "amax", "min": "amin", "mean": "sum"}.get(reduce, reduce)
    out = getattr(picked, op)(axis + 1)
    count = lengths.reshape(lengths.shape + (1,) * (data.dim() - axis - 1))
    if reduce == "mean":
        out = out if initial is None else out + initial
        return where(count == 0, math.nan if initial is None else initial, out / count)
    if initial is None:
        return out
    if reduce in ("max", "min"):  # the data's extreme when it ties initial (its gradient is the data's)
        return where(out < initial if reduce == "max" else out > initial, initial, out)
    return out + initial if reduce == "sum" else out * initial


register(segment_reduce, "_segment_reduce", method=False)
