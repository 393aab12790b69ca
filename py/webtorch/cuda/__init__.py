"""torch.cuda as PyTorch has it on a machine without CUDA, or, under the cuda alias, for the
WebGPU device.

Without the alias (the default, and `python -m webtorch --no-cuda-alias`) every name answers as
PyTorch 2.13 built without CUDA does: `is_available()` False, `device_count()` 0, seeding no-ops,
empty memory statistics, and its AssertionError "Torch not compiled with CUDA enabled" (or its
other errors) from what needs a device. Under the alias (`python -m webtorch --device webgpu`,
`webtorch._device.set_cuda_alias(True)`) "cuda" names the WebGPU device: `is_available()` True,
`get_device_name()` the adapter's, `synchronize()` waits for queued GPU work, the memory
statistics are the WebGPU caching allocator's. `torch.cuda.amp` is PyTorch's deprecated amp.
"""
import warnings

from .. import _legacy, webgpu as _webgpu
from .._device import as_device, cuda_alias
from . import amp, graphs, jiterator, memory, nccl, nvtx, profiler, random, sparse, streams, tunable  # noqa: F401
from ._state import _lazy_init, _missing_c, _no_nvml, is_available, is_initialized
from .graphs import CUDAGraph, graph, graph_pool_handle, is_current_stream_capturing, make_graphed_callables
from .memory import *  # noqa: F401,F403
from .memory import __all__ as _memory_all
from .random import *  # noqa: F401,F403
from .random import __all__ as _random_all
from .streams import Event, ExternalStream, Stream

__all__ = ["BFloat16Storage", "BFloat16Tensor", "BoolStorage", "BoolTensor", "ByteStorage", "ByteTensor",
           "CUDAGraph", "CharStorage", "CharTensor", "ComplexDoubleStorage", "ComplexFloatStorage", "CudaError",
           "DeferredCudaCallError", "DoubleStorage", "DoubleTensor", "Event", "ExternalStream", "FloatStorage",
           "FloatTensor", "GreenContext", "HalfStorage", "HalfTensor", "IntStorage", "IntTensor", "LongStorage",
           "LongTensor", "ShortStorage", "ShortTensor", "Stream", "StreamContext", "amp", "can_device_access_peer",
           "check_error", "clock_rate", "cudaStatus", "cudart", "current_blas_handle", "current_device",
           "current_solver_handle", "current_stream", "default_generators", "default_stream", "device",
           "device_count", "device_of", "get_arch_list", "get_device_capability", "get_device_name",
           "get_device_properties", "get_gencode_flags", "get_stream_from_external", "get_sync_debug_mode",
           "graph", "graph_pool_handle", "graphs", "has_half", "has_magma", "init", "ipc_collect",
           "is_available", "is_bf16_supported", "is_current_stream_capturing", "is_initialized",
           "is_tf32_supported", "jiterator", "make_graphed_callables", "memory", "memory_usage", "nccl", "nvtx",
           "power_draw", "profiler", "random", "set_device", "set_stream", "set_sync_debug_mode", "sparse",
           "stream", "streams", "synchronize", "temperature", "tunable", "utilization"] + _memory_all + _random_all

has_half = True
has_magma = False
default_generators = ()


def init():
    _lazy_init()


def device_count():
    return 1 if is_available() else 0


def current_device():
    _lazy_init()
    return 0


def synchronize(device=None):
    """Wait for all queued GPU work (PyTorch's AssertionError without CUDA)."""
    _lazy_init().synchronize()


def _index(device):
    """The cuda device index `device` (int, str, torch.device or None) names; PyTorch's ValueError
    for a device of another type."""
    if device is None or isinstance(device, int):
        return device
    dev = as_device(device)
    if dev.type != ("webgpu" if cuda_alias() else "cuda"):
        raise ValueError(f"Expected a cuda device, but got: {device}")
    return dev.index


def set_device(device):
    index = _index(device)
    if index is not None and index >= 0:
        if not is_available():
            _missing_c("_cuda_setDevice")
        if index != 0:
            raise RuntimeError(f"webtorch has one webgpu device; got index {index}")


def get_device_name(device=None):
    """The WebGPU adapter's name under the cuda alias."""
    _lazy_init()
    return _webgpu.get_device_name()


def get_device_capability(device=None):
    _lazy_init()
    return (0, 0)


def get_device_properties(device=None):
    _lazy_init()
    return _webgpu.get_device_properties()


def get_arch_list():
    return []


def get_gencode_flags():
    return ""


def is_bf16_supported(including_emulation=True):
    """False without CUDA, as PyTorch's; under the cuda alias the WebGPU device computes bfloat16 (any adapter)."""
    return cuda_alias() and is_available()


def is_tf32_supported():
    return False


def can_device_access_peer(device, peer_device):
    _lazy_init()
    return False


def _needs_cuda(*args, **kwargs):
    _lazy_init()
    raise RuntimeError("webtorch's WebGPU device has no CUDA runtime handles")


cudart = current_blas_handle = current_solver_handle = ipc_collect = _needs_cuda


def get_sync_debug_mode():
    _lazy_init()
    return 0


def set_sync_debug_mode(debug_mode):
    _lazy_init()


def current_stream(device=None):
    _lazy_init()
    return Stream()


default_stream = current_stream


def get_stream_from_external(data_ptr, device=None):
    _lazy_init()
    return ExternalStream(data_ptr)


def set_stream(stream):
    if stream is not None:
        _lazy_init()


class StreamContext:
    """`with torch.cuda.stream(s):` (None: nothing to switch); webgpu has one in-order queue."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            _lazy_init()

    def __exit__(self, *exc):
        pass


def stream(stream):
    return StreamContext(stream)


class device:
    """`with torch.cuda.device(i):` makes cuda device i current (index -1 or None: no change)."""

    def __init__(self, device):
        self.idx = _index(device)

    def __enter__(self):
        if self.idx < 0:
            return
        if not is_available():
            raise RuntimeError("PyTorch was compiled without CUDA support")
        set_device(self.idx)

    def __exit__(self, *exc):
        return False


class device_of(device):
    """The cuda device of a tensor (a cpu tensor: no change)."""

    def __init__(self, obj):
        super().__init__(0 if getattr(obj, "is_cuda", False) else -1)


def _nvml(device=None):
    _no_nvml()


memory_usage = utilization = temperature = power_draw = clock_rate = _nvml


class cudaStatus:
    SUCCESS = 0
    ERROR_NOT_READY = 34


class CudaError(RuntimeError):
    def __init__(self, code):
        raise AttributeError("'NoneType' object has no attribute 'cudaGetErrorString'")


class DeferredCudaCallError(Exception):
    pass


def check_error(res):
    raise AttributeError("'NoneType' object has no attribute 'cudaError'")


class GreenContext:
    """CUDA green contexts (SM partitions): constructible, as in PyTorch, with nothing to partition."""


class _CudaStorage:
    def __init__(self, *args, **kwargs):
        warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the "
                      "only storage class. This should only matter to you if you are using storages directly.  To "
                      "access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
                      stacklevel=2)
        _lazy_init()
        raise TypeError(f"torch.cuda.{type(self).__name__}: webtorch has no typed storages; use tensors")


def _storage(name):
    return type(name, (_CudaStorage,), {"__module__": __name__})


BFloat16Storage, BoolStorage, ByteStorage, CharStorage = map(_storage, ("BFloat16Storage", "BoolStorage", "ByteStorage",
                                                                         "CharStorage"))
ComplexDoubleStorage, ComplexFloatStorage = map(_storage, ("ComplexDoubleStorage", "ComplexFloatStorage"))
DoubleStorage, FloatStorage, HalfStorage = map(_storage, ("DoubleStorage", "FloatStorage", "HalfStorage"))
IntStorage, LongStorage, ShortStorage = map(_storage, ("IntStorage", "LongStorage", "ShortStorage"))

# torch.cuda.FloatTensor, ...: PyTorch's TypeError without CUDA; webgpu tensors under the alias
_T = _legacy.CUDA_TYPES
BFloat16Tensor, BoolTensor, ByteTensor, CharTensor = _T["BFloat16Tensor"], _T["BoolTensor"], _T["ByteTensor"], \
    _T["CharTensor"]
DoubleTensor, FloatTensor, HalfTensor = _T["DoubleTensor"], _T["FloatTensor"], _T["HalfTensor"]
IntTensor, LongTensor, ShortTensor = _T["IntTensor"], _T["LongTensor"], _T["ShortTensor"]
