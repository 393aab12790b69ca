"""The WebGPU backend ("webgpu" device).

`get_backend()` creates the backend once: over the native wgpu-py driver in CPython, over
the browser driver (`drivers/browser.py`, navigator.gpu through pyodide.ffi) in Pyodide.
"""
import sys

from .backend import WebGPUBackend
from .drivers.browser import BrowserDriver
from .drivers.native import NativeDriver

_backend = None
_error = None
_extensions = []        # install(backend) functions of the layers above (webtorch.webgpu's fused kernels)


def extend(install):
    """Run `install(backend)` on the backend, now if it exists, else when it is made: the tensor-level layer
    above attaches its hooks (softmax, fused optimizer steps) this way, so the backend never imports it."""
    _extensions.append(install)
    if _backend is not None:
        install(_backend)


def _make_driver():
    if sys.platform == "emscripten":
        return BrowserDriver()
    return NativeDriver()


def get_backend():
    """The process-wide WebGPUBackend (created on first use)."""
    global _backend, _error
    if _backend is None:
        try:
            backend = WebGPUBackend(_make_driver())
        except Exception as e:
            _error = e
            raise
        for install in _extensions:
            install(backend)
        _backend = backend
    return _backend


def is_available():
    """True when a WebGPU adapter and device can be obtained."""
    if _backend is not None:
        return True
    try:
        get_backend()
        return True
    except Exception:
        return False


def synchronize():
    """Wait until all queued GPU work has finished."""
    if _backend is not None:
        _backend.synchronize()


def adapter_info():
    """Adapter description: vendor, architecture, device, description, backend, adapter_type,
    plus 'features' (list) and 'limits' (dict)."""
    d = get_backend().driver
    info = dict(d.info)
    info["features"] = sorted(d.features)
    info["limits"] = dict(d.limits)
    return info


def counters():
    """Counters that prove batching and caching: dispatches, submits, pipelines compiled,
    allocator buffers created / reused, bytes allocated / cached / reserved, and the GPU
    buffers alive (handed out) and pooled (free, cached for reuse)."""
    b = get_backend()
    b.fusion.flush()
    a = b.alloc
    return {"dispatches": b.driver.dispatches, "submits": b.driver.submits,
            "pipelines": b.pipelines_compiled, "buffers_created": a.creates, "buffers_reused": a.reuses,
            "allocated_bytes": a.allocated_bytes, "cached_bytes": a.cached_bytes,
            "reserved_bytes": a.reserved_bytes, "live_buffers": len(a.live),
            "pooled_buffers": sum(len(v) for v in a.pool.values())}


def dispatch_count():
    """Dispatches recorded so far (pending fused element-wise work is dispatched first)."""
    b = get_backend()
    b.fusion.flush()
    return b.driver.dispatches


def set_fusion(enabled):
    """Turn lazy element-wise fusion on or off (WEBTORCH_FUSION=0 starts with it off);
    returns the previous setting. Pending work is dispatched first."""
    f = get_backend().fusion
    old = f.enabled
    f.set_enabled(enabled)
    return old


def submit_count():
    return get_backend().driver.submits


def empty_cache():
    """Release cached (free) GPU buffers back to the driver."""
    if _backend is not None:
        _backend.alloc.empty_cache()
