"""torch.mps as PyTorch 2.13 has it off Apple silicon: `is_available()` False, `device_count()` 0, and
PyTorch's RuntimeError "Cannot execute ...() without MPS backend." from what needs the device."""
from . import profiler  # noqa: F401
from ._absent import no_mps as _no_mps

__all__ = ["compile_shader", "load_metallib", "device_count", "get_rng_state", "manual_seed", "seed",
           "set_rng_state", "synchronize", "empty_cache", "set_per_process_memory_fraction",
           "current_allocated_memory", "driver_allocated_memory", "Event", "profiler", "recommended_max_memory",
           "is_available"]


def is_available():
    return False


def device_count():
    return 0


def manual_seed(seed):
    """A no-op without MPS, as PyTorch's."""


def seed():
    _no_mps("getDefaultGenerator")


def get_rng_state(device="mps"):
    _no_mps("getDefaultGenerator")


def set_rng_state(new_state, device="mps"):
    _no_mps("getDefaultGenerator")


def synchronize():
    _no_mps("deviceSynchronize")


def empty_cache():
    _no_mps("emptyCache")


def set_per_process_memory_fraction(fraction):
    _no_mps("setMemoryFraction")


def current_allocated_memory():
    _no_mps("getCurrentAllocatedMemory")


def driver_allocated_memory():
    _no_mps("getDriverAllocatedMemory")


def recommended_max_memory():
    _no_mps("getRecommendedMaxMemory")


def compile_shader(source):
    raise RuntimeError("MPS is not available")


def load_metallib(source):
    raise RuntimeError("MPS is not available")


class Event:
    def __init__(self, enable_timing=False):
        _no_mps("acquireEvent")
