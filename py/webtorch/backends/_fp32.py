"""`torch.backends.<backend>.<op>.fp32_precision` ("cudnn.conv", "mkldnn.matmul", ...): PyTorch's per-op float32
precision setting, stored and checked as PyTorch's is, with no effect here (webtorch computes float32 as IEEE)."""
PRECISIONS = ("none", "ieee", "tf32", "bf16")


def check(precision):
    if precision not in PRECISIONS:
        raise RuntimeError(f"Unknown precision: {precision}")
    return precision


class _FP32Precision:
    """One backend op's `fp32_precision`; any other attribute raises, as PyTorch's does."""

    def __init__(self, backend, op, precision="none"):
        object.__setattr__(self, "backend", backend)
        object.__setattr__(self, "op", op)
        object.__setattr__(self, "_precision", precision)

    def __setattr__(self, name, value):
        if name != "fp32_precision":
            raise AttributeError("Unknown attribute " + name)
        object.__setattr__(self, "_precision", check(value))

    def __getattr__(self, name):
        if name != "fp32_precision":
            raise AttributeError("Unknown attribute " + name)
        return self._precision
