"""CPU backends: numpy when importable, pure Python (array.array) where it is not.

Set the environment variable WEBTORCH_NO_NUMPY=1 to force the pure-Python backend.
"""
import os

from .pure import PureBackend

try:
    from .numpy_backend import NumpyBackend
except ImportError:  # no numpy (Pyodide offline)
    NumpyBackend = None

__all__ = ["make_backend", "NumpyBackend", "PureBackend", "get_cpu_capability"]


def get_cpu_capability():
    """torch.backends.cpu.get_cpu_capability(): webtorch's cpu kernels are numpy's or pure Python's,
    with no vectorized kernels of their own ("DEFAULT", PyTorch's answer without AVX)."""
    return "DEFAULT"


def make_backend():
    if NumpyBackend is not None and os.environ.get("WEBTORCH_NO_NUMPY") != "1":
        return NumpyBackend()
    return PureBackend()
