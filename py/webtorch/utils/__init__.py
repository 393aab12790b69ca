"""torch.utils: submodules load on first use (`webtorch.utils.checkpoint`, `.data`, `.hooks`, `._pytree`,
`.benchmark`, `.model_zoo`, `.cpp_extension`, `.tensorboard`, `.deterministic`, `.backcompat`, `.weak`), plus
swap_tensors, set_module, ThroughputBenchmark (`.throughput_benchmark`) and the privateuse1 / C++ backtrace helpers
(`.backend_registration`, `.cpp_backtrace`)."""
import copyreg  # noqa: F401 - PyTorch's torch.utils has it as an attribute
import importlib
import weakref

from .backend_registration import generate_methods_for_privateuse1_backend, rename_privateuse1_backend  # noqa: F401
from .cpp_backtrace import get_cpp_backtrace  # noqa: F401
from .throughput_benchmark import ThroughputBenchmark  # noqa: F401

_SUBMODULES = ("checkpoint", "data", "hooks", "_pytree", "benchmark", "model_zoo", "cpp_extension", "tensorboard",
               "deterministic", "backcompat", "weak")


def __getattr__(name):
    if name in _SUBMODULES:
        mod = importlib.import_module("." + name, __name__)
        globals()[name] = mod
        return mod
    raise AttributeError(f"module 'webtorch.utils' has no attribute '{name}'")


def swap_tensors(t1, t2):
    """Swap the contents of two tensors (class, data, autograd state), each keeping its identity."""
    for name, t in (("t1", t1), ("t2", t2)):
        if weakref.getweakrefs(t):
            raise RuntimeError(f"Cannot swap {name} because it has weakref associated with it")
    t1.__class__, t2.__class__ = t2.__class__, t1.__class__
    t1.__dict__, t2.__dict__ = t2.__dict__, t1.__dict__


def set_module(obj, mod):
    """Set obj.__module__ (how PyTorch makes its public objects report their public module)."""
    if not isinstance(mod, str):
        raise TypeError("The mod argument should be a string")
    obj.__module__ = mod
