"""webtorch.nn: PyTorch's torch.nn (Module, layers, losses, functional, init, utils) on webtorch ops."""
from . import (  # noqa: F401
    functional,
    init,
    modules,
    parallel,  # noqa: F401
    parameter,
    utils,
)
from .modules import *  # noqa: F401,F403
from .modules import Module
from .parallel import DataParallel  # noqa: F401
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = ["Parameter", "Buffer", "Module", "functional", "init", "utils", "DataParallel"] + \
    [n for n in dir(modules) if not n.startswith("_") and n[0].isupper()]
