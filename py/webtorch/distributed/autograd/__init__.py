"""torch.distributed.autograd: distributed autograd runs over RPC, which webtorch has not (`is_available()` False);
`context()` raises what PyTorch raises before `init`."""
__all__ = ["context", "is_available"]


def is_available():
    return False


def backward(context_id, roots, retain_graph=False):
    raise RuntimeError("Need to initialize distributed autograd using torch.distributed.autograd.init()")


def get_gradients(context_id):
    raise RuntimeError("Need to initialize distributed autograd using torch.distributed.autograd.init()")


class context:
    """`with dist_autograd.context() as context_id:` as PyTorch's: raises without distributed autograd."""

    def __enter__(self):
        raise RuntimeError("Need to initialize distributed autograd using torch.distributed.autograd.init()")

    def __exit__(self, type, value, traceback):
        return None
