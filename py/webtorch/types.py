"""torch.types: the type aliases PyTorch's signatures use."""
import os
from typing import IO, Union

from ._device import device as _device
from ._tensor import Storage

__all__ = ["Device", "FileLike", "Number", "Storage"]

Device = _device | str | int | None
FileLike = Union[str, os.PathLike[str], IO[bytes]]  # noqa: UP007 (PyTorch's spelling: a typing.Union)
Number = int | float | bool
