"""torch.signal: its window functions (`windows`)."""
from . import windows  # noqa: F401
