"""torch.cuda.graphs: without CUDA, PyTorch's "dummy base class" errors (torch.compile's
replay is webtorch's graph capture on webgpu)."""
from .streams import Stream

__all__ = ["is_current_stream_capturing", "graph_pool_handle", "CUDAGraph", "graph", "make_graphed_callables"]


def _dummy(name):
    raise RuntimeError(f"Tried to instantiate dummy base class {name}")


def is_current_stream_capturing():
    _dummy("_cuda_isCurrentStreamCapturing")


def graph_pool_handle():
    _dummy("_graph_pool_handle")


class CUDAGraph:
    def __init__(self, keep_graph=False):
        _dummy("CUDAGraph")


class graph:
    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global"):
        Stream()
        _dummy("CUDAGraph")


def make_graphed_callables(callables, sample_args, num_warmup_iters=3, allow_unused_input=False, pool=None):
    _dummy("CUDAGraph")
