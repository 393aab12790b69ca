import math

import webtorch as torch

from ._half import _HalfDistribution
from .cauchy import Cauchy
from .distribution import _ExpandArgs
from .utils import _wrapped_property

__all__ = ["HalfCauchy"]


class HalfCauchy(_ExpandArgs, _HalfDistribution, base=Cauchy, adjective="Cauchy", sample="2.3214"):
    @property
    def mean(self):
        return torch.full(self._extended_shape(), math.inf, dtype=self.scale.dtype, device=self.scale.device)

    variance = _wrapped_property("base_dist", "variance")

    def log_prob(self, value):
        self._maybe_validate_sample(value)
        value = torch.as_tensor(value, dtype=self.base_dist.scale.dtype, device=self.base_dist.scale.device)
        return self._log_prob_of_abs(value)
