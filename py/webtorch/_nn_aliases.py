"""torch.<name> for the nn.functional ops PyTorch also has at top level: nn.functional's own
callables where PyTorch's are the same (torch.conv2d is F.conv2d), else ATen's signature over
nn.functional (torch.dropout(input, p, train), torch.embedding(weight, indices, ...), losses
taking reduction as ATen's int). Imported on first use (webtorch.__getattr__): nn imports webtorch."""
from . import _dtype
from .autograd import grad_mode
from .nn import functional as F
from .nn._functional.sparse import _embedding_renorm
from .nn.modules.rnn import _cell_function, _sequence_function
from .ops._common import formula_node, name_of
from .ops._creation import arange

_REDUCTION = ("none", "mean", "sum")  # ATen's int reduction: at::Reduction::None, Mean, Sum

adaptive_avg_pool1d, avg_pool1d, bilinear = F.adaptive_avg_pool1d, F.avg_pool1d, F.bilinear
conv1d, conv2d, conv3d, conv_tbc = F.conv1d, F.conv2d, F.conv3d, F.conv_tbc
conv_transpose1d, conv_transpose2d, conv_transpose3d = F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d
cosine_similarity, pairwise_distance, pdist = F.cosine_similarity, F.pairwise_distance, F.pdist
pixel_shuffle, pixel_unshuffle = F.pixel_shuffle, F.pixel_unshuffle


def dropout(input, p, train):
    return F.dropout(input, p, train)


def dropout_(input, p, train):
    return F.dropout(input, p, train, inplace=True)


def alpha_dropout(input, p, train):
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input, p, train):
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input, p, train):
    return F.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p, train):
    return F.feature_alpha_dropout(input, p, train, inplace=True)


def _feature_mask(input, p):
    """ATen's feature dropout mask: one Bernoulli(1 - p) draw per (sample, channel), scaled by 1 / (1 - p)."""
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    keep = input.new_empty(shape).bernoulli_(1 - p)
    return keep.div_(1 - p) if p < 1 else keep


def feature_dropout(input, p, train):
    return input * _feature_mask(input, p) if train and p > 0 else input


def feature_dropout_(input, p, train):
    return input.mul_(_feature_mask(input, p)) if train and p > 0 else input


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return F.embedding(indices, weight, padding_idx if padding_idx >= 0 else None,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def embedding_renorm_(input, indices, max_norm, norm_type):
    """The rows of input that indices name rescaled in place to norm at most max_norm (nn.Embedding's max_norm)."""
    _embedding_renorm(input, indices, max_norm, norm_type)
    return input


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """ATen's embedding_bag: (output, offset2bag, bag_size, max_indices) as PyTorch's cpu kernel returns them
    (offset2bag is left empty on its fast sum path; max_indices is bag_size but in max mode)."""
    if offsets is None:
        raise TypeError("embedding_bag(): argument 'offsets' (position 3) must be Tensor, not NoneType")
    pad = padding_idx if padding_idx is not None and padding_idx >= 0 else None
    out = F.embedding_bag(indices, weight, offsets, scale_grad_by_freq=scale_grad_by_freq,
                          mode=("sum", "mean", "max")[mode], sparse=sparse, per_sample_weights=per_sample_weights,
                          include_last_offset=include_last_offset, padding_idx=pad)
    with grad_mode.no_grad():
        n, bags = indices.shape[0], offsets.shape[0] - int(include_last_offset)
        starts = offsets[1:bags].long().clamp(max=n)
        bag_of = indices.new_zeros(n + 1, dtype=_dtype.int64).index_add(0, starts, starts.new_ones(starts.shape))
        bag_of = bag_of.cumsum(0)[:n]
        valid = indices != pad if pad is not None else indices.new_ones(indices.shape, dtype=_dtype.bool_)
        counts = bag_of.new_zeros(bags).index_add(0, bag_of, valid.long())
        fast = mode == 0 and pad is None and weight.dtype in (_dtype.float32, _dtype.float16, _dtype.bfloat16)
        offset2bag = bag_of.new_empty(0) if fast else bag_of
        bag_size = counts.new_zeros(bags) if mode == 0 else counts
        if mode != 2:
            return out, offset2bag, bag_size, bag_size.clone()
        member = (bag_of.unsqueeze(0) == arange(bags, device=indices.device).unsqueeze(1)) & valid.unsqueeze(0)
        rows = weight.detach().index_select(0, indices).unsqueeze(0)
        first = rows.masked_fill(~member.unsqueeze(-1), float("-inf")).max(1).indices
        max_indices = indices.long()[first].masked_fill(~member.any(1).unsqueeze(-1), 0)
    return out, offset2bag, bag_size, max_indices


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0, zero_infinity=False):
    """ATen's ctc_loss: reduction is its int (0 none, 1 mean, 2 sum); left out, the per-sample losses come back,
    as from PyTorch's binding (whose declared default, mean, is not what it applies)."""
    if not isinstance(reduction, int):
        raise TypeError("ctc_loss() received an invalid combination of arguments: reduction must be an int "
                        f"(0 none, 1 mean, 2 sum), got {type(reduction).__name__}")
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _REDUCTION[reduction], zero_infinity)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    return F.group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return F.rms_norm(input, normalized_shape, weight, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode, return_indices=True)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool2d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool3d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def adaptive_max_pool1d(input, output_size):
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def constant_pad_nd(input, pad, value=0):
    return F.pad(input, pad, value=value)


def channel_shuffle(input, groups):
    n, c = input.shape[:2]
    return input.reshape(n, groups, c // groups, *input.shape[2:]).transpose(1, 2).reshape(input.shape)


native_channel_shuffle = channel_shuffle


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    d = weight.dim() - 2
    if transposed:
        conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[d - 1]
        return conv(input, weight, bias, stride, padding, output_padding, groups, dilation)
    return (F.conv1d, F.conv2d, F.conv3d)[d - 1](input, weight, bias, stride, padding, dilation, groups)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1):
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=_REDUCTION[reduction],
                                              pos_weight=pos_weight)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=_REDUCTION[reduction])


def hinge_embedding_loss(input, target, margin=1.0, reduction=1):
    return F.hinge_embedding_loss(input, target, margin, reduction=_REDUCTION[reduction])


def kl_div(input, target, reduction=1, *, log_target=False):  # without F.kl_div's warning about "mean"
    loss = F.kl_div(input, target, reduction="none", log_target=log_target)
    return loss if reduction == 0 else loss.mean() if reduction == 1 else loss.sum()


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=_REDUCTION[reduction])


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_REDUCTION[reduction])


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False, reduction=1):
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=_REDUCTION[reduction])


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(output, mean, rstd): F.layer_norm's output and its statistics (not differentiable, as ATen's), kept
    with the normalized dims as 1s."""
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != tuple(normalized_shape):
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(t.shape)} and normalized_shape = {list(normalized_shape)}")
    out = F.layer_norm(input, normalized_shape, weight, bias, eps)
    x = input.detach()
    dims = list(range(input.dim() - len(normalized_shape), input.dim()))
    return out, x.mean(dims, keepdim=True), (x.var(dims, unbiased=False, keepdim=True) + eps).rsqrt()


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(output, mean, rstd), the statistics of shape [N, group] (differentiable, as ATen's)."""
    x = input.reshape(N, group, (C // group) * HxW)
    rstd = (x.var(2, unbiased=False) + eps).rsqrt()
    return F.group_norm(input, group, weight, bias, eps), x.mean(2), rstd


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(output, save_mean, save_invstd); F.batch_norm updates the running statistics in training; out of
    training the saved statistics are empty, as ATen's cpu kernel."""
    out = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        return out, input.new_empty(0), input.new_empty(0)
    dims = [0] + list(range(2, input.dim()))
    x = input.detach()
    return out, x.mean(dims), (x.var(dims, unbiased=False) + eps).rsqrt()


def _native_batch_norm_legit(input, weight, bias, *args):
    """native_batch_norm with its running statistics (input, weight, bias, running_mean, running_var, training,
    momentum, eps) or without them (ATen's no_stats overload: input, weight, bias, training, momentum, eps)."""
    running = args[:2] if len(args) == 5 else (None, None)
    training, momentum, eps = args[-3:]
    return native_batch_norm(input, weight, bias, *running, training, momentum, eps)


# torch.rnn_tanh, ..., torch.lstm_cell: the recurrent layers' ATen functions (nn/modules/rnn.py computes them)
rnn_tanh, rnn_relu, lstm, gru = (_sequence_function(m) for m in ("RNN_TANH", "RNN_RELU", "LSTM", "GRU"))
rnn_tanh_cell, rnn_relu_cell, lstm_cell, gru_cell = (_cell_function(m) for m in ("RNN_TANH", "RNN_RELU", "LSTM",
                                                                                   "GRU"))


def _scaled_by_mask(x, mask, scale):
    return x * (mask.type_as(x) * scale)


_NativeDropout = formula_node("NativeDropoutBackward0", _scaled_by_mask, ("x", "mask", "scale"))


def native_dropout(input, p, train):
    """(output, mask): in training (train None or True) a Bernoulli(1 - p) bool mask and the input scaled by
    1 / (1 - p) where it keeps (0 everywhere when p = 1); else the input and a mask of ones."""
    if train is False:
        mask, scale = input.new_ones(input.shape, dtype=_dtype.bool_), 1.0
    else:
        mask = input.new_empty(input.shape).bernoulli_(1 - p).to(_dtype.bool_)
        scale = 0.0 if p == 1 else 1 / (1 - p)
    return _NativeDropout.apply(input, mask, scale), mask


# ---- SyncBatchNorm's primitives: per-channel statistics over every dim but 1 -----------------------------------
def _cuda_only(name, input):
    """PyTorch has these on CUDA only; webtorch computes them on its GPU device and raises as PyTorch on the cpu."""
    if input.device.type != "webgpu":
        raise NotImplementedError(f"Could not run 'aten::{name}' with arguments from the "
                                  f"'{input.device.type.upper()}' backend. 'aten::{name}' is only available for the "
                                  "GPU (CUDA; webgpu in webtorch).")


def _channel(t, input):
    return t.reshape((1, -1) + (1,) * (input.dim() - 2))


def _reduce_dims(input):
    return [0] + list(range(2, input.dim()))


def batch_norm_stats(input, eps):
    """(mean, invstd) per channel: invstd = 1 / sqrt(biased variance + eps)."""
    _cuda_only("batch_norm_stats", input)
    dims = _reduce_dims(input)
    mean = input.mean(dims)
    return mean, (input - _channel(mean, input)).pow(2).mean(dims).add(eps).rsqrt()


def batch_norm_elemt(input, weight, bias, mean, invstd, eps):
    _cuda_only("batch_norm_elemt", input)
    out = (input - _channel(mean, input)) * _channel(invstd, input)
    if weight is not None:
        out = out * _channel(weight, input)
    return out + _channel(bias, input) if bias is not None else out


def batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var, momentum, eps, counts):
    """The global (mean, invstd) of per-process (mean, invstd, count) rows, as PyTorch's parallel reduction; the
    running statistics (given) move toward the global mean and unbiased variance by momentum, in place."""
    _cuda_only("batch_norm_gather_stats_with_counts", input)
    counts = counts.to(mean.dtype).unsqueeze(1)
    n = counts.sum()
    avg = (counts * mean).sum(0) / n
    var_n = (counts * (invstd.pow(-2) - eps + (mean - avg).pow(2))).sum(0)
    with grad_mode.no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(avg * momentum)
        if running_var is not None:
            running_var.mul_(1 - momentum).add_(var_n / (n - 1) * momentum)
    return avg, (var_n / n + eps).rsqrt()


def batch_norm_gather_stats(input, mean, invstd, running_mean, running_var, momentum, eps, count):
    counts = mean.new_full((mean.shape[0],), float(count))
    return batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var, momentum, eps, counts)


def batch_norm_backward_reduce(grad_out, input, mean, invstd, weight, input_g, weight_g, bias_g):
    """(sum_dy, sum_dy_xmu, grad_weight, grad_bias) per channel; None where its flag is off (grad_weight: or no
    weight)."""
    _cuda_only("batch_norm_backward_reduce", input)
    dims = _reduce_dims(input)
    sum_dy = grad_out.sum(dims)
    sum_dy_xmu = (grad_out * (input - _channel(mean, input))).sum(dims)
    return (sum_dy if input_g else None, sum_dy_xmu if input_g else None,
            sum_dy_xmu * invstd if weight_g and weight is not None else None, sum_dy if bias_g else None)


def batch_norm_backward_elemt(grad_out, input, mean, invstd, weight, sum_dy, sum_dy_xmu, count):
    """The input's gradient from the reduced sums, count the per-process element counts."""
    _cuda_only("batch_norm_backward_elemt", input)
    n = count.sum().to(sum_dy.dtype)
    inv = _channel(invstd, input)
    scale = inv * _channel(weight, input) if weight is not None else inv
    xmu = input - _channel(mean, input)
    return (grad_out - _channel(sum_dy / n, input) - xmu * inv.pow(2) * _channel(sum_dy_xmu / n, input)) * scale


def batch_norm_update_stats(input, running_mean, running_var, momentum):
    """(mean, biased variance) per channel, the running statistics (given) updated in place by momentum with the
    unbiased variance; on every device (PyTorch has it on the cpu too)."""
    for t in (running_mean, running_var):
        if t is not None and t.dtype is not input.dtype:
            raise RuntimeError(f"mixed dtype (CPU): expect parameter to have scalar type of "
                               f"{name_of(input.dtype)}")
    dims = _reduce_dims(input)
    mean = input.mean(dims)
    var = input.var(dims, unbiased=False)
    n = input.numel() // input.shape[1]
    with grad_mode.no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean * momentum)
        if running_var is not None:
            running_var.mul_(1 - momentum).add_(var * (n / (n - 1)) * momentum)
    return mean, var
