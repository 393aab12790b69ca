"""Dropout family (identity in eval mode)."""
from .. import functional as F
from ._dims import per_dim
from .module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class _DropoutNd(Module):
    __constants__ = ["p", "inplace"]

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)


def _channel_dropout(self, input):
    """Dropout1d/2d/3d's forward: whole channels of `_n` spatial dims, by F.dropout{_n}d."""
    dropout = (F.dropout1d, F.dropout2d, F.dropout3d)[self._n - 1]
    return dropout(input, self.p, self.training, self.inplace)


Dropout1d, Dropout2d, Dropout3d = per_dim("Dropout{}d", _DropoutNd, __name__, forward=_channel_dropout)


class AlphaDropout(_DropoutNd):
    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)
