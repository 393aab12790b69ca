"""torch._dynamo.config: PyTorch 2.13's keys and defaults (_config_snapshot.py). torch.compile honours disable,
recompile_limit (alias cache_size_limit), fail_on_recompile_limit_hit, error_on_recompile, capture_scalar_outputs
and capture_dynamic_output_shape_ops (fullgraph=True then lets `.item()`, and on webgpu an op whose size depends on
the data, through; webtorch still breaks the graph there, so results equal PyTorch's and only explain's counts
differ); suppress_errors has nothing to suppress (tracing is the eager call itself); every
other key is stored and read back and changes nothing webtorch computes."""
import sys

from .._config_snapshot import DYNAMO, DYNAMO_ALIASES, DYNAMO_DEPRECATED
from ..utils._config_module import install_config_module

install_config_module(sys.modules[__name__], DYNAMO, DYNAMO_ALIASES, DYNAMO_DEPRECATED)
