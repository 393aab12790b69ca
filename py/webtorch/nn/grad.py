"""torch.nn.grad: a convolution's gradient with respect to its input or its weight, given the gradient of its
output. A convolution is linear in each, so each is the gradient of the convolution of a zero tensor of that
shape: webtorch's autograd over conv1d/2d/3d (differentiable again when an argument requires grad)."""
from ..autograd import grad as _grad, grad_mode
from ..ops._creation import zeros as _zeros
from ._functional.conv import conv1d, conv2d, conv3d

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]

_CONV = {1: conv1d, 2: conv2d, 3: conv3d}


def _gradient(n, input, weight, grad_output, wrt, stride, padding, dilation, groups):
    """The gradient of conv{n}d(input, weight) with respect to argument `wrt` (0: input, 1: weight), that argument
    given as its shape."""
    args = [input, weight]
    args[wrt] = _zeros(tuple(args[wrt]), dtype=grad_output.dtype, device=grad_output.device, requires_grad=True)
    higher = grad_mode.is_grad_enabled() and any(a.requires_grad for a in (input, weight, grad_output)
                                                 if hasattr(a, "requires_grad"))
    with grad_mode.enable_grad():
        out = _CONV[n](args[0], args[1], None, stride, padding, dilation, groups)
        return _grad(out, args[wrt], grad_output, create_graph=higher)[0]


def _input_gradient(n):
    def conv_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
        return _gradient(n, input_size, weight, grad_output, 0, stride, padding, dilation, groups)
    conv_input.__name__ = conv_input.__qualname__ = f"conv{n}d_input"
    return conv_input


def _weight_gradient(n):
    def conv_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
        return _gradient(n, input, weight_size, grad_output, 1, stride, padding, dilation, groups)
    conv_weight.__name__ = conv_weight.__qualname__ = f"conv{n}d_weight"
    return conv_weight


conv1d_input, conv2d_input, conv3d_input = (_input_gradient(n) for n in (1, 2, 3))
conv1d_weight, conv2d_weight, conv3d_weight = (_weight_gradient(n) for n in (1, 2, 3))
