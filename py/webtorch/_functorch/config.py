"""torch._functorch.config: PyTorch 2.13's keys and defaults (AOTAutograd's knobs: stored and read back; they change
nothing webtorch computes)."""
import sys

from .._config_snapshot import FUNCTORCH, FUNCTORCH_ALIASES, FUNCTORCH_DEPRECATED
from ..utils._config_module import install_config_module

install_config_module(sys.modules[__name__], FUNCTORCH, FUNCTORCH_ALIASES, FUNCTORCH_DEPRECATED)
