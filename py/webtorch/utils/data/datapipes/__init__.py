"""torch.utils.data.datapipes: DataPipe bases and decorators (datapipe.py), PyTorch's IterDataPipes (iter.py)
and MapDataPipes (map.py), each registered as its functional form."""
from . import datapipe, iter, map  # noqa: A004 (PyTorch's submodule names)
from .datapipe import *  # noqa: F403

__all__ = datapipe.__all__ + ["iter", "map"]
