"""torch.nn.functional's dropout family."""
from ...ops._common import dispatching
from ...ops._creation import rand as _rand

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]


# ---- dropout ---------------------------------------------------------------------------------
def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _apply_mask(input, mask, inplace):
    if inplace:
        return input.mul_(mask)
    return input * mask


def dropout(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input.mul_(0.0) if inplace else input * 0.0
    keep = _rand(input.shape, dtype=input.dtype if input.dtype.is_floating_point else None, device=input.device)
    mask = (keep >= p).to(input.dtype) * (1.0 / (1.0 - p))
    return _apply_mask(input, mask, inplace)


def _feature_dropout(input, p, training, inplace, batched_dims):
    _check_p(p)
    if not training or p == 0.0:
        return input
    nd = input.dim()
    lead = input.shape[:nd - batched_dims]
    shape = tuple(lead) + (1,) * batched_dims
    if p == 1.0:
        return input.mul_(0.0) if inplace else input * 0.0
    keep = _rand(shape, dtype=input.dtype, device=input.device)
    mask = (keep >= p).to(input.dtype) * (1.0 / (1.0 - p))
    return _apply_mask(input, mask, inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 1)


def dropout2d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 2)


def dropout3d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 3)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    alpha_p = -1.7580993408473766
    keep = (_rand(input.shape, dtype=input.dtype, device=input.device) >= p).to(input.dtype)
    a = ((1 - p) * (1 + p * alpha_p ** 2)) ** -0.5
    b = -a * alpha_p * p
    return (input * keep + alpha_p * (1 - keep)) * a + b


feature_alpha_dropout = alpha_dropout


dispatching(globals(), __all__)
