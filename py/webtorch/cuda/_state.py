"""What every torch.cuda module asks first: is "cuda" a device here? Without the cuda alias it is
not (PyTorch built without CUDA, and its errors); under it, "cuda" is the WebGPU device."""
from .._device import NO_CUDA, cuda_alias
from ..backends import webgpu


def is_available():
    """False, as PyTorch without CUDA; True under the cuda alias where a WebGPU adapter exists."""
    return cuda_alias() and webgpu.is_available()


def is_initialized():
    return is_available() and webgpu._backend is not None


def _lazy_init():
    """PyTorch's AssertionError where CUDA is absent; the WebGPU backend under the alias."""
    if not is_available():
        raise AssertionError(NO_CUDA)
    return webgpu.get_backend()


def _no_nvml():
    raise ModuleNotFoundError("nvidia-ml-py does not seem to be installed or it can't be imported.")


def _missing_c(name):
    """PyTorch without CUDA calls a torch._C function it lacks here: the same AttributeError."""
    raise AttributeError(f"module 'torch._C' has no attribute '{name}'")
