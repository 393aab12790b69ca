"""torch.nn.functional's dropout family."""
import math
import warnings

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


def _feature_dropout(input, p, training, inplace):
    """ATen's feature_dropout: one draw per (sample, channel) of the input as given."""
    _check_p(p)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        return input.mul_(0.0) if inplace else input * 0.0
    return _apply_mask(input, _noise(input, _feature_noise_shape(input), p).div_(1 - p), inplace)


def _unbatched_feature_dropout(input, p, training, inplace):
    """An input without its batch dim gets one (as PyTorch's unsqueeze(0) ... squeeze(0))."""
    result = _feature_dropout(input.unsqueeze(0), p, training, inplace)
    return input if inplace else result.squeeze(0)


def _warn_not_nd(name, inp_dim, n):
    warnings.warn(
        f"{name}: Received a {inp_dim}-D input to {name}, which is deprecated "
        "and will result in an error in a future release. To retain the behavior "
        f"and silence this warning, please use dropout instead. Note that {name} "
        f"exists to provide channel-wise dropout on inputs with {n} spatial dimensions, "
        f"a channel dimension, and an optional batch dimension (i.e. {n + 1}D or {n + 2}D inputs).",
        stacklevel=4)


def dropout1d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {inp_dim}D input. "
            "Note that dropout1d exists to provide channel-wise dropout on inputs with 1 "
            "spatial dimension, a channel dimension, and an optional batch dimension "
            "(i.e. 2D or 3D inputs).")
    if inp_dim == 2:
        return _unbatched_feature_dropout(input, p, training, inplace)
    return _feature_dropout(input, p, training, inplace)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """As PyTorch's: a 3-D input is (N, C, L) (1-D channel dropout, with its warning), not unbatched."""
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (3, 4):
        _warn_not_nd("dropout2d", inp_dim, 2)
    if inp_dim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
            "1D dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=3)
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (4, 5):
        _warn_not_nd("dropout3d", inp_dim, 3)
    if inp_dim != 5:
        return _unbatched_feature_dropout(input, p, training, inplace)
    return _feature_dropout(input, p, training, inplace)


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
