import math

import webtorch as torch

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform
from .utils import _wrapped_property

__all__ = []


def _half_doc(base, adjective, sample):
    """The docstring of Half<base>: |X| for X ~ <base>(0, scale)."""
    return f"""
    Creates a half-{adjective} distribution parameterized by `scale` where::

        X ~ {base}(0, scale)
        Y = |X| ~ Half{base}(scale)

    Example::

        >>> # xdoctest: +IGNORE_WANT("non-deterministic")
        >>> m = Half{base}(torch.tensor([1.0]))
        >>> m.sample()  # half-{adjective.lower()} distributed with scale=1
        tensor([ {sample}])

    Args:
        scale (float or Tensor): scale of the full {base} distribution
    """


class _HalfDistribution(TransformedDistribution):
    """|X| for X ~ ``_base``(0, scale), a distribution symmetric about 0 (``base_dist``): the members
    HalfNormal and HalfCauchy share. Each names its base distribution, and the adjective and sample
    value of its docstring, as keywords of its class statement."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    scale = _wrapped_property("base_dist", "scale")

    def __init_subclass__(cls, base=None, adjective=None, sample=None, **kwargs):
        super().__init_subclass__(**kwargs)
        if base is not None:
            cls._base = base
            cls.__doc__ = _half_doc(base.__name__, adjective, sample)

    def __init__(self, scale, validate_args=None):
        super().__init__(self._base(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    @property
    def mode(self):
        return torch.zeros_like(self.scale)

    def _log_prob_of_abs(self, value):
        return torch.where(value >= 0, self.base_dist.log_prob(value) + math.log(2), -math.inf)

    def cdf(self, value):
        self._maybe_validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
