"""torch.storage's UntypedStorage: a device's bytes, what file loaders ask of torch (safetensors:
`UntypedStorage.from_file`, slicing, then `torch.asarray(storage, dtype=torch.uint8)` and `.view(dtype)`).
It holds its bytes as a 1-D uint8 tensor; slices and `asarray` share that memory, as in PyTorch."""
import array

from . import _dtype
from ._device import as_device, backend_for
from ._tensor import Storage, Tensor

__all__ = ["UntypedStorage"]


class UntypedStorage:
    def __init__(self, size=0, *, device=None):
        dev = as_device(device if device is not None else "cpu")
        if not isinstance(size, int):  # a sequence of byte values
            size = array.array("B", size)
        be = backend_for(dev)
        n = size if isinstance(size, int) else len(size)
        buf = be.empty(n, "uint8") if isinstance(size, int) else be.from_flat(size, "uint8")
        self._bytes = Tensor._make(Storage(buf, _dtype.uint8, dev, n, be), (n,), (1,), 0)

    @classmethod
    def _of(cls, t):
        s = object.__new__(cls)
        s._bytes = t
        return s

    @classmethod
    def from_file(cls, filename, shared=False, nbytes=0):
        """The file's first `nbytes` bytes (a private copy: `shared=True`, a mapping whose writes reach the file,
        raises)."""
        if shared:
            raise NotImplementedError("UntypedStorage.from_file(shared=True): webtorch does not map files")
        with open(filename, "rb") as f:
            data = f.read(nbytes)
        if len(data) < nbytes:
            raise RuntimeError(f"unable to mmap {nbytes} bytes from file <{filename}>: Cannot allocate memory (12)")
        return cls(data)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return UntypedStorage._of(self._bytes[idx])
        return self._bytes[idx].item()

    def __len__(self):
        return self._bytes.numel()

    def nbytes(self):
        return self._bytes.numel()

    size = nbytes

    def element_size(self):
        return 1

    def untyped(self):
        return self

    @property
    def device(self):
        return self._bytes.device

    def data_ptr(self):
        return self._bytes.data_ptr()

    def tolist(self):
        return self._bytes.tolist()

    def __repr__(self):
        values = "\n".join(f" {v}" for v in self.tolist())
        return f"{values}\n[torch.storage.UntypedStorage(device={self.device}) of size {len(self)}]"
