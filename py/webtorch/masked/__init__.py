"""torch.masked: reductions and normalizations with a `mask=` of the elements to use (`_ops.py`) and
MaskedTensor (`maskedtensor.py`)."""
from ._ops import (  # noqa: F401
    amax,
    amin,
    argmax,
    argmin,
    cumprod,
    cumsum,
    log_softmax,
    logaddexp,
    logsumexp,
    mean,
    median,
    norm,
    normalize,
    prod,
    softmax,
    softmin,
    std,
    sum,
    var,
)
from .maskedtensor import MaskedTensor, as_masked_tensor, is_masked_tensor, masked_tensor  # noqa: F401

__all__ = ["amax", "amin", "argmax", "argmin", "as_masked_tensor", "cumprod", "cumsum", "is_masked_tensor",
           "log_softmax", "logaddexp", "logsumexp", "masked_tensor", "MaskedTensor", "mean", "median", "norm",
           "normalize", "prod", "softmax", "softmin", "std", "sum", "var"]
