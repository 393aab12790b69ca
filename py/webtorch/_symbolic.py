"""torch.sym_* on plain Python numbers: PyTorch's symbolic-shape helpers (torch.compile's SymInt and
SymFloat) act as the builtins do when given ints and floats, which is all webtorch's shapes are."""
import builtins
import math


def sym_int(a):
    return int(a)


def sym_float(a):
    return float(a)


def sym_max(a, b):
    return builtins.max(a, b)


def sym_min(a, b):
    return builtins.min(a, b)


def sym_not(a):
    return not a


def sym_ite(b, t, f):
    return t if b else f


def sym_sqrt(a):
    return math.sqrt(a)


def sym_sum(args):
    return builtins.sum(args)


class _SymNode:
    """torch.SymInt / SymFloat / SymBool: the types torch.compile's symbolic shapes take. webtorch's shapes are
    always plain numbers, so no value of these types is ever made by webtorch; the classes exist for
    isinstance checks and annotations (a plain int is not a SymInt, as in PyTorch)."""

    def __init__(self, node):
        self.node = node


class SymInt(_SymNode):
    """Like an int, wrapping a symbolic node (see _SymNode)."""


class SymFloat(_SymNode):
    """Like a float, wrapping a symbolic node (see _SymNode)."""


class SymBool(_SymNode):
    """Like a bool, wrapping a symbolic node (see _SymNode)."""


_INT64_MAX = (1 << 63) - 1


def sym_constrain_range(size, *, min=None, max=None):  # noqa: A002
    """On a plain number: checks that it lies in [min, max] (unbounded sides unchecked), as PyTorch."""
    lo = -_INT64_MAX - 1 if min is None else min
    hi = _INT64_MAX if max is None else max
    if not lo <= size <= hi:
        raise RuntimeError(f"Invalid value range for {size} between [{lo}, {hi}].")


def sym_constrain_range_for_size(size, *, min=None, max=None):  # noqa: A002
    """As sym_constrain_range for a size: min defaults to 0, and max must exceed 2."""
    if max is not None and max <= 2:
        raise RuntimeError(f"Max value to constrain_range_for_size must be greater than 2. got: {max}")
    sym_constrain_range(size, min=0 if min is None else min, max=max)


def sym_fresh_size(expr):
    """A fresh (unbacked) size equal to expr: on plain values, expr itself (a tensor's item())."""
    return expr.item() if hasattr(expr, "item") else expr
