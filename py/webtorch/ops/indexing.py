"""Indexing: every gather-like op lowers to `take` at computed storage offsets and every
scatter-like op to `put` (the two indexing primitives of the backend)."""
import weakref

from .. import _dtype
from .._geometry import contiguous_strides
from .._tensor import Tensor
from ..overrides import torch_function
from . import _prims, shape as _shape
from ._common import (
    OUT_DTYPE,
    check_leaf_inplace,
    check_wide_uint,
    fill_value,
    formula_node,
    inplace_result,
    name_of,
    recording,
    scalar_to,
    wrap_dim,
    write_out,
)
from ._creation import arange, tensor
from .pointwise import where
from .registry import register, register_method

int64, bool_ = _dtype.int64, _dtype.bool_


def _arange(n, device):
    return _prims.arange(n, 0, 1, int64, device)


def _offsets(coords, out_shape, strides, base, device):
    """base + sum_d coords[d] * strides[d] as an int64 tensor of out_shape; coords[d] is None
    (the identity coordinate along dim d) or an int64 tensor broadcastable to out_shape."""
    nd = len(out_shape)
    acc = None
    for d in range(nd):
        st = strides[d]
        c = coords[d]
        if c is None:
            if out_shape[d] == 1 or st == 0:
                continue
            c = _arange(out_shape[d], device).reshape((out_shape[d],) + (1,) * (nd - d - 1))
        term = c if st == 1 else _prims.ewise("mul", [c, st], int64, int64)
        acc = term if acc is None else _prims.ewise("add", [acc, term], int64, int64)
    if acc is None:
        acc = _prims.ewise("copy", [base], int64, int64, shape=out_shape)
    elif base:
        acc = _prims.ewise("add", [acc, base], int64, int64)
    if tuple(acc.shape) != tuple(out_shape):
        acc = _prims.ewise("copy", [acc], int64, int64, shape=out_shape)
    return acc


def _take_kernel(x, storage, logical):
    """Gather from x at storage offsets; `logical` (the same positions in x's contiguous layout)
    is what the backward puts the gradient back at (autograd/derivatives.py)."""
    return _prims.take(x, storage)


_TAKE_ARGS = ("x", "storage", "logical")
Take = formula_node("IndexBackward0", _take_kernel, _TAKE_ARGS)


def _put_kernel(x, idx, v, accumulate):
    """x (flat) with out[idx] = v (or += v), in a new tensor."""
    out = x.clone() if x.is_contiguous() else _prims.contiguous(x)
    if out is x:
        out = x.clone()
    _prims.put(out, idx, v, accumulate)
    return out


IndexPutFlat = formula_node("IndexPutBackward0", _put_kernel, ("x", "idx", "v", "accumulate"))


def take_flat(x, idx, node=Take):
    """x.flatten()[idx] for a contiguous-layout x (differentiable)."""
    if recording(x):
        return node.apply(x, _storage_of_logical(x, idx), idx)
    return _prims.take(x, _storage_of_logical(x, idx))


def _storage_of_logical(x, lin):
    if x.is_contiguous():
        return lin if not x._offset else _prims.ewise("add", [lin, x._offset], int64, int64)
    # decompose logical positions into coordinates, then use x's strides
    acc, rem = None, lin
    for d in range(x.dim() - 1, -1, -1):
        n = x.shape[d]
        c = _prims.ewise("remainder", [rem, n], int64, int64)
        rem = _prims.ewise("floor_divide", [rem, n], int64, int64)
        term = _prims.ewise("mul", [c, x._stride[d]], int64, int64)
        acc = term if acc is None else _prims.ewise("add", [acc, term], int64, int64)
    return _prims.ewise("add", [acc, x._offset], int64, int64) if acc is not None else lin


def index_put_flat(x, idx, v, accumulate):
    """A new tensor of x's values (flattened) with v put at logical positions idx."""
    flat = x.reshape(-1)
    if recording(flat, v):
        return IndexPutFlat.apply(flat, idx, v, accumulate)
    return _put_kernel(flat, idx, v, accumulate)


def take_offsets(x, coords, out_shape=None, node=Take):
    """Gather x at coordinates (per dim: None = identity, or an int64 tensor)."""
    if out_shape is None:
        shapes = [tuple(c.shape) for c in coords if c is not None]
        out_shape = list(_prims.broadcast_shapes(*shapes)) if shapes else []
        nd = x.dim()
        out_shape = [1] * (nd - len(out_shape)) + out_shape
        for d in range(nd):
            if coords[d] is None:
                out_shape[d] = x.shape[d]
        out_shape = tuple(out_shape)
    storage = _offsets(coords, out_shape, x._stride, x._offset, x.device)
    if recording(x):
        if x.is_contiguous() and x._offset == 0:
            logical = storage
        else:
            logical = _offsets(coords, out_shape, contiguous_strides(x.shape), 0, x.device)
        return node.apply(x, storage, logical)
    return _prims.take(x, storage)


def _check_range(idx, size, dim, kind=IndexError, msg=None):
    """idx with negative entries wrapped (x[idx] semantics); raises for entries outside
    [-size, size) (on webgpu at the next sync: see _guard)."""
    if idx.numel() == 0:
        return idx
    safe = _guard(idx, -size, size, lambda bad: kind(msg or f"index {bad} is out of bounds for dimension {dim} "
                                                         f"with size {size}"))
    if safe is True:    # known to be in range
        mn = _index_range(idx)[0]
        if mn < 0:
            idx = _prims.ewise("where", [_prims.ewise("lt", [idx, 0], int64, bool_),
                                         _prims.ewise("add", [idx, size], int64, int64), idx], int64, int64)
        return idx
    wrapped = _prims.ewise("where", [_prims.ewise("lt", [safe, 0], int64, bool_),
                                     _prims.ewise("add", [safe, size], int64, int64), safe], int64, int64)
    return _clamp(wrapped, 0, size)


def _clamp(idx, lo, size):
    """idx clamped into [lo, size): what a deferred-checked take/put uses, so that an index
    whose error is reported later never reads or writes out of bounds meanwhile (fused)."""
    return _prims.ewise("minimum", [_prims.ewise("maximum", [idx, lo], int64, int64), size - 1], int64, int64)


_RANGE_ERROR = [None]   # an override of the gather bounds error: bad value -> exception


class range_error:
    """Within the block, gather's out-of-range error is err(bad) (nll_loss: "Target 12 is out
    of bounds." as an IndexError); it is captured when the check is queued."""

    def __init__(self, err):
        self.err = err

    def __enter__(self):
        self.old, _RANGE_ERROR[0] = _RANGE_ERROR[0], self.err

    def __exit__(self, *exc):
        _RANGE_ERROR[0] = self.old


def _guard(index, lo, size, err):
    """Check lo <= index < size; err(bad) is the exception for an offending value bad (the
    largest one at or above size, else the smallest one below lo).

    Returns True when the index is known to be in range (checked now: on cpu, or from the
    range cache). On a backend with deferred checks (webgpu) nothing is read back now, which
    would wait mid-step: min and max are computed on the device and registered as a pending
    check that the next sync point resolves (raising err(bad) there), and the index clamped
    into [lo, size) is returned for the take/put to use meanwhile."""
    be = index._backend
    defer = getattr(be, "defer_check", None)
    mm = _cached_range(index) if defer is not None else _index_range(index)
    if mm is not None:
        bad = mm[1] if mm[1] >= size else (mm[0] if mm[0] < lo else None)
        if bad is not None:
            raise err(bad)
        return True
    vals = _shape.stack([index.min(), index.max()])
    storage, key = weakref.ref(index._storage), _range_key(index)

    def fail(v):
        st = storage()
        if st is not None and st.version == key[3]:
            _remember_range(st, key, tuple(v))
        bad = v[1] if v[1] >= size else (v[0] if v[0] < lo else None)
        return None if bad is None else err(bad)
    defer(vals._strided(), vals, fail)
    return _clamp(index if index.dtype is int64 else index.to(int64), lo, size)


# ---- x[index] ----------------------------------------------------------------------------------
def _to_index_tensor(obj, device):
    t = obj if isinstance(obj, Tensor) else tensor(obj, device=device)
    if t.device != device:
        t = t.to(device)
    if t.dtype.is_floating_point:
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return t


def _expand_index(x, index):
    """Normalize an index into (view after basic indexing, [(dim in view, int64 tensor)])."""
    items = [_index_item(it, x.device) for it in (index if isinstance(index, tuple) else (index,))]
    v, d, od, adv = x, 0, 0, []  # od: how many dims of x the entries so far index (for error messages)
    for it in _without_ellipsis(items, x.dim()):
        if it is None:
            v = _shape.unsqueeze(v, d)
            d += 1
            continue
        od += 1
        if isinstance(it, slice):
            v = _sliced(v, d, it)
            d += 1
        elif isinstance(it, Tensor) and it.dtype in (bool_, _dtype.uint8):
            v, d = _masked(v, d, it, adv, x.device)
        elif isinstance(it, Tensor):
            adv.append((d, it))
            d += 1
        else:
            v = _selected(v, d, it, od - 1)
    return v, adv


def _index_item(it, device):
    """An index entry with lists, ranges, bools and cpu or floating tensors made index tensors on device."""
    if isinstance(it, range):  # a sequence of ints: an advanced index, as in PyTorch
        return tensor(list(it), dtype=int64, device=device)
    if isinstance(it, (list, bool)):
        return _to_index_tensor(it, device)
    if isinstance(it, Tensor) and (it.device != device or it.dtype.is_floating_point):
        return _to_index_tensor(it, device)  # cpu index tensors index webgpu tensors, as in PyTorch
    if isinstance(it, str):
        raise TypeError("new(): invalid data type 'str'")
    if not (it is None or it is Ellipsis or isinstance(it, (slice, Tensor)) or hasattr(it, "__index__")):
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                         f"indices (got {type(it).__name__})")
    return it


def _consumed(it):
    """How many dims of the indexed tensor an index entry consumes (a bool mask: one per dim it covers)."""
    if it is None or it is Ellipsis:
        return 0
    if isinstance(it, Tensor) and it.dtype in (bool_, _dtype.uint8):
        return max(it.dim(), 0)
    return 1


def _without_ellipsis(items, ndim):
    """The index entries with '...' replaced by the full slices it stands for."""
    n_used = sum(_consumed(it) for it in items)
    if n_used > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    out = []
    n_ell = 0
    for it in items:
        if it is Ellipsis:  # as in PyTorch, a second '...' stands for no dims
            out.extend([slice(None)] * (ndim - n_used if n_ell == 0 else 0))
            n_ell += 1
        else:
            out.append(it)
    return out


def _sliced(v, d, it):
    """v sliced along dim d by the slice it."""
    if it.step is not None and int(it.step) <= 0:
        raise ValueError("step must be greater than zero")
    n = v.shape[d]
    s, e, st = slice(*(None if a is None else int(a) for a in (it.start, it.stop, it.step))).indices(n)
    return v if (s, e, st) == (0, n, 1) else _shape.slice_dim(v, d, s, max(e, s), st)


def _masked(v, d, mask, adv, device):
    """(v, the next dim) after a bool or uint8 mask at dim d: its nonzero coordinates join adv, one index tensor per
    dim it covers (a 0-d mask adds a dim of size 1 indexed by [0] or [])."""
    if mask.dtype is _dtype.uint8:
        mask = mask.bool()
    for k in range(mask.dim()):
        if mask.shape[k] != v.shape[d + k]:
            raise IndexError(f"The shape of the mask [{', '.join(map(str, mask.shape))}] at index {k} does "
                             f"not match the shape of the indexed tensor [{', '.join(map(str, v.shape))}] "
                             f"at index {d + k}")
    if mask.dim() == 0:
        v = _shape.unsqueeze(v, d)
        adv.append((d, tensor([0] if mask.item() else [], dtype=int64, device=device)))
        return v, d + 1
    nz = nonzero(mask)
    for k in range(mask.dim()):
        adv.append((d + k, _shape.select(nz, 1, k)))
    return v, d + mask.dim()


def _selected(v, d, it, dim):
    """v with dim d selected at the integer it; dim is that dim's number in the indexed tensor (for the message)."""
    try:
        i = int(it)
    except TypeError:
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                         "are valid indices (got " + type(it).__name__ + ")") from None
    n = v.shape[d]
    if i < -n or i >= n:
        raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {n}")
    return _shape.select(v, d, i)


@torch_function
def getitem(self, index):
    v, adv = _expand_index(self, index)
    if not adv:
        if v is self:
            return _shape._view_apply(_shape.Slice, self, _shape._whole)
        return v
    return _advanced_gather(v, adv)


def _advanced_plan(v, adv):
    """(coords per result dim, result shape) for advanced indices adv on view v."""
    dims = [d for d, _ in adv]
    idxs = [_check_range(t.to(int64) if t.dtype is not int64 else t, v.shape[d], d) for d, t in adv]
    b = _prims.broadcast_shapes(*[tuple(t.shape) for t in idxs])
    adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
    rest = [d for d in range(v.dim()) if d not in dims]
    if adjacent:
        before = [d for d in rest if d < dims[0]]
        after = [d for d in rest if d > dims[-1]]
    else:
        before, after = [], rest
    out_shape = tuple(v.shape[d] for d in before) + tuple(b) + tuple(v.shape[d] for d in after)
    nb, na = len(before), len(after)
    nd = len(out_shape)
    coords_src = []  # (source dim, coordinate tensor shaped to broadcast against out_shape)
    for i, d in enumerate(before):
        coords_src.append((d, _arange(v.shape[d], v.device).reshape((v.shape[d],) + (1,) * (nd - i - 1))))
    for d, t in zip(dims, idxs):
        coords_src.append((d, t.reshape(tuple(t.shape)).reshape((1,) * nb + (1,) * (len(b) - t.dim()) + tuple(t.shape)
                                                                + (1,) * na)))
    for i, d in enumerate(after):
        coords_src.append((d, _arange(v.shape[d], v.device).reshape((v.shape[d],) + (1,) * (na - i - 1))))
    return coords_src, out_shape


def _sum_coords(coords_src, strides, base, out_shape, device):
    acc = None
    for d, c in coords_src:
        st = strides[d]
        if st == 0:
            continue
        term = c if st == 1 else _prims.ewise("mul", [c, st], int64, int64)
        acc = term if acc is None else _prims.ewise("add", [acc, term], int64, int64)
    if acc is None:
        return _prims.ewise("copy", [base], int64, int64, shape=out_shape, device=device)
    if base:
        acc = _prims.ewise("add", [acc, base], int64, int64)
    if tuple(acc.shape) != tuple(out_shape):
        acc = _prims.ewise("copy", [acc], int64, int64, shape=out_shape)
    return acc


def _advanced_gather(v, adv):
    coords, out_shape = _advanced_plan(v, adv)
    storage = _sum_coords(coords, v._stride, v._offset, out_shape, v.device)
    if recording(v):
        logical = storage if (v.is_contiguous() and v._offset == 0) else \
            _sum_coords(coords, contiguous_strides(v.shape), 0, out_shape, v.device)
        return Take.apply(v, storage, logical)
    return _prims.take(v, storage)


@torch_function
def setitem(self, index, value):
    if isinstance(value, (list, tuple)):
        value = tensor(value, dtype=self.dtype, device=self.device)
    v, adv = _expand_index(self, index)
    if not adv:
        if isinstance(value, Tensor) and value.dim() <= v.dim():
            _prims.broadcast_strides(value, v.shape)  # PyTorch's "expanded size" error
        if isinstance(value, Tensor) and value.dim() > v.dim():
            value = value.reshape(tuple(value.shape)[value.dim() - v.dim():]) if all(
                s == 1 for s in value.shape[:value.dim() - v.dim()]) else value
        _shape.copy_(v, value)
        return
    _index_put_view(self, v, adv, value, False)


def _index_put_view(self, v, adv, value, accumulate):
    check_leaf_inplace(self, overlap_ok=True)
    coords, out_shape = _advanced_plan(v, adv)
    if isinstance(value, Tensor) and value.device != self.device:
        if value.dim() == 0:
            value = value.item()
        else:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                               f"{self.device} and {value.device}!")
    if not isinstance(value, Tensor) and not self.dtype.is_floating_point:
        value = fill_value(value, self.dtype)  # PyTorch's checked conversion: inf into an int tensor raises
    if isinstance(value, Tensor):
        if value.dtype != self.dtype:
            raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                               f"{name_of(self.dtype)} for the destination and {name_of(value.dtype)} for the "
                               f"source.")
        value = value.to(self.dtype) if value.dtype != self.dtype else value
        _prims.broadcast_strides(value, out_shape)
    if recording(self, value):
        if v is not self:
            raise NotImplementedError("autograd through advanced-index assignment into a view is not supported; "
                                      "index the base tensor directly")
        logical = _sum_coords(coords, contiguous_strides(self.shape), 0, out_shape, self.device)
        vals = value.expand(out_shape) if isinstance(value, Tensor) else value
        res = index_put_flat(self, logical, vals, accumulate).reshape(self.shape)
        inplace_result(self, res)
        return
    storage = _sum_coords(coords, v._stride, v._offset, out_shape, v.device)
    _prims.put(self, storage, value, accumulate)


@register
@torch_function
def index_put_(self, indices, values, accumulate=False):
    v, adv = _expand_index(self, tuple(indices))
    if not adv:
        if accumulate:
            v.add_(values)
        else:
            v.copy_(values)
        return self
    _index_put_view(self, v, adv, values, accumulate)
    return self


@register
@torch_function
def index_put(input, indices, values, accumulate=False):
    return index_put_(input.clone(), indices, values, accumulate)


# ---- gather / scatter family --------------------------------------------------------------------
def _check_index_tensor(index, name):
    if not isinstance(index, Tensor) or index.dtype not in (int64, _dtype.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")


Gather = formula_node("GatherBackward0", _take_kernel, _TAKE_ARGS)


@register
@torch_function
def gather(input, dim, index, *, sparse_grad=False, out=None):
    if not (isinstance(index, Tensor) and index.numel() == 0):  # PyTorch checks no dtype of an empty index
        _check_index_tensor(index, "gather")
    nd = input.dim()
    d = wrap_dim(dim, nd)
    if index.numel() == 0:  # any shape of empty index: an empty result
        return write_out(input.reshape(-1)[:0].reshape(index.shape), out, exact=OUT_DTYPE)
    if nd == 0 and index.dim() <= 1:
        return write_out(gather(input.reshape(1), 0, index.reshape(-1)).reshape(index.shape), out, input, index,
                         exact=OUT_DTYPE)
    if index.dim() != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for k in range(nd):
        if k != d and index.shape[k] > input.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index {list(index.shape)} to be no "
                               f"larger than self {list(input.shape)} apart from dimension {d}")
    coords = [None] * nd
    coords[d] = _check_gather_range(index, input.shape[d], d)
    return write_out(take_offsets(input, coords, tuple(index.shape), node=Gather), out, input, index, exact=OUT_DTYPE)


_RANGE_CACHE = weakref.WeakKeyDictionary()   # Storage -> {(view, version): (min, max)}


def _range_key(index):
    return (index._offset, tuple(index._shape), tuple(index._stride), index._storage.version)


def _cached_range(index):
    per = _RANGE_CACHE.get(index._storage)
    return per.get(_range_key(index)) if per is not None else None


def _remember_range(storage, key, mm):
    per = _RANGE_CACHE.get(storage)
    if per is None or next(iter(per))[3] != key[3]:
        per = _RANGE_CACHE[storage] = {}
    per[key] = mm


def _index_range(index):
    """(min, max) of an index tensor, remembered per storage version: the check reads the
    values back (a wait on webgpu), and a training loop gathers with the same targets every step."""
    mm = _cached_range(index)
    if mm is None:
        mm = tuple(_shape.stack([index.min(), index.max()]).tolist())
        _remember_range(index._storage, _range_key(index), mm)
    return mm


def _check_gather_range(index, size, d):
    """index as the int64 offsets gather/scatter may use: index itself when known to be in
    [0, size), else (webgpu, checked at the next sync) clamped into it."""
    idx = index if index.dtype is int64 else index.to(int64)
    if index.numel() == 0:
        return idx
    err = _RANGE_ERROR[0] or (lambda bad: RuntimeError(f"index {bad} is out of bounds for dimension {d} "
                                                       f"with size {size}"))
    safe = _guard(index, 0, size, err)
    return idx if safe is True else safe


Flip, Roll, TakeNode = (formula_node(n, _take_kernel, _TAKE_ARGS) for n in ("FlipBackward0", "RollBackward0",
                                                                           "TakeBackward0"))


@register
@torch_function
def take_along_dim(input, indices, dim=None):
    if dim is None:
        return take_along_dim(input.reshape(-1), indices.reshape(-1), 0)
    d = wrap_dim(dim, input.dim())
    indices = where(indices < 0, indices + input.shape[d], indices)  # negative indices count from the end
    shape = list(_prims.broadcast_shapes(tuple(s if k != d else 1 for k, s in enumerate(input.shape)),
                                         tuple(s if k != d else 1 for k, s in enumerate(indices.shape))))
    ishape = list(shape)
    ishape[d] = indices.shape[d]
    xshape = list(shape)
    xshape[d] = input.shape[d]
    return gather(input.expand(xshape), d, indices.expand(ishape))


@register
@torch_function
def take(input, index, *, out=None):
    idx = _check_range(index.to(int64), input.numel(), 0)
    return write_out(take_flat(input.contiguous() if not input.is_contiguous() else input, idx, TakeNode), out, input,
                     index, exact="take(): self and out expected to have the same dtype, but got self.dtype = {r} and "
                                  "out.dtype = {o}")


def _scatter_offsets(self, d, index):
    coords = [None] * self.dim()
    coords[d] = index.to(int64) if index.dtype is not int64 else index
    logical = _offsets(coords, tuple(index.shape), contiguous_strides(self.shape), 0, self.device)
    return logical


def _src_view(src, index):
    if not isinstance(src, Tensor):
        return src
    return src.as_strided(index.shape, src.stride(), src.storage_offset()) if tuple(src.shape) != tuple(index.shape) \
        else src


def _on_vector(fn, input, dim, index, src, *args, **kwargs):
    """fn (an op along dim) on a 0-d input: PyTorch treats it as its one-element vector."""
    wrap_dim(dim, 0)
    src = src.reshape(-1) if isinstance(src, Tensor) else src
    return fn(input.reshape(1), 0, index.reshape(-1), src, *args, **kwargs).reshape(())


def _scatter(input, dim, index, src, accumulate, name):
    _check_index_tensor(index, name)
    if isinstance(src, Tensor) and src.dtype is not input.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    if input.dim() == 0:
        return _on_vector(_scatter, input, dim, index, src, accumulate, name)
    d = wrap_dim(dim, input.dim())
    if index.dim() != input.dim():
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if isinstance(src, Tensor) and max(src.dim(), 1) != max(index.dim(), 1) and index.numel():
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    index = _check_gather_range(index, input.shape[d], d)
    lin = _scatter_offsets(input, d, index)
    vals = _narrow_to(src, index.shape)
    return index_put_flat(input.contiguous(), lin, vals, accumulate).reshape(input.shape)


def _narrow_to(src, shape):
    if not isinstance(src, Tensor):
        return src
    for k, s in enumerate(shape):
        n = src.shape[k] if src.dim() else 1  # PyTorch's ensure_nonempty_size: a 0-d src has size 1
        if s > n:
            raise RuntimeError(f"Expected index {list(shape)} to be smaller than self apart from dimension and "
                               f"to be smaller size than src {list(src.shape)}")
        if s != n:
            src = _shape.narrow(src, k, 0, s)
    return src


@register
@torch_function
def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    if src is None:
        src = value
    if reduce is not None:
        if reduce == "add":
            return scatter_add(input, dim, index, src)
        if reduce == "multiply":
            return input * scatter(input.new_ones(input.shape), dim, index, src)
        raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce}")
    return _scatter(input, dim, index, src, False, "scatter")


@register
@torch_function
def scatter_add(input, dim, index, src):
    return _scatter(input, dim, index, src, True, "scatter_add")


@register_method
def scatter_(self, dim, index, src=None, value=None, *, reduce=None):
    return _shape.copy_(self, scatter(self, dim, index, src, value, reduce=reduce))


@register_method
def scatter_add_(self, dim, index, src):
    return _shape.copy_(self, scatter_add(self, dim, index, src))


IndexSelect = formula_node("IndexSelectBackward0", _take_kernel, _TAKE_ARGS)


_INDEX_SELECT_DTYPE = "index_select(): self and result must have the same scalar type"


@register
@torch_function
def index_select(input, dim, index, *, out=None):
    if not isinstance(index, Tensor) or index.dtype not in (int64, _dtype.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    nd = input.dim()
    d = wrap_dim(dim, nd)
    size = input.shape[d] if nd else 1
    idx = index.reshape(-1).to(int64)
    if index.numel():
        safe = _guard(index, 0, size, lambda bad: IndexError("index out of range in self"))
        if safe is not True:
            idx = safe.reshape(-1)
    if nd == 0:
        return write_out(input.reshape(1).index_select(0, idx).reshape(()) if idx.numel() else input, out, input,
                         index, exact=_INDEX_SELECT_DTYPE)
    coords = [None] * nd
    coords[d] = idx.reshape((idx.numel(),) + (1,) * (nd - d - 1))
    shape = list(input.shape)
    shape[d] = idx.numel()
    return write_out(take_offsets(input, coords, tuple(shape), node=IndexSelect), out, input, index,
                     exact=_INDEX_SELECT_DTYPE)


@register
@torch_function
def index_add(input, dim, index, source, *, alpha=1):
    if input.dim() == 0:
        return _on_vector(index_add, input, dim, index, source, alpha=alpha)
    d = wrap_dim(dim, input.dim())
    if source.dim() != input.dim() or any(s != t for k, (s, t) in enumerate(zip(source.shape, input.shape)) if k != d):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. Got "
                           f"self.shape = {list(input.shape)} source.shape = {list(source.shape)}")
    if input.dim() == 1:  # PyTorch's index_add of a vector is an index_put, with its error
        def err(bad, d, size):
            return IndexError("index out of range in self")
    else:
        def err(bad, d, size):
            return RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {size}")
    lin = _index_dim_offsets(input, dim, index, source, err)
    alpha = scalar_to(alpha, input.dtype)
    src = source if alpha == 1 else source * alpha
    return index_put_flat(input.contiguous(), lin, src, True).reshape(input.shape)


def _index_dim_offsets(input, dim, index, source, err):
    """Logical offsets in input of source's elements placed at `index` along dim (index_add,
    index_copy), with PyTorch's bounds check (deferred to the next sync on webgpu): err(bad index,
    dim, size) the exception."""
    d = wrap_dim(dim, input.dim())
    idx = index.reshape(-1).to(int64)
    size = input.shape[d] if input.dim() else 1
    if idx.numel():
        safe = _guard(idx, 0, size, lambda bad: err(bad, d, size))
        if safe is not True:
            idx = safe
    coords = [None] * input.dim()
    coords[d] = idx.reshape((idx.numel(),) + (1,) * (input.dim() - d - 1))
    return _offsets(coords, tuple(source.shape), contiguous_strides(input.shape), 0, input.device)


@register_method
def index_add_(self, dim, index, source, *, alpha=1):
    return _shape.copy_(self, index_add(self, dim, index, source, alpha=alpha))


@register
@torch_function
def index_copy(input, dim, index, source):
    if input.dim() == 0:
        return _on_vector(index_copy, input, dim, index, source)
    lin = _index_dim_offsets(input, dim, index, source, lambda bad, d, size: IndexError(
        f"index_copy_(): index {bad} is out of bounds for dimension {d} with size {size}"))
    return index_put_flat(input.contiguous(), lin, source, False).reshape(input.shape)


@register
def index_fill(input, dim, index, value):
    if input.dim() == 0:
        return _on_vector(index_fill, input, dim, index, value)
    d = wrap_dim(dim, input.dim())
    n = input.shape[d]
    if not isinstance(value, Tensor):
        value = fill_value(value, input.dtype)
    idx = _check_range(index.reshape(-1).to(int64), n, d)  # PyTorch's index_fill takes -n <= index < n
    # a mask of the filled positions along dim (an index may repeat; each position is filled once)
    hit = index_put_flat(input.new_zeros((n,), dtype=bool_), idx, True, False)
    r = where(hit.reshape((n,) + (1,) * (input.dim() - d - 1)), value, input)
    return r if r.dtype is input.dtype else r.to(input.dtype)


@register
@torch_function
def masked_fill(input, mask, value):
    if not isinstance(mask, Tensor) or mask.dtype is not bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{mask.dtype if isinstance(mask, Tensor) else type(mask).__name__}")
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.dim()} dimension(s).")
    shape = _prims.broadcast_shapes(input.shape, mask.shape)
    if isinstance(value, Tensor) and value.dtype.is_complex and not input.dtype.is_complex:
        fill_value(value.item(), input.dtype)  # PyTorch's check: an imaginary part cannot go into a real tensor
    r = where(mask, value.to(input.dtype) if isinstance(value, Tensor) else fill_value(value, input.dtype), input)
    if r.dtype != input.dtype:
        r = r.to(input.dtype)
    return r if tuple(shape) == tuple(input.shape) else r


@register_method
def masked_fill_(self, mask, value):
    shape = _prims.broadcast_shapes(self.shape, mask.shape)
    if tuple(shape) != tuple(self.shape):
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(shape)}")
    if recording(self, value):
        check_leaf_inplace(self, overlap_ok=True)
        return inplace_result(self, masked_fill(self, mask, value))
    check_leaf_inplace(self, overlap_ok=True)
    value = value if isinstance(value, Tensor) else fill_value(value, self.dtype)
    return _prims.ewise_into("where", self, [mask, value, self], self.dtype)


@register
def masked_scatter(input, mask, source):
    if mask.dtype is not bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {mask.dtype}")
    shape = _prims.broadcast_shapes(input.shape, mask.shape)
    nz = nonzero(mask.expand(shape).reshape(-1)).reshape(-1)
    out = input.expand(shape).reshape(-1).clone()
    out[nz] = source.reshape(-1)[: nz.numel()]
    return out.reshape(shape)


def _masked_select_kernel(input, mask):
    shape = _prims.broadcast_shapes(input.shape, mask.shape)
    return getitem(input.expand(shape), mask.expand(shape))


# its gradient is written into zeros (masked_scatter), so a -0.0 keeps its sign, as PyTorch's
_MaskedSelect = formula_node("MaskedSelectBackward0", _masked_select_kernel, ("input", "mask"))


@register
@torch_function
def masked_select(input, mask, *, out=None):
    r = _MaskedSelect.apply(input, mask) if recording(input) else _masked_select_kernel(input, mask)
    return write_out(r, out, input, mask, exact="masked_select(): self and result must have the same scalar type")


@register
@torch_function
def nonzero(input, *, as_tuple=False):
    check_wide_uint("nonzero_count", input.dtype)
    flat = input.reshape(-1).tolist() if input.dim() else [input.item()]
    shape = input.shape
    pos = [i for i, v in enumerate(flat) if v]
    nd = max(input.dim(), 1) if as_tuple else input.dim()
    coords = []
    strides = contiguous_strides(shape) if shape else (1,)
    for p in pos:
        c = []
        for st, n in zip(strides, shape if shape else (1,)):
            c.append((p // st) % n if n else 0)
        coords.append(c if input.dim() else [])
    out = tensor(coords if coords else [], dtype=int64, device=input.device).reshape(len(pos), input.dim())
    if as_tuple:
        if input.dim() == 0:
            return (tensor([0] * len(pos), dtype=int64, device=input.device),)
        return tuple(_shape.select(out, 1, k) for k in range(nd))
    return out


@register
def argwhere(input):
    return nonzero(input)


@register
def count_nonzero(input, dim=None):
    return (input != 0).sum(dim)


# ---- rearrangements through gathers -------------------------------------------------------------
def _gather_dims(input, index_per_dim, node):
    """out = input at coordinates given per dim (None = identity), via storage offsets."""
    nd = input.dim()
    coords = [None if c is None else c.reshape((c.numel(),) + (1,) * (nd - d - 1))
              for d, c in enumerate(index_per_dim)]
    return take_offsets(input, coords, tuple(input.shape), node=globals()[node])


@register
@torch_function
def flip(input, dims):
    check_wide_uint("flip", input.dtype)
    nd = input.dim()
    dims = [wrap_dim(d, nd) for d in (dims if isinstance(dims, (list, tuple)) else [dims])]
    if len(set(dims)) != len(dims):
        raise RuntimeError("dims has duplicates, original flip dims size=" + str(len(dims)))
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
