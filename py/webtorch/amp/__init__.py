"""webtorch.amp: autocast and GradScaler (mixed precision), as torch.amp."""
import importlib

from .autocast_mode import (
    autocast,
    custom_bwd,
    custom_fwd,
    get_autocast_dtype,
    is_autocast_available,
    is_autocast_enabled,
)


def __getattr__(name):
    if name in ("GradScaler", "OptState", "grad_scaler"):
        mod = importlib.import_module(".grad_scaler", __name__)
        return mod if name == "grad_scaler" else getattr(mod, name)
    raise AttributeError(f"module 'webtorch.amp' has no attribute '{name}'")


__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd", "is_autocast_enabled", "get_autocast_dtype",
           "is_autocast_available"]
