"""torch._functorch: its config (keys stored; nothing webtorch computes depends on them)."""
from . import config

__all__ = ["config"]
