"""torch.profiler: `profile` with PyTorch's schedule, step and trace handlers over webtorch's op recorder.

webtorch records CPU activity only (`supported_activities()` is {CPU}); asking for CUDA/XPU activities records the
CPU side as PyTorch does without such a device. On webgpu the times are the host's (encoding and queueing kernels).
"""
import gzip
import json
import os
import socket
import time
import warnings
from enum import Enum

from ..autograd import profiler as _legacy
from ..autograd.profiler import KinetoStepTracker, record_function
from ..autograd.profiler_util import DeviceType, EventList

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler", "ProfilerAction",
           "ProfilerActivity", "kineto_available", "DeviceType", "record_function", "ExecutionTraceObserver"]

ProfilerActivity = Enum("ProfilerActivity", [("CPU", 0), ("XPU", 1), ("CUDA", 2), ("HPU", 3), ("MTIA", 4),
                                             ("PrivateUse1", 5)])
ProfilerAction = Enum("ProfilerAction", [("NONE", 0), ("WARMUP", 1), ("RECORD", 2), ("RECORD_AND_SAVE", 3),
                                         ("DEVICE_STOPPED", 4)])
_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
_STEP = "ProfilerStep"


_warned = set()


def _warn_once(msg):
    if msg not in _warned:
        _warned.add(msg)
        warnings.warn(msg, stacklevel=4)


def kineto_available():
    return True


def supported_activities():
    return {ProfilerActivity.CPU}


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """The step -> ProfilerAction function: skip `skip_first` steps, then cycles of wait, warmup, active steps."""
    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 else ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} (need >= 0), "
            f"active={active} (need > 0), repeat={repeat} (need >= 0), skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)
    return schedule_fn


def _default_schedule_fn(_):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False, use_python_export=False):
    """on_trace_ready handler writing `<worker>.<time_ns>.pt.trace.json[.gz]` into dir_name (TensorBoard's logdir)."""
    def handler_fn(prof):
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, file_name))
    return handler_fn


class profile:
    """torch.profiler.profile: `with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:`; with a
    `schedule`, `prof.step()` marks steps (`ProfilerStep#N` ranges) and `on_trace_ready(prof)` runs at the end of
    each active cycle; `key_averages()`, `events()`, `export_chrome_trace(path)`, `export_stacks(path)`."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None, post_processing_timeout_s=None):
        self.activities = {a for item in activities for a in (item if isinstance(item, dict) else (item,))} \
            if activities is not None else supported_activities()
        if use_cuda is not None:
            warnings.warn("`use_cuda` is deprecated, use `activities` argument instead", FutureWarning, stacklevel=2)
            self.activities = (self.activities | {ProfilerActivity.CUDA}) if use_cuda else \
                self.activities - {ProfilerActivity.CUDA}
        if len(self.activities) == 0:
            raise AssertionError("No valid profiler activities found")
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.with_flops, self.with_modules = with_flops, with_modules
        self.record_steps = schedule is not None
        self.schedule = schedule or _default_schedule_fn
        self.on_trace_ready = on_trace_ready
        self.custom_trace_id_callback = custom_trace_id_callback
        self.acc_events, self._old_events = acc_events, []
        self.step_num = 0
        self.step_rec_fn = None
        self.profiler = None
        self.current_action = self.schedule(self.step_num)
        if self.current_action == ProfilerAction.DEVICE_STOPPED:
            raise ValueError("ProfilerAction.DEVICE_STOPPED is set internally by the profiler and must not be "
                             "returned by a user-provided schedule")
        self._metadata = {}

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        KinetoStepTracker.erase_step_count(_STEP)
        return False

    def start(self):
        KinetoStepTracker.init_step_count(_STEP)
        self._transit(ProfilerAction.NONE, self.current_action)
        self._open_step()

    def stop(self):
        self._close_step()
        self._transit(self.current_action, None)

    def step(self):
        """Marks the start of the next step: moves along the schedule, saving a finished cycle."""
        self._close_step()
        prev, self.step_num = self.current_action, self.step_num + 1
        self.current_action = self.schedule(self.step_num)
        self._transit(prev, self.current_action)
        KinetoStepTracker.increment_step(_STEP)
        self._open_step()

    def _open_step(self):
        if self.record_steps:
            self.step_rec_fn = record_function(f"{_STEP}#{self.step_num}")
            self.step_rec_fn.__enter__()

    def _close_step(self):
        if self.step_rec_fn is not None:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None

    def _transit(self, prev, cur):
        """PyTorch's action map: start recording on entering RECORD(_AND_SAVE); stop, and hand the trace to
        on_trace_ready, at the end of a cycle (after RECORD_AND_SAVE) and when the profiler stops."""
        if prev in _RECORDING and (prev == ProfilerAction.RECORD_AND_SAVE or cur is None):
            self.profiler.__exit__(None, None, None)
            if self.on_trace_ready:
                self.on_trace_ready(self)
        elif prev == ProfilerAction.RECORD and cur in (ProfilerAction.NONE, ProfilerAction.WARMUP):
            warnings.warn(f"Incorrect schedule: RECORD followed by {cur.name}", stacklevel=3)
            self.profiler.__exit__(None, None, None)
        elif prev == ProfilerAction.WARMUP and cur == ProfilerAction.NONE:
            warnings.warn("Incorrect schedule: WARMUP followed by NONE", stacklevel=3)
        if cur in _RECORDING and (prev not in _RECORDING or prev == ProfilerAction.RECORD_AND_SAVE):
            if self.profiler is not None and self.acc_events:
                self._old_events += self.profiler.function_events
            elif self.profiler is not None:
                _warn_once("Warning: Profiler clears events at the end of each cycle. Only events from the current "
                           "cycle will be reported. To keep events across cycles, set acc_events=True.")
            self.profiler = _legacy.profile(record_shapes=self.record_shapes, profile_memory=self.profile_memory,
                                            with_stack=self.with_stack, with_flops=self.with_flops)
            self.profiler.__enter__()

    def events(self):
        if self.profiler is None or self.profiler.function_events is None:
            raise AssertionError("Expected profiler to be initialized before calling this method")
        return EventList(self._old_events + self.profiler.function_events, profile_memory=self.profile_memory)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        return self.events().key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def export_chrome_trace(self, path, use_python_export=False):
        if path.endswith(".gz"):
            tmp = path[:-3]
            self.events().export_chrome_trace(tmp)
            with open(tmp, "rb") as f, gzip.open(path, "wb") as g:
                g.write(f.read())
            os.remove(tmp)
            return
        self.events().export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Flame-graph lines `frame;frame;... <microseconds>` of the events recorded with_stack=True."""
        if not self.with_stack:
            raise AssertionError("Expected with_stack=True to export stacks")
        with open(path, "w") as f:
            for e in self.events():
                if e.stack and getattr(e, metric) > 0:
                    f.write(";".join(reversed(e.stack)) + " " + str(int(getattr(e, metric))) + "\n")

    def add_metadata(self, key, value):
        self._metadata[key] = '"' + value.replace('"', '\\"') + '"'

    def add_metadata_json(self, key, value):
        self._metadata[key] = value

    preset_metadata_json = add_metadata_json

    def get_trace_id(self):
        return self.custom_trace_id_callback() if self.custom_trace_id_callback else None

    def set_custom_trace_id_callback(self, callback):
        self.custom_trace_id_callback = callback


class ExecutionTraceObserver:
    """Records the ops run between start() and stop() as an execution trace (JSON nodes: id, name, parent, input
    shapes), written to the path given to register_callback."""

    def __init__(self):
        self._path = None
        self._profile = None

    def register_callback(self, output_file_path):
        self._path = output_file_path
        return self

    def unregister_callback(self):
        self.stop()
        self._path = None

    def is_registered(self):
        return self._path is not None

    def is_running(self):
        return self._profile is not None

    def get_output_file_path(self):
        return self._path

    def start(self):
        if self._path is not None and self._profile is None:
            self._profile = _legacy.profile(record_shapes=True).__enter__()

    def stop(self):
        if self._profile is None:
            return
        self._profile.__exit__(None, None, None)
        nodes = [{"id": e.id, "name": e.name, "ctrl_deps": e.cpu_parent.id if e.cpu_parent else 0,
                  "inputs": {"shapes": e.input_shapes}} for e in self._profile.function_events]
        self._profile = None
        with open(self._path, "w") as f:
            json.dump({"schema": "1.1.1-chakra.0.0.4", "pid": os.getpid(), "nodes": nodes}, f)

    def cleanup(self):
        self.stop()

    @staticmethod
    def build_execution_trace_obs_from_env():
        return None
