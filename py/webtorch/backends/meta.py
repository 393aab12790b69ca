"""The meta device's backend: tensors with shapes, dtypes and strides and no data (PyTorch's "meta"), so code that
builds a model there and loads weights afterwards (transformers' from_pretrained) runs. Every compute primitive
is a no-op (the front end already did shapes, dtypes and errors); reading values raises PyTorch's errors."""
from .base import Backend

NO_DATA = "Cannot copy out of meta tensor; no data!"


class MetaBackend(Backend):
    name = "meta"

    def empty(self, numel, dtype):
        return None

    def from_flat(self, values, dtype):
        return None

    def to_flat(self, view):
        raise NotImplementedError(NO_DATA)

    to_numpy = to_flat

    def reinterpret(self, buf, dtype):
        return None

    def _no_data(self, *args, **kwargs):
        """A compute primitive: the output's shape and dtype are all a meta tensor has, set by the front end."""

    ewise = reduce = matmul = take = put = scan = sort = arange = fft = random = _no_data
