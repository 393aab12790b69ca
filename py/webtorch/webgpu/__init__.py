"""`webtorch.webgpu`: the WebGPU device, as `torch.cuda` is for CUDA.

    import webtorch as torch
    torch.webgpu.is_available()          # an adapter and device can be had
    torch.webgpu.get_device_name()       # 'llvmpipe (LLVM 15.0.6, 256 bits)', 'swiftshader', ...
    torch.webgpu.synchronize()           # wait for queued GPU work
    torch.webgpu.memory_allocated()      # bytes held by live tensors (caching allocator)
    torch.webgpu.empty_cache()           # give cached buffers back to the driver
    torch.webgpu.counters()              # dispatches, submits, pipelines, allocator reuse
    torch.webgpu.custom_op(...)          # your own WGSL kernel as an autograd-aware op
"""
from .._tensor import Storage, Tensor
from ..backends import webgpu as _wg
from ..backends.webgpu import capture as _capture
from . import fused, linalg, linalg_orth  # noqa: F401  (they register their WGSL kernels with the linalg ops)
from .custom import CustomOp, custom_op  # noqa: F401

_wg.extend(fused.install)       # softmax and optimizer-step hooks on the backend
_capture.front.Tensor, _capture.front.Storage = Tensor, Storage      # what replays return

__all__ = ["is_available", "device_count", "current_device", "synchronize", "get_device_name",
           "get_device_properties", "adapter_info", "memory_allocated", "memory_reserved",
           "memory_cached", "max_memory_allocated", "memory_stats", "empty_cache", "counters",
           "dispatch_count", "submit_count", "custom_op", "CustomOp"]


def is_available():
    """True when a WebGPU adapter and device can be obtained (lavapipe counts)."""
    return _wg.is_available()


def device_count():
    return 1 if is_available() else 0


def current_device():
    return 0


def synchronize(device=None):
    """Wait until all queued GPU work has finished."""
    _wg.synchronize()


def adapter_info():
    """vendor, architecture, device, description, backend, adapter_type, features, limits."""
    return _wg.adapter_info()


def get_device_name(device=None):
    info = _wg.get_backend().driver.info
    return info.get("device") or info.get("description") or info.get("vendor") or "WebGPU adapter"


class _Props:
    def __init__(self, info):
        self.name = info.get("device") or info.get("vendor") or "WebGPU adapter"
        self.adapter_type = info.get("adapter_type")
        self.backend = info.get("backend")
        self.vendor = info.get("vendor")
        lim = info.get("limits", {})
        self.max_buffer_size = lim.get("max-buffer-size")
        self.max_storage_buffer_binding_size = lim.get("max-storage-buffer-binding-size")
        self.max_compute_workgroups_per_dimension = lim.get("max-compute-workgroups-per-dimension")
        self.max_compute_invocations_per_workgroup = lim.get("max-compute-invocations-per-workgroup")
        self.features = info.get("features", [])

    def __repr__(self):
        return f"_WebGPUDeviceProperties(name='{self.name}', adapter_type='{self.adapter_type}', " \
               f"backend='{self.backend}')"


def get_device_properties(device=None):
    return _Props(adapter_info())


def _alloc():
    return _wg.get_backend().alloc


def memory_allocated(device=None):
    """Bytes of GPU buffers handed out to live tensors (rounded to the allocator's size classes)."""
    return _alloc().allocated_bytes


def max_memory_allocated(device=None):
    """The largest memory_allocated() since the start (or torch.accelerator.reset_peak_memory_stats())."""
    return _alloc().peak_allocated


def memory_reserved(device=None):
    """Bytes of all GPU buffers the allocator holds (live + cached)."""
    return _alloc().reserved_bytes


def memory_cached(device=None):
    """Bytes of freed buffers kept for reuse."""
    return _alloc().cached_bytes


def memory_stats(device=None):
    c = counters()
    c["max_allocated_bytes"] = max_memory_allocated()
    return c


def empty_cache():
    """Release cached (free) GPU buffers back to the driver."""
    _wg.empty_cache()


def counters():
    """dispatches, submits, pipelines compiled, buffers created / reused, bytes allocated /
    cached / reserved: what a test or a benchmark needs to prove batching and reuse."""
    return _wg.counters()


def dispatch_count():
    return _wg.dispatch_count()


def submit_count():
    return _wg.submit_count()
