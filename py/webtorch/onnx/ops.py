"""torch.onnx.ops: ONNX operators as webtorch ops, as PyTorch 2.13's.

`symbolic` / `symbolic_multi_out` stand for an arbitrary ONNX operator: eagerly they return zeros of the
given dtype and shape (PyTorch's numbers), and torch.onnx.export writes them as that operator (its domain,
attributes and metadata). `rotary_embedding` and `attention` are ONNX's RotaryEmbedding-23 and Attention-23
computed with webtorch ops (PyTorch's reference implementations); export writes the ops they compose
(webtorch writes opsets up to 21, before those two operators)."""
import math

from .. import _dtype
from ..nn import functional as F
from ..ops import _creation
from ..ops.shape import cat
from ..overrides import torch_function

__all__ = ["aten_decompositions", "symbolic", "symbolic_multi_out", "rotary_embedding", "attention"]

_ONNX_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 9: "bool",
                10: "float16", 11: "float64", 12: "uint32", 13: "uint64", 14: "complex64", 15: "complex128",
                16: "bfloat16", 17: "float8_e4m3fn", 18: "float8_e4m3fnuz", 19: "float8_e5m2", 20: "float8_e5m2fnuz",
                21: "uint8", 22: "uint8", 23: "float4_e2m1fn_x2"}
ONNX_DTYPE_TO_TORCH_DTYPE = {k: _dtype.BY_NAME[v] for k, v in _ONNX_DTYPES.items()}
_TORCH_DTYPE_TO_ONNX_DTYPE = {_dtype.BY_NAME[v]: k for k, v in _ONNX_DTYPES.items() if k not in (21, 22)}
_TORCH_DTYPE_TO_ONNX_DTYPE[str] = 8


def _check(cond, message):
    if not cond:
        raise RuntimeError(message)


def _onnx_dtype(dtype):
    if isinstance(dtype, int):
        return dtype
    _check(dtype in _TORCH_DTYPE_TO_ONNX_DTYPE, f"Unsupported dtype: {dtype}")
    return _TORCH_DTYPE_TO_ONNX_DTYPE[dtype]


def _zeros(shape, onnx_dtype, inputs):
    """Zeros of the output's shape and dtype, on the inputs' device (PyTorch's eager ones are on the CPU, where
    its export traces with fake tensors; webtorch traces eagerly, so a webgpu model's stay on webgpu)."""
    _check(onnx_dtype in ONNX_DTYPE_TO_TORCH_DTYPE, f"{onnx_dtype} is invalid as an ONNX data type. Valid values are "
           f"{list(ONNX_DTYPE_TO_TORCH_DTYPE)}")
    device = next((t.device for t in inputs if t is not None), None)
    return _creation.zeros(list(shape), dtype=ONNX_DTYPE_TO_TORCH_DTYPE[onnx_dtype], device=device)


def _check_attrs(attrs):
    """PyTorch's checks of an ONNX attribute dict: ints, floats, strings, bools and non-empty sequences of them."""
    for k, v in (attrs or {}).items():
        if isinstance(v, (int, float, str)):
            continue
        if not isinstance(v, (list, tuple)):
            raise ValueError(f"Unsupported attribute type for {k}: {type(v)}")
        if len(v) == 0:
            raise ValueError(f"Empty sequence for attribute {k}")
        if not any(isinstance(x, float) for x in v) and not isinstance(v[0], (int, str)):
            raise ValueError(f"Unsupported sequence type for attribute {k}")


@torch_function
def symbolic(domain_op, /, inputs, attrs=None, *, dtype, shape, version=None, metadata_props=None):
    """An arbitrary ONNX operator `domain::OpType` with one output of `dtype` and `shape` (zeros when run)."""
    onnx_dtype = _onnx_dtype(dtype)
    _check_attrs(attrs)
    return _zeros(shape, onnx_dtype, inputs)


@torch_function
def symbolic_multi_out(domain_op, /, inputs, attrs=None, *, dtypes, shapes, version=None, metadata_props=None):
    """An arbitrary ONNX operator with one output per (dtype, shape) (zeros when run)."""
    _check(len(shapes) == len(dtypes), f"Number of shapes ({len(shapes)}) must match number of dtypes ({len(dtypes)})")
    onnx_dtypes = [_onnx_dtype(d) for d in dtypes]
    _check_attrs(attrs)
    return [_zeros(s, d, inputs) for s, d in zip(shapes, onnx_dtypes)]


symbolic._fx_target_name = "torch.onnx.ops.symbolic"
symbolic_multi_out._fx_target_name = "torch.onnx.ops.symbolic_multi_out"


def rotary_embedding(X, cos_cache, sin_cache, position_ids=None, *, interleaved=False, num_heads=0,
                     rotary_embedding_dim=0):
    """RotaryEmbedding-23: X (batch, heads, seq, head_size) or (batch, seq, hidden) rotated by the caches."""
    input_shape = X.shape
    rank, batch, seq = len(input_shape), input_shape[0], input_shape[-2]
    if position_ids is not None:
        _check(position_ids.dim() == 2, f"position_ids must be 2D when provided. Received shape {position_ids.shape}")
        _check(position_ids.shape[0] == batch, f"position_ids first dim (batch) must match x.shape[0] ({batch}). "
               f"Received {position_ids.shape[0]}")
        _check(position_ids.shape[1] == seq, f"position_ids second dim (sequence) must match x.shape[-2] ({seq}). "
               f"Received {position_ids.shape[1]}")
        _check(cos_cache.dim() == 2 and sin_cache.dim() == 2, "cos_cache/sin_cache must be 2D when position_ids is "
               f"provided. Received cos_cache shape {cos_cache.shape}, sin_cache shape {sin_cache.shape}")
    else:
        _check(cos_cache.dim() == 3 and sin_cache.dim() == 3, "cos_cache/sin_cache must be 3D when position_ids is "
               f"not provided. Received cos_cache shape {cos_cache.shape}, sin_cache shape {sin_cache.shape}")
    if rank == 4:
        x = X.permute(0, 2, 1, 3)
    else:
        _check(num_heads != 0, f"num_heads must be provided for 3D inputs. Received input tensor with shape "
               f"{input_shape}")
        x = X.reshape(batch, seq, num_heads, input_shape[2] // num_heads)
    dim = rotary_embedding_dim or x.shape[3]
    x_rotate, x_keep = x[:, :, :, :dim], x[:, :, :, dim:]
    cos, sin = (cos_cache[position_ids], sin_cache[position_ids]) if position_ids is not None else (cos_cache,
                                                                                                     sin_cache)
    for name, c in (("cos", cos), ("sin", sin)):
        _check(c.shape[0] == batch and c.shape[1] == seq, f"{name} has shape {c.shape} but expected (batch={batch}, "
               f"seq={seq}, ...)")
        _check(c.shape[-1] == dim // 2, f"Last dimension of {name} cache ({c.shape[-1]}) should match "
               f"rotary_embedding_dim/2 ({dim // 2}).")
    cos, sin = cos.unsqueeze(2), sin.unsqueeze(2)
    x1, x2 = (x_rotate[:, :, :, 0::2], x_rotate[:, :, :, 1::2]) if interleaved else x_rotate.chunk(2, dim=-1)
    real = cos * x1 - sin * x2
    imag = sin * x1 + cos * x2
    if interleaved:
        x_rotate = cat((real.unsqueeze(-1), imag.unsqueeze(-1)), dim=-1).reshape(x_rotate.shape)
    else:
        x_rotate = cat((real, imag), dim=-1)
    out = cat((x_rotate, x_keep), dim=-1)
    return out.reshape(input_shape) if rank == 3 else out.permute(0, 2, 1, 3)


def _heads(t, batch, num_heads):
    return t.view(batch, t.shape[1], num_heads, t.shape[2] // num_heads).transpose(1, 2).contiguous()


def attention(Q, K, V, attn_mask=None, past_key=None, past_value=None, *, is_causal=False, kv_num_heads=0,
              q_num_heads=0, qk_matmul_output_mode=0, scale=None, softcap=0.0, softmax_precision=None):
    """Attention-23: (output, present_key, present_value, qk_output) of Q, K, V (4-D, or 3-D with the head
    counts), an optional mask and past key/value caches."""
    rank, batch = Q.dim(), Q.shape[0]
    if rank == 3:
        _check(q_num_heads != 0 and kv_num_heads != 0, "q_num_heads and kv_num_heads must be provided for 3D inputs")
        q_len = Q.shape[1]
        Q, K, V = _heads(Q, batch, q_num_heads), _heads(K, batch, kv_num_heads), _heads(V, batch, kv_num_heads)
    _check(Q.dim() == 4 and K.dim() == 4 and V.dim() == 4, "Q, K, and V should be 4D tensors by now")
    scale = scale if scale is not None else 1.0 / math.sqrt(Q.shape[3])
    K = cat([past_key, K], dim=2) if past_key is not None else K.clone()
    V = cat([past_value, V], dim=2) if past_value is not None else V.clone()
    present_key, present_value = K, V
    hq, hkv = Q.shape[1], K.shape[1]
    _check(hq % hkv == 0, f"q_num_heads ({hq}) must be divisible by kv_num_heads ({hkv}) for GQA")
    sqrt_scale = math.sqrt(scale)
    if (softcap == 0.0 and qk_matmul_output_mode == 0 and softmax_precision is None
            and (attn_mask is None or attn_mask.dtype == _dtype.bool_)):
        out = F.scaled_dot_product_attention(Q, K, V, attn_mask=attn_mask, dropout_p=0.0, is_causal=is_causal,
                                             scale=scale, enable_gqa=hq != hkv)
        k_rep = K.repeat_interleave(hq // hkv, dim=1) if hq != hkv else K
        qk = (Q * sqrt_scale) @ (k_rep * sqrt_scale).transpose(-2, -1)
    else:
        out, qk = _attention_manual(Q, K, V, attn_mask, is_causal, qk_matmul_output_mode, sqrt_scale, softcap,
                                    softmax_precision)
    if rank == 3:
        out = out.transpose(1, 2).reshape(batch, q_len, -1)
    return out, present_key, present_value, qk


def _attention_manual(Q, K, V, attn_mask, is_causal, mode, sqrt_scale, softcap, softmax_precision):
    hq, hkv = Q.shape[1], K.shape[1]
    if hq != hkv:
        K, V = K.repeat_interleave(hq // hkv, dim=1), V.repeat_interleave(hq // hkv, dim=1)
    q_len, kv_len = Q.shape[2], K.shape[2]
    bias = _creation.zeros(q_len, kv_len, dtype=Q.dtype, device=Q.device)
    if is_causal:
        _check(attn_mask is None, "Cannot use both is_causal and attn_mask")
        causal = _creation.ones(q_len, kv_len, dtype=_dtype.bool_, device=Q.device).tril()
        bias = bias.masked_fill(causal.logical_not(), float("-inf"))
    if attn_mask is not None:
        bias = bias.masked_fill(attn_mask.logical_not(), float("-inf")) if attn_mask.dtype == _dtype.bool_ else \
            bias + attn_mask
    qk = (Q * sqrt_scale) @ (K * sqrt_scale).transpose(-2, -1)
    with_bias = qk + bias
    out_qk = with_bias if mode == 1 else qk
    if softcap > 0.0:
        with_bias = softcap * (with_bias / softcap).tanh()
    out_qk = with_bias if mode == 2 else out_qk
    if softmax_precision in (1, 10, 11, 16):
        probs = with_bias.to(ONNX_DTYPE_TO_TORCH_DTYPE[softmax_precision]).softmax(-1).to(with_bias.dtype)
    else:
        probs = with_bias.softmax(-1)
    out_qk = probs if mode == 3 else out_qk
    return probs @ V, out_qk


def aten_decompositions():
    """The ONNX-op -> implementation table (PyTorch: {torch.ops.onnx.RotaryEmbedding.opset23: ..., ...})."""
    return {rotary_embedding: rotary_embedding, attention: attention}

