"""torch.autograd.Variable (PyTorch's old name: calling it returns a Tensor, and every Tensor is an
instance of it), torch.autograd.variable (its removed factory) and the engine's switches that have
no effect here: webtorch's engine runs on one thread and always accumulates gradients densely in
the parameters' layout."""
from .. import _late

__all__ = ["Variable", "variable", "set_multithreading_enabled", "enforce_grad_layout_policy"]


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, _late.Tensor)


class Variable(metaclass=_VariableMeta):
    def __new__(cls, data, requires_grad=False, volatile=False):
        return data.detach().requires_grad_(requires_grad)


def variable(*args, **kwargs):
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) instead")


class _Switch:
    """A context manager (and a function) setting a flag, restored on exit."""

    def __init__(self, mode=True):
        self.prev, type(self).mode = type(self).mode, bool(mode)

    def __enter__(self):
        pass

    def __exit__(self, *args):
        type(self).mode = self.prev

    def clone(self):
        return self.__class__(self.mode)


class set_multithreading_enabled(_Switch):
    mode = True


class enforce_grad_layout_policy(_Switch):
    mode = True
