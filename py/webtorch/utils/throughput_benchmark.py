"""torch.utils.throughput_benchmark: ThroughputBenchmark times a module over inputs given with add_input."""
import time


def format_time(time_us=None, time_ms=None, time_s=None):
    """A time in the largest unit that keeps it >= 1 (PyTorch's format)."""
    if sum(t is not None for t in (time_us, time_ms, time_s)) != 1:
        raise AssertionError("Expected only one of time_us, time_ms, time_s is given.")
    us = time_s * 1e6 if time_s is not None else time_ms * 1e3 if time_ms is not None else time_us
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class ExecutionStats:
    """ThroughputBenchmark.benchmark's result: the average latency of an iteration and the number of iterations."""

    def __init__(self, latency_avg_ms, num_iters):
        self.latency_avg_ms, self.num_iters = latency_avg_ms, num_iters

    @property
    def iters_per_second(self):
        return self.num_iters / self.total_time_seconds

    @property
    def total_time_seconds(self):
        return self.num_iters * self.latency_avg_ms / 1000.0

    def __str__(self):
        return "\n".join(["Average latency per example: " + format_time(time_ms=self.latency_avg_ms),
                          f"Total number of iterations: {self.num_iters}",
                          "Total number of iterations per second (across all threads): "
                          f"{self.iters_per_second:.2f}", "Total time: " + format_time(time_s=self.total_time_seconds)])


class ThroughputBenchmark:
    """Runs a module (or function) over the inputs given with add_input and times it (one thread: webtorch's
    interpreter runs the calls one after another)."""

    def __init__(self, module):
        self._module, self._inputs = module, []

    def run_once(self, *args, **kwargs):
        return self._module(*args, **kwargs)

    def add_input(self, *args, **kwargs):
        self._inputs.append((args, kwargs))

    def benchmark(self, num_calling_threads=1, num_warmup_iters=10, num_iters=100, profiler_output_path=""):
        if not self._inputs:
            raise RuntimeError("Please provide benchmark inputs via add_input")
        for i in range(num_warmup_iters):
            args, kwargs = self._inputs[i % len(self._inputs)]
            self._module(*args, **kwargs)
        start = time.perf_counter()
        for i in range(num_iters):
            args, kwargs = self._inputs[i % len(self._inputs)]
            self._module(*args, **kwargs)
        return ExecutionStats((time.perf_counter() - start) * 1000.0 / max(num_iters, 1), num_iters)
