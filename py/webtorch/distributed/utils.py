"""torch.distributed.utils: the helpers DDP and FSDP share that programs reach for: `_p_assert` (an assert that
prints from every rank) and `_apply_to_tensors` (a function over every tensor in nested containers)."""
import dataclasses
import traceback
from collections import OrderedDict

from .._tensor import Tensor

__all__ = []


def _p_assert(cond, s, raise_assertion_error=True):
    """Print `s` and the stack and raise AssertionError when `cond` is false (asserts in collectives hang)."""
    if not cond:
        print(s)
        traceback.print_stack()
        if raise_assertion_error:
            raise AssertionError(s)


def _apply_to_tensors(fn, container):
    """`container` with fn(t) for each tensor t in it (dicts, OrderedDicts, lists, tuples, named tuples, sets,
    dataclasses)."""
    def apply(x):
        if isinstance(x, Tensor):
            return fn(x)
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            for f in dataclasses.fields(x):
                setattr(x, f.name, apply(getattr(x, f.name)))
            return x
        if isinstance(x, OrderedDict):
            return OrderedDict((k, apply(v)) for k, v in x.items())
        if isinstance(x, dict):
            return {k: apply(v) for k, v in x.items()}
        if isinstance(x, tuple) and hasattr(x, "_fields"):
            return type(x)(*(apply(v) for v in x))
        if isinstance(x, (list, tuple, set)):
            return type(x)(apply(v) for v in x)
        return x
    return apply(container)
