"""torch.cuda.memory: PyTorch's statistics without CUDA (zeros, empty dicts, its errors), and under
the cuda alias the WebGPU caching allocator's bytes under PyTorch's keys."""
import contextlib
import warnings
from collections import OrderedDict

from .. import accelerator
from ._state import _lazy_init, _missing_c, _no_nvml, is_initialized

__all__ = ["caching_allocator_alloc", "caching_allocator_delete", "caching_allocator_enable",
           "caching_allocator_disabled", "get_per_process_memory_fraction", "set_per_process_memory_fraction",
           "empty_cache", "memory_stats", "memory_stats_as_nested_dict", "reset_accumulated_memory_stats",
           "reset_peak_memory_stats", "reset_max_memory_allocated", "reset_max_memory_cached",
           "host_memory_stats", "host_memory_stats_as_nested_dict", "reset_accumulated_host_memory_stats",
           "reset_peak_host_memory_stats", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "memory_cached", "max_memory_cached", "memory_snapshot", "memory_summary",
           "list_gpu_processes", "mem_get_info", "get_allocator_backend", "CUDAPluggableAllocator",
           "change_current_allocator", "MemPool", "use_mem_pool", "device_memory_used"]


def memory_stats(device=None):
    """An empty OrderedDict without CUDA; under the alias the WebGPU allocator's (torch.accelerator's)."""
    if not is_initialized():
        return OrderedDict()
    return accelerator.memory_stats()


def memory_stats_as_nested_dict(device=None):
    if not is_initialized():
        return {}
    out = {}
    for key, value in memory_stats(device).items():
        *path, last = key.split(".")
        node = out
        for p in path:
            node = node.setdefault(p, {})
        node[last] = value
    return out


def memory_allocated(device=None):
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device=None):
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device=None):
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device=None):
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def memory_cached(device=None):
    warnings.warn("`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`", FutureWarning,
                  stacklevel=2)
    return memory_reserved(device)


def max_memory_cached(device=None):
    warnings.warn("`torch.cuda.max_memory_cached` has been renamed to `torch.cuda.max_memory_reserved`",
                  FutureWarning, stacklevel=2)
    return max_memory_reserved(device)


def reset_peak_memory_stats(device=None):
    if not is_initialized():
        _missing_c("_cuda_resetPeakMemoryStats")
    accelerator.reset_peak_memory_stats()


def reset_accumulated_memory_stats(device=None):
    if not is_initialized():
        _missing_c("_cuda_resetAccumulatedMemoryStats")


def _reset_max(what):
    warnings.warn(f"torch.cuda.reset_max_memory_{what} now calls torch.cuda.reset_peak_memory_stats, which "
                  "resets /all/ peak memory stats.", FutureWarning, stacklevel=3)


def reset_max_memory_allocated(device=None):
    _reset_max("allocated")
    return reset_peak_memory_stats(device)


def reset_max_memory_cached(device=None):
    _reset_max("cached")
    return reset_peak_memory_stats(device)


def host_memory_stats():
    return OrderedDict()


def host_memory_stats_as_nested_dict():
    return {}


def reset_accumulated_host_memory_stats():
    _missing_c("_cuda_resetAccumulatedHostMemoryStats")


def reset_peak_host_memory_stats():
    _missing_c("_cuda_resetPeakHostMemoryStats")


def empty_cache():
    """Give cached GPU buffers back to the driver (nothing to do without CUDA)."""
    if is_initialized():
        accelerator.empty_cache()


def mem_get_info(device=None):
    """(free, total) bytes: under the alias, torch.accelerator.get_memory_info()."""
    _lazy_init()
    return accelerator.get_memory_info()


def memory_summary(device=None, abbreviated=False):
    """A table of memory_stats(); without CUDA PyTorch's KeyError (its stats are empty)."""
    stats = memory_stats(device)
    if "allocated_bytes.all.current" not in stats:
        raise KeyError("allocated_bytes.all.current")
    title = " PyTorch CUDA memory summary (webtorch: the WebGPU allocator) "
    return "\n".join([f"|{title:=^58}|"] + [f"| {k:<38} {v:>17} |" for k, v in stats.items()])


def memory_snapshot(mempool_id=None, include_traces=True):
    _missing_c("_cuda_memorySnapshot")


def list_gpu_processes(device=None):
    return "pynvml module not found, please install nvidia-ml-py"


def device_memory_used(device=None):
    _no_nvml()


def get_per_process_memory_fraction(device=None):
    _lazy_init()
    return 1.0


def set_per_process_memory_fraction(fraction, device=None):
    _lazy_init()
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")


def caching_allocator_alloc(size, device=None, stream=None):
    _lazy_init()
    raise RuntimeError("webtorch's WebGPU allocator hands out buffers, not raw pointers")


def caching_allocator_delete(mem_ptr):
    _missing_c("_cuda_cudaCachingAllocator_raw_delete")


def caching_allocator_enable(value=True):
    pass


@contextlib.contextmanager
def caching_allocator_disabled():
    _missing_c("_cuda_cudaCachingAllocator_is_enabled")
    yield


def get_allocator_backend():
    if not is_initialized():
        _missing_c("_cuda_getAllocatorBackend")
    return "native"


class CUDAPluggableAllocator:
    def __init__(self, path_to_so_file, alloc_fn_name, free_fn_name):
        raise OSError(f"{path_to_so_file}: cannot open shared object file: No such file or directory")


def change_current_allocator(allocator):
    _missing_c("_cuda_changeCurrentAllocator")


class MemPool:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("Tried to instantiate dummy base class MemPool")


@contextlib.contextmanager
def use_mem_pool(pool, device=None):
    _lazy_init()
    yield
