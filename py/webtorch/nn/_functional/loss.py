"""torch.nn.functional's losses and distances."""
import math
import warnings

from ... import _dtype
from ...amp.autocast_mode import fp32_on_cpu
from ...autograd import grad_mode
from ...ops import indexing as _ix, pointwise as _pw, reduction as _red, shape as _shape
from ...ops._common import check_inplace_dtype, composite_node, dispatching, formula_node, name_of
from ...ops.activation import logsigmoid
from .. import _reduction
from ._util import _gather_dim, _idx, _iota
from .activation import log_softmax
from .linear import linear

# a graph node named as PyTorch's for a layer computed by other ops (its gradient is theirs)
_node = composite_node

__all__ = [
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "soft_margin_loss", "margin_ranking_loss",
    "hinge_embedding_loss", "cosine_embedding_loss", "poisson_nll_loss", "gaussian_nll_loss",
    "triplet_margin_loss", "multilabel_soft_margin_loss", "cosine_similarity", "pairwise_distance", "pdist",
    "multi_margin_loss", "multilabel_margin_loss", "triplet_margin_with_distance_loss", "linear_cross_entropy",
]


# ---- losses ----------------------------------------------------------------------------------
def _legacy_reduction(size_average, reduce, reduction):
    if size_average is None and reduce is None:
        return reduction
    return _reduction.legacy_get_string(size_average, reduce, emit_warning=False)


def _check_reduction(reduction):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduce(loss, reduction):
    _check_reduction(reduction)
    if reduction == "none":
        return loss
    return loss.mean() if reduction == "mean" else loss.sum()


def _check_sizes(input, target, name=None):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=3)


@fp32_on_cpu
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_sizes(input, target)
    if weight is not None:
        d = input - target
        return _reduce(d * d * weight, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _MseLoss.apply(input, target, reduction)


def _loss_diff(input, target, kernel):
    """input - target in their promoted dtype (PyTorch's mse/smooth_l1/huber kernels take a bool operand,
    but not a promoted dtype that is not floating: `kernel` names the kernel in its error)."""
    dt = _dtype.promote_types(input.dtype, target.dtype)  # broadcast first: a 0-d operand promotes as any
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for '{name_of(dt)}'")
    return input.to(dt) - target.to(dt)


def _mse_loss_impl(input, target, reduction):
    d = _loss_diff(input, target, "mse")
    return _reduce(d * d, reduction)


_MseLoss = formula_node("MseLossBackward0", _mse_loss_impl, ("input", "target", "reduction"))


@fp32_on_cpu
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_sizes(input, target)
    a, b = _shape.broadcast_tensors(input, target)  # PyTorch's: a 0-d operand promotes as any
    loss = (a - b).abs()
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@fp32_on_cpu
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_sizes(input, target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:  # l1_loss, as in PyTorch
        return _reduce((input - target).abs(), reduction)
    return _SmoothL1Loss.apply(input, target, reduction, beta)


def _smooth_l1_loss_impl(input, target, reduction, beta):
    d = _loss_diff(input, target, "smooth_l1").abs()
    dn = _pw.where(d >= beta, 0.0, d)  # squared only where taken (or NaN): an infinite d's gradient is not 0 * inf
    return _reduce(_pw.where(d < beta, 0.5 * dn * dn / beta, d - 0.5 * beta), reduction)


@fp32_on_cpu
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    _check_sizes(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    check_inplace_dtype(_dtype.promote_types(input.dtype, target.dtype), input)  # PyTorch's result is like input
    if weight is None:
        r = _HuberLoss.apply(input, target, reduction, delta)
    else:  # as PyTorch: the unreduced loss times the weight, then reduced
        r = _reduce(_HuberLoss.apply(input, target, "none", delta) * weight, reduction)
    return r if r.dtype is input.dtype else r.to(input.dtype)


def _huber_loss_impl(input, target, reduction, delta):
    d = _loss_diff(input, target, "huber").abs()
    dn = _pw.where(d >= delta, 0.0, d)  # as smooth_l1_loss's
    return _reduce(_pw.where(d < delta, 0.5 * dn * dn, delta * (d - 0.5 * delta)), reduction)


_SmoothL1Loss = formula_node("SmoothL1LossBackward0", _smooth_l1_loss_impl, ("input", "target", "reduction", "beta"))
_HuberLoss = formula_node("HuberLossBackward0", _huber_loss_impl, ("input", "target", "reduction", "delta"))


def _class_dim(input):
    return 0 if input.dim() == 1 else 1


@fp32_on_cpu
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if input.dim() == 1:
        if target.dim() != 0:
            raise ValueError(f"Expected input batch_size ({1}) to match target batch_size ({target.shape[0]}).")
    elif input.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0]}).")
    if target.dtype.is_floating_point:
        raise RuntimeError(f"expected scalar type Long but found {_tname(target.dtype)}")
    C = input.shape[0 if input.dim() == 1 else 1]
    if weight is not None and weight.numel() != C:
        raise RuntimeError(f"weight tensor should be defined either for all {C} classes or no classes but got weight "
                           f"tensor of shape: {list(weight.shape)}")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    node = _NllLoss2d if input.dim() == 4 else _NllLoss
    return node.call(input, target, weight, ignore_index, reduction)


def _nll_loss_impl(input, target, weight, ignore_index, reduction):
    squeeze = input.dim() == 1
    if squeeze:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    valid = target != ignore_index
    t = _pw.where(valid, target, 0)
    # PyTorch's error for an out-of-range target (on webgpu raised at the next sync point)
    with _ix.range_error(lambda bad: IndexError(f"Target {bad} is out of bounds.")):
        picked = input.gather(1, t.unsqueeze(1)).squeeze(1)
    if weight is not None:
        w = _ix.index_select(weight, 0, t.reshape(-1)).reshape(t.shape) * valid
    else:
        w = valid.to(input.dtype)
    loss = -picked * w
    if squeeze:
        loss, w = loss.squeeze(0), w.squeeze(0)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / w.sum()


# the target and the class weights are not differentiated
_NllLoss = _node("NllLossBackward0", _nll_loss_impl, no_edges=(1, 2))
_NllLoss2d = _node("NllLoss2DBackward0", _nll_loss_impl, no_edges=(1, 2))


def _tname(dt):
    return name_of(dt)


@fp32_on_cpu
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    cd = _class_dim(input)
    C = input.shape[cd]
    logp = log_softmax(input, cd)
    if target.dtype.is_floating_point:  # class probabilities
        if tuple(target.shape) != tuple(input.shape):
            raise RuntimeError(f"Expected target size {list(input.shape)}, got {list(target.shape)}")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / C
        prod = logp * target
        if weight is not None:
            prod = prod * weight.reshape((-1,) + (1,) * (input.dim() - cd - 1))
        loss = -prod.sum(cd)
        if reduction == "mean":
            return loss.sum() / (input.numel() // C) if input.numel() else loss.sum() * math.nan
        return _reduce(loss, reduction)
    nll = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    if label_smoothing <= 0:
        return nll
    valid = target != ignore_index
    if weight is not None:
        smooth = -(logp * weight.reshape((-1,) + (1,) * (input.dim() - cd - 1))).sum(cd)
    else:
        smooth = -logp.sum(cd)
    smooth = smooth * valid
    if reduction == "mean":
        if weight is not None:
            t = _pw.where(valid, target, 0)
            denom = (_ix.index_select(weight, 0, t.reshape(-1)).reshape(t.shape) * valid).sum()
        else:
            denom = valid.sum()
        ret = smooth.sum() / denom
    elif reduction == "sum":
        ret = smooth.sum()
    else:
        ret = smooth
    return (1 - label_smoothing) * nll + ret * (label_smoothing / C)


@fp32_on_cpu
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) "
                         "is deprecated. Please ensure they have the same size.")
    return _BinaryCrossEntropy.call(input, target, weight, reduction)


def _binary_cross_entropy_impl(input, target, weight, reduction):
    loss = -(target * input.log().clamp_min(-100.0) + (1 - target) * (1 - input).log().clamp_min(-100.0))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@fp32_on_cpu
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    return _BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight, reduction)


def _binary_cross_entropy_with_logits_impl(input, target, weight, pos_weight, reduction):
    # softplus(-x) = -logsigmoid(x), stably max(-x, 0) + log1p(exp(-|x|)); the gradient is PyTorch's
    # formula (autograd/derivatives.py)
    sp = -logsigmoid(input)
    if pos_weight is not None:
        log_weight = (pos_weight - 1) * target + 1
        loss = (1 - target) * input + log_weight * sp
    else:
        loss = (1 - target) * input + sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


# class / positive weights are not differentiated
_BinaryCrossEntropy = _node("BinaryCrossEntropyBackward0", _binary_cross_entropy_impl, no_edges=(2,))
_BinaryCrossEntropyWithLogits = formula_node("BinaryCrossEntropyWithLogitsBackward0",
                                             _binary_cross_entropy_with_logits_impl,
                                             ("input", "target", "weight", "pos_weight", "reduction"))
_BinaryCrossEntropyWithLogits._no_edges = (2, 3)


@fp32_on_cpu
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      stacklevel=2)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _pw.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.size(0) if input.dim() else loss.sum()
    return _reduce(loss, reduction)


@fp32_on_cpu
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _reduce((-target * input).exp().log1p(), reduction)


@fp32_on_cpu
def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0.0), reduction)


@fp32_on_cpu
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    margin_clamp = (margin - input).clamp_min(0.0)
    out_margin = _pw.where(target != 1, margin_clamp, margin_clamp * 0)
    out_self = _pw.where(target != -1, input, input * 0)
    return _reduce(out_margin + out_self, reduction)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    dt = _dtype.promote_types(x1.dtype, x2.dtype)
    if not dt.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {name_of(dt)}")
    x1, x2 = _shape.broadcast_tensors(*(x if x.is_floating_point() else x.to(dt) for x in (x1, x2)))
    return ((x1 / _norm_at_least(x1, dim, eps)) * (x2 / _norm_at_least(x2, dim, eps))).sum(dim)


def _norm_at_least(x, dim, eps):
    """x's 2-norm along dim, at least eps, as PyTorch's cosine_similarity clamps it: a copy clamped in
    place without grad, so the gradient is the unclamped norm's (through CloneBackward0)."""
    n = _red.norm(x, 2, dim, keepdim=True).clone()
    with grad_mode.no_grad():
        n.clamp_min_(eps)
    return n


@fp32_on_cpu
def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    cos = cosine_similarity(input1, input2, dim=-1, eps=1e-12 ** 0.5)
    pos = 1 - cos
    neg = (cos - margin).clamp_min(0.0)
    loss = _pw.where(target == 1, pos, _pw.where(target == -1, neg, cos * 0))
    return _reduce(loss, reduction)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return _red.norm(x1 - x2 + eps, p, -1, keepdim=keepdim)


def pdist(input, p=2):
    n = input.shape[0]
    i, j = [], []
    for a in range(n):
        for b in range(a + 1, n):
            i.append(a)
            j.append(b)
    d = _gather_dim(input, 0, _idx(i, input.device)) - _gather_dim(input, 0, _idx(j, input.device))
    return _red.norm(d, p, -1)


@fp32_on_cpu
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _pw.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp_min(0.0), reduction)


@fp32_on_cpu
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        approx = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + _pw.where(target > 1, approx, approx * 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):  # one variance per row: homoscedastic
            var = var.unsqueeze(-1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1):
            raise ValueError("var is of incorrect size")
    var = var.clamp_min(eps) if not var.requires_grad else var.clamp(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not valid")
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(-1) / input.size(-1)
    return _reduce(loss, reduction)


def _margin_input_check(input):
    if not ((input.dim() <= 1 and input.numel() > 0) or (input.dim() == 2 and input.shape[1] != 0)):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")


def _multi_margin_impl(input, target, p, margin, weight, reduction):
    x = input.reshape(1, -1) if input.dim() <= 1 else input
    y = target.reshape(-1, 1)
    z = (margin - x.gather(1, y) + x).clamp_min(0.0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.gather(0, y.reshape(-1)).unsqueeze(1)
    z = _pw.where(_iota(x.shape[1], x.device) == y, 0.0, z)
    loss = z.sum(1) / x.shape[1]
    return _reduce(loss.reshape(target.shape) if input.dim() <= 1 else loss, reduction)


_MultiMargin = composite_node("MultiMarginLossBackward0", _multi_margin_impl)


@fp32_on_cpu
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _margin_input_check(input)
    nframe, dim = (1, input.numel()) if input.dim() <= 1 else tuple(input.shape)
    if target.dim() > 1 or target.numel() != nframe:
        raise RuntimeError("multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{nframe}], but got {list(target.shape)}. "
                           f"Input has shape {list(input.shape)}.")
    if weight is not None and weight.numel() != dim:
        raise RuntimeError(f"inconsistent weight size, expected {dim} but got {list(weight.shape)}")
    if target.dtype is not _dtype.int64:
        raise RuntimeError(f"expected scalar type Long but found {name_of(target.dtype)}")
    return _MultiMargin.call(input, target, p, margin, weight, reduction)


def _multilabel_margin_impl(input, target, reduction):
    x = input.reshape(1, -1) if input.dim() <= 1 else input
    y = target.reshape(x.shape)
    listed = (y < 0).to(_dtype.int64).cumsum(1) == 0  # the labels before the first -1
    is_label = ((y.unsqueeze(-1) == _iota(x.shape[1], x.device)) & listed.unsqueeze(-1)).any(1)
    xy = x.gather(1, y.clamp_min(0))
    z = (1 - (xy.unsqueeze(2) - x.unsqueeze(1))).clamp_min(0.0)  # (N, label j, class i)
    z = _pw.where(listed.unsqueeze(2) & ~is_label.unsqueeze(1), z, 0.0)
    loss = z.sum((1, 2)) / x.shape[1]
    return _reduce(loss.reshape(()) if input.dim() <= 1 else loss, reduction)


_MultilabelMargin = composite_node("MultilabelMarginLossBackward0", _multilabel_margin_impl)


@fp32_on_cpu
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _margin_input_check(input)
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    if target.dtype is not _dtype.int64:
        raise RuntimeError(f"expected scalar type Long but found {name_of(target.dtype)}")
    return _MultilabelMargin.call(input, target, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not (anchor.ndim == positive.ndim == negative.ndim):
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    distance_function = distance_function or pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = _pw.minimum(dist_neg, distance_function(positive, negative))
    return _reduce((margin + dist_pos - dist_neg).clamp_min(0), reduction)


def _linear_cross_entropy_checks(input, linear_weight, target, linear_bias, ignore_index):
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    if input.shape[-1] != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), "
                           f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    classes = tuple(linear_weight.shape[:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != classes:
        raise RuntimeError(f"expected linear_bias shape {classes}, got {tuple(linear_bias.shape)}")
    if len(classes) > 1 and input.dim() == 1:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires"
                           f" batched input, (N, {input.shape[-1]}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = tuple(input.shape[:-1]) + classes
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    return logits_shape


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target): PyTorch's reference path. `options`
    (LinearCrossEntropyOptions, PyTorch's chunked path, which saves memory) is accepted and computes the same
    loss here by the reference path."""
    logits_shape = _linear_cross_entropy_checks(input, linear_weight, target, linear_bias, ignore_index)
    n_out = math.prod(linear_weight.shape[:-1])
    logits = linear(input, linear_weight.reshape(n_out, input.shape[-1]),
                    None if linear_bias is None else linear_bias.reshape(n_out))
    return cross_entropy(logits.reshape(logits_shape), target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index, label_smoothing=label_smoothing)


dispatching(globals(), __all__)
