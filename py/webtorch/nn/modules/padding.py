"""Padding layers (F.pad with a fixed mode)."""
from .. import functional as F
from ._dims import per_dim
from .module import Module

__all__ = ["ZeroPad1d", "ZeroPad2d", "ConstantPad1d", "ConstantPad2d", "ReflectionPad1d", "ReflectionPad2d",
           "ReplicationPad1d", "ReplicationPad2d", "CircularPad1d", "CircularPad2d", "ConstantPad3d", "ZeroPad3d",
           "ReflectionPad3d", "ReplicationPad3d", "CircularPad3d"]


class _PadNd(Module):
    _n = 1
    mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = F._ntuple(2 * self._n)(padding)

    def forward(self, input):
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


def _zero_pad_class(constant_pad):
    """ZeroPad{n}d: ConstantPad{n}d with value 0, its repr the padding alone."""
    name = constant_pad.__name__.replace("Constant", "Zero")

    def __init__(self, padding):
        constant_pad.__init__(self, padding, 0.0)

    __init__.__qualname__ = f"{name}.__init__"
    return type(name, (constant_pad,), {"__init__": __init__, "extra_repr": _PadNd.extra_repr, "__module__": __name__})


ConstantPad1d, ConstantPad2d, ConstantPad3d = per_dim("ConstantPad{}d", _ConstantPadNd, __name__)
ZeroPad1d, ZeroPad2d, ZeroPad3d = map(_zero_pad_class, (ConstantPad1d, ConstantPad2d, ConstantPad3d))


class _ReflectionPadNd(_PadNd):
    mode = "reflect"


class _ReplicationPadNd(_PadNd):
    mode = "replicate"


class _CircularPadNd(_PadNd):
    mode = "circular"


ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = per_dim("ReflectionPad{}d", _ReflectionPadNd, __name__)
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = per_dim("ReplicationPad{}d", _ReplicationPadNd, __name__)
CircularPad1d, CircularPad2d, CircularPad3d = per_dim("CircularPad{}d", _CircularPadNd, __name__)
