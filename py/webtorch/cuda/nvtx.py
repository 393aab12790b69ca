"""torch.cuda.nvtx: NVIDIA's profiler ranges, absent here as in a PyTorch build without CUDA."""
import contextlib

__all__ = ["mark", "range_push", "range_pop", "range_start", "range_end", "range"]


def _absent(*args, **kwargs):
    raise RuntimeError("NVTX functions not installed. Are you sure you have a CUDA build?")


mark = range_push = range_pop = range_start = range_end = _absent


@contextlib.contextmanager
def range(msg, *args, **kwargs):  # noqa: A001
    range_push(msg.format(*args, **kwargs))
    yield
    range_pop()
