"""torch.xpu as PyTorch 2.13 built without XPU has it: `is_available()` False, `device_count()` 0, seeding
queued (no-ops), empty memory statistics, and PyTorch's errors from whatever needs a device (scripts ask
`torch.xpu.is_available()` before choosing their device, as pytorch/examples do)."""
import types
from collections import OrderedDict

__all__ = ["Event", "Stream", "StreamContext", "XPUPluggableAllocator", "XPUGraph", "can_device_access_peer",
           "change_current_allocator", "clock_rate", "current_device", "current_stream", "default_generators",
           "device", "device_of", "device_count", "device_memory_used", "empty_cache", "get_arch_list",
           "get_device_capability", "get_device_name", "get_device_properties", "get_gencode_flags",
           "get_per_process_memory_fraction", "get_rng_state", "get_rng_state_all", "get_stream_from_external",
           "graph", "graph_pool_handle", "init", "initial_seed", "is_available", "is_bf16_supported",
           "is_current_stream_capturing", "is_initialized", "is_tf32_supported", "make_graphed_callables",
           "manual_seed", "manual_seed_all", "max_memory_allocated", "max_memory_reserved", "mem_get_info",
           "memory_allocated", "memory_reserved", "memory_snapshot", "memory_stats", "memory_stats_as_nested_dict",
           "memory_usage", "MemPool", "power_draw", "use_mem_pool", "reset_accumulated_memory_stats",
           "reset_peak_memory_stats", "seed", "seed_all", "set_device", "set_per_process_memory_fraction",
           "set_rng_state", "set_rng_state_all", "set_stream", "stream", "streams", "synchronize", "temperature",
           "utilization"]

NO_XPU = "Torch not compiled with XPU enabled"
default_generators = ()


def _no_xpu(*args, **kwargs):
    raise AssertionError(NO_XPU)


def _no_pyzes(*args, **kwargs):
    raise ImportError("pyzes is required; install it with 'pip install pyzes'.")


def _dummy(name):
    """PyTorch's classes whose C base is missing without XPU: constructing one raises."""
    def __new__(cls, *args, **kwargs):
        raise RuntimeError(f"Tried to instantiate dummy base class {name}")
    return type(name, (), {"__new__": __new__, "__module__": __name__})


Event, Stream, XPUGraph, MemPool, XPUPluggableAllocator = (
    _dummy(n) for n in ("Event", "Stream", "XPUGraph", "MemPool", "XPUPluggableAllocator"))


def _no_c(name):
    def fn(*args, **kwargs):
        raise RuntimeError(f"Tried to instantiate dummy base class {name}")
    return fn


graph_pool_handle = _no_c("_xpu_graph_pool_handle")
is_current_stream_capturing = _no_c("_xpu_isCurrentStreamCapturing")
(init, current_device, current_stream, get_device_capability, get_device_name, get_device_properties,
 get_per_process_memory_fraction, get_rng_state, initial_seed, mem_get_info, synchronize) = (_no_xpu,) * 11
clock_rate = device_memory_used = memory_usage = power_draw = temperature = utilization = _no_pyzes


def is_available():
    return False


def is_initialized():
    return False


def device_count():
    return 0


def is_bf16_supported(including_emulation=True):
    return False


def is_tf32_supported():
    return False


def get_arch_list():
    return []


def get_gencode_flags():
    return ""


def empty_cache():
    pass


def memory_allocated(device=None):
    return 0


max_memory_allocated = memory_reserved = max_memory_reserved = memory_allocated


def memory_stats(device=None):
    return OrderedDict()


def memory_stats_as_nested_dict(device=None):
    return {}


def memory_snapshot(mempool_id=None):
    return []


def reset_peak_memory_stats(device=None):
    raise AttributeError("module 'torch._C' has no attribute '_xpu_resetPeakMemoryStats'")


def reset_accumulated_memory_stats(device=None):
    raise AttributeError("module 'torch._C' has no attribute '_xpu_resetAccumulatedMemoryStats'")


def manual_seed(seed):
    """Queued until the device initializes, which it never does here (as PyTorch's)."""


def manual_seed_all(seed):
    pass


def seed():
    pass


def seed_all():
    pass


def set_rng_state(new_state, device="xpu"):
    pass


def set_rng_state_all(new_states):
    pass


def get_rng_state_all():
    return []


def set_device(device):
    _no_xpu()


def set_per_process_memory_fraction(fraction, device=None):
    _no_xpu()


def can_device_access_peer(device, peer):
    _no_xpu()


def change_current_allocator(allocator):
    _no_xpu()


def get_stream_from_external(data_ptr, device=None):
    _no_xpu()


def make_graphed_callables(callables, sample_args, num_warmup_iters=3, allow_unused_input=False, pool=None):
    _no_xpu()


def use_mem_pool(pool, device=None):
    _no_xpu()


def set_stream(stream):
    """A None stream is ignored, as PyTorch's."""
    if stream is not None:
        _no_xpu()


class device:
    """Context manager selecting an XPU device: entering one raises without XPU (as PyTorch's, any index)."""

    def __init__(self, device):
        self.idx = getattr(device, "index", device)

    def __enter__(self):
        raise NotImplementedError("PyTorch was compiled without XPU support")

    def __exit__(self, *exc):
        return False


class device_of(device):
    """The device of a tensor (-1: no tensor is on XPU here)."""

    def __init__(self, obj):
        super().__init__(-1)


class StreamContext:
    """Context manager selecting a stream; a None stream is a no-op."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            _no_xpu()

    def __exit__(self, *exc):
        return False


def stream(stream):
    return StreamContext(stream)


class graph:
    def __init__(self, xpu_graph, pool=None, stream=None, capture_error_mode="global"):
        Stream()  # PyTorch's graph makes its capture stream first


streams = types.SimpleNamespace(Event=Event, Stream=Stream)  # torch.xpu.streams' names
