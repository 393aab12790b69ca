"""Transformer, its encoder and decoder stacks and layers (the slow path of PyTorch's, written in nn layers)."""
import copy
import math
import warnings

from ...autograd.grad_mode import is_grad_enabled
from ...ops import _creation
from .. import functional as F, init
from .activation import GELU, MultiheadAttention, ReLU
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer"]


def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _get_clones(module, N):
    return ModuleList([copy.deepcopy(module) for _ in range(N)])


def _generate_square_subsequent_mask(sz, device=None, dtype=None):
    """A float mask with -inf above the diagonal and 0 elsewhere."""
    m = _creation.full((sz, sz), -math.inf, dtype=dtype, device=device)
    return m.triu(1)


def _get_seq_len(src, batch_first):
    if src.dim() == 2:
        return src.size(0)
    return src.size(1 if batch_first else 0)


def _detect_is_causal_mask(mask, is_causal=None, size=None):
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.size(-2)
        causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
        if tuple(mask.shape) == tuple(causal.shape):
            make_causal = bool((mask == causal).all())
        else:
            make_causal = False
    return make_causal


def _build_layer(layer, n, d_model, nhead, dim_feedforward, dropout, layer_norm_eps, batch_first, norm_first, bias,
                 fk):
    """The submodules of an encoder (n=2) or decoder (n=3: with cross-attention) layer, in PyTorch's order."""
    for name in ("self_attn", "multihead_attn")[:n - 1]:
        setattr(layer, name, MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                                **fk))
    layer.linear1 = Linear(d_model, dim_feedforward, bias=bias, **fk)
    layer.dropout = Dropout(dropout)
    layer.linear2 = Linear(dim_feedforward, d_model, bias=bias, **fk)
    layer.norm_first = norm_first
    for i in range(1, n + 1):
        setattr(layer, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk))
    for i in range(1, n + 1):
        setattr(layer, f"dropout{i}", Dropout(dropout))


class _TransformerLayer(Module):
    """TransformerEncoderLayer (_n = 2) and TransformerDecoderLayer (_n = 3): one constructor."""
    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        _build_layer(self, self._n, d_model, nhead, dim_feedforward, dropout, layer_norm_eps, batch_first, norm_first,
                     bias, {"device": device, "dtype": dtype})
        self._set_activation(_get_activation_fn(activation) if isinstance(activation, str) else activation)

    def _set_activation(self, activation):
        self.activation = activation

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return getattr(self, f"dropout{self._n}")(x)  # the layer's last dropout


class TransformerEncoderLayer(_TransformerLayer):
    _n = 2

    def _set_activation(self, activation):
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "activation"):
            self.activation = F.relu

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        src_key_padding_mask = F._canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                                 F._none_or_dtype(src_mask), "src_mask", src.dtype)
        src_mask = F._canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal=is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal=is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x


def _why_not_sparsity_fast_path(layer):
    """Why PyTorch would not run this encoder layer as nested tensors (its warning's words); '' if it would."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not layer.self_attn.batch_first:
        return f"{name}.self_attn.batch_first was not True(use batch_first for better inference performance)"
    if not layer.self_attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if layer.self_attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if layer.self_attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


class TransformerEncoder(Module):
    """A stack of encoder layers. webtorch has no nested tensors: a padded batch is computed with its key
    padding mask, and where PyTorch would have used a nested tensor its zeros at the padded positions are
    written in (`_nested_padding`), so the numbers are PyTorch's."""
    __constants__ = ["norm"]

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why = _why_not_sparsity_fast_path(encoder_layer)
        if enable_nested_tensor and why:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why}",
                          stacklevel=2)
            self.use_nested_tensor = False

    def _nested_padding(self, src, mask, key_padding_mask):
        """The (batch, seq) bool mask of padded positions where PyTorch would run the stack on a nested tensor
        (inference without gradients, a key padding mask, no mask, padding at the end of each row, which
        mask_check=False assumes unchecked) and so return zeros there; else None."""
        layer = self.layers[0]
        if not getattr(self, "use_nested_tensor", False) or layer.training or src.dim() != 3 or \
                key_padding_mask is None or mask is not None:
            return None
        if is_grad_enabled() and (src.requires_grad or any(p.requires_grad for p in layer.parameters())):
            return None
        padded = key_padding_mask != 0
        if getattr(self, "mask_check", True) and bool((padded[:, :-1] & padded[:, 1:].logical_not()).any()):
            return None
        lengths = padded.logical_not().sum(1, keepdim=True)
        return _creation.arange(padded.shape[1], device=padded.device) >= lengths

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        src_key_padding_mask = F._canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                                 F._none_or_dtype(mask), "mask", src.dtype)
        mask = F._canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        output = src
        seq_len = _get_seq_len(src, self.layers[0].self_attn.batch_first)
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        padded = self._nested_padding(src, mask, src_key_padding_mask)
        if padded is not None:
            src_key_padding_mask = F._canonical_mask(padded, "src_key_padding_mask", None, "", src.dtype)
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask)
        if padded is not None:
            output = output.masked_fill(padded.unsqueeze(-1), 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    __constants__ = ["norm"]

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        output = tgt
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoderLayer(_TransformerLayer):
    _n = 3

    def __setstate__(self, state):
        if "activation" not in state:
            state["activation"] = F.relu
        super().__setstate__(state)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)


class Transformer(Module):
    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation=F.relu, custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        fk = {"device": device, "dtype": dtype}
        super().__init__()
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
                      bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(TransformerEncoderLayer(*layer_args, **fk), num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(TransformerDecoderLayer(*layer_args, **fk), num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk))
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        is_batched = src.dim() == 3
        if is_batched and src.size(0 if self.batch_first else 1) != tgt.size(0 if self.batch_first else 1):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        return _generate_square_subsequent_mask(sz, dtype=dtype, device=device)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
