"""torch.nn.utils.skip_init."""
import inspect

from ..modules import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """A module whose parameters are left as constructed (PyTorch leaves them uninitialized: any values
    are its contract; webtorch has no meta device, so they are the constructor's)."""
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs["device"] = kwargs.pop("device", "cpu")
    return module_cls(*args, **kwargs)
