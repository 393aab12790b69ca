"""torch.nn.attention.flex_attention in PyTorch's eager semantics (its `math_attention`): the scores q @ k^T * scale
in float32 (float64 for float64 inputs), `score_mod` and the block mask's `mask_mod` applied per element through
vmap over (b, h, q_idx, kv_idx) as PyTorch's `_vmap_for_bhqkv`, softmax with fully masked rows giving zeros, @ v;
composed of webtorch's ops, so cpu, webgpu and gradients come with them. `BlockMask` holds PyTorch's block tables
(kv_num_blocks, kv_indices, their full_* and q_* forms) from `create_block_mask`; the attention itself reads only its
mask_mod, as PyTorch's eager path does. `create_mask` builds the dense mask by broadcasting the index vectors."""
import inspect
import math
from typing import NamedTuple, TypedDict

from ... import accelerator, ops as _ops
from ..._dtype import bool_, float32, float64, int32
from ..._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex
from ..._functorch.vmap import vmap
from ...ops import _creation
from .. import functional as F

__all__ = ["BlockMask", "flex_attention", "AuxOutput", "AuxRequest", "FlexKernelOptions", "create_block_mask",
           "create_mask", "or_masks", "and_masks", "noop_mask"]

_DEFAULT_SPARSE_BLOCK_SIZE = 128


class FlexKernelOptions(TypedDict, total=False):
    pass


class AuxRequest(NamedTuple):
    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    lse: object = None
    max_scores: object = None


def _dense_to_ordered(dense):
    """(number of blocks per row, their column indices first, in order), as PyTorch's _dense_to_ordered."""
    dense = dense.to(int32)
    return dense.sum(-1).to(int32), _ops.argsort(dense, dim=-1, descending=True, stable=True).to(int32)


def _ordered_to_dense(num_blocks, indices):
    cols = indices.shape[-1]
    taken = _creation.arange(cols, device=indices.device) < num_blocks.unsqueeze(-1)
    index = _ops.where(taken, indices.long(), cols)
    dense = _creation.zeros(*indices.shape[:-1], cols + 1, dtype=int32, device=indices.device)
    return dense.scatter(-1, index, 1)[..., :cols]


class BlockMask:
    """PyTorch's BlockMask: per (batch, head, row of Q_BLOCK_SIZE queries) the KV blocks with some unmasked element
    (kv_num_blocks, kv_indices: the partial ones where full_* holds the fully unmasked ones), their transposes
    (q_*), BLOCK_SIZE, the mask_mod and the sequence lengths."""

    def __init__(self, seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices, q_num_blocks,
                 q_indices, full_q_num_blocks, full_q_indices, BLOCK_SIZE, mask_mod):
        self.seq_lengths, self.BLOCK_SIZE, self.mask_mod = tuple(seq_lengths), tuple(BLOCK_SIZE), mask_mod
        self.kv_num_blocks, self.kv_indices = kv_num_blocks, kv_indices
        self.full_kv_num_blocks, self.full_kv_indices = full_kv_num_blocks, full_kv_indices
        self.q_num_blocks, self.q_indices = q_num_blocks, q_indices
        self.full_q_num_blocks, self.full_q_indices = full_q_num_blocks, full_q_indices

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks, kv_indices, full_kv_num_blocks=None, full_kv_indices=None,
                       BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE, mask_mod=None, seq_lengths=None, compute_q_blocks=True,
                       **kwargs):
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError("full_kv_num_blocks and full_kv_indices must be both provided or omitted")
        BLOCK_SIZE = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else BLOCK_SIZE
        q = [None] * 4
        if compute_q_blocks:
            q[:2] = _dense_to_ordered(_ordered_to_dense(kv_num_blocks, kv_indices).transpose(-2, -1))
            if full_kv_num_blocks is not None:
                q[2:] = _dense_to_ordered(_ordered_to_dense(full_kv_num_blocks, full_kv_indices).transpose(-2, -1))
        if seq_lengths is None:
            seq_lengths = (kv_indices.shape[-2] * BLOCK_SIZE[0], kv_indices.shape[-1] * BLOCK_SIZE[1])
        return cls(seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices, *q, BLOCK_SIZE,
                   noop_mask if mask_mod is None else mask_mod)

    @property
    def shape(self):
        return (*self.kv_indices.shape[:-2], *self.seq_lengths)

    def as_tuple(self, flatten=True):
        return (*self.seq_lengths, self.kv_num_blocks, self.kv_indices, self.full_kv_num_blocks, self.full_kv_indices,
                self.q_num_blocks, self.q_indices, self.full_q_num_blocks, self.full_q_indices,
                *(self.BLOCK_SIZE if flatten else (self.BLOCK_SIZE,)), self.mask_mod)

    def to_dense(self):
        """The (B, H, Q blocks, KV blocks) int32 map of the blocks attended (partial or full)."""
        dense = _ordered_to_dense(self.kv_num_blocks, self.kv_indices)
        if self.full_kv_num_blocks is not None:
            dense = dense | _ordered_to_dense(self.full_kv_num_blocks, self.full_kv_indices)
        return dense

    def sparsity(self):
        """The percentage of blocks skipped."""
        dense = self.to_dense()
        return 100 * (1 - dense.sum().item() / dense.numel())

    def to(self, device):
        moved = [t.to(device) if t is not None else None for t in self.as_tuple(flatten=False)[2:10]]
        return BlockMask(self.seq_lengths, *moved, self.BLOCK_SIZE, self.mask_mod)

    def __repr__(self):
        return (f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, \n"
                f"mask_mod={getattr(self.mask_mod, '__name__', self.mask_mod)}\n)")


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None, BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
                      _compile=False, separate_full_blocks=True, compute_dq_write_order=False, dq_kv_order=True):
    """The BlockMask of mask_mod (b, h, q_idx, kv_idx) -> bool over (B, H, Q_LEN, KV_LEN) (None: 1)."""
    if len(inspect.signature(mask_mod).parameters) != 4:
        raise AssertionError(f"create-block_mask requires a mask_mod function! Got {mask_mod}")
    qb, kvb = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else BLOCK_SIZE
    device = (accelerator.current_accelerator() or "cpu") if device is None else device  # PyTorch's default
    mask = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    mask = F.pad(mask, (0, -KV_LEN % kvb, 0, -Q_LEN % qb))
    b, h, q, kv = mask.shape
    sums = mask.view(b, h, q // qb, qb, kv // kvb, kvb).permute(0, 1, 2, 4, 3, 5).to(int32).sum(dim=[-2, -1])
    full = sums == qb * kvb if separate_full_blocks else None
    partial = (sums > 0) & (sums < qb * kvb) if separate_full_blocks else sums > 0
    kv_num, kv_idx = _dense_to_ordered(partial)
    full_num, full_idx = _dense_to_ordered(full) if full is not None else (None, None)
    return BlockMask.from_kv_blocks(kv_num, kv_idx, full_num, full_idx, BLOCK_SIZE=(qb, kvb), mask_mod=mask_mod,
                                    seq_lengths=(Q_LEN, KV_LEN))


def _vmap_for_bhqkv(fn, prefix, suffix=()):
    """fn over (b, h, q_idx, kv_idx) index vectors, one vmap per dim (kv innermost), as PyTorch's."""
    for dims in ((None, None, None, 0), (None, None, 0, None), (None, 0, None, None), (0, None, None, None)):
        fn = vmap(fn, in_dims=prefix + dims + suffix)
    return fn


def _check(query, key, value, block_mask, enable_gqa):
    if query.device.type == "cpu" and (query.requires_grad or key.requires_grad or value.requires_grad):
        raise NotImplementedError("FlexAttention does not support backward on CPU. Please set the input requires_grad "
                                  "to False or use another device.")
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    hq, hkv = query.size(-3), key.size(-3)
    if not enable_gqa and hq != hkv:
        raise ValueError(f"Expect query and key/value to have the same number of heads but got Hq={hq} and "
                         f"Hkv={hkv}. Try setting enable_gqa=True for GQA.")
    if enable_gqa and hq % hkv != 0:
        raise ValueError(f"Expect number of query heads to be a multiple of kv heads for GQA but got Hq={hq} and "
                         f"Hkv={hkv}.")
    if block_mask is None:
        return
    if (query.size(-2), key.size(-2)) != tuple(block_mask.seq_lengths):
        raise ValueError(f"block_mask was created for block_mask.shape={block_mask.shape} but got "
                         f"q_len={query.size(-2)} and kv_len={key.size(-2)}.")
    if query.device != block_mask.kv_num_blocks.device:
        raise RuntimeError(f"Expect q/k/v and block_mask to be on the same device but got {query.device} and "
                           f"{block_mask.kv_num_blocks.device}.")


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None, enable_gqa=False, return_lse=False,
                   kernel_options=None, *, return_aux=None):
    """softmax(score_mod(q @ k^T * scale) masked by block_mask.mask_mod) @ v, as PyTorch's eager flex_attention."""
    _check(query, key, value, block_mask, enable_gqa)
    if return_lse and return_aux is not None:
        raise ValueError("Cannot specify both return_lse and return_aux. return_lse is deprecated, please use "
                         "return_aux=AuxRequest(lse=True) instead.")
    scale = 1.0 / math.sqrt(query.size(-1)) if scale is None else scale
    groups = query.size(1) // key.size(1)
    key, value = key.repeat_interleave(groups, dim=1), value.repeat_interleave(groups, dim=1)
    key, value = key.expand(query.size(0), *key.shape[1:]), value.expand(query.size(0), *value.shape[1:])
    wp = float64 if query.dtype is float64 else float32
    scores = (query.to(wp) @ key.to(wp).transpose(-2, -1)) * scale
    mask_mod = noop_mask if block_mask is None else block_mask.mask_mod
    idx = [_creation.arange(n, device=scores.device) for n in scores.shape]
    with TransformGetItemToIndex():
        if score_mod is not None:
            scores = _vmap_for_bhqkv(score_mod, (0,))(scores, *idx)
        if mask_mod is not noop_mask:
            scores = _ops.where(_vmap_for_bhqkv(mask_mod, ())(*idx), scores, -math.inf)
    masked_rows = (scores == -math.inf).all(-1, keepdim=True)
    lse = _ops.where(masked_rows.squeeze(-1), -math.inf, scores.logsumexp(-1))
    probs = _ops.where(masked_rows, 0.0, _ops.where(masked_rows, 0.0, scores).softmax(-1))  # PyTorch's _safe_softmax
    out = probs.to(query.dtype) @ value.to(query.dtype)
    if return_aux is not None:
        return out, AuxOutput(lse=lse if return_aux.lse else None,
                              max_scores=scores.max(-1)[0] if return_aux.max_scores else None)
    return (out, lse) if return_lse else out


def noop_mask(batch, head, token_q, token_kv):
    """Returns a noop mask_mod"""
    return batch.new_ones(size=(), dtype=bool_, device=batch.device)


def _check_mods(mask_mods):
    if not all(callable(arg) for arg in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")


def and_masks(*mask_mods):
    """Returns a mask_mod that's the intersection of provided mask_mods"""
    _check_mods(mask_mods)

    def and_mask(b, h, q_idx, kv_idx):
        result = b.new_ones((), dtype=bool_)
        for mask in mask_mods:
            result = result & mask(b, h, q_idx, kv_idx)
        return result
    return and_mask


def or_masks(*mask_mods):
    """Returns a mask_mod that's the union of provided mask_mods"""
    _check_mods(mask_mods)

    def or_mask(b, h, q_idx, kv_idx):
        result = b.new_zeros((), dtype=bool_)
        for mask in mask_mods:
            result = result | mask(b, h, q_idx, kv_idx)
        return result
    return or_mask


def create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device=None):
    """The (B, H, Q_LEN, KV_LEN) mask of a mask_mod (b, h, q_idx, kv_idx) or a score_mod (score, b, h, q_idx, kv_idx:
    True where the score stays finite)."""
    B, H = B or 1, H or 1
    b, h, m, n = (_creation.arange(size, device=device).reshape([size if i == d else 1 for i in range(4)])
                  for d, size in enumerate((B, H, Q_LEN, KV_LEN)))
    if len(inspect.signature(mod_fn).parameters) == 5:
        out = mod_fn(_creation.zeros(B, H, Q_LEN, KV_LEN, device=device), b, h, m, n)
        return ~_ops.isneginf(out).expand(B, H, Q_LEN, KV_LEN)
    return mod_fn(b, h, m, n).expand(B, H, Q_LEN, KV_LEN)
