"""LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm, CrossMapLRN2d."""
from .. import functional as F, init
from ..parameter import Parameter
from ._functions import CrossMapLRN2d as _cross_map_lrn2d
from .linear import _empty
from .module import Module, _keep

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm", "CrossMapLRN2d"]


def _affine_parameters(module, affine, bias, shape, device, dtype):
    """weight and bias of `shape` (uninitialized), registered as None where absent."""
    module.register_parameter("weight", Parameter(_empty(shape, device=device, dtype=dtype)) if affine else None)
    module.register_parameter("bias", Parameter(_empty(shape, device=device, dtype=dtype)) if affine and bias
                              else None)


def _reset_affine(module):
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


def _normalized_shape(module, normalized_shape, eps, elementwise_affine):
    """LayerNorm's and RMSNorm's normalized_shape (an int is one dimension), eps and elementwise_affine."""
    module.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    module.eps = eps
    module.elementwise_affine = elementwise_affine


class _AffineNorm(Module):
    """LayerNorm and GroupNorm: weight ones, bias zeros; extra_repr is _repr's fields and the bias flag."""
    _repr = ""

    def reset_parameters(self):
        _reset_affine(self)

    def extra_repr(self):
        return self._repr.format(**self.__dict__) + f", bias={self.bias is not None}"


class LayerNorm(_AffineNorm):
    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]
    _repr = "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}"

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        _normalized_shape(self, normalized_shape, eps, elementwise_affine)
        _affine_parameters(self, elementwise_affine, bias, self.normalized_shape, device, dtype)
        self.reset_parameters()

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)


class GroupNorm(_AffineNorm):
    __constants__ = ["num_groups", "num_channels", "eps", "affine"]
    _repr = "{num_groups}, {num_channels}, eps={eps}, affine={affine}"

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        _keep(self, num_groups=num_groups, num_channels=num_channels, eps=eps, affine=affine)
        _affine_parameters(self, affine, bias, (num_channels,), device, dtype)
        self.reset_parameters()

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)


class RMSNorm(Module):
    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        _normalized_shape(self, normalized_shape, eps, elementwise_affine)
        self.register_parameter("weight", Parameter(_empty(self.normalized_shape, device=device, dtype=dtype))
                                if elementwise_affine else None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(**self.__dict__)


class _ResponseNorm(Module):
    def __init__(self, size, alpha, beta, k):
        super().__init__()
        _keep(self, size=size, alpha=alpha, beta=beta, k=k)

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


class LocalResponseNorm(_ResponseNorm):
    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__(size, alpha, beta, k)

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)


class CrossMapLRN2d(_ResponseNorm):
    """Lua Torch's cross-channel local response normalization of a 4-D input (see nn/modules/_functions.py)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__(size, alpha, beta, k)

    def forward(self, input):
        return _cross_map_lrn2d.apply(input, self.size, self.alpha, self.beta, self.k)
