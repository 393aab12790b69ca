"""torch.nn.functional's softmax family (the activations are declared in ops/activation.py)."""
import warnings

from ... import _dtype
from ...ops import reduction as _red
from ...ops._common import dispatching
from ...ops._creation import empty_like as _empty_like, zeros as _zeros

bool_ = _dtype.bool_

__all__ = ["softmax", "log_softmax", "softmin", "gumbel_softmax"]


def _get_softmax_dim(name, ndim):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                  "as an argument.", stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim())
    return _red.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim())
    return _red.log_softmax(input, dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim())
    return _red.softmax(-input, dim, dtype=dtype)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    gumbels = -_empty_like(logits).exponential_().log()  # PyTorch's draw: Gumbel(0, 1)
    y_soft = _red.softmax((logits + gumbels) / tau, dim)
    if hard:
        index = y_soft.argmax(dim, keepdim=True)
        y_hard = _zeros(logits.shape, dtype=logits.dtype, device=logits.device).scatter(dim, index, 1.0)
        return y_hard - y_soft.detach() + y_soft
    return y_soft


dispatching(globals(), __all__)
