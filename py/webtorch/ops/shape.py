"""Shape ops that are not views: copies (clone, copy_, fill_, ...), joins (cat, stack, ...) and
rearrangements through gathers (flip, roll, repeat, tril, ...). The views are in ops/views.py."""
from .. import _dtype
from .._geometry import contiguous_strides, numel as _numel
from .._tensor import Size, Tensor
from ..overrides import torch_function
from . import _prims
from ._common import (
    Copy,
    can_cast,
    check_leaf_inplace,
    composite_node,
    fill_value,
    formula_node,
    inplace_result,
    name_of,
    recording,
    wrap_dim,
    write_out,
)
from ._creation import arange, tensor
from .pointwise import where
from .registry import register, register_method

# the views other modules take from here
from .views import (  # noqa: F401
    _T,
    Slice,
    SqueezeDimInplace,
    UnsafeView,
    _alias_view,
    _as_view,
    _mT,
    _sizes,
    _sizes_for,
    _view_apply,
    _view_strides,
    _whole,
    as_strided,
    broadcast_tensors,
    movedim,
    narrow,
    select,
    slice_dim,
    unsqueeze,
)

int64 = _dtype.int64


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


@register_method
@torch_function
def copy_(self, src, non_blocking=False):
    check_leaf_inplace(self, overlap_ok=src is self)  # a tensor copied onto itself: PyTorch's no-op, overlap or not
    if isinstance(src, Tensor):
        _prims.broadcast_shapes(self.shape, src.shape)
        if src.dim() > self.dim() or _prims.broadcast_shapes(self.shape, src.shape) != tuple(self.shape):
            _bad_copy(src, self)
    if recording(self, src):
        r = src.to(self.device).to(self.dtype) if isinstance(src, Tensor) else src
        if isinstance(r, Tensor) and r._requires_grad:
            r = r.expand(self.shape)
            if self._base is None:  # PyTorch's CopyBackwards (an old history gets zeros)
                self.grad_fn, self._output_nr, self._requires_grad = Copy.apply(self, r).grad_fn, 0, True
                return self
        elif not isinstance(r, Tensor):  # a Python number: no tensor operand gives ewise a device
            r = self.new_full(tuple(self.shape), r)
        return inplace_result(self, r)
    return self if src is self else _prims.copy_into(self, src)


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
    """Tensor.resize_: contiguous strides over the same storage, grown in place (its elements kept) if too small."""
    shape = _sizes(shape)
    if _numel(shape) > self._storage.numel - self._offset:
        _prims.resize_storage(self._storage, self._offset + _numel(shape))
    self._shape, self._stride = Size(shape), contiguous_strides(shape)
    return self


# ---- joining -------------------------------------------------------------------------------------
def _cat_kernel(dim, dt, *tensors):
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


def _stack_kernel(dim, dt, *tensors):
    return _cat_kernel(dim, dt, *[_as_view(t, t._shape[:dim] + (1,) + t._shape[dim:],
                                           t._stride[:dim] + (1,) + t._stride[dim:], t._offset) for t in tensors])


Cat = formula_node("CatBackward0", _cat_kernel, ("dim", "dt", "*tensors"))
Stack = formula_node("StackBackward0", _stack_kernel, ("dim", "dt", "*tensors"))


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
        if dt.kind in "fc" and recording(*tensors):
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
    if dt.kind in "fc" and recording(*full):
        return write_out(Cat.apply(d, dt, *full), out, *tensors)
    return write_out(_cat_kernel(d, dt, *full), out, *tensors)


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
    if dt.kind in "fc" and recording(*tensors):
        return write_out(Stack.apply(d, dt, *tensors), out)
    return write_out(Stack.kernel(d, dt, *tensors), out)


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
