"""torch.nn.functional's sparse layers: embedding, one_hot."""
from ... import _dtype
from ...autograd import grad_mode
from ...ops import indexing as _ix, pointwise as _pw, reduction as _red
from ...ops._common import composite_node, dispatching
from ._util import _iota

int64 = _dtype.int64
# a graph node named as PyTorch's for a layer computed by other ops (its gradient is theirs)
_node = composite_node

__all__ = ["embedding", "one_hot"]


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
    return _Embedding.call(weight, input, padding_idx)


def _embedding_impl(weight, input, padding_idx):
    out = _ix.index_select(weight, 0, input.reshape(-1)).reshape(tuple(input.shape) + (weight.shape[1],))
    if padding_idx is not None and out.requires_grad:
        keep = (input != padding_idx).unsqueeze(-1)
        out = _pw.where(keep, out, out.detach())
    return out


_Embedding = _node("EmbeddingBackward0", _embedding_impl)


def _embedding_renorm(weight, idx, max_norm, norm_type):
    with grad_mode.no_grad():
        rows = _red.unique(idx)
        sel = _ix.index_select(weight, 0, rows)
        norms = _red.norm(sel, norm_type, 1, keepdim=True)
        scale = _pw.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        w = weight.detach()
        w.copy_(_ix.index_copy(w, 0, rows, sel * scale))


def one_hot(tensor, num_classes=-1):
    if tensor.dtype is not int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        num_classes = int(tensor.max().item()) + 1 if tensor.numel() else 0
    return (tensor.unsqueeze(-1) == _iota(num_classes, tensor.device)).to(int64)


dispatching(globals(), __all__)
