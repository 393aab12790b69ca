"""torch.utils.data._utils: the DataLoader's helpers (collate) at PyTorch's import path."""
from . import collate  # noqa: F401
