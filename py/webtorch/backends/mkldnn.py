"""torch.backends.mkldnn: oneDNN, which webtorch does not use; the flags are settable, with no effect."""
from ._fp32 import _FP32Precision

enabled = True
deterministic = False
allow_tf32 = False


def is_available():
    return False
fp32_precision = "none"
matmul = _FP32Precision("mkldnn", "matmul")
conv = _FP32Precision("mkldnn", "conv")
rnn = _FP32Precision("mkldnn", "rnn")
