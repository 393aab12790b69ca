"""Views: metadata-only ops whose result shares memory with its input (view, reshape, permute,
expand, squeeze, slices, as_strided, unfold, unbind/split, ...), the in-place view ops, and the
machinery they share: `_as_view`, the geometry of each view, and one node per view (a formula row
in autograd/derivatives.py)."""
import warnings

from .. import _dtype
from .._geometry import contiguous_strides, numel as _numel
from .._tensor import Size, Storage, Tensor
from ..autograd import grad_mode
from ..overrides import torch_function
from . import _prims
from ._common import check_leaf_inplace, formula_node, recording, wrap_dim
from .registry import register, register_method


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
# each view's node is a formula row (autograd/derivatives.py) over a kernel that makes the view
def _view_kernel(x, shape, stride):
    return _as_view(x, shape, stride, x._offset)


def _permute_kernel(x, dims):
    shape, stride = tuple(x._shape), x._stride  # a plain tuple: Size indexes through Python
    return _as_view(x, tuple([shape[d] for d in dims]), tuple([stride[d] for d in dims]), x._offset)


def _expand_kernel(x, shape):
    return _as_view(x, shape, _expand_strides(x, shape), x._offset)


def _slice_kernel(x, geom, *params):
    """A view that picks distinct elements of its input (slice, narrow, select, diagonal), its
    geometry `geom(shape, stride, offset, *params)` of the input's."""
    return _as_view(x, *geom(x._shape, x._stride, x._offset, *params))


_VIEW_ARGS = ("x", "shape", "stride")
ViewOp, UnsafeView, Unsqueeze = (formula_node(n, _view_kernel, _VIEW_ARGS) for n in (
    "ViewBackward0", "UnsafeViewBackward0", "UnsqueezeBackward0"))
# squeeze(), squeeze(dim), squeeze(dims), squeeze_(dim) as matmul uses it
Squeeze, SqueezeDim, SqueezeDims, SqueezeDimInplace = (formula_node(n, _view_kernel, _VIEW_ARGS) for n in (
    "SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2", "SqueezeBackward4"))
Permute, Transpose, TBackward = (formula_node(n, _permute_kernel, ("x", "dims")) for n in (
    "PermuteBackward0", "TransposeBackward0", "TBackward0"))
Expand = formula_node("ExpandBackward0", _expand_kernel, ("x", "shape"))
Slice, Select, Diagonal = (formula_node(n, _slice_kernel, ("x", "geom", "*params")) for n in (
    "SliceBackward0", "SelectBackward0", "DiagonalBackward0"))


def _whole(shape, stride, offset):  # x[...]
    return shape, stride, offset


def _slice_geom(shape, stride, offset, d, start, n, step):
    return (shape[:d] + (n,) + shape[d + 1:], stride[:d] + (stride[d] * step,) + stride[d + 1:],
            offset + start * stride[d])


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


# as_strided: a view given in storage terms (also the history of a view regenerated after an
# in-place write, `Tensor.grad_fn`)
AsStrided = formula_node("AsStridedBackward0", lambda x, shape, stride, offset: _as_view(x, shape, stride, offset),
                         ("x", "shape", "stride", "offset"))


def _view_apply(F, x, *args):
    if recording(x):
        out = F.apply(x, *args)
        if isinstance(out, tuple):  # unbind, split: PyTorch's error when one is then written in place
            for v in out:
                v._multi_view = True
        return out
    out = F.kernel(x, *args)
    if not grad_mode._state["enabled"]:  # PyTorch's errors when it or its base is then written with grad on
        for v in out if isinstance(out, tuple) else (out,):
            v._no_grad_view = v._diff_view
    return out


@register_method
@torch_function
def view(self, *shape, **kw):
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype) or "dtype" in kw:
        return _view_dtype(self, kw.get("dtype", shape[0] if shape else None))
    shape = _infer_shape(_sizes(shape), self.numel())
    stride = _view_strides(self._shape, self._stride, shape)
    if stride is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return _view_apply(ViewOp, self, shape, stride)


def _view_dtype_geometry(x, dtype):
    """PyTorch's view(dtype) checks and the view's (shape, stride, offset) in elements of `dtype`."""
    old, new = x.dtype.itemsize, dtype.itemsize
    shape, stride, offset = tuple(x._shape), tuple(x._stride), x._offset
    if old == new:
        return shape, stride, offset
    what = f"to view {_dtype._C_NAMES[x.dtype.name]} as {_dtype._C_NAMES[dtype.name]} (different element sizes)"
    if not shape:
        raise RuntimeError(f"self.dim() cannot be 0 {what}")
    if old > new:
        if stride[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {stride[-1]}")
        r = old // new
        return shape[:-1] + (shape[-1] * r,), tuple(s * r for s in stride[:-1]) + (1,), offset * r
    r = new // old
    for name, v in (("size(-1)", shape[-1]), ("storage_offset()", offset)):
        if v % r:
            raise RuntimeError(f"self.{name} must be divisible by {r} {what}, but got {v}")
    for i, s in enumerate(stride):
        if i == len(stride) - 1 and s != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {s}")
        if i < len(stride) - 1 and s % r:
            raise RuntimeError(f"self.stride({i}) must be divisible by {r} {what}, but got {s}")
    return shape[:-1] + (shape[-1] // r,), tuple(s // r for s in stride[:-1]) + (1,), offset // r


def _view_dtype(x, dtype):
    """Tensor.view(dtype): x's bytes read as `dtype`, sharing memory (numpy-backed tensors: the other backends keep
    no byte view of a buffer, and a copy would not share). Not differentiable, as in PyTorch."""
    shape, stride, offset = _view_dtype_geometry(x, dtype)
    st = x._storage
    if dtype is x.dtype:
        return Tensor._make(st, shape, stride, offset)
    if not st.backend.numpy_buffers:
        raise NotImplementedError(f"view(dtype) on {x.device.type} tensors (without numpy): webtorch reinterprets "
                                  "bytes in place only in numpy-backed cpu memory")
    numel = st.numel * st.dtype.itemsize // dtype.itemsize
    buf = st.buf if st.buf.nbytes == numel * dtype.itemsize else st.buf.view("uint8")[:numel * dtype.itemsize]
    v = Tensor._make(Storage(st.backend.reinterpret(buf, dtype.name), dtype, st.device, numel, st.backend),
                     shape, stride, offset)
    v._storage.version = st.version
    return v


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


def _H(self):  # the conjugate transpose (conj is the tensor itself for a real one)
    return _T(self).conj()


def _mH(self):
    return _mT(self).conj()


@register
def adjoint(self):
    return transpose(self, -2, -1).conj()


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
        raise RuntimeError("The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension "
                           f"{sizes.index(-1)}")
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
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {off}, and "
                           f"itemsize "
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
                   (squeeze, ("squeeze_",)), (unsqueeze, ("unsqueeze_",))):
    register_method(_inplace_view(_f, _names[0]), *_names)
register(_inplace_view(as_strided, "as_strided_"), "as_strided_")  # torch.as_strided_ too


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


def _unfold_kernel(x, d, size, step):
    """Tensor.unfold: the windows of `dim` as a view (a last dim of `size`)."""
    n = x._shape[d] if x.dim() else 1
    nwin = (n - size) // step + 1
    if not x.dim():
        return _as_view(x, (size,), (1,), x._offset)
    st = x._stride
    return _as_view(x, x._shape[:d] + (nwin,) + x._shape[d + 1:] + (size,),
                    st[:d] + (st[d] * step,) + st[d + 1:] + (st[d],), x._offset)


Unfold = formula_node("UnfoldBackward0", _unfold_kernel, ("x", "d", "size", "step"))


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


def _unbind_kernel(x, d):
    """unbind: every slice of `dim` as a view, one node (backward stacks the gradients)."""
    shape = x._shape[:d] + x._shape[d + 1:]
    stride = x._stride[:d] + x._stride[d + 1:]
    return tuple(_as_view(x, shape, stride, x._offset + i * x._stride[d]) for i in range(x._shape[d]))


def _split_kernel(x, sizes, d):
    """split / chunk: consecutive pieces of `dim` as views, one node (backward concatenates)."""
    out, start = [], 0
    for n in sizes:
        out.append(_as_view(x, x._shape[:d] + (n,) + x._shape[d + 1:], x._stride, x._offset + start * x._stride[d]))
        start += n
    return tuple(out)


Unbind = formula_node("UnbindBackward0", _unbind_kernel, ("x", "d"))
Split, SplitWithSizes = (formula_node(n, _split_kernel, ("x", "sizes", "d"))
                         for n in ("SplitBackward0", "SplitWithSizesBackward0"))


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
