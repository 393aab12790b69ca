"""ChannelShuffle."""
from .. import functional as F
from ._function_module import _FunctionModule

__all__ = ["ChannelShuffle"]


class ChannelShuffle(_FunctionModule):
    __constants__ = ["groups"]
    _function = staticmethod(F.channel_shuffle)

    def __init__(self, groups):
        super().__init__(groups)
