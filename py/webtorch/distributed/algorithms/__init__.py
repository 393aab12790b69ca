"""torch.distributed.algorithms: the generic join context manager (`Join`, `Joinable`, `JoinHook`)."""
from .join import Join, Joinable, JoinHook

__all__ = ["Join", "JoinHook", "Joinable"]
