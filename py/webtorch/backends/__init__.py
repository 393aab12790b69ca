"""webtorch's backends (`cpu`, `webgpu`: the kernels behind each device), and PyTorch's
`torch.backends.{cudnn,cuda,mps}` flags, which code sets at the top of a file
(`torch.backends.cudnn.benchmark = True`): settable, with no effect here (webtorch has no
CUDA, cuDNN or MPS), and the `is_available()` answers are False."""
from . import cuda, cudnn, mps  # noqa: F401
