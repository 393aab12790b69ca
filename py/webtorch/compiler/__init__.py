"""torch.compiler: torch.compile's public switches (reset, disable, set_stance, is_compiling, ...) and config."""
from .. import _dynamo
from .._dynamo import eval_frame as _ef
from .._dynamo.decorators import substitute_in_graph
from . import config

__all__ = ["reset", "disable", "is_compiling", "is_dynamo_compiling", "set_stance", "list_backends",
           "cudagraph_mark_step_begin", "allow_in_graph", "assume_constant_result", "substitute_in_graph", "config"]


def reset():
    """Drop every torch.compile'd callable's compiled entries (the next call traces again)."""
    _dynamo.reset()


def disable(fn=None, recursive=True, *, reason=None):
    """fn runs eagerly and untraced, also when called from a compiled function (a graph break there)."""
    return _ef.disable(fn, recursive, reason=reason)


def is_compiling():
    """True while a torch.compile'd callable runs its function (outside torch.compiler.disable'd code)."""
    return _dynamo.is_compiling()


is_dynamo_compiling = is_compiling


def set_stance(stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
    """The compiler's stance, as a function, context manager or decorator (see torch._dynamo.set_stance): "default",
    "force_eager", "eager_on_recompile", "fail_on_recompile", "eager_then_compile", "aot_eager_then_compile".
    Inside a compiled function it raises, as PyTorch's does."""
    if is_compiling():
        raise AssertionError(f"Attempt to trace forbidden callable {set_stance}")
    return _dynamo.set_stance(stance, skip_guard_eval_unsafe=skip_guard_eval_unsafe, force_backend=force_backend)


def list_backends(exclude_tags=("debug", "experimental")):
    """The backend names torch.compile accepts (webtorch runs each the same way)."""
    return _dynamo.list_backends(exclude_tags)


def cudagraph_mark_step_begin():
    """A new iteration begins (PyTorch: CUDA-graph outputs of the last one may be overwritten). Nothing to do: a
    webtorch replay hands out fresh outputs."""


def allow_in_graph(fn):
    """Accepted; webtorch traces the function's ops into the graph anyway (returns fn)."""
    return _dynamo.allow_in_graph(fn)


def assume_constant_result(fn):
    """Marks fn as PyTorch does and returns it; webtorch calls it every time (its result is guarded like any
    Python value its caller reads)."""
    return _dynamo.assume_constant_result(fn)
