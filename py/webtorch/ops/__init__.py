"""Every op, defined once. `registry` holds webtorch's public functions and Tensor's methods (the
element-wise ops declare themselves there, `ops/pointwise.py`); `bind_methods` attaches the
methods and operators to Tensor."""
import importlib

from . import (
    _linalg_ops,
    activation,
    aliases,
    aten_forms,
    binning,
    complex_ops,
    copies,
    indexing,
    legacy_methods,
    linalg,
    other_ops,
    pointwise,
    reduction,
    registry,
    samplers,
    sampling,
    shape,
    special,
    underscore,
    views,
    windows,
)

# webtorch.<name>: every public function the ops modules declared (`register`), and nothing else
__all__ = sorted(registry.FUNCTIONS)
globals().update(registry.FUNCTIONS)


class _OpNamespace:
    """torch.ops.<namespace>: the custom ops torch.library defined there."""

    def __init__(self, name):
        self.name = name

    def __getattr__(self, op):
        try:
            return registry.CUSTOM_OPS[f"{self.name}::{op}"]
        except KeyError:
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{op}'") from None


def __getattr__(name):
    """torch.ops.aten (ATen's operators by name: webtorch/_aten.py, which needs nn, loaded late), and
    torch.ops.<namespace> for a namespace torch.library defined an op in (any other name stays an
    AttributeError, so a misspelt op module is never taken for a namespace)."""
    if name == "aten":
        mod = globals()["aten"] = importlib.import_module("webtorch._aten")
        return mod
    if name in {q.partition("::")[0] for q in registry.CUSTOM_OPS}:  # (`any` here is torch.any)
        return _OpNamespace(name)
    raise AttributeError(f"module 'webtorch.ops' has no attribute '{name}'")


def _reflect(fn):
    return lambda self, other: fn(other, self)


def _invert(self):
    if self.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return pointwise.logical_not(self) if self.dtype.name == "bool" else pointwise.bitwise_not(self)


def bind_methods(Tensor, creation):
    p, s, i, la, c = pointwise, shape, indexing, linalg, creation
    for n in ("to cpu cuda webgpu double half long short byte char bfloat16 type_as new_tensor new_zeros new_ones "
              "new_full new_empty uniform_ normal_ bernoulli_ random_ exponential_ bernoulli cauchy_ log_normal_ "
              "geometric_").split():
        registry.register_method(getattr(c, n), n)  # creation's methods (ops/_creation.py)
    for n, f in (("float", c.float_), ("int", c.int_), ("bool", c.bool_m), ("type", c.type_)):
        registry.register_method(f, n)
    registry.bind(Tensor)
    M = registry.METHODS
    Tensor.T = property(s._T)
    Tensor.mT = property(s._mT)
    Tensor.H = property(views._H)  # conjugate transposes
    Tensor.mH = property(views._mH)
    Tensor._alias_view = s._alias_view
    Tensor._index_put_flat = i.index_put_flat  # for autograd/derivatives.py (which imports no op)
    Tensor._take_flat = i.take_flat
    Tensor._cat, Tensor._stack, Tensor._arange = staticmethod(s.cat), staticmethod(s.stack), staticmethod(c.arange)
    Tensor._special_zeta = staticmethod(pointwise.special_zeta)
    Tensor._solve_triangular = staticmethod(_linalg_ops.F.solve_triangular)  # for autograd/linalg_derivatives.py
    Tensor._lu_permutation = staticmethod(_linalg_ops.F.permutation)
    Tensor._solve_host = staticmethod(_linalg_ops.F.solve_host)
    Tensor.__getitem__ = i.getitem
    Tensor.__setitem__ = i.setitem
    ops = {
        "add": p.add, "sub": p.sub, "mul": p.mul, "truediv": p.div, "floordiv": p.floor_divide,
        "mod": p.remainder, "pow": p.pow, "matmul": la.matmul, "and": p.bitwise_and, "or": p.bitwise_or,
        "xor": p.bitwise_xor, "lshift": p.bitwise_left_shift, "rshift": p.bitwise_right_shift,
    }
    for n, f in ops.items():
        setattr(Tensor, f"__{n}__", f)
        setattr(Tensor, f"__r{n}__", _reflect(f))
    for n in ("add", "mul", "and", "or", "xor"):  # commutative: PyTorch keeps self first (2 * x is mul(x, 2))
        setattr(Tensor, f"__r{n}__", getattr(Tensor, f"__{n}__"))
    Tensor.__rsub__ = lambda self, other: p.rsub(self, other)
    Tensor.__rtruediv__ = lambda self, other: p.reciprocal(self) * other  # PyTorch's (a MulBackward0 node)
    inplace = {"add": M["add_"], "sub": M["sub_"], "mul": M["mul_"], "truediv": M["div_"],
               "floordiv": M["floor_divide_"], "mod": M["remainder_"], "pow": M["pow_"], "and": M["bitwise_and_"],
               "or": M["bitwise_or_"], "xor": M["bitwise_xor_"], "lshift": M["bitwise_left_shift_"],
               "rshift": M["bitwise_right_shift_"]}
    for n, f in inplace.items():
        setattr(Tensor, f"__i{n}__", f)
    Tensor.__imatmul__ = lambda self, other: self.copy_(la.matmul(self, other))
    cmp = {"eq": p.eq, "ne": p.ne, "lt": p.lt, "le": p.le, "gt": p.gt, "ge": p.ge}
    for n, f in cmp.items():
        setattr(Tensor, f"__{n}__", f)
    Tensor.__neg__ = p.neg
    Tensor.__pos__ = lambda self: self
    Tensor.__abs__ = p.abs
    Tensor.__invert__ = _invert
    Tensor.__hash__ = lambda self: id(self)
