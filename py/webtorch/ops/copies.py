"""The view-copy and view-scatter forms: `<view>_copy` is the view's values in a new tensor
(torch.t_copy, torch.diagonal_copy, ...), `<view>_scatter` is the input with src written through
the view (torch.diagonal_scatter, ...). Each composes its view with clone / copy_, so its gradient
and its devices are theirs."""
from ._common import composite_op, write_out
from .registry import register

# name -> the Tensor view it copies (functions only, as in PyTorch; narrow_copy is a method too)
_VIEWS = {"alias_copy": "view_as", "as_strided_copy": "as_strided", "detach_copy": "detach",
          "diagonal_copy": "diagonal", "expand_copy": "expand", "permute_copy": "permute", "select_copy": "select",
          "squeeze_copy": "squeeze", "t_copy": "t", "transpose_copy": "transpose", "unfold_copy": "unfold",
          "unsqueeze_copy": "unsqueeze", "view_copy": "view"}
_SPLITS = {"split_copy": "split", "split_with_sizes_copy": "split_with_sizes", "unbind_copy": "unbind"}


def _copy_of(name, view):
    def copy(input, *args, out=None, **kwargs):
        if view == "view_as":
            args = (input,)
        elif view == "expand":
            kwargs.pop("implicit", None)
        return write_out(getattr(input, view)(*args, **kwargs).clone(), out, input)
    copy.__name__ = copy.__qualname__ = name
    return copy


def _split_copy_of(name, split):
    def copy(input, *args, out=None, **kwargs):
        parts = tuple(p.clone() for p in getattr(input, split)(*args, **kwargs))
        if out is not None:
            for p, o in zip(parts, out):
                write_out(p, o, input)
            return None
        return parts
    copy.__name__ = copy.__qualname__ = name
    return copy


for _name, _view in _VIEWS.items():
    register(_copy_of(_name, _view), _name, method=False)
for _name, _split in _SPLITS.items():
    register(_split_copy_of(_name, _split), _name, method=False)


@register(method=False)
def slice_copy(input, dim=0, start=None, end=None, step=1, *, out=None):
    return write_out(_slice(input, dim, start, end, step).clone(), out, input)


@register
def narrow_copy(input, dim, start, length, *, out=None):
    if input.dim() and dim >= input.dim():  # a dim below range raises narrow's IndexError
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but got false.")
    size = input.shape[dim] if input.dim() and dim >= -input.dim() else 0
    if input.dim() and (length < 0 or (start % size if size else 0) + length > size):
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return write_out(input.narrow(dim, start, length).clone(), out, input)


def _slice(x, dim, start, end, step):
    return x[(slice(None),) * (dim % x.dim()) + (slice(start, end, step),)]


def _scatter_through(input, src, view):
    out = input.clone()
    v = view(out)
    if tuple(v.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(v.shape)}")
    v.copy_(src)
    return out


@register
@composite_op("DiagonalScatterBackward0")
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    return _scatter_through(input, src, lambda t: t.diagonal(offset, dim1, dim2))


@register
@composite_op("SelectScatterBackward0")
def select_scatter(input, src, dim, index):
    return _scatter_through(input, src, lambda t: t.select(dim, index))


@register
@composite_op("SliceScatterBackward0")
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    return _scatter_through(input, src, lambda t: _slice(t, dim, start, end, step))


@register
@composite_op("AsStridedScatterBackward0")
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    return _scatter_through(input, src, lambda t: t.as_strided(size, stride, storage_offset))
