"""webtorch's backends (`cpu`, `webgpu`: the kernels behind each device), and PyTorch's
`torch.backends.*` flags, which code sets at the top of a file (`torch.backends.cudnn.benchmark =
True`): settable, with no effect here (webtorch has no CUDA, cuDNN, MPS, MKL, oneDNN, ...), and
the `is_available()` answers are False."""
import importlib

from . import (  # noqa: F401
    cuda,
    cudnn,
    cusparselt,
    kleidiai,
    mha,
    miopen,
    mkl,
    mkldnn,
    mps,
    nnpack,
    openmp,
    opt_einsum,
    python_native,
    quantized,
)

fp32_precision = "none"  # PyTorch's generic float32 precision ("none", "ieee", "tf32", "bf16"): stored, no effect


def __getattr__(name):
    if name == "cpu":  # torch.backends.cpu (get_cpu_capability): the cpu kernels, imported on first use
        return importlib.import_module(".cpu", __name__)
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")
