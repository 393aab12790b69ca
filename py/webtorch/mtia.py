"""torch.mtia as PyTorch 2.13 built without MTIA has it: `is_available()` False, `device_count()` 0, and
PyTorch's errors from whatever needs the device. Seeding is queued (no-ops), as torch.xpu's."""
__all__ = ["init", "is_available", "is_initialized", "synchronize", "device_count", "current_device",
           "current_stream", "default_stream", "memory_stats", "max_memory_allocated", "memory_allocated",
           "reset_peak_memory_stats", "get_device_capability", "get_device_properties", "record_memory_history",
           "snapshot", "attach_out_of_memory_observer", "empty_cache", "set_device", "set_stream", "stream",
           "device", "set_rng_state", "get_rng_state", "set_rng_state_all", "get_rng_state_all", "manual_seed",
           "manual_seed_all", "seed", "seed_all", "initial_seed", "is_bf16_supported", "MTIAGraph", "graph",
           "graph_pool_handle"]

from .xpu import (  # noqa: F401 (absent the same way as torch.xpu)
    device_count,
    get_rng_state_all,
    is_available,
    is_initialized,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state_all,
)

NO_MTIA = ("Torch not compiled with MTIA enabled. Ensure you have `import mtia.host_runtime.torch_mtia.dynamic_library`"
           " in your python src file and include `//mtia/host_runtime/torch_mtia:torch_mtia` as your target "
           "dependency!")


def _no_backend(what):
    raise RuntimeError(f"Cannot execute {what}() without MTIA backend.")


def _no_mtia(*args, **kwargs):
    raise AssertionError(NO_MTIA)


def _needs_device(*args, **kwargs):
    _no_backend("getCurrentDevice")


init = get_rng_state = initial_seed = _no_mtia
synchronize = current_device = current_stream = default_stream = _needs_device
get_device_capability = get_device_properties = _needs_device


def is_bf16_supported(including_emulation=True):
    return True  # PyTorch's answer, device or not


def memory_stats(device=None):
    return {}


def memory_allocated(device=None):
    return 0


max_memory_allocated = memory_allocated


def reset_peak_memory_stats(device=None):
    pass


def record_memory_history(enabled="all", stacks="python", max_entries=0):
    pass


def snapshot():
    _no_backend("memorySnapshot")


def attach_out_of_memory_observer(observer):
    _no_backend("attachOutOfMemoryObserver")


def empty_cache():
    _no_backend("emptyCache")


def graph_pool_handle():
    _no_backend("graphPoolHandle")


def set_device(device):
    if device is None:
        raise ValueError(f"Expected a torch.device with a specified index or an integer, but got: {device}")
    _no_backend("setCurrentDevice")


def set_stream(stream):
    if stream is not None:
        _needs_device()


def stream(stream):
    _needs_device()


def set_rng_state(new_state, device="mtia"):
    _needs_device()




class device:
    """Context manager selecting an MTIA device: entering it raises without MTIA."""

    def __init__(self, device):
        self.idx = device

    def __enter__(self):
        _no_backend("getCurrentDevice" if self.idx is None else "maybeExchangeDevice")

    def __exit__(self, *exc):
        return False


class MTIAGraph:
    def __init__(self, keep_graph=False):
        _no_backend("mtiagraphCreate")


class graph:
    def __init__(self, mtia_graph, pool=None, stream=None):
        _needs_device()
