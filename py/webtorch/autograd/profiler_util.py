"""torch.autograd.profiler_util: the profiler's events, their averages, PyTorch's summary table and Chrome trace.

Times are microseconds of host (CPU-side) wall clock; on webgpu an op's time is the time to encode and queue its
GPU work, not the GPU's own time (WebGPU has no portable kernel timer here), so device columns never appear.
"""
import json
import os
from collections import defaultdict
from enum import IntEnum

DeviceType = IntEnum("DeviceType", [(n, i) for i, n in enumerate(
    "CPU CUDA MKLDNN OPENGL OPENCL IDEEP HIP FPGA MAIA XLA Vulkan Metal XPU MPS Meta HPU VE Lazy IPU MTIA "
    "PrivateUse1".split())])
DeviceType.__doc__ = "torch.profiler.DeviceType (torch._C._autograd.DeviceType): where an event ran"


def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_time_us):
    if total_time_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_time_us:.2f}%"


def _format_memory(nbytes):
    for unit, size in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("KB", 1024)):
        if abs(nbytes) >= size:
            return f"{nbytes * 1.0 / size:.2f} {unit}"
    return f"{nbytes} B"


class _Times:
    """The *_str forms of the times (FormattedTimesMixin) and the per-call average `cpu_time`."""
    device_time_total = self_device_time_total = 0
    device_memory_usage = self_device_memory_usage = 0
    flops = 0
    node_id = -1
    is_async = is_remote = is_legacy = False
    use_device = None
    overload_name = ""
    scope = 0

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    device_time = cuda_time = property(lambda self: 0.0)
    cpu_time_str = property(lambda self: _format_time(self.cpu_time))
    cpu_time_total_str = property(lambda self: _format_time(self.cpu_time_total))
    self_cpu_time_total_str = property(lambda self: _format_time(self.self_cpu_time_total))
    device_time_str = device_time_total_str = self_device_time_total_str = property(lambda self: _format_time(0))

    device_type = property(lambda self: DeviceType.CPU)


class FunctionEvent(_Times):
    """One recorded op or `record_function` range: name, thread, [start_us, end_us), input shapes, children."""
    count = 1

    def __init__(self, id, name, thread, start_us, end_us, input_shapes=None, stack=None, cpu_memory_usage=0,
                 is_user_annotation=False, sequence_nr=-1):
        self.trace_name = name  # the table's name aggregates the numbered profiler steps (ProfilerStep*)
        self.name = self.key = "ProfilerStep*" if name.startswith("ProfilerStep#") else name
        self.id, self.thread = id, thread
        self.time_range = (start_us, end_us)
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.stack = stack if stack is not None else []
        self.own_memory = cpu_memory_usage
        self.is_user_annotation = is_user_annotation
        self.sequence_nr = sequence_nr
        self.cpu_children = []
        self.cpu_parent = None

    start_us = property(lambda self: self.time_range[0])
    end_us = property(lambda self: self.time_range[1])
    cpu_time_total = property(lambda self: self.time_range[1] - self.time_range[0])
    self_cpu_time_total = property(lambda self: self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children))
    cpu_memory_usage = property(lambda self: self.own_memory + sum(c.cpu_memory_usage for c in self.cpu_children))
    self_cpu_memory_usage = property(lambda self: self.own_memory)

    def append_cpu_child(self, child):
        self.cpu_children.append(child)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} overload_name= "
                f"device_type=DeviceType.{self.device_type.name} node_id=-1 cpu_time={self.cpu_time_str} "
                f"start_us={self.start_us} end_us={self.end_us} "
                f"cpu_children={[c.id for c in self.cpu_children]} thread={self.thread} "
                f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage} is_async=False "
                f"is_remote=False seq_nr={self.sequence_nr} is_legacy=False>")


class FunctionEventAvg(_Times):
    """The sum of the events of one key (and input shapes): `key_averages()`'s rows."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.input_shapes = self.stack = self.cpu_parent = self.cpu_children = None
        self.is_user_annotation = False

    def add(self, other):
        if self.key is None:
            self.key, self.input_shapes, self.stack = other.key, other.input_shapes, other.stack
            self.cpu_parent, self.cpu_children = other.cpu_parent, other.cpu_children
            self.is_user_annotation = other.is_user_annotation
        if other.key != self.key:
            raise AssertionError(f"Expected keys to match, but got {other.key} vs {self.key}")
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.count += other.count
        return self

    __iadd__ = add

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str}  self_cuda_time={self.self_device_time_total_str} "
                f"cuda_time={self.device_time_str} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage} cuda_memory_usage=0>")


class EventList(list):
    """A list of FunctionEvent (or FunctionEventAvg) with PyTorch's summaries: table, key_averages, Chrome trace."""

    def __init__(self, *args, use_device=None, profile_memory=False, with_flops=False):
        super().__init__(*args)
        self._use_device, self._profile_memory, self._with_flops = use_device, profile_memory, with_flops

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        return _build_table(self, sort_by=sort_by, header=header, row_limit=row_limit,
                            max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width, max_src_column_width=max_src_column_width,
                            profile_memory=self._profile_memory, top_level_events_only=top_level_events_only,
                            time_unit=time_unit)

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path):
        """Chrome's trace event format ("X" complete events, microseconds), as PyTorch writes it."""
        pid = os.getpid()
        events = [{"name": e.trace_name, "ph": "X", "ts": e.start_us, "dur": e.cpu_time_total, "tid": e.thread,
                   "pid": pid, "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
                   "args": {"Input Dims": e.input_shapes} if e.input_shapes else {}} for e in self]
        with open(path, "w") as f:
            json.dump({"traceEvents": events, "displayTimeUnit": "ms",
                       "deviceProperties": [], "traceName": path}, f)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0, group_by_overload_name=False):
        stats = defaultdict(FunctionEventAvg)
        for e in self:
            key = (e.key, e.is_user_annotation) + ((str(e.input_shapes),) if group_by_input_shapes else ()) \
                + tuple(e.stack[:group_by_stack_n])
            stats[key].add(e)
        averages = EventList(stats.values(), use_device=self._use_device, profile_memory=self._profile_memory,
                             with_flops=self._with_flops)
        for a in averages:
            a.stack = a.stack[:group_by_stack_n]
            if not group_by_input_shapes:
                a.input_shapes = ""
        return averages

    def total_average(self):
        total = FunctionEventAvg()
        for e in self:
            total.key = e.key
            total.add(e)
        total.key = "Total"
        return total


def _trim_path(path, width):
    if len(path) > width:
        path = path[len(path) - width:]
        if len(path) > 3:
            path = "..." + path[3:]
    return path


def _unit(time_us, time_unit):
    scale = {"s": 1e6, "ms": 1e3, "us": 1.0}.get(time_unit)
    return _format_time(time_us) if scale is None else f"{time_us / scale:.3f}{time_unit}"


def _columns(events, profile_memory, max_name_column_width, max_shapes_column_width, max_src_column_width):
    """(header, width, align) of each column, as PyTorch's _build_table lays them out."""
    name_w = min(max(len(e.key) for e in events) + 4, max_name_column_width or 10 ** 9)
    cols = [("Name", name_w, ">")] + [(h, 12, ">") for h in ("Self CPU %", "Self CPU", "CPU total %", "CPU total",
                                                           "CPU time avg")]
    if profile_memory:
        cols += [("CPU Mem", 12, ">"), ("Self CPU Mem", 12, ">")]
    cols.append(("# of Calls", 12, ">"))
    if any(e.input_shapes for e in events):
        cols.append(("Input Shapes", min(max(len(str(e.input_shapes)) for e in events) + 4,
                                         max_shapes_column_width or 10 ** 9), ">"))
    stacks = [e.stack for e in events if e.stack]
    if stacks:
        cols.append(("Source Location", min(max(len(s) for st in stacks for s in st) + 4,
                                            max_src_column_width or 10 ** 9), "<"))
    return cols


def _row(evt, cols, total, profile_memory, max_name_column_width, time_unit):
    name = evt.key
    if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
        name = name[:max_name_column_width - 3] + "..."
    values = [name, _format_time_share(evt.self_cpu_time_total, total), _unit(evt.self_cpu_time_total, time_unit),
              _format_time_share(evt.cpu_time_total, total), _unit(evt.cpu_time_total, time_unit),
              _unit(evt.cpu_time, time_unit)]
    if profile_memory:
        values += [_format_memory(evt.cpu_memory_usage), _format_memory(evt.self_cpu_memory_usage)]
    values.append(evt.count)
    headers = [c[0] for c in cols]
    if "Input Shapes" in headers:
        values.append(str(evt.input_shapes)[:cols[headers.index("Input Shapes")][1]])
    if "Source Location" in headers:
        values.append(_trim_path(evt.stack[0], cols[-1][1]) if evt.stack else "")
    return values


def _build_table(events, sort_by=None, header=None, row_limit=100, max_src_column_width=75,
                 max_name_column_width=55, max_shapes_column_width=80, profile_memory=False,
                 top_level_events_only=False, time_unit=None):
    """PyTorch's summary table of events (FunctionEvent or FunctionEventAvg), column for column."""
    if len(events) == 0:
        return ""
    if sort_by is not None:
        events = sorted(events, key=lambda e: getattr(e, sort_by.replace("cuda", "device").replace("xpu", "device")),
                        reverse=True)
    cols = _columns(events, profile_memory, max_name_column_width, max_shapes_column_width, max_src_column_width)
    row_format = "".join("{: " + align + str(w) + "}  " for _, w, align in cols)
    sep = "".join("-" * w + "  " for _, w, _ in cols)
    line_length = sum(w + 2 for _, w, _ in cols) - 2
    total = sum(e.self_cpu_time_total for e in events)
    out = []
    if header is not None:
        out += ["=" * line_length, header]
    if top_level_events_only:
        out += ["=" * line_length, "This report only display top-level ops statistics"]
    out += [sep, row_format.format(*[c[0] for c in cols]), sep]
    rows = [e for e in events if not (top_level_events_only and e.cpu_parent is not None)][:row_limit]
    for evt in rows:
        out.append(row_format.format(*_row(evt, cols, total, profile_memory, max_name_column_width, time_unit)))
        if cols[-1][0] == "Source Location":
            for entry in evt.stack[1:]:
                out.append(row_format.format(*([""] * (len(cols) - 1) + [_trim_path(entry, cols[-1][1])])))
            out.append(row_format.format(*([""] * len(cols))))
    out += [sep, f"Self CPU time total: {_unit(total, time_unit)}"]
    return "\n".join(out) + "\n"
