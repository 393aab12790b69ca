"""torch.utils.tensorboard: as PyTorch's, importing it needs the tensorboard package (ModuleNotFoundError without
it, as here and in the browser). With tensorboard installed, webtorch's SummaryWriter is not written yet: importing
raises ImportError rather than writing event files that might differ from PyTorch's."""
import tensorboard  # noqa: F401 - PyTorch's module fails the same way when the package is missing

raise ImportError("webtorch.utils.tensorboard: SummaryWriter is not implemented in webtorch yet; log with "
                  "tensorboard's own API, or with print")
