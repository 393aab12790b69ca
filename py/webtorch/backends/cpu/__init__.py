"""CPU backends: numpy when importable, pure Python (array.array) where it is not.

Set the environment variable WEBTORCH_NO_NUMPY=1 to force the pure-Python backend.
"""
import os

from .pure import PureBackend

try:
    from .numpy_backend import NumpyBackend
except ImportError:  # no numpy (Pyodide offline)
    NumpyBackend = None

__all__ = ["make_backend", "NumpyBackend", "PureBackend"]


def make_backend():
    if NumpyBackend is not None and os.environ.get("WEBTORCH_NO_NUMPY") != "1":
        return NumpyBackend()
    return PureBackend()
