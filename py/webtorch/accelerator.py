"""torch.accelerator: the device-agnostic accelerator API, answered by webtorch's one GPU device.

    device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"

picks `device("webgpu")` where a WebGPU adapter exists, as it picks `cuda` under PyTorch. Without
an adapter every call that needs a device raises PyTorch's RuntimeError. The memory statistics are
the WebGPU caching allocator's, under PyTorch's keys (torch.cuda's under the cuda alias too).
"""
import warnings
from collections import OrderedDict

from . import _dtype
from ._device import as_device, cpu_only, device as _device
from .backends import webgpu

__all__ = ["Graph", "current_accelerator", "current_device_idx", "current_device_index", "get_device_capability",
           "current_stream", "device_count", "device_index", "empty_cache", "empty_host_cache", "get_memory_info",
           "is_available", "max_memory_allocated", "max_memory_reserved", "memory_allocated", "memory_reserved",
           "memory_stats", "reset_accumulated_memory_stats", "reset_peak_memory_stats", "set_device_idx",
           "set_device_index", "set_stream", "synchronize"]


def is_available():
    """True when a WebGPU adapter and device can be obtained (and the script was not run with --device cpu)."""
    return not cpu_only() and webgpu.is_available()


def current_accelerator(check_available=False):
    """`device(type='webgpu', index=0)` where there is an adapter, else None."""
    return _device("webgpu") if is_available() else None


def device_count():
    return 1 if is_available() else 0


def _backend(device=None):
    """The WebGPU backend; PyTorch's RuntimeError without an accelerator, its ValueError for a device
    of another type."""
    if not is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if device is not None and not isinstance(device, int) and as_device(device).type != "webgpu":
        raise ValueError(f"{device} doesn't match the current accelerator webgpu.")
    return webgpu.get_backend()


def synchronize(device=None, /):
    """Wait for all queued GPU work (as torch.cuda.synchronize)."""
    _backend(device).synchronize()


def current_device_index():
    _backend()
    return 0


def current_device_idx():
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_index(device, /):
    _backend(device)
    index = device if isinstance(device, int) else as_device(device).index
    if index not in (None, 0):
        raise RuntimeError(f"webtorch has one webgpu device; got index {index}")


def set_device_idx(device, /):
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


class device_index:
    """`with torch.accelerator.device_index(i):` (one WebGPU device: only 0 or None)."""

    def __init__(self, device, /):
        self.idx = device

    def __enter__(self):
        if self.idx is not None:
            set_device_index(self.idx)

    def __exit__(self, *exc_info):
        return False


class _Stream:
    """The WebGPU queue: one in-order stream."""
    device = _device("webgpu")

    def synchronize(self):
        webgpu.synchronize()

    def query(self):
        return True


def current_stream(device=None, /):
    _backend(device)
    return _Stream()


def set_stream(stream):
    _backend()


def get_device_capability(device=None, /):
    be = _backend(device)
    names = ["float32", "int32", "int64", "bool", "uint8"] + (["float16"] if be.has_f16 else [])
    return {"supported_dtypes": {_dtype.BY_NAME[n] for n in names}}


def memory_stats(device_index=None, /):
    """The WebGPU caching allocator's bytes under PyTorch's keys."""
    a = _backend(device_index).alloc
    stats = {"allocated_bytes.all.current": a.allocated_bytes, "allocated_bytes.all.peak": a.peak_allocated,
             "reserved_bytes.all.current": a.reserved_bytes, "reserved_bytes.all.peak": a.peak_reserved,
             "inactive_split_bytes.all.current": a.cached_bytes, "active.all.current": len(a.live),
             "num_alloc_retries": 0, "num_ooms": 0}
    return OrderedDict(sorted(stats.items()))


def memory_allocated(device_index=None, /):
    return memory_stats(device_index).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device_index=None, /):
    return memory_stats(device_index).get("allocated_bytes.all.peak", 0)


def memory_reserved(device_index=None, /):
    return memory_stats(device_index).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device_index=None, /):
    return memory_stats(device_index).get("reserved_bytes.all.peak", 0)


def reset_peak_memory_stats(device_index=None, /):
    _backend(device_index).alloc.reset_peak()


def reset_accumulated_memory_stats(device_index=None, /):
    _backend(device_index)


def empty_cache():
    """Give cached GPU buffers back to the driver."""
    _backend().alloc.empty_cache()


def empty_host_cache():
    _backend()


def get_memory_info(device_index=None, /):
    """(free, total) bytes. WebGPU does not expose the device's memory: free is the largest buffer
    the adapter allows, total that plus the bytes the allocator holds."""
    a = _backend(device_index).alloc
    return a.max_bytes, a.max_bytes + a.reserved_bytes


class Graph:
    """torch.accelerator.Graph (graph capture): webtorch captures through torch.compile on webgpu."""

    def __init__(self, keep_graph=False):
        raise RuntimeError("torch.accelerator.Graph is not supported by webtorch; torch.compile captures and "
                           "replays webgpu graphs")
