"""torch.version: the PyTorch release whose API webtorch follows, with webtorch's own release in
the local part (`torch.__version__ == "2.13.0+webtorch.0.1.0"`), and no CUDA/ROCm/XPU."""
from .torch_version import TorchVersion

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]

webtorch = "0.1.0"  # webtorch's own release (the wheel's version)
__version__ = TorchVersion(f"2.13.0+webtorch.{webtorch}")
debug = False
cuda = None
git_version = "Unknown"
hip = None
rocm = None
xpu = None
