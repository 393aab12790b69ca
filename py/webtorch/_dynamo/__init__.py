"""torch._dynamo: torch.compile's front end (see eval_frame.py): config, exc, explain, reset, mark_dynamic, the
decorators and switches of decorators.py."""
from . import config, eval_frame, exc, utils
from .decorators import (
    allow_in_graph,
    assume_constant_result,
    disallow_in_graph,
    graph_break,
    optimize,
    run,
    set_stance,
    substitute_in_graph,
)
from .eval_frame import OptimizedModule, disable, reset
from .explain import ExplainOutput, explain

__all__ = ["config", "exc", "utils", "OptimizedModule", "ExplainOutput", "explain", "disable", "reset",
           "mark_dynamic", "mark_static", "maybe_mark_dynamic", "list_backends", "is_compiling", "graph_break",
           "set_stance", "run", "optimize", "allow_in_graph", "disallow_in_graph", "assume_constant_result",
           "substitute_in_graph"]


def mark_dynamic(t, index, *, hint_override=None, min=None, max=None, specialize_on=None):  # noqa: A002
    """Accepted as in PyTorch (the marks are kept on the tensor). webtorch compiles per shape: a new size of a marked
    dimension makes a new entry, as an unmarked one does."""
    indices = [index] if isinstance(index, int) else list(index)
    if not hasattr(t, "_dynamo_dynamic_indices"):
        t._dynamo_dynamic_indices = set()
        t._dynamo_dynamic_range = set()
    for i in indices:
        t._dynamo_dynamic_indices.add(i)
        t._dynamo_dynamic_range.add((i, min, max))


maybe_mark_dynamic = mark_dynamic


def mark_static(t, index=None):
    t._dynamo_static_indices = getattr(t, "_dynamo_static_indices", set()) | (
        set() if index is None else {index} if isinstance(index, int) else set(index))


def list_backends(exclude_tags=("debug", "experimental")):
    return ["cudagraphs", "inductor"] if exclude_tags else ["aot_eager", "cudagraphs", "eager", "inductor"]


def is_compiling():
    """True while a torch.compile'd callable runs its function (outside torch.compiler.disable'd code)."""
    return eval_frame._state["compiling"] > 0
