"""torch._inductor: its config (webtorch has no inductor; the keys are stored and change nothing it computes)."""
from . import config

__all__ = ["config"]
