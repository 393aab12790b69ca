"""torch.accelerator: the device-agnostic accelerator API, answered by webtorch's one GPU device.

    device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"

picks `device("webgpu")` where a WebGPU adapter exists, as it picks `cuda` under PyTorch.
"""
from . import webgpu
from ._device import device as _device


def is_available():
    """True when a WebGPU adapter and device can be obtained."""
    return webgpu.is_available()


def current_accelerator(check_available=False):
    """`device(type='webgpu', index=0)` where there is an adapter, else None."""
    return _device("webgpu") if is_available() else None


def device_count():
    return 1 if is_available() else 0


def synchronize(device=None):
    """Wait for all queued GPU work (as torch.cuda.synchronize)."""
    if not is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    webgpu.synchronize()
