"""Views (metadata-only: share memory with their base) and shape-changing ops."""
import warnings

from .. import _dtype
from ..autograd import grad_mode
from . import _prims
from .._tensor import Tensor, Size
from .._geometry import contiguous_strides, numel as _numel
from ..autograd.function import Function
from ..overrides import torch_function
from ._common import (wrap_dim, recording, write_out, sum_to, composite_node, check_leaf_inplace, inplace_result,
                      node_alias, formula_node, _extent, can_cast, name_of, fill_value)
from .registry import register, register_method
from .pointwise import where

int64 = _dtype.int64


def _as_view(t, shape, stride, offset):
    v = Tensor._make(t._storage, shape, stride, offset)
    v._base = t if t._base is None else t._base
    # its grad_fn is rebuilt from the base's after an in-place write (Tensor.grad_fn); not that of a
    # view of a detached alias (whose base is the tensor it was detached from)
    v._diff_view = t._base is None or getattr(t, "_diff_view", False)
    if getattr(t, "_no_grad_view", False):
        v._no_grad_view = v._diff_view
    if getattr(t, "_multi_view", False):
        v._multi_view = True
    v._fn_version = t._storage.version
    return v


def _sizes(args):
    """Accept f(2, 3), f((2, 3)), f([2, 3]) and f(torch.Size)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    return tuple(map(int, args))


def _infer_shape(shape, numel):
    if -1 not in shape and (not shape or min(shape) >= 0) and _numel(shape) == numel:
        return tuple(shape)  # nothing to infer, nothing to complain about
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for s in shape:
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s}")
    if neg:
        rest = _numel([s for s in shape if s != -1])
        if rest == 0 and numel == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                               f"unspecified dimension size -1 can be any value and is ambiguous")
        if rest == 0 or numel % rest:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // rest
    if _numel(shape) != numel:
        raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size {numel}")
    return tuple(shape)


def _view_strides(old_shape, old_stride, new_shape):
    """PyTorch's computeStride: strides for viewing without a copy, or None."""
    if _numel(old_shape) == 0 or not old_shape:  # no element: the same shape keeps its strides
        return tuple(old_stride) if tuple(old_shape) == tuple(new_shape) else contiguous_strides(new_shape)
    old_shape = tuple(old_shape)  # a plain tuple: Size indexes through Python
    new_stride = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base = old_stride[-1]
    tensor_numel = view_numel = 1
    for td in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[td]
        if td == 0 or (old_shape[td - 1] != 1 and old_stride[td - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_stride[view_d] = view_numel * chunk_base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if td > 0:
                chunk_base = old_stride[td - 1]
                tensor_numel = view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_stride)


# ---- the view functions -------------------------------------------------------------------------
class ViewOp(Function):  # the view op (a backend's window onto a buf is backends.base.Strided)
    _node_name = "ViewBackward0"

    @staticmethod
    def forward(ctx, x, shape, stride):
        ctx.in_shape = x.shape
        return _as_view(x, shape, stride, x._offset)

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.in_shape), None, None


UnsafeView = node_alias(ViewOp, "UnsafeViewBackward0")
Squeeze = node_alias(ViewOp, "SqueezeBackward0")  # squeeze()
SqueezeDim = node_alias(ViewOp, "SqueezeBackward1")  # squeeze(dim)
SqueezeDims = node_alias(ViewOp, "SqueezeBackward2")  # squeeze(dims)
SqueezeDimInplace = node_alias(ViewOp, "SqueezeBackward4")  # squeeze_(dim), as matmul uses it
Unsqueeze = node_alias(ViewOp, "UnsqueezeBackward0")


class Permute(Function):
    _node_name = "PermuteBackward0"

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        shape, stride = tuple(x._shape), x._stride  # a plain tuple: Size indexes through Python
        return _as_view(x, tuple([shape[d] for d in dims]), tuple([stride[d] for d in dims]), x._offset)

    @staticmethod
    def backward(ctx, g):
        inv = [0] * len(ctx.dims)
        for i, d in enumerate(ctx.dims):
            inv[d] = i
        return g.permute(inv), None


Transpose = node_alias(Permute, "TransposeBackward0")
TBackward = node_alias(Permute, "TBackward0")


class Expand(Function):
    _node_name = "ExpandBackward0"

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        return _as_view(x, shape, _expand_strides(x, shape), x._offset)

    @staticmethod
    def backward(ctx, g):
        return sum_to(g, ctx.in_shape), None


class Slice(Function):
    """A view that picks distinct elements of its input (slice, narrow, select, diagonal), its
    geometry `geom(shape, stride, offset, *params)` of the input's. Backward replays the view on
    zeros of the input's shape and writes the gradient there (PyTorch's slice/select/
    diagonal_backward): the input's own strides (an expanded input's zeros) never enter it."""
    _node_name = "SliceBackward0"

    @staticmethod
    def forward(ctx, x, geom, *params):
        ctx.meta = (x.shape, geom, params)
        return _as_view(x, *geom(x._shape, x._stride, x._offset, *params))

    @staticmethod
    def backward(ctx, g):
        shape, geom, params = ctx.meta
        z = g.new_zeros(shape)
        _as_view(z, *geom(z._shape, z._stride, 0, *params)).copy_(g)
        return (z, None) + (None,) * len(params)


Select = node_alias(Slice, "SelectBackward0")
Diagonal = node_alias(Slice, "DiagonalBackward0")


def _whole(shape, stride, offset):  # x[...]
    return shape, stride, offset


def _slice_geom(shape, stride, offset, d, start, n, step):
    return shape[:d] + (n,) + shape[d + 1:], stride[:d] + (stride[d] * step,) + stride[d + 1:], offset + start * stride[d]


def _select_geom(shape, stride, offset, d, index):
    return shape[:d] + shape[d + 1:], stride[:d] + stride[d + 1:], offset + index * stride[d]


def _diagonal_geom(shape, stride, offset, k, d1, d2):
    n1, n2 = shape[d1], shape[d2]
    n = max(0, min(n1, n2 - k)) if k >= 0 else max(0, min(n1 + k, n2))
    if n:
        offset += k * stride[d2] if k >= 0 else -k * stride[d1]
    keep = [d for d in range(len(shape)) if d not in (d1, d2)]
    return (tuple(shape[d] for d in keep) + (n,), tuple(stride[d] for d in keep) + (stride[d1] + stride[d2],),
            offset)


def _expand_strides(x, shape):
    """PyTorch's inferExpandGeometry: a broadcast dim gets stride 0, a dim of size 1 kept at 1 its
    stride, a new leading one of size 1 the next dim's size * stride."""
    strides = list(_prims.broadcast_strides(x, shape))  # PyTorch's errors
    off = len(shape) - x.dim()
    for i in range(len(shape) - 1, -1, -1):
        if shape[i] == 1:
            strides[i] = x._stride[i - off] if i >= off else shape[i + 1] * strides[i + 1] if i + 1 < len(shape) else 1
    return tuple(strides)


class AsStrided(Function):
    """as_strided: a view given in storage terms (also the history of a view regenerated after an
    in-place write, `Tensor.grad_fn`). Backward is PyTorch's as_strided_backward."""
    _node_name = "AsStridedBackward0"

    @staticmethod
    def forward(ctx, x, shape, stride, offset):
        ctx.geom = (x.shape, x.stride(), x._offset, shape, stride, offset)
        return _as_view(x, shape, stride, offset)

    @staticmethod
    def backward(ctx, g):
        return (_as_strided_backward(g, *ctx.geom),) + (None,) * 3


def _as_strided_backward(g, in_shape, in_stride, in_off, shape, stride, off):
    """The gradient of input (in_shape, in_stride, in_off) from that of its view (shape, stride,
    off), both in storage terms: g is added into zeros over the storage the two address (index_add
    where the view's elements share memory, so that every one counts), then read with the input's
    geometry, divided where the input's own elements share memory (an expanded input: the
    expand's backward adds the shares up)."""
    if 0 in shape or 0 in in_shape:
        return g.new_zeros(in_shape)
    summed = tuple(d for d, (n, st) in enumerate(zip(shape, stride)) if n > 1 and st == 0)
    if summed:  # dims of stride 0 address one element: their gradients add up
        g = g.sum(summed, keepdim=True)
        shape = g.shape
    shape, stride = _spread(shape, stride)
    g = g.reshape(shape)
    ishape, istride = _spread(in_shape, in_stride)
    start = min(in_off, off)
    n = max(_extent(ishape, istride, in_off - start), _extent(shape, stride, off - start))
    out_shared, in_shared = _may_share(shape, stride), _may_share(ishape, istride)
    pos = _prims.arange(n, 0, 1, int64, g.device) if out_shared or in_shared else None  # storage positions
    buf = g.new_zeros((n,))
    if out_shared:
        buf = buf.index_add(0, _as_view(pos, shape, stride, off - start).reshape(-1), g.reshape(-1))
    else:
        buf.as_strided(shape, stride, off - start).copy_(g)
    if in_shared:
        at = _as_view(pos, ishape, istride, in_off - start).reshape(-1)
        buf = buf / buf.new_zeros((n,)).index_add(0, at, buf.new_ones((1,)).expand(at.shape))
    return buf.as_strided(in_shape, in_stride, in_off - start)


def _spread(shape, stride):
    """The dims of a geometry that span more than one element."""
    keep = [d for d, n in enumerate(shape) if n != 1]
    return tuple(shape[d] for d in keep), tuple(stride[d] for d in keep)


def _may_share(shape, stride):
    """Whether two elements of a geometry (no dim of size 1 or 0) may share memory (PyTorch's
    _maybe_overlapping_memory): sorted by stride, each dim must step past all the smaller ones."""
    reach = 0
    for n, st in sorted(zip(shape, stride), key=lambda p: p[1]):
        if st <= reach:
            return True
        reach += st * (n - 1)
    return False


def _view_apply(F, x, *args):
    if recording(x):
        out = F.apply(x, *args)
        if isinstance(out, tuple):  # unbind, split: PyTorch's error when one is then written in place
            for v in out:
                v._multi_view = True
        return out
    out = F.forward(_NullCtx, x, *args)
    if not grad_mode._state["enabled"]:  # PyTorch's errors when it or its base is then written with grad on
        for v in out if isinstance(out, tuple) else (out,):
            v._no_grad_view = v._diff_view
    return out


class _NullCtxType:
    def __setattr__(self, k, v):
        pass

    def save_for_backward(self, *a):
        pass

    def mark_non_differentiable(self, *a):
        pass

    def mark_dirty(self, *a):
        pass


_NullCtx = _NullCtxType()


@register_method
@torch_function
def view(self, *shape):
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        raise NotImplementedError("view(dtype) is not supported by webtorch")
    shape = _infer_shape(_sizes(shape), self.numel())
    stride = _view_strides(self._shape, self._stride, shape)
    if stride is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return _view_apply(ViewOp, self, shape, stride)


@register
@torch_function
def reshape(input, *shape):
    shape = _infer_shape(_sizes(shape), input.numel())
    stride = _view_strides(input._shape, input._stride, shape)
    if stride is not None:
        return _view_apply(ViewOp, input, shape, stride)
    c = input.clone(memory_format=None) if recording(input) else _prims.contiguous(input)
    return _view_apply(UnsafeView, c, shape, contiguous_strides(shape))


@register_method
def view_as(self, other):
    return view(self, other.shape)


@register_method
def reshape_as(self, other):
    return reshape(self, other.shape)


@register
@torch_function
def permute(input, *dims):
    dims = _sizes(dims)
    nd = input.dim()
    if len(dims) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {nd} is not equal "
                           f"to len(dims) = {len(dims)}")
    dims = tuple(wrap_dim(d, nd) for d in dims)
    if len(set(dims)) != nd:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _view_apply(Permute, input, dims)


@register
@torch_function
def transpose(input, dim0, dim1):
    nd = input.dim()
    d0, d1 = wrap_dim(dim0, nd), wrap_dim(dim1, nd)
    if nd == 0:
        return _view_apply(Transpose, input, ())
    dims = list(range(nd))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return _view_apply(Transpose, input, tuple(dims))


swapaxes = swapdims = transpose
register(transpose, "swapaxes", "swapdims")


@register
@torch_function
def t(input):
    return _t(input, "t")


def _t(input, name):
    if input.dim() > 2:
        raise RuntimeError(f"{name}() expects a tensor with <= 2 dimensions, but self is {input.dim()}D")
    return _view_apply(TBackward, input, tuple(reversed(range(input.dim()))))


def _T(self):
    return permute(self, tuple(reversed(range(self.dim()))))


def _mT(self):
    if self.dim() < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.")
    return transpose(self, -2, -1)


@register
def adjoint(self):
    return transpose(self, -2, -1)


@register
@torch_function
def movedim(input, source, destination):
    nd = input.dim()
    src_l = list(source) if isinstance(source, (list, tuple)) else [source]
    dst_l = list(destination) if isinstance(destination, (list, tuple)) else [destination]
    if len(src_l) != len(dst_l):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src_l} dims) should contain the "
                           f"same number of dims as destination ({dst_l} dims)")
    src = [wrap_dim(s, nd) for s in src_l]
    dst = [wrap_dim(d, nd) for d in dst_l]
    for name, given, ds in (("source", src_l, src), ("destination", dst_l, dst)):
        if len(set(ds)) != len(ds):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({given})")
    order = [None] * nd
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(nd) if d not in src)
    order = [o if o is not None else next(rest) for o in order]
    return permute(input, order)


moveaxis = movedim
register(movedim, "moveaxis")


def _sizes_for(x, sizes, error):
    """The sizes argument of expand / repeat, at least one per dim of x (else RuntimeError(error(sizes)))."""
    sizes = _sizes(sizes)
    if len(sizes) < x.dim():
        raise RuntimeError(error(sizes))
    return sizes


@register_method
@torch_function
def expand(self, *sizes):
    nd = self.dim()
    sizes = _sizes_for(self, sizes, lambda s: f"expand(torch.FloatTensor{{{list(self.shape)}}}, size=["
                       f"{', '.join(map(str, s))}]): the number of sizes provided ({len(s)}) must be greater or "
                       f"equal to the number of dimensions in the tensor ({nd})")
    off = len(sizes) - nd
    shape = tuple(self._shape[i - off] if s == -1 and i >= off else s for i, s in enumerate(sizes))
    if any(s < 0 for s in shape):
        raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {sizes.index(-1)}")
    if shape == tuple(self._shape):
        return _view_apply(Expand, self, shape) if recording(self) else self._alias_view()
    return _view_apply(Expand, self, shape)


def _alias_view(self):
    return _as_view(self, self._shape, self._stride, self._offset)


@register_method
def expand_as(self, other):
    return expand(self, other.shape)


@register
@torch_function
def broadcast_to(input, shape):
    return expand(input, shape)


@register(method=False)
def broadcast_tensors(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    shape = _prims.broadcast_shapes(*[t.shape for t in tensors])
    return tuple(t if tuple(t.shape) == tuple(shape) else expand(t, shape) for t in tensors)  # PyTorch's: t itself


@register(method=False)
def meshgrid(*tensors, indexing=None):
    """Coordinate grids as expanded views of the 0-d/1-D inputs, as torch.meshgrid ("ij" by
    default, with PyTorch's warning; "xy" swaps the first two dimensions)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t.device != tensors[0].device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    swap = indexing == "xy" and len(tensors) >= 2
    ts = (tensors[1], tensors[0]) + tuple(tensors[2:]) if swap else tuple(tensors)
    shape = tuple(t.numel() for t in ts)
    n = len(ts)
    grids = [expand(t.reshape(tuple(-1 if d == i else 1 for d in range(n))), shape) for i, t in enumerate(ts)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


@register(method=False)
def broadcast_shapes(*shapes):
    return Size(_prims.broadcast_shapes(*[(s,) if isinstance(s, int) else tuple(s) for s in shapes]))


@register
@torch_function
def squeeze(input, dim=None):
    nd = input.dim()
    if dim is None:
        dims = [d for d in range(nd) if input._shape[d] == 1]
    else:
        ds = dim if isinstance(dim, (list, tuple)) else (dim,)
        dims = [d for d in (wrap_dim(x, nd) for x in ds) if nd and input._shape[d] == 1]
    shape = tuple(s for d, s in enumerate(input._shape) if d not in dims)
    stride = tuple(s for d, s in enumerate(input._stride) if d not in dims)
    node = Squeeze if dim is None else SqueezeDims if isinstance(dim, (list, tuple)) else SqueezeDim
    return _view_apply(node, input, shape, stride)


@register
@torch_function
def unsqueeze(input, dim):
    nd = input.dim()
    d = wrap_dim(dim, nd + 1)
    shape = list(input._shape)
    stride = list(input._stride)
    st = shape[d] * stride[d] if d < nd else 1
    shape.insert(d, 1)
    stride.insert(d, st)
    return _view_apply(Unsqueeze, input, tuple(shape), tuple(stride))


@register
@torch_function
def flatten(input, start_dim=0, end_dim=-1):
    nd = input.dim()
    if nd == 0:
        return reshape(input, (1,))
    s, e = wrap_dim(start_dim, nd), wrap_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = input._shape[:s] + (_numel(input._shape[s:e + 1]),) + input._shape[e + 1:]
    return reshape(input, shape)


@register
@torch_function
def unflatten(input, dim, sizes):
    nd = input.dim()
    d = wrap_dim(dim, nd)
    sizes = tuple(sizes)
    n = input._shape[d]
    if -1 in sizes:
        sizes = _infer_shape(sizes, n)
    if _numel(sizes) != n:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
                           f"({n}) in the input tensor")
    return reshape(input, input._shape[:d] + sizes + input._shape[d + 1:])


@register
@torch_function
def as_strided(input, size, stride, storage_offset=None):
    off = input._offset if storage_offset is None else storage_offset
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):  # PyTorch's setStrided checks, in its order: a view never leaves its storage
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}")
    need = 0 if 0 in size else off + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if need > input._storage.numel:
        isz = input.dtype.itemsize
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {off}, and itemsize "
                           f"{isz} requiring a storage size of {need * isz} are out of bounds for storage of size "
                           f"{input._storage.numel * isz}")
    if off < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {off}")
    return _view_apply(AsStrided, input, size, stride, off)


# PyTorch's in-place view ops change self's geometry; their nodes are the view's under another name
_INPLACE_VIEW_NODES = {"TBackward0": "TBackward1", "TransposeBackward0": "TransposeBackward1",
                       "UnsqueezeBackward0": "UnsqueezeBackward1", "SqueezeBackward0": "SqueezeBackward3",
                       "SqueezeBackward1": "SqueezeBackward4", "SqueezeBackward2": "SqueezeBackward5",
                       "AsStridedBackward0": "AsStridedBackward1"}
_inplace_view_cls = {}


def _inplace_view(fn, name):
    """`self.<name>(...)`: self takes the geometry and history of the view fn(self, ...); as an in-place
    op it bumps self's version (tensors saved before then are stale)."""
    def in_place(self, *args, **kwargs):
        check_leaf_inplace(self, overlap_ok=True)
        v = fn(self, *args, **kwargs)
        node = v.grad_fn
        self._shape, self._stride, self._offset = v._shape, v._stride, v._offset
        self._storage.version += 1
        if node is not None:
            cls = type(node)
            if cls not in _inplace_view_cls:
                _inplace_view_cls[cls] = type(_INPLACE_VIEW_NODES[cls.__name__], (cls,), {})
            node.__class__ = _inplace_view_cls[cls]
            self.grad_fn, self._output_nr, self._requires_grad = node, 0, True
        return self
    in_place.__name__ = name
    return in_place


for _f, _names in ((lambda input: _t(input, "t_"), ("t_",)), (transpose, ("transpose_", "swapaxes_", "swapdims_")),
                   (squeeze, ("squeeze_",)), (unsqueeze, ("unsqueeze_",)), (as_strided, ("as_strided_",))):
    register_method(_inplace_view(_f, _names[0]), *_names)


@register
@torch_function
def narrow(input, dim, start, length):
    nd = input.dim()
    if nd == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, nd)
    n = input._shape[d]
    if isinstance(start, Tensor):
        if start.dim() or start.dtype.kind != "i":
            raise RuntimeError("start must be an 0-dim integral Tensor.")
        start = int(start.item())
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    if start < 0:
        start += n
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return _view_apply(Slice, input, _slice_geom, d, start, length, 1)


def slice_dim(input, d, start, stop, step):
    """input[..., start:stop:step, ...] on dim d (already normalized by slice.indices)."""
    return _view_apply(Slice, input, _slice_geom, d, start, len(range(start, stop, step)), step)


@register
@torch_function
def select(input, dim, index):
    nd = input.dim()
    if nd == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, nd)
    n = input._shape[d]
    index = int(index)
    if index < -n or index >= n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input._shape)} at "
                         f"dimension {d}")
    return _view_apply(Select, input, _select_geom, d, index + n if index < 0 else index)


@register
@torch_function
def diagonal(input, offset=0, dim1=0, dim2=1):
    nd = input.dim()
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return _view_apply(Diagonal, input, _diagonal_geom, offset, d1, d2)


class Unfold(Function):
    """Tensor.unfold: the windows of `dim` as a view (a last dim of `size`); windows may overlap,
    so backward adds every window's gradient back into its positions (index_add)."""
    _node_name = "UnfoldBackward0"

    @staticmethod
    def forward(ctx, x, d, size, step):
        ctx.meta = (x.shape, d, size, step)
        n = x._shape[d] if x.dim() else 1
        nwin = (n - size) // step + 1
        if not x.dim():
            return _as_view(x, (size,), (1,), x._offset)
        st = x._stride
        return _as_view(x, x._shape[:d] + (nwin,) + x._shape[d + 1:] + (size,),
                        st[:d] + (st[d] * step,) + st[d + 1:] + (st[d],), x._offset)

    @staticmethod
    def backward(ctx, g):
        from ._creation import tensor
        shape, d, size, step = ctx.meta
        if not shape:
            return g.reshape(()), None, None, None
        nwin = g.shape[d]
        pos = tensor([w * step + j for w in range(nwin) for j in range(size)], dtype=_dtype.int64, device=g.device)
        rows = g.movedim(-1, d + 1).reshape(shape[:d] + (nwin * size,) + shape[d + 1:])
        return g.new_zeros(shape).index_add(d, pos, rows), None, None, None


@register_method
def unfold(self, dimension, size, step):
    """Tensor.unfold(dimension, size, step) (a method only, as in PyTorch)."""
    nd = self.dim()
    d = wrap_dim(dimension, max(nd, 1))
    n = self._shape[d] if nd else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return _view_apply(Unfold, self, d, size, step)


class Unbind(Function):
    """unbind: every slice of `dim` as a view, one node (backward stacks the gradients)."""
    _node_name = "UnbindBackward0"

    @staticmethod
    def forward(ctx, x, d):
        ctx.d = d
        shape = x._shape[:d] + x._shape[d + 1:]
        stride = x._stride[:d] + x._stride[d + 1:]
        return tuple(_as_view(x, shape, stride, x._offset + i * x._stride[d]) for i in range(x._shape[d]))

    @staticmethod
    def backward(ctx, *grads):
        return stack(grads, ctx.d), None


class Split(Function):
    """split / chunk: consecutive pieces of `dim` as views, one node (backward concatenates)."""
    _node_name = "SplitBackward0"

    @staticmethod
    def forward(ctx, x, sizes, d):
        ctx.d = d
        out, start = [], 0
        for n in sizes:
            out.append(_as_view(x, x._shape[:d] + (n,) + x._shape[d + 1:], x._stride,
                                x._offset + start * x._stride[d]))
            start += n
        return tuple(out)

    @staticmethod
    def backward(ctx, *grads):
        return cat(grads, ctx.d), None, None


SplitWithSizes = node_alias(Split, "SplitWithSizesBackward0")


@register
@torch_function
def unbind(input, dim=0):
    if input.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return _view_apply(Unbind, input, wrap_dim(dim, input.dim()))


@register
@torch_function
def split(tensor, split_size_or_sections, dim=0):
    d = wrap_dim(dim, tensor.dim())
    n = tensor._shape[d]
    if isinstance(split_size_or_sections, int):
        s = split_size_or_sections
        if s <= 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        sizes = [min(s, n - i) for i in range(0, n, s)] if n else [0]
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
                               f"at dimension {d}), but got split_sizes={sizes}")
    return _view_apply(Split if isinstance(split_size_or_sections, int) else SplitWithSizes, tensor,
                             tuple(sizes), d)


@register
@torch_function
def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, input.dim())
    n = input._shape[d]
    size = -(-n // chunks) if n else 0
    if size == 0:
        return tuple(narrow(input, d, 0, 0) for _ in range(chunks)) if n == 0 else ()
    return split(input, size, d)


@register
@torch_function
def tensor_split(input, indices_or_sections, dim=0):
    d = wrap_dim(dim, input.dim())
    n = input._shape[d]
    ios = indices_or_sections
    if isinstance(ios, Tensor):  # a 0-d tensor is a number of sections, a 1-d one indices
        if ios.dtype.is_floating_point or ios.dim() > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have integer dtype and to be "
                               f"a zero-dimensional or one-dimensional tensor, but got a tensor with dtype "
                               f"{ios.dtype} and {ios.dim()} dims")
        ios = ios.tolist()
    if isinstance(ios, int):
        if ios <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {ios}")
        q, r = divmod(n, ios)
        sizes = [q + 1] * r + [q] * (ios - r)
        bounds = [(sum(sizes[:i]), sum(sizes[:i + 1])) for i in range(ios)]
    else:
        edges = [0] + list(ios) + [n]
        bounds = [slice(a, b).indices(n)[:2] for a, b in zip(edges, edges[1:])]
    return tuple(narrow(input, d, a, max(0, b - a)) for a, b in bounds)


# ---- copies ---------------------------------------------------------------------------------------
def _clone_kernel(x):
    out = _prims.empty(x.shape, x.dtype, x.device)
    _prims.copy_into(out, x)
    out._storage.version = 0
    return out


Clone = formula_node("CloneBackward0", _clone_kernel, ("x",))


@register
@torch_function
def clone(input, *, memory_format=None):
    return Clone.apply(input) if recording(input) else _clone_kernel(input)


@register_method
@torch_function
def contiguous(input, memory_format=None):
    if input.is_contiguous():
        return input
    return clone(input)


class Copy(Function):
    _node_name = "CopyBackwards"

    @staticmethod
    def forward(ctx, dst, src):
        ctx.meta = (src.shape, src.dtype, src.device) if isinstance(src, Tensor) else None
        _prims.copy_into(dst, src)
        return dst

    @staticmethod
    def backward(ctx, g):
        gs = None
        if ctx.meta is not None and ctx.needs_input_grad[1]:
            shape, dt, dev = ctx.meta
            gs = sum_to(g, shape).to(dt).to(dev)
        return g.new_zeros(g.shape), gs  # PyTorch's zeros_like(g) (g * 0 is -0.0 or NaN)


@register_method
@torch_function
def copy_(self, src, non_blocking=False):
    check_leaf_inplace(self)
    if isinstance(src, Tensor):
        _prims.broadcast_shapes(self.shape, src.shape)
        if src.dim() > self.dim() or _prims.broadcast_shapes(self.shape, src.shape) != tuple(self.shape):
            _bad_copy(src, self)
    if recording(self, src):
        r = src.to(self.device).to(self.dtype) if isinstance(src, Tensor) else src
        if isinstance(r, Tensor) and r._requires_grad:
            r = r.expand(self.shape)
            if self._base is None and self.grad_fn is not None:  # PyTorch's CopyBackwards: zeros to the old history
                self.grad_fn, self._output_nr = Copy.apply(self, r).grad_fn, 0
                return self
        elif not isinstance(r, Tensor):  # a Python number: no tensor operand gives ewise a device
            r = self.new_full(tuple(self.shape), r)
        return inplace_result(self, r)
    return _prims.copy_into(self, src)


def _bad_copy(src, dst):
    raise RuntimeError(f"output with shape {list(dst.shape)} doesn't match the broadcast shape {list(src.shape)}")


@register
@torch_function
def zero_(self):
    return fill_(self, 0)


@register
@torch_function
def fill_(self, value):
    check_leaf_inplace(self, overlap_ok=True)
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.dim()} dimensions.")
        if recording(self, value) and self.dtype.is_floating_point:  # an integer self takes the value only
            return inplace_result(self, value.expand(self.shape) * 1)
        value = value.item()
    value = fill_value(value, self.dtype, self.numel())
    if recording(self):
        return inplace_result(self, self.new_full(tuple(self.shape), value))
    return _prims.ewise_into("copy", self, [value], self.dtype)


@register_method
def resize_(self, *shape):
    shape = _sizes(shape)
    if _numel(shape) <= self._storage.numel - self._offset:
        self._shape, self._stride = Size(shape), contiguous_strides(shape)
        return self
    t = _prims.empty(shape, self.dtype, self.device)
    self._storage, self._shape, self._stride, self._offset = t._storage, t._shape, t._stride, 0
    return self


# ---- joining -------------------------------------------------------------------------------------
class Cat(Function):
    _node_name = "CatBackward0"

    @staticmethod
    def forward(ctx, dim, dt, *tensors):
        ctx.sizes = [t.shape[dim] if t.dim() else 0 for t in tensors]
        ctx.dim = dim
        ctx.dtypes = [t.dtype for t in tensors]
        return _cat_kernel(tensors, dim, dt)

    @staticmethod
    def backward(ctx, g):
        grads, start = [], 0
        for s, dt in zip(ctx.sizes, ctx.dtypes):
            grads.append(narrow(g, ctx.dim, start, s).to(dt))
            start += s
        return (None, None) + tuple(grads)


class Stack(Cat):
    _node_name = "StackBackward0"

    @staticmethod
    def forward(ctx, dim, dt, *tensors):
        ctx.n = len(tensors)
        ctx.dim = dim
        ctx.dtypes = [t.dtype for t in tensors]
        return _cat_kernel([_as_view(t, t._shape[:dim] + (1,) + t._shape[dim:],
                                     t._stride[:dim] + (1,) + t._stride[dim:], t._offset) for t in tensors], dim, dt)

    @staticmethod
    def backward(ctx, g):
        return (None, None) + tuple(select(g, ctx.dim, i).to(dt) for i, dt in zip(range(ctx.n), ctx.dtypes))


def _cat_kernel(tensors, dim, dt):
    shape = list(tensors[0].shape)
    shape[dim] = sum(t.shape[dim] for t in tensors)
    out = _prims.empty(shape, dt, tensors[0].device)
    start = 0
    for t in tensors:
        n = t.shape[dim]
        if n:
            region = _as_view(out, out._shape[:dim] + (n,) + out._shape[dim + 1:], out._stride,
                              start * out._stride[dim])
            _prims.copy_into(region, t)
        start += n
    out._storage.version = 0
    return out


def _check_cat(tensors, dim, name):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    if len(tensors) == 0:
        raise ValueError(f"{name}(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    _prims.common_device(tensors)
    return _dtype.result_type(*[t for t in tensors]) if len({t.dtype for t in tensors}) > 1 else tensors[0].dtype


def _check_cat_out(dt, out):
    if out is not None and not can_cast(dt, out.dtype):
        raise TypeError(f"torch.cat(): input types can't be cast to the desired output type {name_of(out.dtype)}")


@register(method=False)
@torch_function
def cat(tensors, dim=0, *, out=None):
    dt = _check_cat(tensors, dim, "torch.cat")
    _check_cat_out(dt, out)
    full = [t for t in tensors if not (t.dim() == 1 and t.shape[0] == 0)]
    if not full:  # only empty 1-D tensors: an empty result, requiring grad as theirs
        if dt.is_floating_point and recording(*tensors):
            return write_out(Cat.apply(0, dt, *tensors), out, *tensors)
        return write_out(_prims.empty((0,), dt, tensors[0].device), out)
    ref = full[0]
    if ref.dim() == 0:
        raise RuntimeError(f"zero-dimensional tensor (at position {tensors.index(ref)}) cannot be concatenated")
    d = wrap_dim(dim, ref.dim())
    for i, t in enumerate(tensors):
        if t.dim() == 1 and t.shape[0] == 0:
            continue
        if t.dim() != ref.dim():
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.dim()} and {t.dim()}")
        for k in range(ref.dim()):
            if k != d and t.shape[k] != ref.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{ref.shape[k]} but got size {t.shape[k]} for tensor number {i} in the list.")
    if dt.is_floating_point and recording(*full):
        return write_out(Cat.apply(d, dt, *full), out, *tensors)
    return write_out(_cat_kernel(full, d, dt), out, *tensors)


concat = concatenate = cat
register(cat, "concat", "concatenate", method=False)


@register(method=False)
@torch_function
def stack(tensors, dim=0, *, out=None):
    dt = _check_cat(tensors, dim, "stack")
    _check_cat_out(dt, out)
    ref = tensors[0]
    for i, t in enumerate(tensors):
        if tuple(t.shape) != tuple(ref.shape):
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(ref.shape)} at entry 0 "
                               f"and {list(t.shape)} at entry {i}")
    d = wrap_dim(dim, ref.dim() + 1)
    if dt.is_floating_point and recording(*tensors):
        return write_out(Stack.apply(d, dt, *tensors), out)
    return write_out(Stack.forward(_NullCtx, d, dt, *tensors), out)


def _check_nonempty(tensors, name):
    if len(tensors) == 0:
        raise RuntimeError(f"{name} expects a non-empty TensorList")


@register(method=False)
def hstack(tensors):
    _check_nonempty(tensors, "hstack")
    tensors = [atleast_1d(t) for t in tensors]
    return cat(tensors, 0 if tensors[0].dim() == 1 else 1)


@register(method=False)
def vstack(tensors):
    _check_nonempty(tensors, "vstack")
    return cat([atleast_2d(t) for t in tensors], 0)


row_stack = vstack
register(vstack, "row_stack", method=False)


@register(method=False)
def dstack(tensors):
    _check_nonempty(tensors, "dstack")
    return cat([atleast_3d(t) for t in tensors], 2)


@register(method=False)
def column_stack(tensors):
    return hstack([t.reshape(-1, 1) if t.dim() <= 1 else t for t in tensors])


def _atleast(fn):
    """atleast_Nd(t) -> a tensor; atleast_Nd(t1, t2, ...) or atleast_Nd([t1, t2]) -> a tuple."""
    def public(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], Tensor):
            return fn(tensors[0])
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            tensors = tensors[0]
        return tuple(fn(t) for t in tensors)
    public.__name__ = public.__qualname__ = fn.__name__
    return public


@register(method=False)
@_atleast
def atleast_1d(t):
    return t.reshape(1) if t.dim() == 0 else t


@register(method=False)
@_atleast
def atleast_2d(t):
    return t.reshape(1, -1) if t.dim() < 2 else t


@register(method=False)
@_atleast
def atleast_3d(t):
    if t.dim() == 0:
        return t.reshape(1, 1, 1)
    if t.dim() == 1:
        return t.reshape(1, -1, 1)
    if t.dim() == 2:
        return t.unsqueeze(-1)
    return t


# ---- rearrangements through gathers -------------------------------------------------------------
def _gather_dims(input, index_per_dim, node):
    """out = input at coordinates given per dim (None = identity), via storage offsets."""
    from . import indexing
    nd = input.dim()
    coords = [None if c is None else c.reshape((c.numel(),) + (1,) * (nd - d - 1))
              for d, c in enumerate(index_per_dim)]
    return indexing.take_offsets(input, coords, tuple(input.shape), node=getattr(indexing, node))


@register
@torch_function
def flip(input, dims):
    nd = input.dim()
    dims = [wrap_dim(d, nd) for d in (dims if isinstance(dims, (list, tuple)) else [dims])]
    if len(set(dims)) != len(dims):
        raise RuntimeError("dims has duplicates, original flip dims size=" + str(len(dims)))
    from ._creation import arange
    idx = [arange(input._shape[d] - 1, -1, -1, device=input.device) if d in dims else None for d in range(nd)]
    return _gather_dims(input, idx, "Flip")


@register
def fliplr(input):
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, [1])


@register
def flipud(input):
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, [0])


@register
@torch_function
def roll(input, shifts, dims=None):
    from ._creation import arange
    if dims is None:
        return roll(input.flatten(), shifts, 0).view(input.shape)
    shifts = shifts if isinstance(shifts, (list, tuple)) else [shifts]
    dims = dims if isinstance(dims, (list, tuple)) else [dims]
    if not shifts:
        raise RuntimeError("`shifts` required")
    if input.dim() == 0:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    nd = input.dim()
    idx = [None] * nd
    for s, d in zip(shifts, dims):
        d = wrap_dim(d, nd)
        n = input._shape[d]
        if n:
            idx[d] = (arange(n, device=input.device) - s).remainder(n)
    return _gather_dims(input, idx, "Roll")


@register_method
@torch_function
def repeat(input, *sizes):
    nd = input.dim()
    sizes = _sizes_for(input, sizes, lambda s: "Number of dimensions of repeat dims can not be smaller than number of "
                       "dimensions of tensor")
    x = input.reshape((1,) * (len(sizes) - nd) + tuple(input.shape))
    inter, expd, final = [], [], []
    for r, s in zip(sizes, x.shape):
        inter += [1, s]
        expd += [r, s]
        final.append(r * s)
    r = x.reshape(inter).expand(expd).reshape(final)
    return r.clone() if r._storage is input._storage else r  # PyTorch's repeat copies: never an alias


@register
@torch_function
def tile(input, dims):
    dims = tuple(dims)
    if len(dims) < input.dim():
        dims = (1,) * (input.dim() - len(dims)) + dims
    return repeat(input, dims)


@register
def repeat_interleave(input, repeats, dim=None, *, output_size=None):
    if dim is None:
        input, dim = input.flatten(), 0
    d = wrap_dim(dim, input.dim())
    if isinstance(repeats, int):
        x = input.unsqueeze(d + 1)
        shape = list(x.shape)
        shape[d + 1] = repeats
        out_shape = list(input.shape)
        out_shape[d] *= repeats
        return x.expand(shape).reshape(out_shape)
    from ._creation import tensor
    reps = repeats.reshape(-1).tolist() if isinstance(repeats, Tensor) else list(repeats)
    if len(reps) == 1:
        reps = reps * input.shape[d]
    if len(reps) != input.shape[d]:
        raise RuntimeError("repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{len(reps)} and input.size({d}) = {input.shape[d]}")
    if any(r < 0 for r in reps):
        raise RuntimeError("repeats can not be negative")
    if output_size is not None and output_size != sum(reps):
        raise RuntimeError("allocated size does not match required size")
    idx = [i for i, r in enumerate(reps) for _ in range(r)]
    return input.index_select(d, tensor(idx, dtype=int64, device=input.device))


def _tri_impl(input, diagonal, lower):
    from ._creation import arange
    if input.dim() < 2:
        raise RuntimeError(f"{'tril' if lower else 'triu'}: input tensor must have at least 2 dimensions")
    r, c = input.shape[-2], input.shape[-1]
    diff = arange(c, device=input.device).unsqueeze(0) - arange(r, device=input.device).unsqueeze(1)
    mask = diff <= diagonal if lower else diff >= diagonal
    return where(mask, input, False)  # False keeps every dtype (0 would make bool int64)


_Tril = composite_node("TrilBackward0", _tri_impl)
_Triu = composite_node("TriuBackward0", _tri_impl)


@register
@torch_function
def tril(input, diagonal=0):
    return _Tril.call(input, diagonal, True)


@register
@torch_function
def triu(input, diagonal=0):
    return _Triu.call(input, diagonal, False)


@register_method
def tril_(self, diagonal=0):
    return copy_(self, tril(self, diagonal))


@register_method
def triu_(self, diagonal=0):
    return copy_(self, triu(self, diagonal))
