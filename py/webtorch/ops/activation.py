"""nn.functional's element-wise activations, each declared once (`activation`: a graph node named as
PyTorch's, whose formula is a row in autograd/derivatives.py), and PyTorch's torch.<name> /
Tensor.<name> forms of those it has (selu, celu, threshold, hardshrink, rrelu, prelu and their
in-place forms) declared in the registry, hence routed through __torch_function__ as every op.
nn.functional takes the functions here (nn/_functional/activation.py)."""
import math

from .. import _dtype
from ..autograd import grad_mode
from . import _cpu_random, pointwise as _pw
from ._common import (
    check_leaf_inplace as _check_leaf_inplace,
    dispatching,
    inplace_result as _inplace_result,
    name_of,
    recording as _recording,
    scalar_to as _scalar_to,
)
from ._creation import ones_like as _ones_like, rand as _rand
from .registry import register


def _act(input, inplace, fn):
    """fn(input), written into input when inplace (computed from a copy when the graph is recorded, so
    that the values fn's backward saved are not the ones being overwritten)."""
    if not inplace:
        return fn(input)
    if input.requires_grad and grad_mode.is_grad_enabled():
        _check_leaf_inplace(input)
        return _inplace_result(input, fn(input.clone()))  # input's history becomes fn's node
    return input.copy_(fn(input))


def relu(input, inplace=False):
    return input.relu_() if inplace else input.relu()


def relu_(input):
    return input.relu_()


def activation(name, fn, inplace_name=None, kernel=None):
    """`call(input, *params, inplace=False)`: the element-wise `fn(x, *params)` recorded as one node
    `name` named as PyTorch's (`inplace_name` for the in-place form, where PyTorch numbers it apart),
    whose formula is in `autograd/derivatives.py` — the same kind of node as the element-wise ops'
    (`ops/pointwise.py`, `elementwise_node`); written into input when inplace. kernel: PyTorch's CPU
    kernel, named in its error for integer and bool input (None: integers are taken)."""
    params = fn.__code__.co_varnames[1:fn.__code__.co_argcount]
    out_of_place = _pw.elementwise_node(name, fn, params)
    in_place = _pw.elementwise_node(inplace_name, fn, params) if inplace_name else out_of_place

    def call(input, *params, inplace=False):
        if kernel is not None and not input.dtype.is_floating_point:
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{name_of(input.dtype)}'")
        F = in_place if inplace else out_of_place
        return _act(input, inplace, lambda x: F.apply(x, x.dtype, *params) if _recording(x) else
                    _pw._unary_kernel(None, fn, x, x.dtype, x.dtype, params))
    return call


_threshold = activation("ThresholdBackward0", lambda x, threshold, value: _pw.where(x > threshold, x, value))


def threshold(input, threshold, value, inplace=False):
    if input.dtype is _dtype.bool_:
        raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool'")
    return _threshold(input, _scalar_to(threshold, input.dtype), _scalar_to(value, input.dtype), inplace=inplace)


_threshold_f = threshold  # torch.threshold's parameter hides the function


def threshold_(input, threshold, value):
    return _threshold(input, threshold, value, inplace=True)


_hardtanh = activation("HardtanhBackward0", lambda x, min_val, max_val: x.clamp(min_val, max_val))


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.dtype is _dtype.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if input.dtype is _dtype.uint8 and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    # the bounds in input's dtype (truncated for integers, as PyTorch's): relu6 of ints stays ints
    return _hardtanh(input, _scalar_to(min_val, input.dtype), _scalar_to(max_val, input.dtype), inplace=inplace)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, True)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


_leaky_relu = activation("LeakyReluBackward0", lambda x, negative_slope: _pw.where(x > 0, x, x * negative_slope),
                          inplace_name="LeakyReluBackward1", kernel="leaky_relu_cpu")


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _leaky_relu(input, negative_slope, inplace=inplace)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, True)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)


def _gelu_fn(x, approximate, half):
    if approximate == "tanh":
        inner = (x + 0.044715 * x * x * x) * _SQRT_2_OVER_PI
        return 0.5 * x * (1.0 + inner.tanh())
    h = 0.5 * x  # PyTorch's kernels: h * erf + h (+0.0 at -0.0 and where erf is -1); float16's h * (1 + erf)
    return h * ((x * _INV_SQRT_2).erf() + 1.0) if half else h * (x * _INV_SQRT_2).erf() + h


_gelu = activation("GeluBackward0", _gelu_fn, kernel="GeluKernelImpl")


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _gelu(input, approximate, input.dtype.itemsize == 2 and input.dtype.is_floating_point)


_silu = activation("SiluBackward0", lambda x: x * x.sigmoid(), kernel="silu_cpu")


def silu(input, inplace=False):
    return _silu(input, inplace=inplace)


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


_hardswish = activation("HardswishBackward0", lambda x: x * (x + 3.0).clamp(0.0, 6.0) / 6.0,
                         kernel="hardswish_cpu")


def hardswish(input, inplace=False):
    return _hardswish(input, inplace=inplace)


_hardsigmoid = activation("HardsigmoidBackward0", lambda x: (x + 3.0).clamp(0.0, 6.0) / 6.0,
                           kernel="hardsigmoid_cpu")


def hardsigmoid(input, inplace=False):
    return _hardsigmoid(input, inplace=inplace)


# x <= 0 takes expm1(x) * alpha (-0.0 stays -0.0); the gradients are formulas (autograd/derivatives.py)
_elu = activation("EluBackward0", lambda x, alpha, scale: _pw.where(x > 0, x, x.expm1() * alpha) * scale
                   if scale != 1 else _pw.where(x > 0, x, x.expm1() * alpha), inplace_name="EluBackward1",
                   kernel="elu_cpu")


def elu(input, alpha=1.0, inplace=False):
    return _elu(input, alpha, 1.0, inplace=inplace)


def elu_(input, alpha=1.0):
    return elu(input, alpha, True)


_celu = activation("CeluBackward0", lambda x, alpha: _pw.where(x > 0, x, (x / alpha).expm1() * alpha),
                    inplace_name="CeluBackward1", kernel="elu_cpu")


def celu(input, alpha=1.0, inplace=False):
    return _celu(input, alpha, inplace=inplace)


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def selu(input, inplace=False):
    return _elu(input, _SELU_ALPHA, _SELU_SCALE, inplace=inplace)


def _softplus_fn(x, beta, threshold):
    bx = x * beta
    soft = bx.clamp_max(threshold).exp().log1p() / beta
    return _pw.where(bx > threshold, x, soft)


_softplus = activation("SoftplusBackward0", _softplus_fn, kernel="softplus_cpu")


def softplus(input, beta=1.0, threshold=20.0):
    return _softplus(input, beta, threshold)


_mish = activation("MishBackward0", lambda x: x * _softplus_fn(x, 1.0, 20.0).tanh(), kernel="mish_cpu")


def mish(input, inplace=False):
    return _mish(input, inplace=inplace)


def softsign(input):
    return input / (1 + input.abs())


# log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|))
_logsigmoid = activation("LogSigmoidBackward0", lambda x: x.clamp_max(0.0) - (-x.abs()).exp().log1p(),
                          kernel="log_sigmoid_cpu")


def logsigmoid(input):
    return _logsigmoid(input)


def tanhshrink(input):
    return input - input.tanh()


# PyTorch's kernel: x * 0 inside [-lambd, lambd] (-0.0 stays, NaN passes)
_softshrink = activation("SoftshrinkBackward0", lambda x, lambd: _pw.where(
    x > lambd, x - lambd, _pw.where(x < -lambd, x + lambd, x * 0)), kernel="softshrink_check")


def softshrink(input, lambd=0.5):
    if lambd < 0:
        raise RuntimeError(f"lambda must be in range [0, +inf) for input dtype {input.dtype}, but found {lambd}")
    return _softshrink(input, lambd)


_hardshrink = activation("HardshrinkBackward0", lambda x, lambd: _pw.where((x >= -lambd) & (x <= lambd), 0.0, x),
                          kernel="hardshrink_cpu")


def hardshrink(input, lambd=0.5):
    return _hardshrink(input, lambd)


def glu(input, dim=-1):
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def prelu(input, weight):
    if input.dim() == 0 and weight.numel() != 1:
        raise RuntimeError("Not allow zero-dim input tensor.")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    w = weight.reshape(()) if weight.numel() == 1 else weight
    if weight.numel() != 1 and input.dim() >= 2:
        w = weight.reshape((1, -1) + (1,) * (input.dim() - 2))
    return _pw.where(input > 0, input, input * w)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    return _rrelu(input, lower, upper, training, inplace)


def _rrelu(input, lower, upper, training, inplace, generator=None):
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if training and input.device.type == "cpu":
        # PyTorch's CPU kernel: a uniform_real_distribution<double>(lower, upper) draw for each element <= 0
        neg = input.detach() <= 0
        opmath = _dtype.float64 if input.dtype is _dtype.float64 else _dtype.float32
        lo, hi = (_cpu_random.stored(v, opmath) for v in (lower, upper))
        gen = _cpu_random.generator(generator)
        a = _ones_like(input)
        a[neg] = _cpu_random.uniform(gen, int(neg.sum()), _dtype.float64, lo, hi).to(input.dtype)
        return _act(input, inplace, lambda x: _pw.where(neg, x * a, x))
    if training:
        a = _rand(input.shape, generator=generator, dtype=input.dtype, device=input.device) * (upper - lower) + lower
        return _act(input, inplace, lambda x: _pw.where(x >= 0, x, x * a))
    return leaky_relu(input, (lower + upper) / 2, inplace)


# nn.functional's forms, routed here so that calls between them (relu6 -> hardtanh) dispatch
FUNCTIONAL = (
    "relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "gelu", "silu", "sigmoid", "tanh", "elu", "elu_",
    "selu", "celu", "hardswish", "hardsigmoid", "hardtanh", "hardtanh_", "mish", "softplus", "softsign",
    "logsigmoid", "tanhshrink", "softshrink", "hardshrink", "glu", "prelu", "threshold", "threshold_", "rrelu",
)
dispatching(globals(), FUNCTIONAL)


# PyTorch's torch.<name> forms (no `inplace` flag: the in-place form is <name>_) and Tensor methods
register(lambda input: selu(input), "selu", method=False)
register(lambda input: selu(input, True), "selu_", method=False)
register(lambda input, alpha=1.0: celu(input, alpha), "celu", method=False)
register(lambda input, alpha=1.0: celu(input, alpha, True), "celu_", method=False)
register(lambda input, threshold, value: _threshold_f(input, threshold, value), "threshold", method=False)
register(lambda input, threshold, value: threshold_(input, threshold, value), "threshold_", method=False)
register(lambda input, lambd=0.5: hardshrink(input, lambd), "hardshrink")
register(lambda input, weight: prelu(input, weight), "prelu")
register(lambda input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None:
         _rrelu(input, lower, upper, training, False, generator), "rrelu", method=False)
register(lambda input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None:
         _rrelu(input, lower, upper, training, True, generator), "rrelu_", method=False)
