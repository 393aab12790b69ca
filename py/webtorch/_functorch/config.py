"""torch._functorch.config: PyTorch 2.13's keys and defaults (AOTAutograd's knobs: stored and read back; they change
nothing webtorch computes)."""
import os
import sys

from .._config_snapshot import FUNCTORCH, FUNCTORCH_ALIASES, FUNCTORCH_DEPRECATED
from ..utils._config_module import install_config_module

# PyTorch's one default read from the environment: True under CI, unless its variable forces it
_forced = os.environ.get("TORCHINDUCTOR_ERROR_ON_CUSTOM_OP_ALIASING")
_defaults = dict(FUNCTORCH, error_on_custom_op_aliasing=_forced == "1" if _forced in ("0", "1") else
                 bool(os.getenv("CI")))
install_config_module(sys.modules[__name__], _defaults, FUNCTORCH_ALIASES, FUNCTORCH_DEPRECATED)
