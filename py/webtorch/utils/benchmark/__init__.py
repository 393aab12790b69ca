"""torch.utils.benchmark: Timer (timeit, blocked_autorange, adaptive_autorange), Measurement (median, IQR, PyTorch's
repr) and Compare (PyTorch's table of medians by label, sub_label and description).

Rounding and significant figures are computed in float32 tensors, as PyTorch's are. The default timer waits for
queued webgpu work before reading the clock (as PyTorch's synchronizes its accelerator), once webgpu is in use.
C++ statements (Language.CPP) and Callgrind instruction counts need a C++ toolchain and raise.
"""
import collections
import contextlib
import dataclasses
import enum
import math
import textwrap
import timeit

from ... import _device, get_num_threads, set_num_threads, webgpu as _webgpu
from ...ops._creation import tensor as _tensor
from .fuzzer import FuzzedParameter, FuzzedSparseTensor, FuzzedTensor, Fuzzer, ParameterAlias

__all__ = ["Timer", "timer", "Language", "Measurement", "TaskSpec", "Compare", "Colorize", "select_unit",
           "unit_to_english", "trim_sigfig", "ordered_unique", "set_torch_threads", "Fuzzer", "FuzzedParameter",
           "ParameterAlias", "FuzzedTensor", "FuzzedSparseTensor"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


def timer():
    if _device._backends.get("webgpu") is not None:
        _webgpu.synchronize()
    return timeit.default_timer()


def select_unit(t):
    """The unit (ns, us, ms, s) and its scale in seconds for showing t seconds."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(_tensor(t).log10().item() // 3), "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u):
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x, n):
    """x rounded to n significant figures (3.14159, 2 -> 3.1)."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    scale = 10 ** (int(_tensor(x).abs().log10().ceil().item()) - n)
    return float(_tensor(x / scale).round() * scale)


def ordered_unique(elements):
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n):
    prior = get_num_threads()
    try:
        set_num_threads(n)
        yield
    finally:
        set_num_threads(prior)


def _quantile(sorted_values, q):
    pos = q * (len(sorted_values) - 1)
    lo, frac = int(pos), pos - int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * frac


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """What a Timer measures (everything but its globals)."""
    stmt: str
    setup: str
    global_setup: str = ""
    label: str = None
    sub_label: str = None
    description: str = None
    env: str = None
    num_threads: int = 1

    @property
    def title(self):
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self):
        if self.setup == "pass" or not self.setup:
            return ""
        return f"setup:\n{textwrap.indent(self.setup, '  ')}" if "\n" in self.setup else f"setup: {self.setup}"

    def summarize(self):
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join(f"{s}\n" if "\n" in s else s for s in sections if s)


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """Timings of one statement: raw_times are seconds per block of number_per_run runs."""
    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict = None

    def __getattr__(self, name):
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def _sorted(self):
        return sorted(self.times)

    median = property(lambda self: _quantile(self._sorted, 0.5))
    mean = property(lambda self: sum(self.times) / len(self.times))
    iqr = property(lambda self: _quantile(self._sorted, 0.75) - _quantile(self._sorted, 0.25))

    @property
    def significant_figures(self):
        """Approximate significant figures of the median, from the interquartile points' spread."""
        s = self._sorted
        points = s[len(s) // 4:math.ceil(3 * len(s) / 4)]
        std = _tensor(points).std(unbiased=False).item()
        ci = max(1.645 * std / _tensor(len(points)).sqrt().item(), _MIN_CONFIDENCE_INTERVAL)
        return min(max(int(_tensor(self.median / ci).log10().floor()), 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def _warnings(self):
        rel = self.iqr / self.median * 100
        msg = ("This suggests significant environmental influence." if not self.meets_confidence(
            _IQR_GROSS_WARN_THRESHOLD) else "This could indicate system fluctuation." if not self.meets_confidence(
            _IQR_WARN_THRESHOLD) else None)
        return () if msg is None else (f"  WARNING: Interquartile range is {rel:.1f}% of the median measurement.\n"
                                       f"           {msg}",)

    @property
    def has_warnings(self):
        return bool(self._warnings)

    def meets_confidence(self, threshold=_IQR_WARN_THRESHOLD):
        return self.iqr / self.median < threshold

    @property
    def title(self):
        return self.task_spec.title

    @property
    def env(self):
        return self.task_spec.env  # PyTorch's property reads a misspelt attribute and falls back to this

    @property
    def as_row_name(self):
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self):
        n, unit_scale = len(self.times), select_unit(self.median)
        unit, scale = unit_scale
        s = self._sorted
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self.median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({_quantile(s, 0.25) / scale:.2f} to "
                         f"{_quantile(s, 0.75) / scale:.2f})")
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {self.num_threads} thread"
                     f"{'s' if self.num_threads > 1 else ''}")
        return "\n".join(lines + list(self._warnings)).strip()

    @staticmethod
    def merge(measurements):
        """Replicates of one task merged (times per run, number_per_run=1)."""
        groups = collections.defaultdict(list)
        for m in measurements:
            groups[m.task_spec].extend(m.times)
        return [Measurement(1, times, spec) for spec, times in groups.items()]


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class Timer:
    """Times a Python statement (timeit.Timer underneath) with warm-up, thread count and replicates."""

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer, globals=None, label=None,
                 sub_label=None, description=None, env=None, num_threads=1, language=Language.PYTHON):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language in (Language.CPP, "cpp", "c++"):
            raise RuntimeError("Timer(language=Language.CPP) compiles C++ statements: webtorch has no C++ runtime")
        stmt, setup = textwrap.dedent(stmt).strip() or "pass", textwrap.dedent(setup).strip() or "pass"
        self._globals = dict(globals or {})
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup, label=label,
                                   sub_label=sub_label, description=description, env=env, num_threads=num_threads)

    def _timeit(self, number):
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number=1000000):
        """One block of `number` runs (after a warm-up of number // 100)."""
        with set_torch_threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))
            return Measurement(number, [self._timeit(number=number)], self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _estimate_block_size(self, min_run_time):
        with set_torch_threads(self._task_spec.num_threads):
            overhead = sorted(self._timeit(0) for _ in range(5))[2]
            number = 1
            while True:
                time_taken = self._timeit(number)
                if (overhead / time_taken <= 1e-4 and time_taken >= min_run_time / 1000) or time_taken > min_run_time \
                        or number * 10 > 2147483647:
                    return number
                number *= 10

    def _loop(self, number, stop_hook, min_run_time, max_run_time=None, callback=None):
        total, times, can_stop = 0.0, [], False
        with set_torch_threads(self._task_spec.num_threads):
            while total < min_run_time or not can_stop:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                can_stop = stop_hook(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of runs (each long enough to hide the timer's overhead) for at least min_run_time seconds."""
        number = self._estimate_block_size(min_run_time)
        return Measurement(number, self._loop(number, lambda times: True, min_run_time, callback=callback),
                           self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None):
        """Blocks of runs until the IQR is below threshold * median (or max_run_time passes)."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop_hook(times):
            return len(times) > 3 and Measurement(number, times, self._task_spec).meets_confidence(threshold)
        return Measurement(number, self._loop(number, stop_hook, min_run_time, max_run_time, callback),
                           self._task_spec)

    def collect_callgrind(self, number=100, *, repeats=None, collect_baseline=True, retain_out_file=False):
        raise RuntimeError("Timer.collect_callgrind counts the C++ runtime's instructions under Valgrind: webtorch "
                           "has no C++ runtime")


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


_BEST, _GOOD, _BAD, _VERY_BAD = "\033[92m", "\033[34m", "\033[2m\033[91m", "\033[31m"
_BOLD, _END = "\033[1m", "\033[0m"


def _color(segment, value, best):
    if value <= best * 1.01 or value <= best + 100e-9:
        return _BEST + _BOLD + segment + _END * 2
    if value <= best * 1.1:
        return _GOOD + _BOLD + segment + _END * 2
    if value >= best * 5:
        return _VERY_BAD + _BOLD + segment + _END * 2
    return _BAD + segment + _END * 2 if value >= best * 2 else segment


class Compare:
    """PyTorch's comparison table of Measurements: one table per label, a row per (threads, env, sub_label or
    stmt), a column per description, medians in one unit."""

    def __init__(self, results):
        self._results = []
        self.extend_results(results)
        self._trim_significant_figures, self._colorize, self._highlight_warnings = False, Colorize.NONE, False

    def __str__(self):
        return "\n".join(self._render())

    def extend_results(self, results):
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self):
        self._trim_significant_figures = True

    def colorize(self, rowwise=False):
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self):
        self._highlight_warnings = True

    def print(self):
        print(str(self))

    def _render(self):
        groups = collections.defaultdict(list)
        for r in Measurement.merge(self._results):
            groups[r.label].append(r)
        return [_Table(g, self._colorize, self._trim_significant_figures, self._highlight_warnings).render()
                for g in groups.values()]


class _Table:
    def __init__(self, results, colorize, trim, highlight):
        self.results, self.colorize, self.trim = results, colorize, trim
        self.highlight = highlight and any(r.has_warnings for r in results)
        self.label = results[0].label
        self.unit, self.scale = select_unit(min(r.median for r in results))
        self.row_keys = sorted(ordered_unique((r.num_threads, r.env, r.as_row_name) for r in results),
                               key=lambda k: k[:2])
        self.col_keys = ordered_unique(r.description for r in results)
        self.cells = [[None] * len(self.col_keys) for _ in self.row_keys]
        for r in results:
            self.cells[self.row_keys.index((r.num_threads, r.env, r.as_row_name))][
                self.col_keys.index(r.description)] = r

    def _templates(self):
        out = []
        for j in range(len(self.col_keys)):
            col = [row[j] for row in self.cells if row[j] is not None]
            digits = [int(_tensor(m.median / self.scale).log10().ceil()) for m in col]
            decimals = min(max(m.significant_figures - d, 0) for d, m in zip(digits, col)) if self.trim else 1
            length = max(digits) + decimals + (1 if decimals else 0)
            out.append(f"{{:>{length}.{decimals}f}}{{:>{7 if self.highlight else 0}}}")
        return out

    def _cell(self, template, m):
        if m is None:
            return " " * len(template.format(1.0, ""))
        value = m.median / self.scale
        value = trim_sigfig(value, m.significant_figures) if self.trim else value
        spread = f" (! {m.iqr / m.median * 100:.0f}%)" if self.highlight and m.has_warnings else ""
        return template.format(value, spread)

    def _best(self, i, j, thread_group):
        if self.colorize == Colorize.ROWWISE:
            return min(m.median for m in self.cells[i] if m is not None)
        return min((self.cells[k][j].median for k in thread_group if self.cells[k][j] is not None), default=None)

    def render(self):
        templates = self._templates()
        envs = {r.env for r in self.results}
        render_env = len(envs) > 1
        env_len = max(len(e) for e in envs) if render_env else 0
        rows, prior_env = [], None
        for (_, env, name), cells in zip(self.row_keys, self.cells):
            env_str = (f"({env})" if render_env and env != prior_env else "").ljust(env_len + 4)
            rows.append(["  " + env_str + name] + [self._cell(t, m) for t, m in zip(templates, cells)])
            prior_env = env
        header = [""] + [str(c) if c is not None else "" for c in self.col_keys]
        widths = [max(len(r[k]) for r in [header] + rows) for k in range(len(header))]
        lines = ["  |  ".join(h.center(w) for h, w in zip(header, widths))]
        overall = len(lines[0])
        groups = {t: [i for i, k in enumerate(self.row_keys) if k[0] == t] for t, _, _ in self.row_keys}
        prior_threads = None
        for i, ((threads, _, _), row) in enumerate(zip(self.row_keys, rows)):
            if threads != prior_threads:
                lines.append(f"{threads} threads: ".ljust(overall, "-"))
                prior_threads = threads
            parts = [row[0].ljust(widths[0])]
            for j, (s, w) in enumerate(zip(row[1:], widths[1:])):
                s, m = s.center(w), self.cells[i][j]
                best = self._best(i, j, groups[threads]) if self.colorize != Colorize.NONE and m is not None else None
                parts.append(_color(s, m.median, best) if best is not None else s)
            lines.append("  |  ".join(parts))
        notes = "(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n" if self.highlight else ""
        return (f"[{(' ' + (self.label or '') + ' ').center(overall - 2, '-')}]\n" + "\n".join(lines) + "\n\n"
                + f"Times are in {unit_to_english(self.unit)}s ({self.unit}).\n" + notes)


