"""PixelShuffle, PixelUnshuffle."""
from .. import functional as F
from ._function_module import _FunctionModule

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(_FunctionModule):
    __constants__ = ["upscale_factor"]
    _function = staticmethod(F.pixel_shuffle)

    def __init__(self, upscale_factor):
        super().__init__(upscale_factor)


class PixelUnshuffle(_FunctionModule):
    __constants__ = ["downscale_factor"]
    _function = staticmethod(F.pixel_unshuffle)

    def __init__(self, downscale_factor):
        super().__init__(downscale_factor)
