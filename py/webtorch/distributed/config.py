"""torch.distributed.config: PyTorch's flags (webtorch reads neither)."""
__all__ = ["compile_on_one_rank", "use_torchcomms"]

compile_on_one_rank = False
use_torchcomms = False
