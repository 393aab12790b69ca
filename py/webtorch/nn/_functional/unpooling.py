"""torch.nn.functional's max_unpool1d/2d/3d: each pooled value written back at its index (a scatter
into zeros, whose gradient is the gather at the same indices)."""
import math

from ...ops._common import composite_node, dispatching
from ...ops._creation import zeros
from ._util import _pair, _single, _triple

__all__ = ["max_unpool1d", "max_unpool2d", "max_unpool3d"]


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    default_size = [(input.shape[-len(kernel_size) + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d]
                    for d in range(len(kernel_size))]
    if output_size is None:
        return default_size
    output_size = list(output_size)
    if len(output_size) == len(kernel_size) + 2:
        output_size = output_size[2:]
    if len(output_size) != len(kernel_size):
        raise ValueError(f"output_size should be a sequence containing {len(kernel_size)} or {len(kernel_size) + 2} "
                         f"elements, but it has a length of '{len(output_size)}'")
    for d in range(len(kernel_size)):
        min_size, max_size = default_size[d] - stride[d], default_size[d] + stride[d]
        if not (min_size < output_size[d] < max_size):
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {min_size} and '
                             f'{max_size})')
    return output_size


def _unpool_impl(input, indices, output_size):
    n = len(output_size)
    lead = tuple(input.shape[:input.dim() - n])
    out = zeros(lead + (math.prod(output_size),), dtype=input.dtype, device=input.device)
    out = out.scatter(len(lead), indices.reshape(lead + (-1,)), input.reshape(lead + (-1,)))
    return out.reshape(lead + tuple(output_size))


_MaxUnpool2d = composite_node("MaxUnpool2DBackward0", _unpool_impl)
_MaxUnpool3d = composite_node("MaxUnpool3DBackward0", _unpool_impl)


def _unpool(node, input, indices, output_size):
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")
    return node.call(input, indices, list(output_size))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    kernel_size = _single(kernel_size)
    stride = _single(stride) if stride is not None else kernel_size
    padding = _single(padding)
    output_size = list(_unpool_output_size(input, kernel_size, stride, padding, output_size)) + [1]
    return _unpool(_MaxUnpool2d, input.unsqueeze(-1), indices.unsqueeze(-1), output_size).squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    kernel_size = _pair(kernel_size)
    stride = _pair(stride) if stride is not None else kernel_size
    output_size = _unpool_output_size(input, kernel_size, stride, _pair(padding), output_size)
    return _unpool(_MaxUnpool2d, input, indices, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    kernel_size = _triple(kernel_size)
    stride = _triple(stride) if stride is not None else kernel_size
    output_size = _unpool_output_size(input, kernel_size, stride, _triple(padding), output_size)
    return _unpool(_MaxUnpool3d, input, indices, output_size)


dispatching(globals(), __all__)
