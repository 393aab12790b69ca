"""torch.distributed on PyTorch's own engine, c10d: no home-made one.

Natively, where the real PyTorch is importable (not in the page, and not under `python -m webtorch`,
where `torch` names webtorch), `is_available()` is True and every function forwards to
`torch.distributed`: its rendezvous (`env://`, `tcp://`, stores), torchrun's environment, gloo's
collectives. A collective on webtorch tensors (cpu or webgpu) copies them to torch CPU tensors
through host memory, runs PyTorch's collective and copies the results back into the webtorch
tensors in place; with `async_op=True` it returns a `Work` whose `wait()` copies them back.
PyTorch's classes (`ReduceOp`, `Backend`, `TCPStore`, `ProcessGroup`, `DistError`, ...) are
PyTorch's own objects there.

Without the engine `is_available()` and `is_initialized()` are False and every function raises
what PyTorch raises before `init_process_group`, so single-device programs that import these names
run; `init_process_group` raises NO_BACKEND_MSG.
"""
import importlib
import importlib.util
import inspect
import logging
import os
import sys
import traceback
import typing
from datetime import timedelta

from .. import _torch_alias
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..ops._creation import from_numpy
from . import _fallback, constants
from ._fallback import NO_BACKEND_MSG

_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group.")

default_pg_timeout = constants.default_pg_timeout
log = logging.getLogger(__name__)
distributed_c10d = sys.modules[__name__]
_engine_module = []
_pytorch = []  # PyTorch's torch module, with the engine


def _engine():
    """PyTorch's torch.distributed where the real PyTorch is importable and has it, else None."""
    if not _engine_module:
        dist = None
        if _torch_alias._finder not in sys.meta_path and importlib.util.find_spec("torch") is not None:
            dist = importlib.import_module("torch.distributed")
            dist = dist if dist.is_available() else None
            _pytorch.append(sys.modules["torch"])
        _engine_module.append(dist)
    return _engine_module[0]


def _host(obj, torch):
    """`obj` with each webtorch tensor in it (lists, tuples) as a torch CPU tensor."""
    if isinstance(obj, (list, tuple)):
        return type(obj)(_host(o, torch) for o in obj)
    if isinstance(obj, Tensor):
        return torch.from_numpy(obj.detach().cpu().numpy().copy())
    return obj


def _copy_back(ours, theirs):
    if isinstance(ours, (list, tuple)):
        for o, t in zip(ours, theirs):
            _copy_back(o, t)
    elif isinstance(ours, Tensor):
        with no_grad():
            ours.copy_(from_numpy(theirs.numpy()).to(ours.device))


class _Work:
    """PyTorch's Work for a collective on webtorch tensors: wait() copies the results back."""

    def __init__(self, work, outputs):
        self._work, self._outputs = work, outputs
        self._results = [ours for ours, _ in outputs]

    def wait(self, timeout=None):
        done = self._work.wait() if timeout is None else self._work.wait(timeout)
        for ours, theirs in self._outputs:
            _copy_back(ours, theirs)
        self._outputs = []
        return done

    def result(self):
        """The tensors the collective wrote (webtorch's), once done."""
        self.wait()
        return self._results

    def __getattr__(self, name):
        return getattr(self._work, name)


def _collective(name, outputs):
    """torch.distributed.`name` on webtorch tensors; `outputs` names the parameters it writes."""

    def collective(*args, **kwargs):
        dist = _engine()
        if dist is None:
            raise ValueError(_NOT_INITIALIZED)
        fn = getattr(dist, name)
        bound = inspect.signature(fn).bind(*args, **kwargs)
        host = {k: _host(v, _pytorch[0]) for k, v in bound.arguments.items()}
        work = fn(**host)
        pairs = [(bound.arguments[k], host[k]) for k in outputs if k in bound.arguments]
        if isinstance(work, dist.Work):  # async_op=True, isend, irecv: the results are there after wait()
            return _Work(work, pairs)
        for ours, theirs in pairs:
            _copy_back(ours, theirs)
        return work

    collective.__name__ = collective.__qualname__ = name
    collective.__doc__ = f"torch.distributed.{name} on PyTorch's c10d; webtorch tensors go through host memory."
    return collective


def _forward(name, fallback):
    """torch.distributed.`name` where the engine is, else `fallback` (PyTorch's answer before init)."""

    def forward(*args, **kwargs):
        dist = _engine()
        return fallback(*args, **kwargs) if dist is None else getattr(dist, name)(*args, **kwargs)

    forward.__name__ = forward.__qualname__ = name
    return forward


def _not_initialized(*args, **kwargs):
    raise ValueError(_NOT_INITIALIZED)


def _no_backend(*args, **kwargs):
    raise RuntimeError(NO_BACKEND_MSG)


def _no_process_group(*args, **kwargs):
    raise AssertionError("Process group cannot be None")


def _false(*args, **kwargs):
    return False


def _node_local_rank(fallback_rank=None):
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError(
        "LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow `get_node_local_rank` to "
        "work, assuming you are not running in a multi-device context and want the code to run locally instead.")


def is_available():
    return _engine() is not None


def is_torchelastic_launched():
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


# name -> the parameters the collective writes into
_COLLECTIVES = {
    "all_reduce": ("tensor",), "broadcast": ("tensor",), "reduce": ("tensor",),
    "all_gather": ("tensor_list",), "all_gather_into_tensor": ("output_tensor",),
    "all_gather_coalesced": ("output_tensor_lists",), "all_reduce_coalesced": ("tensors",),
    "reduce_scatter": ("output",), "reduce_scatter_tensor": ("output",),
    "gather": ("gather_list",), "scatter": ("tensor",), "all_to_all": ("output_tensor_list",),
    "all_to_all_single": ("output",), "send": (), "isend": (), "recv": ("tensor",), "irecv": ("tensor",),
}
for _name, _outputs in _COLLECTIVES.items():
    globals()[_name] = _collective(_name, _outputs)

_FALLBACKS = {
    "init_process_group": _no_backend, "init_device_mesh": _no_backend, "destroy_process_group": _no_process_group,
    "is_initialized": _false, "is_gloo_available": _false, "is_nccl_available": _false,
    "is_mpi_available": _false, "is_ucc_available": _false, "is_xccl_available": _false,
    "is_backend_available": _false, "get_pg_count": lambda: 0, "get_node_local_rank": _node_local_rank,
    "get_debug_level": lambda: _fallback.DebugLevel.OFF, "set_debug_level": lambda level: None,
    "set_debug_level_from_env": lambda: None, "supports_complex": lambda reduceOp: True,
    "get_default_backend_for_device": _no_backend, "register_rendezvous_handler": _no_backend,
    "rendezvous": _no_backend, "breakpoint": lambda rank=0, skip=0, timeout_s=3600: None,
}
_UNINITIALIZED = (
    "get_rank", "get_world_size", "get_backend", "get_backend_config", "barrier", "monitored_barrier", "new_group",
    "new_subgroups", "new_subgroups_by_enumeration", "get_global_rank", "get_group_rank", "get_process_group_ranks",
    "all_gather_object", "broadcast_object_list", "gather_object", "scatter_object_list", "send_object_list",
    "recv_object_list", "batch_isend_irecv", "all_gather_single", "reduce_scatter_single", "shrink_group",
    "split_group", "record_comm")
for _name in _UNINITIALIZED:
    _FALLBACKS[_name] = _not_initialized
for _name, _answer in _FALLBACKS.items():
    globals()[_name] = _forward(_name, _answer)


_SUBMODULES = ("device_mesh", "algorithms", "autograd", "c10d_logger", "config", "logging_handlers", "remote_device",
               "rpc", "utils", "run")


def __getattr__(name):
    if name in _fallback.NAMES:
        dist = _engine()
        return getattr(_fallback, name) if dist is None else getattr(dist, name)
    if name == "torch":
        return sys.modules["webtorch"]
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = sorted(list(_COLLECTIVES) + list(_FALLBACKS) + list(_fallback.NAMES) + [
    "is_available", "is_torchelastic_launched", "default_pg_timeout", "constants", *_SUBMODULES[:-1],
    "distributed_c10d", "log", "logging", "sys", "timedelta", "traceback", "typing", "torch"])
