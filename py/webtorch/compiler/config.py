"""torch.compiler.config: PyTorch 2.13's keys and defaults; its aliases (recompile_limit, capture_scalar_outputs,
dynamic_shapes, ...) read and write torch._dynamo.config's keys."""
import sys

from .._config_snapshot import COMPILER, COMPILER_ALIASES, COMPILER_DEPRECATED
from ..utils._config_module import install_config_module

install_config_module(sys.modules[__name__], COMPILER, COMPILER_ALIASES, COMPILER_DEPRECATED)
