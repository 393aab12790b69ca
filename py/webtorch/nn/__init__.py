"""webtorch.nn: PyTorch's torch.nn (Module, layers, losses, functional, init, utils) on webtorch ops."""
from . import (  # noqa: F401
    functional,
    grad,
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


def factory_kwargs(kwargs):
    """kwargs' device, dtype and memory_format (and those of its `factory_kwargs` entry) as one dict for a factory
    function, as PyTorch's torch.nn.factory_kwargs; TypeError for any other key or one given twice."""
    if kwargs is None:
        return {}
    simple_keys = {"device", "dtype", "memory_format"}
    expected_keys = simple_keys | {"factory_kwargs"}
    if not kwargs.keys() <= expected_keys:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected_keys}")
    r = dict(kwargs.get("factory_kwargs", {}))
    for k in simple_keys:
        if k in kwargs:
            if k in r:
                raise TypeError(f"{k} specified twice, in **kwargs and in factory_kwargs")
            r[k] = kwargs[k]
    return r
