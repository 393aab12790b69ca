"""torch.Stream / torch.Event: PyTorch's device-generic stream and event objects.

On the cpu, as PyTorch's: one stream (id 0) whose work is always done, and events that cannot be recorded.
On webgpu: the device's one in-order queue; `synchronize` waits for the queued GPU work, `query` too
(WebGPU offers no non-blocking completion test here), and an event records the host time once the work
queued before it has finished, so that `elapsed_time` measures that work.
"""
import time

from ._device import as_device
from .backends import webgpu

_KINDS = ("cpu", "webgpu")


def _device(device):
    if device is None:
        return as_device("webgpu" if webgpu.is_available() else "cpu")
    dev = as_device(device)
    if dev.type not in _KINDS:
        raise RuntimeError(f"PyTorch is not linked with support for {dev.type} devices")
    return dev


def _index(dev):
    return -1 if dev.type == "cpu" else dev.index


def _sync(dev):
    if dev.type == "webgpu":
        webgpu.synchronize()


class Stream:
    def __init__(self, device=None, *, priority=0):
        self.device = _device(device)
        self.device_type, self.device_index, self.stream_id = self.device.type, _index(self.device), 0

    def query(self):
        _sync(self.device)
        return True

    def synchronize(self):
        _sync(self.device)

    def wait_event(self, event):
        """Nothing to wait for: one in-order queue per device."""

    def wait_stream(self, stream):
        """Records an event on stream and waits for it (as PyTorch: on the cpu, events raise)."""
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        event = Event(self.device) if event is None else event
        event.record(self)
        return event

    def is_capturing(self):
        return False

    @property
    def native_handle(self):
        raise RuntimeError("Backend doesn't support getting stream native handle.")

    def __eq__(self, other):
        return isinstance(other, Stream) and (self.device, self.stream_id) == (other.device, other.stream_id)

    def __hash__(self):
        return hash((self.device_type, self.device_index, self.stream_id))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __repr__(self):
        return (f"torch.Stream device_type={self.device_type}, device_index={self.device_index}, "
                f"stream_id={self.stream_id}")


class Event:
    def __init__(self, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        self.device = _device(device)
        self.enable_timing, self.event_id, self._time = enable_timing, 0, None

    def record(self, stream=None):
        if self.device.type == "cpu":
            raise RuntimeError("cpu backend doesn't support events.")
        _sync(self.device)
        self._time = time.perf_counter()

    def synchronize(self):
        _sync(self.device)

    def query(self):
        _sync(self.device)
        return True

    def wait(self, stream=None):
        """Nothing to wait for: one in-order queue per device."""

    def elapsed_time(self, end_event):
        """Milliseconds from this event to end_event."""
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        if self._time is None or end_event._time is None:
            raise ValueError("Both events must be recorded before calculating elapsed time.")
        return (end_event._time - self._time) * 1000.0

    def __repr__(self):
        return (f"torch.Event device_type={self.device.type}, device_index={_index(self.device)}, "
                f"event_flag={int(self.enable_timing)}, event_id={self.event_id}")
