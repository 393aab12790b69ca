import math

from ._half import _half_doc, _HalfDistribution
from .distribution import _ExpandArgs
from .normal import Normal
from .transforms import AbsTransform

__all__ = ["HalfNormal"]


class HalfNormal(_ExpandArgs, _HalfDistribution):
    __doc__ = _half_doc("Normal", "normal", "0.1046")

    def __init__(self, scale, validate_args=None):
        super().__init__(Normal(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._log_prob_of_abs(value)
