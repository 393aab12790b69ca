"""torch._inductor.config: PyTorch 2.13's keys and defaults, sub-configs included (`triton.cudagraphs`, `cpp.*`,
`trace.enabled`, ...). webtorch generates its own WGSL kernels: every key is stored and read back, and changes
nothing webtorch computes."""
import sys

from .._config_snapshot import INDUCTOR, INDUCTOR_ALIASES, INDUCTOR_DEPRECATED
from ..utils._config_module import install_config_module

install_config_module(sys.modules[__name__], INDUCTOR, INDUCTOR_ALIASES, INDUCTOR_DEPRECATED)
