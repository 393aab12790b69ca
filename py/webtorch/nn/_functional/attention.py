"""torch.nn.functional's attention: scaled_dot_product_attention, multi_head_attention_forward."""
import math
import warnings

from ... import _dtype
from ..._tensor import Tensor
from ...ops import linalg as _la, pointwise as _pw, reduction as _red, shape as _shape
from ...ops._common import dispatching
from ...ops._creation import full as _full, zeros as _zeros
from .dropout import dropout
from .linear import linear
from .padding import pad

bool_ = _dtype.bool_

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


# ---- attention -------------------------------------------------------------------------------
def _neg_inf_mask(mask, dtype):
    """A bool mask (True = masked out) as an additive float mask."""
    return _zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(mask, -math.inf)


_FUTURE = {}


def _causal_future(L, S, like):
    """the (L, S) bool mask of the keys after each query (True = masked), kept per device (and
    backend) of `like`: a causal model asks for the same one in every layer and step"""
    key = (L, S, str(like.device))
    m = _FUTURE.get(key)
    if m is None or m._backend is not like._backend:
        if len(_FUTURE) >= 8:
            _FUTURE.clear()
        m = _FUTURE[key] = _shape.tril(_full((L, S), True, dtype=bool_, device=like.device)).logical_not()
    return m


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    L, S, E = query.size(-2), key.size(-2), query.size(-1)
    scale_factor = 1.0 / math.sqrt(E) if scale is None else scale
    if enable_gqa and query.dim() >= 3 and key.size(-3) != query.size(-3):
        rep = query.size(-3) // key.size(-3)
        key = key.repeat_interleave(rep, dim=-3)
        value = value.repeat_interleave(rep, dim=-3)
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")
        # built before the product: on webgpu scale and mask then run in its store (lazy.py)
        future = _causal_future(L, S, query)
    attn = _la.matmul(query, key.transpose(-2, -1)) * scale_factor
    if is_causal:
        attn = attn.masked_fill(future, -math.inf)
    if attn_mask is not None:
        if attn_mask.dtype is bool_:
            attn = attn.masked_fill(attn_mask.logical_not(), -math.inf)
        else:
            attn = attn + attn_mask
        # PyTorch's safe softmax: a fully masked row attends to nothing (zeros, not NaN)
        dead = (attn == -math.inf).all(-1, keepdim=True)
        attn = _red.softmax(_pw.where(dead, 0.0, attn), -1)
        attn = _pw.where(dead, 0.0, attn)
    else:
        attn = _red.softmax(attn, -1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return _la.matmul(attn, value)


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    if mask is None:
        return None
    if mask.dtype is not bool_ and not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      "instead.", stacklevel=2)
    if mask.dtype is bool_:
        return _neg_inf_mask(mask, target_type)
    return mask


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """PyTorch's checks of the inputs' ranks; True when the input is batched."""
    nd = query.dim()
    if nd not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {nd}-D query tensor")
    kind = "batched (3-D)" if nd == 3 else "unbatched (2-D)"
    if key.dim() != nd or value.dim() != nd:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be {nd}-D but found {key.dim()}-D "
                             f"and {value.dim()}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.dim() != nd - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or {nd - 1}-D but found "
                             f"{key_padding_mask.dim()}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                                 f"{attn_mask.dim()}-D tensor instead")
        expected = (num_heads, query.shape[0], key.shape[0])
        if nd == 2 and attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
    return nd == 3


def _in_projection_packed(q, k, v, w, b=None):
    E = q.size(-1)
    if k is v:
        if q is k:
            proj = linear(q, w, b)
            proj = proj.unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([E, E * 2])
        b_q, b_kv = (None, None) if b is None else b.split([E, E * 2])
        q_proj = linear(q, w_q, b_q)
        kv_proj = linear(k, w_kv, b_kv)
        kv_proj = kv_proj.unflatten(-1, (2, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return q_proj, kv_proj[0], kv_proj[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    """q, k and v each projected by its own weight and bias, their shapes checked as PyTorch checks them."""
    Eq, Ek, Ev = q.size(-1), k.size(-1), v.size(-1)
    for what, t, shape in (("query weights", w_q, (Eq, Eq)), ("key weights", w_k, (Eq, Ek)),
                           ("value weights", w_v, (Eq, Ev)), ("query bias", b_q, (Eq,)), ("key bias", b_k, (Eq,)),
                           ("value bias", b_v, (Eq,))):
        if t is not None and tuple(t.shape) != shape:
            raise AssertionError(f"expecting {what} shape of {shape}, but got {t.shape}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _mha_masks(query, key_padding_mask, attn_mask, is_causal, need_weights):
    """The masks in the query's float dtype, and whether is_causal still holds (PyTorch's order of checks)."""
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask",
                                       query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        return key_padding_mask, None, is_causal
    attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype)
    return key_padding_mask, attn_mask, is_causal and key_padding_mask is None


def _mha_projections(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                     use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight):
    """q, k, v: the inputs projected (one packed weight, or one weight each)."""
    embed_dim = query.shape[2]
    assert embed_dim == embed_dim_to_check, \
        f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
    head_dim = embed_dim // num_heads
    assert head_dim * num_heads == embed_dim, f"embed_dim {embed_dim} not divisible by num_heads {num_heads}"
    if use_separate_proj_weight and tuple(key.shape[:2]) != tuple(value.shape[:2]):
        raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's {value.shape[:2]}")
    if not use_separate_proj_weight and tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    if not use_separate_proj_weight:
        return _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
    return linear(query, q_proj_weight, b_q), linear(key, k_proj_weight, b_k), linear(value, v_proj_weight, b_v)


def _mha_attn_mask_3d(attn_mask, bsz, num_heads, tgt_len, src_len):
    """A 2-D attn_mask as 3-D (1, L, S); a 3-D one checked to be (N * heads, L, S)."""
    if attn_mask is None:
        return None
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                               f"{(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                               f"{(bsz * num_heads, tgt_len, src_len)}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _pad_masks(attn_mask, key_padding_mask):
    """Both masks with one more key position (a bias or zero key appended), where given."""
    return (None if attn_mask is None else pad(attn_mask, (0, 1)),
            None if key_padding_mask is None else pad(key_padding_mask, (0, 1)))


def _mha_heads(q, k, v, masks, bsz, num_heads, bias_k, bias_v, static_k, static_v, add_zero_attn):
    """q, k, v split into heads ((N * heads, L, head_dim)), with the bias_k/bias_v and zero keys appended
    (the masks padded to match)."""
    tgt_len, _, embed_dim = q.shape
    head_dim = embed_dim // num_heads
    if bias_k is not None and bias_v is not None:
        k = _shape.cat([k, bias_k.repeat(1, bsz, 1)])
        v = _shape.cat([v, bias_v.repeat(1, bsz, 1)])
        masks = _pad_masks(*masks)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = (k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_k is None else static_k)
    v = (v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_v is None else static_v)
    if add_zero_attn:
        zshape = (bsz * num_heads, 1, head_dim)
        k = _shape.cat([k, _zeros(zshape, dtype=k.dtype, device=k.device)], 1)
        v = _shape.cat([v, _zeros(zshape, dtype=v.dtype, device=v.device)], 1)
        masks = _pad_masks(*masks)
    return q, k, v, masks


def _merge_key_padding(attn_mask, key_padding_mask, bsz, num_heads, src_len):
    """The key padding mask added into attn_mask, one row per (batch, head)."""
    if key_padding_mask is None:
        return attn_mask
    if key_padding_mask.shape[0] != bsz:
        raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got {key_padding_mask.shape[0]}")
    if key_padding_mask.shape[1] != src_len:
        raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                             f"{key_padding_mask.shape[1]}")
    kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1) \
        .reshape(bsz * num_heads, 1, src_len)
    return kpm if attn_mask is None else attn_mask + kpm


def _mha_weighted(q, k, v, attn_mask, dropout_p, shape, out_proj_weight, out_proj_bias, average_attn_weights):
    """Attention with its weights returned (computed here, as PyTorch's, not by scaled_dot_product_attention)."""
    tgt_len, bsz, num_heads, src_len, embed_dim = shape
    q_scaled = q * math.sqrt(1.0 / float(q.shape[2]))
    if attn_mask is not None:
        w = _la.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
    else:
        w = _la.bmm(q_scaled, k.transpose(-2, -1))
    w = _red.softmax(w, -1)
    if dropout_p > 0.0:
        w = dropout(w, p=dropout_p)
    out = _la.bmm(w, v)
    out = out.transpose(0, 1).contiguous().reshape(tgt_len * bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, out.size(1))
    w = w.reshape(bsz, num_heads, tgt_len, src_len)
    return out, w.mean(1) if average_attn_weights else w


def _mha_fused(q, k, v, attn_mask, dropout_p, is_causal, shape, out_proj_weight, out_proj_bias):
    """Attention without its weights: through scaled_dot_product_attention."""
    tgt_len, bsz, num_heads, src_len, embed_dim = shape
    head_dim = embed_dim // num_heads
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal and attn_mask is None)
    out = out.permute(2, 0, 1, 3).contiguous().reshape(bsz * tgt_len, embed_dim)
    return linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, out.size(1))


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask, attn_mask, is_causal = _mha_masks(query, key_padding_mask, attn_mask, is_causal, need_weights)
    q, k, v = _mha_projections(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                               use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight)
    attn_mask = _mha_attn_mask_3d(attn_mask, bsz, num_heads, tgt_len, key.shape[0])
    q, k, v, (attn_mask, key_padding_mask) = _mha_heads(q, k, v, (attn_mask, key_padding_mask), bsz, num_heads,
                                                        bias_k, bias_v, static_k, static_v, add_zero_attn)
    src_len = k.size(1)
    attn_mask = _merge_key_padding(attn_mask, key_padding_mask, bsz, num_heads, src_len)
    dropout_p = dropout_p if training else 0.0
    shape = (tgt_len, bsz, num_heads, src_len, embed_dim)
    if need_weights:
        out, w = _mha_weighted(q, k, v, attn_mask, dropout_p, shape, out_proj_weight, out_proj_bias,
                               average_attn_weights)
        return (out, w) if is_batched else (out.squeeze(1), w.squeeze(0))
    out = _mha_fused(q, k, v, attn_mask, dropout_p, is_causal, shape, out_proj_weight, out_proj_bias)
    return out if is_batched else out.squeeze(1), None


dispatching(globals(), __all__)
