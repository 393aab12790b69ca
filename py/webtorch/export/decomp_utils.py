"""torch.export.decomp_utils.CustomDecompTable: the decomposition table `ep.run_decompositions(table)` takes.

An exported graph records webtorch's public ops (nn.functional.linear, torch.softmax, Tensor.view...); each
op's decomposition is the op itself run with recording on, which records the ops it is written in. The
default table holds every op, so run_decompositions() lowers the graph to the ops that have no decomposition
(webtorch's primitives); deleting an op from the table keeps it as one node, as in PyTorch."""
from .. import nn, ops
from .._tensor import Tensor

__all__ = ["CustomDecompTable"]


def _all_ops():
    fns = list(ops.registry.FUNCTIONS.values())
    fns += [getattr(nn.functional, n) for n in nn.functional.__all__ if callable(getattr(nn.functional, n, None))]
    fns += [f for f in vars(Tensor).values() if callable(f) and not isinstance(f, type)]
    return fns


class CustomDecompTable(dict):
    """A dict {op: decomposition} holding every webtorch op (see the module doc); delete an op to keep it."""

    def __init__(self):
        super().__init__((f, f) for f in _all_ops())
        self.deleted_custom_ops = set()
        self.has_materialized = True

    def copy(self):
        new = CustomDecompTable.__new__(CustomDecompTable)
        dict.__init__(new, self)
        new.deleted_custom_ops, new.has_materialized = set(self.deleted_custom_ops), True
        return new

    def materialize(self):
        return dict(self)
