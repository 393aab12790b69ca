"""torch.cuda.Stream / Event: PyTorch's errors without CUDA; under the cuda alias the WebGPU queue
(one stream, in order), whose synchronize waits for all queued GPU work."""
import time

from ._state import _lazy_init

__all__ = ["Stream", "ExternalStream", "Event"]


class Stream:
    def __init__(self, device=None, priority=0, **kwargs):
        try:
            _lazy_init()
        except AssertionError:
            raise RuntimeError("torch.cuda.Stream requires CUDA support") from None
        self.device, self.priority = device, priority

    def synchronize(self):
        _lazy_init().synchronize()

    def query(self):
        self.synchronize()
        return True

    def wait_stream(self, stream):
        pass

    def wait_event(self, event):
        pass

    def record_event(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream)

    def __hash__(self):
        return 0


class ExternalStream(Stream):
    def __init__(self, stream_ptr, device=None, **kwargs):
        super().__init__(device)


class Event:
    def __init__(self, enable_timing=False, blocking=False, interprocess=False, external=False):
        try:
            _lazy_init()
        except AssertionError:
            raise RuntimeError("Tried to instantiate dummy base class Event") from None
        self.enable_timing, self._time = enable_timing, None

    def record(self, stream=None):
        """Waits for the queued GPU work, so that elapsed_time measures it."""
        _lazy_init().synchronize()
        self._time = time.perf_counter()

    def synchronize(self):
        _lazy_init().synchronize()

    def query(self):
        return True

    def wait(self, stream=None):
        pass

    def elapsed_time(self, end_event):
        """Milliseconds from this event to end_event (both recorded with enable_timing=True)."""
        if not (self.enable_timing and end_event.enable_timing) or None in (self._time, end_event._time):
            raise RuntimeError("Both events must be recorded with enable_timing=True before elapsed_time")
        return (end_event._time - self._time) * 1000.0
