"""torch.utils: submodules load on first use (`webtorch.utils.checkpoint`, `.data`, `.hooks`, `._pytree`)."""
import importlib


def __getattr__(name):
    if name in ("checkpoint", "data", "hooks", "_pytree"):
        mod = importlib.import_module("." + name, __name__)
        globals()[name] = mod
        return mod
    raise AttributeError(f"module 'webtorch.utils' has no attribute '{name}'")
