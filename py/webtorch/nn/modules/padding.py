"""Padding layers (F.pad with a fixed mode)."""
from .. import functional as F
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


class ConstantPad1d(_ConstantPadNd):
    _n = 1


class ConstantPad2d(_ConstantPadNd):
    _n = 2


class ZeroPad1d(ConstantPad1d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    _n, mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    _n, mode = 2, "reflect"


class ReplicationPad1d(_PadNd):
    _n, mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    _n, mode = 2, "replicate"


class CircularPad1d(_PadNd):
    _n, mode = 1, "circular"


class CircularPad2d(_PadNd):
    _n, mode = 2, "circular"


class ConstantPad3d(_ConstantPadNd):
    _n = 3


class ZeroPad3d(ConstantPad3d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad3d(_PadNd):
    _n, mode = 3, "reflect"


class ReplicationPad3d(_PadNd):
    _n, mode = 3, "replicate"


class CircularPad3d(_PadNd):
    _n, mode = 3, "circular"
