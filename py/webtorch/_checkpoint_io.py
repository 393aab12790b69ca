"""What every checkpoint format (serialization.py's zip/pickle, _safetensors.py) shares: its errors, storages
as little-endian bytes and back (numpy when importable, array/struct otherwise), declared sizes checked with
PyTorch's overflow rule, tensors built over a storage only where they fit, map_location, and the file to read."""
import array
import contextlib
import io
import os
import pickle
import struct
import sys

from . import _dtype
from ._device import as_device, cuda_alias, device as _device_cls
from ._tensor import Tensor
from .backends.base import Strided
from .ops import _prims
from .ops._creation import from_numpy

try:
    import numpy as _np
except ImportError:  # pragma: no cover - Pyodide without numpy
    _np = None


_LITTLE = sys.byteorder == "little"


MAX_VIEW_NUMEL = 1 << 31  # a view may have more elements than its storage (stride 0) up to this many


class CheckpointError(RuntimeError):
    """The file is not a valid webtorch/PyTorch checkpoint (malformed, truncated or hostile)."""


class UnpicklingError(CheckpointError, pickle.UnpicklingError):
    """A PyTorch checkpoint asked for something webtorch will not build (a disallowed global)."""


def _bad(name, why):
    return CheckpointError(f"{name} is not a valid webtorch/PyTorch checkpoint: {why}")


_ITEM = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4, "int16": 2,
         "int8": 1, "uint8": 1, "bool": 1, "complex64": 8, "complex128": 16, "uint16": 2, "uint32": 4, "uint64": 8}


_ARRAY_CODE = {"float32": "f", "float64": "d", "int64": "q", "int32": "i", "int16": "h", "int8": "b",
               "uint8": "B", "uint16": "H", "uint32": "I", "uint64": "Q"}


_NP_LE = {"float32": "<f4", "float64": "<f8", "float16": "<f2", "int64": "<i8", "int32": "<i4", "int16": "<i2",
          "int8": "i1", "uint8": "u1", "bool": "u1", "complex64": "<c8", "complex128": "<c16", "uint16": "<u2",
          "uint32": "<u4", "uint64": "<u8"}


def _from_bytes(data, dtype):
    """Raw little-endian bytes -> (values for backend.from_flat, webtorch dtype name)."""
    if dtype == "bfloat16":  # its values in float32 (exact), for from_flat
        if _np is not None:
            u = _np.frombuffer(data, dtype="<u2").astype(_np.uint32) << 16
            return u.view(_np.float32), dtype
        hi = struct.unpack(f"<{len(data) // 2}H", data)
        return list(struct.unpack(f"<{len(hi)}f", struct.pack(f"<{len(hi)}I", *[h << 16 for h in hi]))), dtype
    if _np is not None:
        a = _np.frombuffer(data, dtype=_NP_LE[dtype])
        if dtype == "bool":
            a = a != 0
        return a.astype(a.dtype.newbyteorder("="), copy=False), dtype
    if dtype == "bool":
        return [b != 0 for b in data], dtype
    if dtype == "float16":
        return list(struct.unpack(f"<{len(data) // 2}e", data)), dtype
    code = _ARRAY_CODE[dtype]
    a = array.array(code)
    if a.itemsize != _ITEM[dtype]:  # e.g. a platform whose 'i' is not 4 bytes
        fmt = {"int64": "q", "int32": "i", "int16": "h", "uint16": "H", "uint32": "I", "uint64": "Q"}[dtype]
        return list(struct.unpack(f"<{len(data) // _ITEM[dtype]}{fmt}", data)), dtype
    a.frombytes(bytes(data))
    if not _LITTLE:
        a.byteswap()
    return a, dtype


def _storage_bytes(storage):
    """All elements of a tensor Storage as little-endian bytes (waits for the device)."""
    dt = storage.dtype.name
    v = Strided(storage.buf, (storage.numel,), (1,), 0, dt)
    be = storage.backend
    if _np is not None:
        a = _np.asarray(be.to_numpy(v)).reshape(-1)
        if dt == "bfloat16":  # float32 values that are bfloat16's: their upper halves
            return (a.astype("<f4").view("<u4") >> 16).astype("<u2").tobytes()
        if dt == "bool":
            return a.astype(_np.uint8).tobytes()
        return a.astype(_NP_LE[dt]).tobytes()
    flat = be.to_flat(v)
    if dt == "bool":
        return bytes(1 if x else 0 for x in flat)
    if dt == "float16":
        return struct.pack(f"<{len(flat)}e", *flat)
    if dt == "bfloat16":
        n = len(flat)
        return struct.pack(f"<{n}H", *[u >> 16 for u in struct.unpack(f"<{n}I", struct.pack(f"<{n}f", *flat))])
    a = array.array(_ARRAY_CODE[dt], flat)
    if not _LITTLE:
        a.byteswap()
    return a.tobytes()


_INT64_MAX = (1 << 63) - 1


def _checked_numel(name, size):
    """numel of a declared size, refusing what PyTorch refuses (c10's overflow-checked product)."""
    if not isinstance(size, (tuple, list)) or not all(isinstance(s, int) and not isinstance(s, bool) and
                                                      0 <= s <= _INT64_MAX for s in size):
        raise _bad(name, f"bad tensor size {size!r:.200}")
    n, overflow = 1, False
    for s in size:
        n *= s
        overflow |= n >= 1 << 64
        n &= (1 << 64) - 1
    if overflow or n > _INT64_MAX:
        raise _bad(name, f"numel: integer multiplication overflow (tensor size {list(size)!r:.200})")
    return n


# ---- map_location ------------------------------------------------------------------------------
def _placed(map_location, storage, location):
    """The storage (built on cpu) where map_location puts it: None, a device or str, a
    {saved_location: target} dict, or a callable (storage, location) -> storage or None."""
    if callable(map_location) and not isinstance(map_location, (str, _device_cls)):
        got = map_location(storage, location)
        if got is None:
            return storage
        got = got._storage if isinstance(got, Tensor) else got
        if not isinstance(got, type(storage)):
            raise TypeError(f"map_location returned a {type(got).__name__}; it must return a storage or None")
        return got
    target = map_location.get(location) if isinstance(map_location, dict) else map_location
    if target is not None:
        dev = as_device(target)
    else:  # where it was saved; one webtorch has no device for (such as 'mps') lands on cpu
        try:
            dev = as_device(location)
        except Exception:
            dev = as_device("cpu")
    if dev.type == "cuda":
        validate_cuda_device(location)
    if dev.type == "cpu":
        return storage
    return Tensor._make(storage, (storage.numel,), (1,), 0).to(dev)._storage


def validate_cuda_device(location):
    """The cuda device index of location; PyTorch's RuntimeError where "cuda" is no device here
    (under the cuda alias, where "cuda" is the WebGPU device, its index: 0)."""
    if not cuda_alias():
        raise RuntimeError("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
                           "False. If you are running on a CPU-only machine, please use torch.load with "
                           "map_location=torch.device('cpu') to map your storages to the CPU.")
    return 0


def _cpu_storage(data, dtype, numel):
    """A cpu storage from raw little-endian bytes. A bytearray the caller gives up becomes the
    storage's memory where numpy holds cpu tensors (no copy); read-only bytes are copied."""
    values, dt = _from_bytes(data, dtype)
    if _np is not None and values.flags.writeable and dt != "bfloat16":
        return from_numpy(values)._storage
    return _prims.from_flat(values, (numel,), _dtype.BY_NAME[dt], as_device("cpu"))._storage


def _make_tensor(name, storage, offset, size, stride, requires_grad=False):
    numel = _checked_numel(name, size)
    if not isinstance(stride, (tuple, list)) or len(stride) != len(size) or \
            not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s <= _INT64_MAX for s in stride):
        raise _bad(name, f"bad tensor stride {stride!r:.200} for size {list(size)!r:.200}")
    if not isinstance(offset, int) or isinstance(offset, bool) or not 0 <= offset <= _INT64_MAX:
        raise _bad(name, f"bad storage offset {offset!r:.60}")
    if numel > max(storage.numel, MAX_VIEW_NUMEL):
        raise _bad(name, f"a view of size {list(size)!r:.200} has {numel} elements over a storage of {storage.numel} "
                         f"(a view may outgrow its storage up to {MAX_VIEW_NUMEL} elements)")
    if numel > 0:
        last = offset + sum((s - 1) * st for s, st in zip(size, stride))
        if last >= storage.numel:
            raise _bad(name, f"tensor of size {list(size)} stride {list(stride)} offset {offset} reaches element "
                             f"{last} of a storage of {storage.numel}")
    t = Tensor._make(storage, tuple(size), tuple(stride), offset)
    if requires_grad:
        if not storage.dtype.is_floating_point:
            raise _bad(name, "an integer tensor cannot require grad")
        t.requires_grad_(True)
    return t


def _write_out(f, data):
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            fh.write(data)
    else:
        f.write(data)


def _source_name(f):
    """How errors name what load reads: its path, <bytes>, or a file object's name."""
    if isinstance(f, (str, os.PathLike)):
        return repr(os.fspath(f))
    if isinstance(f, (bytes, bytearray, memoryview)):
        return "<bytes>"
    return repr(getattr(f, "name", "<file>"))


@contextlib.contextmanager
def _source(f):
    """(a seekable binary file at the start of f's data, how many bytes it holds, f's name): a path
    opened, bytes wrapped, a stream that cannot seek or readinto read into memory."""
    name = _source_name(f)
    if isinstance(f, (str, os.PathLike)):
        with open(os.fspath(f), "rb") as fh:
            yield fh, os.fstat(fh.fileno()).st_size, name
        return
    if isinstance(f, (bytes, bytearray, memoryview)):
        f = io.BytesIO(f)
    elif not hasattr(f, "read"):
        raise TypeError(f"webtorch.load expects a path or a readable binary file, got {type(f).__name__}")
    elif not (hasattr(f, "readinto") and hasattr(f, "seekable") and f.seekable()):
        f = io.BytesIO(f.read())
    start = f.tell()
    size = f.seek(0, io.SEEK_END) - start
    f.seek(start)
    yield f, size, name


def _read_exact(fh, n, name):
    """The next n bytes of fh as a bytearray of its own (what a storage adopts without a copy)."""
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        k = fh.readinto(view[got:])
        if not k:
            raise _bad(name, f"the file is truncated ({got} of {n} bytes)")
        got += k
    return buf


for _error in (CheckpointError, UnpicklingError):
    _error.__module__ = "webtorch.serialization"  # where users name them
