"""torch's underscore ops that PyTorch's op_db tests, composed of webtorch's ops (their gradients are the
compositions'; each runs where its parts run, webgpu included): _softmax_backward_data, _safe_softmax,
_chunk_cat, _unsafe_masked_index, _unsafe_masked_index_put_accumulate."""
from .. import _dtype
from . import _creation, shape as _shape
from ._common import wrap_dim, write_out
from .indexing import index_put
from .pointwise import where
from .reduction import softmax
from .registry import register
from .views import broadcast_shapes


@register(method=False)
def _softmax_backward_data(grad_output, output, dim, input_dtype):
    """softmax's backward: output * (grad - sum(grad * output, dim)), in input_dtype."""
    g = output * (grad_output - (grad_output * output).sum(dim, keepdim=True))
    return g.to(input_dtype)


@register(method=False)
def _safe_softmax(input, dim, dtype=None):
    """softmax, but 0 in a slice whose elements are all -inf (attention rows that attend to nothing)."""
    empty = (input == float("-inf")).all(dim, keepdim=True)
    return where(empty, 0.0, softmax(where(empty, 0.0, input), dim, dtype=dtype))  # no NaN, nor in the gradient


def _chunk_cat_dim(tensors, dim, num_chunks):
    if num_chunks < 1:
        raise RuntimeError("_chunk_cat expects positive num_chunks")
    if not tensors:
        raise RuntimeError("_chunk_cat expects a non-empty input tensor list")
    for t in tensors:
        if t.numel() == 0:
            raise RuntimeError("_chunk_cat expects non-empty tensor")
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("_chunk_cat expects all input tensors with the same dtype")
        if t.device != tensors[0].device:
            raise RuntimeError("_chunk_cat expects all inputs tensors on the same device")
    if len({t.dim() for t in tensors}) == 1:
        dim = wrap_dim(dim, tensors[0].dim())
    elif dim < 0:
        raise RuntimeError("_chunk_cat expects non-negative dim when input tensors have different ndims")
    elif any(dim >= t.dim() for t in tensors):
        raise RuntimeError("_chunk_cat expects dim < ndim for all input tensors")
    if any(t.shape[:dim] != tensors[0].shape[:dim] for t in tensors):
        raise RuntimeError("_chunk_cat expects same sizes of 0,...,dim-1 dimensions for all tensors")
    return dim


@register(method=False)
def _chunk_cat(tensors, dim, num_chunks, *, out=None):
    """Each tensor zero-padded along dim to a multiple of num_chunks, viewed as (..., num_chunks, -1), and the
    views concatenated along dim + 1 (FSDP's gradient buffer)."""
    dim = _chunk_cat_dim(tensors, dim, num_chunks)
    parts = []
    for t in tensors:
        n = t.shape[dim]
        padded = -(-n // num_chunks) * num_chunks
        if padded != n:
            zeros = t.new_zeros(t.shape[:dim] + (padded - n,) + t.shape[dim + 1:])
            t = _shape.cat([t, zeros], dim)
        parts.append(t.reshape(t.shape[:dim] + (num_chunks, -1)))
    return write_out(_shape.cat(parts, dim + 1), out)


def _masked_index_checks(mask, indices):
    for index in indices:
        if index is not None and index.dtype not in (_dtype.int64, _dtype.int32):
            raise RuntimeError("tensors used as indices must be long or int tensors")
    if mask.dtype is not _dtype.bool_:
        raise RuntimeError("tensors used as masks must be bool tensors")


def _clamped(input, indices):
    """indices clamped into [-size, size - 1] of their dims (the masked-out ones may hold anything)."""
    return [None if i is None else i.clamp(-input.shape[k], input.shape[k] - 1) for k, i in enumerate(indices)]


@register(method=False)
def _unsafe_masked_index(input, mask, indices, fill):
    """input[indices] where mask, else fill."""
    _masked_index_checks(mask, indices)
    if input.numel() == 0:
        shape = broadcast_shapes(*[i.shape for i in indices if i is not None]) + input.shape[len(indices):]
        return _creation.full(shape, fill, dtype=input.dtype, device=input.device)
    indices = _clamped(input, indices)
    return input[tuple(slice(None) if i is None else i for i in indices)].masked_fill(~mask, fill)


@register(method=False)
def _unsafe_masked_index_put_accumulate(input, mask, indices, values):
    """input with values where mask added at indices (clamped into range)."""
    _masked_index_checks(mask, indices)
    if input.numel() == 0:
        return input.clone()
    return index_put(input, tuple(_clamped(input, indices)), values.masked_fill(~mask, 0), accumulate=True)
