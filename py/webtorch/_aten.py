"""torch.ops.aten (webtorch.ops.aten): ATen's operators that code and PyTorch's own tests call by their ATen
name, each an OpOverloadPacket as PyTorch's: callable, with its overloads as attributes
(`aten.slice.Tensor`, `aten._upsample_bilinear2d_aa.vec`). Those torch also has at top level are the same
functions (`aten._safe_softmax` is torch._safe_softmax); the rest are here: slice, native_dropout_backward,
max_pool2d_with_indices_backward, _batch_norm_with_update, _upsample_{bilinear,bicubic,lanczos}2d_aa. Loaded on
first use of webtorch.ops.aten (it needs nn)."""
import builtins

from . import _nn_aliases, ops
from ._dtype import uint8
from .nn._functional.resampling import _interpolate_aa
from .ops._common import formula_node

_ops = ops.registry.FUNCTIONS


class OpOverloadPacket:
    """An ATen operator: called as its default overload; `.default` and its other overloads by name."""

    def __init__(self, name, fn, **overloads):
        self.__name__, self._fn, self._overloads = name, fn, {"default": fn, **overloads}

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return self._overloads[name]
        except KeyError:
            raise AttributeError(f"'_OpNamespace' 'aten.{self.__name__}' object has no attribute '{name}'") from None

    def overloads(self):
        return list(self._overloads)

    def __repr__(self):
        return f"aten.{self.__name__}"


def slice(self, dim=0, start=None, end=None, step=1):
    """self narrowed to start:end:step along dim (a view), as Python's slice bounds them."""
    d = dim % self.dim() if self.dim() else dim
    return self[(builtins.slice(None),) * d + (builtins.slice(start, end, step),)]


def _max_pool2d_backward_kernel(grad_output, x, kernel_size, stride, padding, dilation, ceil_mode, indices):
    """max_pool2d's gradient: each output's gradient added at the input position its index names."""
    N = x.shape[:-2]
    flat = grad_output.new_zeros(N + (x.shape[-2] * x.shape[-1],))
    flat = flat.scatter_add(-1, indices.flatten(-2), grad_output.flatten(-2))
    return flat.reshape(x.shape)


_MaxPool2dBackward = formula_node("MaxPool2DWithIndicesBackwardBackward0", _max_pool2d_backward_kernel,
                                  ("grad_output", "x", "kernel_size", "stride", "padding", "dilation", "ceil_mode",
                                   "indices"))


def max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    return _MaxPool2dBackward.apply(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices)


def _batch_norm_with_update(input, weight, bias, running_mean, running_var, momentum, eps):
    """(output, save_mean, save_rstd, reserve): batch norm in training, the running statistics updated; the
    reserve is cuDNN's workspace, empty here as on PyTorch's cpu."""
    out = _nn_aliases.native_batch_norm(input, weight, bias, running_mean, running_var, True, momentum, eps)
    return out + (input.new_empty(0, dtype=uint8),)


def _upsample_aa_packet(mode):
    """aten._upsample_{mode}2d_aa: antialiased interpolation (F.interpolate(..., antialias=True)'s), .default
    (output_size, align_corners, scales_h, scales_w) and .vec (output_size or None, align_corners, scale_factors);
    the packet calls the overload its arguments name."""
    def default(input, output_size, align_corners, scales_h=None, scales_w=None):
        return _interpolate_aa(input, list(output_size), [scales_h, scales_w], align_corners, mode)

    def vec(input, output_size, align_corners, scale_factors):
        sfs = [None, None] if scale_factors is None else list(scale_factors)
        if output_size is None:
            output_size = [int(n * f) for n, f in zip(input.shape[2:], sfs)]
        return _interpolate_aa(input, list(output_size), sfs, align_corners, mode)

    def packet(input, output_size, align_corners, *args, **kwargs):
        is_vec = "scale_factors" in kwargs or output_size is None or (args and isinstance(args[0], (list, tuple)))
        return (vec if is_vec else default)(input, output_size, align_corners, *args, **kwargs)
    return OpOverloadPacket(f"_upsample_{mode}2d_aa", packet, default=default, vec=vec)


def _native_batch_norm_legit_no_stats(input, weight, bias, training, momentum, eps):
    return _nn_aliases._native_batch_norm_legit(input, weight, bias, training, momentum, eps)


_PACKETS = [
    OpOverloadPacket("slice", slice, Tensor=slice),
    OpOverloadPacket("native_dropout_backward", _nn_aliases._scaled_by_mask),  # grad_output * (mask * scale)
    OpOverloadPacket("max_pool2d_with_indices_backward", max_pool2d_with_indices_backward),
    OpOverloadPacket("_batch_norm_with_update", _batch_norm_with_update),
    *(_upsample_aa_packet(mode) for mode in ("bilinear", "bicubic", "lanczos")),
    OpOverloadPacket("_native_batch_norm_legit", _nn_aliases._native_batch_norm_legit,
                     no_stats=_native_batch_norm_legit_no_stats),
    *(OpOverloadPacket(n, _ops[n]) for n in ("_softmax_backward_data", "_safe_softmax", "_chunk_cat",
                                               "_unsafe_masked_index", "_unsafe_masked_index_put_accumulate",
                                               "histogramdd", "segment_reduce")),
]
globals().update({p.__name__: p for p in _PACKETS})
__all__ = [p.__name__ for p in _PACKETS]
