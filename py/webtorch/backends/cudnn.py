"""torch.backends.cudnn: settable flags with no effect (webtorch has no cuDNN)."""
from ._fp32 import _FP32Precision

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available():
    return False


def version():
    return None
benchmark_limit = None  # PyTorch sets it only where cuDNN is available
depthwise_kernel = "auto"
fp32_precision = "none"
conv = _FP32Precision("cuda", "conv", "tf32")
rnn = _FP32Precision("cuda", "rnn", "tf32")
