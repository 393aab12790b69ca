import math

import webtorch as torch

from . import constraints
from .transformed_distribution import TransformedDistribution
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
    """|X| for X of a distribution symmetric about 0 with a ``scale`` (``base_dist``): the members
    HalfNormal and HalfCauchy share."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    scale = _wrapped_property("base_dist", "scale")

    @property
    def mode(self):
        return torch.zeros_like(self.scale)

    def _log_prob_of_abs(self, value):
        return torch.where(value >= 0, self.base_dist.log_prob(value) + math.log(2), -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
