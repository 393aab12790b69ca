"""torch.cpu: the device module of the cpu (torch.get_device_module("cpu")), as PyTorch's: it exists for
device-agnostic code; there is one cpu device, whose work is done when a call returns."""
import contextlib

__all__ = ["is_available", "is_initialized", "synchronize", "current_device", "current_stream", "stream",
           "set_device", "device_count", "Stream", "StreamContext", "Event", "get_capabilities"]


def is_available():
    return True


def is_initialized():
    return True


def synchronize(device=None):
    """Nothing to wait for: cpu work is done when its call returns."""


def device_count():
    return 1


def set_device(device):
    """Nothing to set: one cpu device."""


def current_device():
    return "cpu"


def get_capabilities():
    """The CPU features webtorch's kernels use: none (numpy or pure Python picks its own)."""
    return {}


class Stream:
    def __init__(self, priority=-1):
        pass

    def wait_stream(self, stream):
        pass

    def record_event(self):
        pass

    def wait_event(self, event):
        pass


class Event:
    def query(self):
        return True

    def record(self, stream=None):
        pass

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass


_default_stream = Stream()
_current = [_default_stream]


def current_stream(device=None):
    return _current[0]


class StreamContext(contextlib.AbstractContextManager):
    """Makes stream the current one inside the block (None: no change)."""

    def __init__(self, stream):
        self.stream, self.prev_stream = stream, _default_stream

    def __enter__(self):
        if self.stream is not None:
            self.prev_stream, _current[0] = _current[0], self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            _current[0] = self.prev_stream


def stream(stream):
    return StreamContext(stream)
