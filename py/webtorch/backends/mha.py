"""torch.backends.mha: whether nn.MultiheadAttention / TransformerEncoderLayer may take PyTorch's
fused inference fast path (webtorch computes the same numbers either way)."""
_fastpath = [True]


def get_fastpath_enabled():
    return _fastpath[0]


def set_fastpath_enabled(value):
    _fastpath[0] = bool(value)
