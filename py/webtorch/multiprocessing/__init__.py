"""torch.multiprocessing: Python's multiprocessing, plus `spawn`/`start_processes` and the sharing strategies.

cpu tensors pass to child processes by value (pickled); `Tensor.share_memory_()` marks a storage shared but does not
map it into other processes (webtorch keeps tensors in Python/numpy memory), so a child's in-place update is not seen
by the parent: send results back through a Queue or Pipe. In the browser (Pyodide) there are no processes: starting
one raises RuntimeError.
"""
import multiprocessing
import sys
from multiprocessing import *  # noqa: F401,F403 - PyTorch's module re-exports Python's

from .spawn import ProcessContext, ProcessExitedException, ProcessRaisedException, spawn, start_processes  # noqa: F401

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies"] + multiprocessing.__all__

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
