"""torch.autograd.profiler: the legacy profiler and `record_function`.

While a profiler records, a torch function mode (overrides.TorchFunctionMode) times every op call where ops dispatch
(`aten::<op>` events, nested in the open `record_function` ranges), with input shapes, output bytes and the
caller's stack on request. Ops an op calls internally are not seen separately (the mode is off the stack while it
runs). Times are host wall clock: on webgpu, the CPU side of an op (encoding and queueing its kernels).
"""
import contextlib
import os
import threading
import time
import traceback

from .._tensor import Tensor
from ..overrides import TorchFunctionMode
from .profiler_util import EventList, FunctionEvent, FunctionEventAvg  # noqa: F401 - torch.autograd.profiler's names

__all__ = ["profile", "record_function", "emit_itt", "emit_nvtx", "EventList",
           "FunctionEvent", "EnforceUnique", "KinetoStepTracker", "MemRecordsAcc"]

_WEBTORCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_active = []  # the recording profilers' recorders, innermost last


def _shapes(args):
    return [list(a.shape) if isinstance(a, Tensor) else [] for a in args]


def _allocated(out):
    """Bytes of the new (non-view) tensors an op returned: the profiler's memory figure for it."""
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return sum(t.numel() * t.element_size() for t in outs if isinstance(t, Tensor) and t._base is None)


def _user_stack():
    return [f"{f.filename}({f.lineno}): {f.name}" for f in reversed(traceback.extract_stack())
            if not f.filename.startswith(_WEBTORCH_DIR) and "contextlib" not in f.filename]


class _Recorder(TorchFunctionMode):
    """Times each op call into a FunctionEvent; `open`/`close` also serve `record_function`'s ranges."""

    def __init__(self, record_shapes=False, profile_memory=False, with_stack=False):
        super().__init__()
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.events, self.open_events = [], []
        self.t0 = time.perf_counter_ns()

    def now_us(self):
        return (time.perf_counter_ns() - self.t0) / 1000.0

    def open(self, name, args=(), user_annotation=False):
        evt = FunctionEvent(len(self.events) + 1, name, threading.get_native_id(), self.now_us(), 0.0,
                            input_shapes=_shapes(args) if self.record_shapes else [],
                            stack=_user_stack() if self.with_stack else [], is_user_annotation=user_annotation)
        if self.open_events:
            evt.cpu_parent = self.open_events[-1]
            evt.cpu_parent.append_cpu_child(evt)
        self.events.append(evt)
        self.open_events.append(evt)
        return evt

    def close(self, evt, out=None):
        evt.time_range = (evt.start_us, self.now_us())
        if self.profile_memory:
            evt.own_memory = _allocated(out)
        if evt in self.open_events:
            self.open_events.remove(evt)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        evt = self.open("aten::" + func.__name__.strip("_"), args)
        out = None
        try:
            out = func(*args, **(kwargs or {}))
        finally:
            self.close(evt, out)
        return out


class record_function(contextlib.ContextDecorator):
    """A named range in the profile (`with record_function("model"):` or `@record_function("step")`)."""

    def __init__(self, name, args=None):
        self.name, self.args = name, args
        self.run_callbacks_on_exit = True
        self._events = []

    def __enter__(self):
        self._events.append((_active[-1], _active[-1].open(self.name, user_annotation=True)) if _active else None)
        return self

    def __exit__(self, *exc):
        opened = self._events.pop() if self._events else None
        if opened is not None:
            opened[0].close(opened[1])
        return False


class profile:
    """torch.autograd.profiler.profile: records the ops run inside `with profile() as prof:`; `prof.key_averages()`,
    `prof.table()`, `prof.export_chrome_trace(path)`, `prof.function_events`."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None):
        self.enabled, self.use_device = enabled, use_device
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.with_flops, self.with_modules = with_flops, with_modules
        self.function_events = None
        self._recorder = None

    def _start(self):
        self._recorder = _Recorder(self.record_shapes, self.profile_memory, self.with_stack)
        _active.append(self._recorder)
        self._recorder.__enter__()

    def _stop(self):
        rec, self._recorder = self._recorder, None
        if rec is None:
            return
        rec.__exit__(None, None, None)
        _active.remove(rec)
        self.function_events = EventList(rec.events, use_device=self.use_device, profile_memory=self.profile_memory,
                                          with_flops=self.with_flops)

    def __enter__(self):
        if self.enabled:
            if self.function_events is not None:
                raise RuntimeError("Profiler context manager is not reentrant")
            self._start()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self._stop()
        return False

    def _events(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def __str__(self):
        return self._events().table()

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        return self._events().table(sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
                                    max_name_column_width=max_name_column_width,
                                    max_shapes_column_width=max_shapes_column_width, header=header,
                                    top_level_events_only=top_level_events_only, time_unit=time_unit)

    def export_chrome_trace(self, path):
        return self._events().export_chrome_trace(path)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        return self._events().key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def total_average(self):
        return self._events().total_average()

    @property
    def self_cpu_time_total(self):
        return self._events().self_cpu_time_total


class emit_itt(contextlib.ContextDecorator):
    """Ranges for Intel VTune's ITT API: nothing listens here, so the ranges are not emitted."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled, self.record_shapes = enabled, record_shapes

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class emit_nvtx(emit_itt):
    """NVTX ranges for NVIDIA's tools: CUDA only, so entering raises as PyTorch without CUDA does."""

    def __enter__(self):
        if self.enabled:
            raise AssertionError("Torch not compiled with CUDA enabled")
        return self


class EnforceUnique:
    """Raises if a key is seen twice."""

    def __init__(self):
        self.seen = set()

    def see(self, *key):
        if key in self.seen:
            raise RuntimeError("duplicate key: " + str(key))
        self.seen.add(key)


class MemRecordsAcc:
    """The memory records of a profile in time order, queried by interval (PyTorch's is filled from its C++ events;
    webtorch's profiler records memory per event instead, so it starts empty)."""

    def __init__(self, mem_records):
        self._mem_records = sorted(mem_records, key=lambda r: r[0])

    def in_interval(self, start_us, end_us):
        return (r for r in self._mem_records if start_us <= r[0] <= end_us)


class KinetoStepTracker:
    """The global step count that profilers and optimizers advance (`increment_step` per requester)."""
    _current_step = 0
    _step_dict = {}

    @classmethod
    def init_step_count(cls, requester):
        cls._step_dict[requester] = cls._current_step

    @classmethod
    def erase_step_count(cls, requester):
        return cls._step_dict.pop(requester, None) is not None

    @classmethod
    def increment_step(cls, requester):
        if requester not in cls._step_dict:
            cls.init_step_count(requester)
        cls._step_dict[requester] += 1
        new_step = max(cls._step_dict.values())
        if new_step > cls._current_step:
            cls._current_step = new_step
        return cls._current_step

    @classmethod
    def current_step(cls):
        return cls._current_step

