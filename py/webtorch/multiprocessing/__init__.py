"""torch.multiprocessing: Python's multiprocessing, plus `spawn`/`start_processes` and the sharing strategies.

Tensors pass to child processes by value (pickled; webgpu ones through host memory), except cpu tensors after
`share_memory_()` (or `Module.share_memory()`) on the numpy cpu device: those travel as the name of their shared
memory block, so parent and children update the same memory (Hogwild training). Without numpy a storage is only
marked shared. In the browser (Pyodide) there are no processes: starting one raises RuntimeError.
"""
import multiprocessing
import sys
from multiprocessing import *  # noqa: F401,F403 - PyTorch's module re-exports Python's
from multiprocessing.reduction import ForkingPickler

from .._shared_memory import reduce_tensor
from .._tensor import Tensor
from ..nn.parameter import Parameter
from .spawn import ProcessContext, ProcessExitedException, ProcessRaisedException, spawn, start_processes  # noqa: F401

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies"] + multiprocessing.__all__

def _rebuild_parameter(rebuild, args, requires_grad):
    return Parameter(rebuild(*args), requires_grad)


def _reduce_parameter(p):
    rebuild, args = reduce_tensor(p)
    return _rebuild_parameter, (rebuild, args, p.requires_grad)


# as PyTorch's init_reductions: a tensor in shared memory pickles by reference
ForkingPickler.register(Tensor, reduce_tensor)
ForkingPickler.register(Parameter, _reduce_parameter)

_all_sharing_strategies = {"file_descriptor", "file_system"} if sys.platform != "darwin" else {"file_system"}
_sharing_strategy = "file_descriptor" if sys.platform != "darwin" else "file_system"


def set_sharing_strategy(new_strategy):
    """Set the strategy for sharing CPU tensors: one of get_all_sharing_strategies()."""
    global _sharing_strategy
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(f"invalid sharing strategy {new_strategy}")
    _sharing_strategy = new_strategy


def get_sharing_strategy():
    return _sharing_strategy


def get_all_sharing_strategies():
    return _all_sharing_strategies
