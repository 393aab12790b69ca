"""torch.autograd.Variable (PyTorch's old name: calling it returns a Tensor, and every Tensor is an
instance of it) and torch.autograd.variable (its removed factory)."""
from .. import _late

__all__ = ["Variable", "variable"]


class VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, _late.Tensor)


class Variable(metaclass=VariableMeta):
    def __new__(cls, data, requires_grad=False, volatile=False):
        return data.detach().requires_grad_(requires_grad)


def variable(*args, **kwargs):
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) instead")
