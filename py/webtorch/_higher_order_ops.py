"""torch.cond, eagerly: `true_fn(*operands)` if pred else `false_fn(*operands)`, with PyTorch's argument checks.

PyTorch compiles the call when pred is a tensor (both branches traced); webtorch runs the taken branch only,
so a branch that would fail to trace but is not taken goes unnoticed here.
"""
from ._symbolic import SymBool
from ._tensor import Tensor


def _tensor_leaves_only(tree):
    if isinstance(tree, dict):
        return all(_tensor_leaves_only(v) for v in tree.values())
    if isinstance(tree, (list, tuple)):
        return all(_tensor_leaves_only(v) for v in tree)
    return isinstance(tree, Tensor)


def cond(pred, true_fn, false_fn, operands=()):
    if isinstance(pred, (bool, int, float)):
        return true_fn(*operands) if pred else false_fn(*operands)
    if not isinstance(pred, (Tensor, SymBool)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if isinstance(pred, Tensor) and pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    if not isinstance(operands, (tuple, list)) or not _tensor_leaves_only(operands):
        raise RuntimeError("Expect operands to be a tuple of possibly nested dict/list/tuple that only "
                           f"consists of tensor leaves, but got {operands}.")
    return true_fn(*operands) if bool(pred) else false_fn(*operands)
