"""nn.Parameter and nn.Buffer: tensors that a Module registers as its state."""
from .._tensor import Tensor
from ..autograd import grad_mode
from ..ops._creation import empty
from ..overrides import _disabled_torch_function_impl


class Parameter(Tensor):
    """A Tensor that is a module parameter: `requires_grad=True` by default, shares `data`'s
    memory, and ops on it return plain tensors (as in PyTorch)."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        t = object.__new__(cls)
        Tensor._set_from(t, data)
        if requires_grad:
            t.requires_grad = True  # raises for integer data, as in PyTorch
        return t

    def __init__(self, data=None, requires_grad=True):
        pass

    __torch_function__ = classmethod(_disabled_torch_function_impl)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        with grad_mode.no_grad():
            result = type(self)(self.detach().clone(), self.requires_grad)
        if self._grad is not None:
            result._grad = self._grad.clone()
        result.__dict__.update({k: v for k, v in self.__dict__.items()
                                if not k.startswith("_") and k != "grad_fn"})
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self.detach(), self.requires_grad))


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


class Buffer(Tensor):
    """`nn.Buffer(t)`: marks a tensor to be registered as a buffer when assigned to a Module
    (the assigned object is the plain tensor, as in PyTorch)."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = empty(0)
        t = object.__new__(cls)
        Tensor._set_from(t, data)
        t.persistent = persistent
        return t

    def __init__(self, data=None, *, persistent=True):
        pass

    __torch_function__ = classmethod(_disabled_torch_function_impl)


class UninitializedParameter(Parameter):
    pass


def is_lazy(param):
    return isinstance(param, UninitializedParameter)
