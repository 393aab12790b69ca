"""webtorch.nn: PyTorch's torch.nn (Module, layers, losses, functional, init, utils) on webtorch ops."""
from .parameter import Parameter, Buffer, UninitializedParameter
from .modules import *  # noqa: F401,F403
from .modules import Module
from . import functional, init, utils, modules, parameter  # noqa: F401
from . import parallel  # noqa: F401
from .parallel import DataParallel  # noqa: F401

__all__ = ["Parameter", "Buffer", "Module", "functional", "init", "utils", "DataParallel"] + \
    [n for n in dir(modules) if not n.startswith("_") and n[0].isupper()]
