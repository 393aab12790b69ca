import math

from ._half import _HalfDistribution
from .distribution import _ExpandArgs
from .normal import Normal

__all__ = ["HalfNormal"]


class HalfNormal(_ExpandArgs, _HalfDistribution, base=Normal, adjective="normal", sample="0.1046"):
    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def log_prob(self, value):
        self._maybe_validate_sample(value)
        return self._log_prob_of_abs(value)
