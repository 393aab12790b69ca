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

    def ewise(self, op, out, inputs, cdtype):
        pass

    def reduce(self, op, out, inp):
        pass

    def matmul(self, out, a, b):
        pass

    def take(self, out, src_buf, src_dtype, idx):
        pass

    def put(self, dst_buf, dst_dtype, idx, values, accumulate):
        pass

    def scan(self, op, out, inp, out_idx=None):
        pass

    def sort(self, out_values, out_indices, inp, descending, stable):
        pass

    def arange(self, out, start, step):
        pass

    def fft(self, out, inp, inverse):
        pass

    def random(self, out, kind, seed, offset):
        pass
