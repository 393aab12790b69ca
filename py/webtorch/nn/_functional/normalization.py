"""torch.nn.functional's normalization layers."""
import math

from ... import finfo
from ..._tensor import _wrap_dim
from ...autograd import grad_mode
from ...ops import pointwise as _pw, reduction as _red
from ...ops._common import composite_node, dispatching
from .padding import _pad_constant
from .pooling import avg_pool2d

# a graph node named as PyTorch's for a layer computed by other ops (its gradient is theirs)
_node = composite_node

__all__ = ["batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm", "local_response_norm", "normalize"]


# ---- normalization ---------------------------------------------------------------------------
def _bshape(t, ndim):
    return t.reshape((1, -1) + (1,) * (ndim - 2))


def _opmath(input):
    """float16 / bfloat16 input in float32: PyTorch's normalization kernels compute there and round once."""
    return input.float() if input.dtype.itemsize == 2 and input.is_floating_point() else input


def _rounded(y, input, x):
    """y back in input's dtype when it was computed in float32 (x, the input `_opmath` gave)."""
    return y if x is input else y.to(input.dtype)


def _channel_affine(y, weight, bias):
    """y * weight + bias, both per channel (dim 1) and optional."""
    if weight is not None:
        y = y * _bshape(weight, y.dim())
    if bias is not None:
        y = y + _bshape(bias, y.dim())
    return y


def _verify_batch_size(size):
    if math.prod(size[:1] + size[2:]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def _verify_spatial_size(size):
    if math.prod(size[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {size}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-5):
    nd = input.dim()
    if training:
        n = math.prod(input.shape[:1] + input.shape[2:])
        _verify_batch_size(input.shape)
    if nd < 2:  # no channel dim: PyTorch's dim 1 lookup fails, unless there is nothing to normalize
        if input.numel() == 0:
            return input.clone()
        _wrap_dim(1, nd)
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    update = None
    if training and (running_mean is not None or running_var is not None):
        update = _RunningStatsUpdate(running_mean, running_var, momentum, n)
    return _BatchNorm.call(input, weight, bias, running_mean, running_var, training, eps, update)


class _RunningStatsUpdate:
    """Folds a batch's statistics into the running ones, once: batch norm's only side effect (a
    replay of the node for double backward calls it again and nothing happens). It runs as soon as
    the statistics exist, before the normalization, which lets the webgpu backend fuse more."""

    def __init__(self, running_mean, running_var, momentum, n):
        self.args = (running_mean, running_var, momentum, n)

    def __call__(self, mean, var):
        if self.args is None:
            return
        running_mean, running_var, momentum, n = self.args
        self.args = None
        with grad_mode.no_grad():
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_(mean.detach() * momentum)
            if running_var is not None:
                running_var.mul_(1 - momentum).add_(var.detach() * (momentum * n / (n - 1)))


def _batch_norm_impl(input, weight, bias, running_mean, running_var, training, eps, update):
    nd = input.dim()
    x = _opmath(input)
    if training:
        dims = [0] + list(range(2, nd))
        mean = x.mean(dims)
        var = x.var(dims, unbiased=False)
        if update is not None:
            update(mean, var)
    else:
        mean, var = running_mean, running_var
    y = (x - _bshape(mean, nd)) * _bshape((var + eps).rsqrt(), nd)
    return _rounded(_channel_affine(y, weight, bias), input, x)


# the running statistics are inputs PyTorch's node does not differentiate
_BatchNorm = _node("NativeBatchNormBackward0", _batch_norm_impl, optional=(1, 2), no_edges=(3, 4))


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    nd = input.dim()
    N, C = input.shape[0], input.shape[1]
    if use_input_stats:
        _verify_spatial_size(input.shape)
    x = _opmath(input)
    if use_input_stats:
        dims = list(range(2, nd))
        mean = x.mean(dims, keepdim=True)
        var = x.var(dims, unbiased=False, keepdim=True)
        if running_mean is not None:
            n = input[0, 0].numel()
            with grad_mode.no_grad():
                running_mean.mul_(1 - momentum).add_(mean.detach().reshape(N, C).mean(0) * momentum)
                running_var.mul_(1 - momentum).add_(var.detach().reshape(N, C).mean(0) * (momentum * n / (n - 1)))
        y = (x - mean) * (var + eps).rsqrt()
    else:
        y = (x - _bshape(running_mean, nd)) * _bshape((running_var + eps).rsqrt(), nd)
    return _rounded(_channel_affine(y, weight, bias), input, x)


def _normalized_shape(normalized_shape):
    """layer_norm's and rms_norm's normalized_shape as a tuple (an int is one dimension), never empty."""
    shape = tuple(normalized_shape) if isinstance(normalized_shape, (list, tuple)) else (int(normalized_shape),)
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    return shape


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    normalized_shape = _normalized_shape(normalized_shape)
    n = len(normalized_shape)
    if tuple(input.shape[input.dim() - n:]) != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*, {', '.join(str(s) for s in normalized_shape)}], but got input of size"
                           f"{input.shape}")
    return _LayerNorm.call(input, normalized_shape, weight, bias, eps)


def _layer_norm_impl(input, normalized_shape, weight, bias, eps):
    dims = list(range(-len(normalized_shape), 0))
    x = _opmath(input)
    mean = x.mean(dims, keepdim=True)
    var = x.var(dims, unbiased=False, keepdim=True)
    y = (x - mean) * (var + eps).rsqrt()
    if weight is not None:
        y = y * weight
    y = y + (0.0 if bias is None else bias)  # PyTorch's kernel adds a missing bias as 0: no -0.0
    return _rounded(y, input, x)


_LayerNorm = _node("NativeLayerNormBackward0", _layer_norm_impl, optional=(2, 3))


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    C = input.shape[1]
    if C % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {input.shape} and num_groups={num_groups}")
    return _GroupNorm.call(input, weight, bias, num_groups, eps)


def _group_norm_impl(input, weight, bias, num_groups, eps):
    x = _opmath(input)
    g = x.reshape(input.shape[0], num_groups, input.numel() // max(input.shape[0] * num_groups, 1))
    mean = g.mean(-1, keepdim=True)
    var = g.var(-1, unbiased=False, keepdim=True)
    y = ((g - mean) * (var + eps).rsqrt()).reshape(input.shape)
    return _rounded(_channel_affine(y, weight, bias), input, x)


_GroupNorm = _node("NativeGroupNormBackward0", _group_norm_impl, optional=(1, 2))


def rms_norm(input, normalized_shape, weight=None, eps=None):
    normalized_shape = _normalized_shape(normalized_shape)
    n = len(normalized_shape)
    if tuple(input.shape[input.dim() - n:]) != normalized_shape or input.dim() < n:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, normalized_shape))}], but got input of size{input.shape}")
    if eps is None:
        eps = finfo(input.dtype).eps
    dims = list(range(-n, 0))
    y = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    return y * weight if weight is not None else y


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    nd = input.dim()
    div = (input * input).unsqueeze(1)
    if nd == 3:
        div = _pad_constant(div, (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.shape
        div = div.reshape(sizes[0], 1, sizes[1], sizes[2], -1)
        div = _pad_constant(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        N, _, Cp, H, R = div.shape
        div = avg_pool2d(div.reshape(N, Cp, H * R).unsqueeze(1), (size, 1), stride=1).squeeze(1)
        div = div.reshape(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    denom = _red.norm(input, p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return _pw.div(input, denom, out=out)


dispatching(globals(), __all__)
