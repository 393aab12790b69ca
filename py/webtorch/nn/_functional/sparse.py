"""torch.nn.functional's sparse layers: embedding, embedding_bag, one_hot."""
import warnings

from ... import _dtype
from ...autograd import grad_mode
from ...autograd.function import Function
from ...ops import indexing as _ix, pointwise as _pw, reduction as _red, shape as _sh
from ...ops._common import composite_node, dispatching
from ...sparse import sparse_coo_tensor
from ._util import _idx, _iota

int64 = _dtype.int64
# a graph node named as PyTorch's for a layer computed by other ops (its gradient is theirs)
_node = composite_node

__all__ = ["embedding", "embedding_bag", "one_hot"]


# ---- sparse ----------------------------------------------------------------------------------
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if input.dtype.is_floating_point:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {input.type()} instead (while checking arguments for embedding)")
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings"
            padding_idx = weight.size(0) + padding_idx
    if max_norm is not None:
        _embedding_renorm(weight, input.reshape(-1), max_norm, norm_type)
    if sparse and weight.requires_grad and grad_mode.is_grad_enabled():
        return _SparseEmbedding.apply(weight, input, padding_idx, scale_grad_by_freq)
    return _Embedding.call(weight, input, padding_idx)


def _embedding_impl(weight, input, padding_idx):
    out = _ix.index_select(weight, 0, input.reshape(-1)).reshape(tuple(input.shape) + (weight.shape[1],))
    if padding_idx is not None and out.requires_grad:
        keep = (input != padding_idx).unsqueeze(-1)
        out = _pw.where(keep, out, out.detach())
    return out


_Embedding = _node("EmbeddingBackward0", _embedding_impl)


class _SparseEmbedding(Function):
    """embedding(sparse=True): the weight's gradient is a sparse COO tensor of the looked-up rows (uncoalesced,
    padding_idx's left out), as PyTorch's, which raises in backward under scale_grad_by_freq."""
    _node_name = "EmbeddingBackward0"

    @staticmethod
    def forward(ctx, weight, input, padding_idx, scale_grad_by_freq):
        ctx.save_for_backward(input)
        ctx.num_weights, ctx.padding_idx, ctx.scale = weight.shape[0], padding_idx, scale_grad_by_freq
        return _embedding_impl(weight, input, None)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        idx, rows = input.reshape(-1), grad.reshape(-1, grad.shape[-1])
        if ctx.scale:
            raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse gradients")
        if ctx.padding_idx is not None:
            keep = idx != ctx.padding_idx
            idx, rows = idx[keep], rows[keep]
        return sparse_coo_tensor(idx.unsqueeze(0), rows, (ctx.num_weights, grad.shape[-1])), None, None, None


def _embedding_renorm(weight, idx, max_norm, norm_type):
    with grad_mode.no_grad():
        rows = _red.unique(idx)
        sel = _ix.index_select(weight, 0, rows)
        norms = _red.norm(sel, norm_type, 1, keepdim=True)
        scale = _pw.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        w = weight.detach()
        w.copy_(_ix.index_copy(w, 0, rows, sel * scale))


_BAG_MODES = {"sum": 0, "mean": 1, "max": 2}


def _bags(input, offsets, per_sample_weights, include_last_offset):
    """embedding_bag's 1-D input and offsets (a 2-D input is a batch of equal bags)."""
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        offsets = _iota(input.shape[0], input.device) * input.shape[1]
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    return input, offsets, per_sample_weights, include_last_offset


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    if weight.dtype is int64 and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, input, "
                      "...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it must "
                         f"have the same shape as the input ({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    input, offsets, per_sample_weights, include_last_offset = _bags(input, offsets, per_sample_weights,
                                                                    include_last_offset)
    if mode not in _BAG_MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        _embedding_renorm(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    return _EmbeddingBag.call(weight, input, offsets, per_sample_weights, _BAG_MODES[mode], include_last_offset,
                              padding_idx)


def _embedding_bag_impl(weight, input, offsets, per_sample_weights, mode, include_last_offset, padding_idx):
    """The (bags, indices) membership matrix is computed on the device from the offsets (none is read
    back to the host): sum and mean are one matmul of it with the gathered rows, max the maximum over
    the rows masked per bag."""
    n = input.shape[0]
    if include_last_offset:
        starts, ends = offsets[:-1], offsets[1:]
    else:
        starts, ends = offsets, _sh.cat([offsets[1:], _idx([n], offsets.device).to(offsets.dtype)])
    pos = _iota(n, input.device).unsqueeze(0)
    member = (pos >= starts.unsqueeze(1)) & (pos < ends.unsqueeze(1))
    if padding_idx is not None:
        member = member & (input != padding_idx).unsqueeze(0)
    rows = _ix.index_select(weight, 0, input)
    if mode == 2:
        if not starts.shape[0]:
            return rows.new_zeros((0, weight.shape[1]))
        picked = _pw.where(member.unsqueeze(-1), rows.unsqueeze(0), float("-inf"))
        best = picked.max(1).values
        return _pw.where(member.any(1).unsqueeze(-1), best, 0.0)
    weights = member.to(weight.dtype)
    if per_sample_weights is not None:
        weights = weights * per_sample_weights.unsqueeze(0)
    out = weights.matmul(rows) if n else rows.new_zeros((starts.shape[0], weight.shape[1]))
    if mode == 1:
        out = out / _red.sum(member, 1, keepdim=True).clamp(min=1).to(weight.dtype)
    return out


_EmbeddingBag = _node("EmbeddingBagBackward0", _embedding_bag_impl)


def one_hot(tensor, num_classes=-1):
    if tensor.dtype is not int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        num_classes = int(tensor.max().item()) + 1 if tensor.numel() else 0
    return (tensor.unsqueeze(-1) == _iota(num_classes, tensor.device)).to(int64)


dispatching(globals(), __all__)
