"""torch.mps.profiler: PyTorch's errors without the MPS backend."""
import contextlib

from ._absent import no_mps

__all__ = ["start", "stop", "profile", "metal_capture", "is_metal_capture_enabled", "is_capturing_metal"]


def _missing_c(name):
    raise AttributeError(f"module 'torch._C' has no attribute '{name}'")


def start(mode="interval", wait_until_completed=False):
    no_mps("profilerStartTrace")


def stop():
    no_mps("profilerStopTrace")


@contextlib.contextmanager
def profile(mode="interval", wait_until_completed=False):
    try:
        start(mode, wait_until_completed)
        yield
    finally:
        stop()


def is_metal_capture_enabled():
    _missing_c("_mps_isCaptureEnabled")


def is_capturing_metal():
    _missing_c("_mps_isCapturing")


@contextlib.contextmanager
def metal_capture(fname):
    try:
        _missing_c("_mps_startCapture")
        yield
    finally:
        _missing_c("_mps_stopCapture")
