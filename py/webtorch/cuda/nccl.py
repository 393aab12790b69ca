"""torch.cuda.nccl: NVIDIA's collectives, absent here (is_available warns and says False, as PyTorch)."""
import warnings

__all__ = ["all_reduce", "reduce", "broadcast", "all_gather", "reduce_scatter"]


def is_available(tensors):
    warnings.warn("PyTorch is not compiled with NCCL support", stacklevel=2)
    return False


def version():
    raise AttributeError("module 'torch._C' has no attribute '_nccl_version'")


def _absent(*args, **kwargs):
    raise RuntimeError("PyTorch is not compiled with NCCL support")


all_reduce = reduce = broadcast = all_gather = reduce_scatter = _absent
