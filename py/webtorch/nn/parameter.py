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


class UninitializedTensorMixin:
    """A parameter or buffer without a shape yet: `materialize(shape)` gives it storage and turns it into
    `cls_to_become` (what a lazy module does on its first call)."""
    cls_to_become = None

    def materialize(self, shape, device=None, dtype=None):
        device = self.data.device if device is None else device
        dtype = self.data.dtype if dtype is None else dtype
        self.data = empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually happens "
                           "in `load_state_dict` when trying to load an uninitialized parameter into an initialized "
                           "one. Call `forward` to initialize the parameters before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize "
                           "the parameters before calling `module.share_memory()`.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return super().__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.data.device, self.data.dtype)
        return memo[id(self)]


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        t = object.__new__(cls)
        Tensor._set_from(t, empty(0, device=device, dtype=dtype))
        t.requires_grad_(requires_grad)
        t.persistent = persistent
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass

    __torch_function__ = classmethod(_disabled_torch_function_impl)


def is_lazy(param):
    return isinstance(param, UninitializedTensorMixin)
