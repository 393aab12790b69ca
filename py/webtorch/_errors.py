"""PyTorch's top-level exception classes, with PyTorch's bases."""


class AcceleratorError(RuntimeError):
    """Exception raised while executing on device"""


class OutOfMemoryError(RuntimeError):
    """Exception raised when device is out of memory"""


class FatalError(Exception):
    """An error from which the process cannot continue (PyTorch's c10 fatal errors)."""
