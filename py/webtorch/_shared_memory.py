"""Tensor storage in POSIX shared memory: `share_memory_()` moves a numpy-backed cpu storage into a
multiprocessing.shared_memory block, and torch.multiprocessing pickles such a tensor by the block's name, so a child
process maps the same memory (in-place updates are seen by both). Elsewhere (the pure-Python cpu backend, webgpu,
Pyodide without shared memory) share_memory_ only marks the storage."""
import weakref

try:
    from multiprocessing import shared_memory
except ImportError:  # Pyodide: no processes, no shared memory
    shared_memory = None

from ._device import device
from ._dtype import BY_NAME
from ._tensor import Storage, Tensor

_blocks = weakref.WeakKeyDictionary()  # Storage -> the SharedMemory block its buffer lives in


def _release(shm, unlink):
    try:
        shm.close()
    except BufferError:  # an array over it is still alive: the mapping goes with the process
        pass
    if unlink:
        shm.unlink()


def move_to_shared(storage):
    """Move a numpy-backed cpu storage's buffer into a new shared memory block (once)."""
    buf = storage.buf
    if shared_memory is None or storage in _blocks or storage.device.type != "cpu" or not hasattr(buf, "ctypes") \
            or buf.nbytes == 0:
        return
    shm = shared_memory.SharedMemory(create=True, size=buf.nbytes)
    arr = type(buf)(buf.shape, buf.dtype, buffer=shm.buf)
    arr[...] = buf
    storage.buf = arr
    _blocks[storage] = shm
    weakref.finalize(storage, _release, shm, True)


def block_of(storage):
    return _blocks.get(storage)


def reduce_tensor(t):
    """How torch.multiprocessing pickles a tensor: by its shared block's name, else by value."""
    shm = _blocks.get(t._storage)
    if shm is None:
        return t.__reduce_ex__(2)
    buf = t._storage.buf
    return rebuild_shared, (shm.name, buf.dtype.str, buf.shape, t.dtype.name, t._storage.numel, tuple(t.shape),
                            t._stride, t._offset, t.requires_grad)


def rebuild_shared(name, np_dtype, np_shape, dtype, numel, shape, stride, offset, requires_grad):
    """The tensor a parent shared, over the same shared memory block (in the child process)."""
    import numpy as np  # present: the parent's storage was a numpy array
    shm = shared_memory.SharedMemory(name=name)  # children share the parent's resource tracker: the parent unlinks
    storage = Storage(np.ndarray(np_shape, np.dtype(np_dtype), buffer=shm.buf), BY_NAME[dtype],
                      device("cpu"), numel)
    _blocks[storage] = shm
    weakref.finalize(storage, _release, shm, False)
    return Tensor._make(storage, shape, stride, offset).requires_grad_(requires_grad)
