"""torch.compiler: reset, disable, is_compiling (torch.compile's public switches)."""
from .._dynamo import eval_frame as _ef
from .. import _dynamo

__all__ = ["reset", "disable", "is_compiling", "is_dynamo_compiling"]


def reset():
    """Drop every torch.compile'd callable's compiled entries (the next call traces again)."""
    _dynamo.reset()


def disable(fn=None, recursive=True, *, reason=None):
    """fn runs eagerly and untraced, also when called from a compiled function (a graph break there)."""
    return _ef.disable(fn, recursive, reason=reason)


def is_compiling():
    """True while a torch.compile'd callable runs its function (outside torch.compiler.disable'd code)."""
    return _ef._state["compiling"] > 0


is_dynamo_compiling = is_compiling
