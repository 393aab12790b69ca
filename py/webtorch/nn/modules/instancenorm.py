"""InstanceNorm1d/2d/3d: per-sample, per-channel statistics (running statistics only when tracked)."""
from .. import functional as F
from .batchnorm import _LazyNormBase, _NormBase
from .lazy import _lazy_classes

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]


class _InstanceNorm(_NormBase):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

    def _get_no_batch_dim(self):
        raise NotImplementedError

    def forward(self, input):
        unb = input.dim() == self._get_no_batch_dim()
        x = input.unsqueeze(0) if unb else input
        if x.shape[1] != self.num_features and self.affine:
            raise ValueError(f"expected input's size at dim=1 to match num_features ({self.num_features}), but "
                             f"got: {x.shape[1]}.")
        use_stats = self.training or not self.track_running_stats
        y = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias, use_stats,
                            self.momentum if self.momentum is not None else 0.0, self.eps)
        return y.squeeze(0) if unb else y


class InstanceNorm1d(_InstanceNorm):
    def _get_no_batch_dim(self):
        return 2


class InstanceNorm2d(_InstanceNorm):
    def _get_no_batch_dim(self):
        return 3


class InstanceNorm3d(_InstanceNorm):
    def _get_no_batch_dim(self):
        return 4


LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d = _lazy_classes(
    _LazyNormBase, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d)
