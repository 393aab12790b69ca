"""torch.nn.attention.flex_attention: the mask combinators and `create_mask` (the dense mask a mask_mod or score_mod
describes, built by broadcasting the index vectors, which a mod made of tensor ops computes as vmap would).
`flex_attention` itself and block-sparse masks (`BlockMask`, `create_block_mask`) raise NotImplementedError:
a model runs with attn_implementation="sdpa" or "eager"."""
import inspect
from typing import NamedTuple, TypedDict

from ... import ops as _ops
from ..._dtype import bool_
from ...ops import _creation

__all__ = ["BlockMask", "flex_attention", "AuxOutput", "AuxRequest", "FlexKernelOptions", "create_block_mask",
           "create_mask", "or_masks", "and_masks", "noop_mask"]

_DEFAULT_SPARSE_BLOCK_SIZE = 128
_NOT_HERE = "webtorch has no flex_attention kernel; use scaled_dot_product_attention (attn_implementation='sdpa')"


class FlexKernelOptions(TypedDict, total=False):
    pass


class AuxRequest(NamedTuple):
    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    lse: object = None
    max_scores: object = None


class BlockMask:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(_NOT_HERE)


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None, BLOCK_SIZE=128, _compile=False,
                      separate_full_blocks=True, compute_dq_write_order=False, dq_kv_order=True):
    raise NotImplementedError(_NOT_HERE)


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None, enable_gqa=False, return_lse=False,
                   kernel_options=None, *, return_aux=None):
    raise NotImplementedError(_NOT_HERE)


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
