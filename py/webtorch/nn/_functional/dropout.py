"""torch.nn.functional's dropout family."""
import math

from ...ops._common import dispatching
from ...ops._creation import empty as _empty

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]


# ---- dropout ---------------------------------------------------------------------------------
def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _apply_mask(input, mask, inplace):
    if inplace:
        return input.mul_(mask)
    return input * mask


def _noise(input, shape, p):
    """PyTorch's dropout noise: bernoulli_(1 - p) of the input's dtype (one per feature map for
    feature dropout), so a seed drops PyTorch's elements."""
    return _empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)


def dropout(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input.mul_(0.0) if inplace else input * 0.0
    return _apply_mask(input, _noise(input, input.shape, p).div_(1 - p), inplace)


def _feature_dropout(input, p, training, inplace, batched_dims):
    _check_p(p)
    if not training or p == 0.0:
        return input
    nd = input.dim()
    lead = input.shape[:nd - batched_dims]
    shape = tuple(lead) + (1,) * batched_dims
    if p == 1.0:
        return input.mul_(0.0) if inplace else input * 0.0
    return _apply_mask(input, _noise(input, shape, p).div_(1 - p), inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 1)


def dropout2d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 2)


def dropout3d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 3)


def _alpha_dropout(input, p, training, inplace, noise_shape):
    _check_p(p)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        return input.mul_(0.0) if inplace else input * 0.0
    alpha = 1.7580993408473766
    a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    noise = _noise(input, noise_shape(), p)
    b = noise.add(-1).mul_(alpha * a).add_(alpha * a * p)
    return _apply_mask(input, noise.mul_(a), inplace).add_(b) if inplace else input * noise.mul_(a) + b


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _alpha_dropout(input, p, training, inplace, lambda: input.shape)


def _feature_noise_shape(input):
    """PyTorch's make_feature_noise: one draw per (sample, channel)."""
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return tuple(input.shape[:2]) + (1,) * (input.dim() - 2)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _alpha_dropout(input, p, training, inplace, lambda: _feature_noise_shape(input))


dispatching(globals(), __all__)
