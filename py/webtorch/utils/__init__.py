"""torch.utils: submodules load on first use (`webtorch.utils.checkpoint`, `.data`, `.hooks`, `._pytree`,
`.benchmark`, `.model_zoo`, `.cpp_extension`, `.tensorboard`), plus swap_tensors, set_module, ThroughputBenchmark and
the privateuse1 / C++ backtrace helpers."""
import importlib
import time
import weakref

_SUBMODULES = ("checkpoint", "data", "hooks", "_pytree", "benchmark", "model_zoo", "cpp_extension", "tensorboard",
               "deterministic")


def __getattr__(name):
    if name in _SUBMODULES:
        mod = importlib.import_module("." + name, __name__)
        globals()[name] = mod
        return mod
    raise AttributeError(f"module 'webtorch.utils' has no attribute '{name}'")


def swap_tensors(t1, t2):
    """Swap the contents of two tensors (class, data, autograd state), each keeping its identity."""
    for name, t in (("t1", t1), ("t2", t2)):
        if weakref.getweakrefs(t):
            raise RuntimeError(f"Cannot swap {name} because it has weakref associated with it")
    t1.__class__, t2.__class__ = t2.__class__, t1.__class__
    t1.__dict__, t2.__dict__ = t2.__dict__, t1.__dict__


def set_module(obj, mod):
    """Set obj.__module__ (how PyTorch makes its public objects report their public module)."""
    if not isinstance(mod, str):
        raise TypeError("The mod argument should be a string")
    obj.__module__ = mod


def get_cpp_backtrace(frames_to_skip=0, maximum_number_of_frames=64):
    """The C++ frames of the current call: webtorch has none, so the backtrace is empty."""
    return ""


def rename_privateuse1_backend(backend_name):
    raise RuntimeError(f"rename_privateuse1_backend({backend_name!r}): webtorch has no PrivateUse1 dispatch key to "
                       "rename (its devices are cpu and webgpu)")


def generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, for_packed_sequence=True,
                                             for_storage=False, unsupported_dtype=None):
    raise RuntimeError("generate_methods_for_privateuse1_backend: webtorch has no PrivateUse1 backend "
                       "(its devices are cpu and webgpu)")


class ExecutionStats:
    """ThroughputBenchmark.benchmark's result: the average latency of an iteration and the number of iterations."""

    def __init__(self, latency_avg_ms, num_iters):
        self.latency_avg_ms, self.num_iters = latency_avg_ms, num_iters

    @property
    def iters_per_second(self):
        return 1000.0 / self.latency_avg_ms if self.latency_avg_ms else float("inf")

    @property
    def total_time_seconds(self):
        return self.num_iters * self.latency_avg_ms / 1000.0

    def __str__(self):
        return (f"Average latency per example: {self.latency_avg_ms:.3f}ms\nTotal number of iterations: "
                f"{self.num_iters}\nTotal number of iterations per second (across all threads): "
                f"{self.iters_per_second:.2f}\nTotal time: {self.total_time_seconds:.3f}s")


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
