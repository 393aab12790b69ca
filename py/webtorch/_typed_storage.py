"""torch.TypedStorage, the legacy `torch.FloatStorage`-style classes, and the Tensor methods that
reach a tensor's storage (`storage`, `storage_type`, `set_`, `new`, `share_memory_`, `resize`, ...).

A TypedStorage is a typed window onto a tensor's Storage record (`t.untyped_storage()`): every view
of that record sees an element written through the storage, and `resize_` grows the record in place
(its old elements kept), so every tensor sharing it sees the new memory, as in PyTorch.
"""
import warnings
import weakref

from . import _dtype
from ._device import as_device
from ._geometry import contiguous_strides
from ._legacy import type_target
from ._settings import is_warn_always_enabled
from ._shared_memory import block_of, move_to_shared
from ._tensor import Size, Storage, Tensor
from .accelerator import is_available as _accelerator_available
from .ops import _creation, _prims
from .ops._common import check_leaf_inplace
from .ops.aliases import frombuffer
from .storage import UntypedStorage

_shared = weakref.WeakSet()   # Storage records moved to "shared memory" (share_memory_): one process here
_pinned = weakref.WeakSet()   # Storage records made by pin_memory()
_warned = [False]

_REMOVAL = ("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage "
            "class. This should only matter to you if you are using storages directly.  To access UntypedStorage "
            "directly, use tensor.untyped_storage() instead of tensor.storage()")


def _warn_typed_storage_removal(stacklevel=2):
    """PyTorch's deprecation warning, once per process (every time under torch.set_warn_always(True))."""
    if is_warn_always_enabled() or not _warned[0]:
        warnings.warn(_REMOVAL, UserWarning, stacklevel=stacklevel + 1)
        _warned[0] = True


def _reset_warn_typed_storage_removal():
    _warned[0] = False


def _bad_args(cls, why):
    return TypeError(f"{cls}.__new__ received an invalid combination of arguments. Expected one of:\n"
                     " * no arguments\n * (int size)\n * (Sequence data)\n * (*, UntypedStorage wrap_storage)\n"
                     + why)


def _record(data, dtype, device):
    """A new Storage record: `data` elements (an int: uninitialized) of dtype on device."""
    if isinstance(data, int):
        return _prims.empty((data,), dtype, device)._storage
    return _creation.tensor(list(data), dtype=dtype, device=device).reshape(-1)._storage


class TypedStorage:
    """A tensor's Storage record read as elements of its dtype (see the module docstring)."""
    is_sparse = False

    def __init__(self, *args, device=None, dtype=None, wrap_storage=None, _internal=False):
        if not _internal:
            _warn_typed_storage_removal()
        if wrap_storage is not None:
            if args:
                raise RuntimeError("No positional arguments should be given when using `wrap_storage`")
            self._st = wrap_storage._bytes._storage if isinstance(wrap_storage, UntypedStorage) else wrap_storage
            if dtype is not None and dtype is not self._st.dtype:
                raise NotImplementedError(f"webtorch: TypedStorage(wrap_storage=) of {self._st.dtype} bytes read as "
                                          f"{dtype}")
            return
        if len(args) > 1:
            raise _bad_args(type(self), "Too many positional arguments")
        if args and isinstance(args[0], Tensor):
            raise _bad_args(type(self), f"Argument type not recognized: {type(args[0])}")
        dtype = dtype or _dtype.get_default_dtype()
        self._st = _record(args[0] if args else 0, dtype, as_device(device if device is not None else "cpu"))

    @property
    def _t(self):
        return Tensor._make(self._st, (self._st.numel,), (1,), 0)

    # ---- what it holds --------------------------------------------------------------------
    dtype = property(lambda self: self._st.dtype)
    device = property(lambda self: self._st.device)
    is_cuda = property(lambda self: self._st.device.type == "cuda")

    def __len__(self):
        return self._st.numel

    def size(self):
        return self._st.numel

    _size = size

    def element_size(self):
        return self.dtype.itemsize

    def nbytes(self):
        return self._st.numel * self.dtype.itemsize

    def data_ptr(self):
        return self._st.data_ptr()

    _data_ptr = data_ptr

    def untyped(self):
        return self._st

    @property
    def _untyped_storage(self):
        return self._st

    def _new_wrapped_storage(self, untyped_storage):
        return TypedStorage(wrap_storage=untyped_storage, dtype=self.dtype, _internal=True)

    def pickle_storage_type(self):
        return _LEGACY_NAMES[self.dtype]

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            return f"torch.{_LEGACY_NAMES[self.dtype]}"
        target = _LEGACY[dtype[6:]] if isinstance(dtype, str) and dtype[6:] in _LEGACY else dtype
        return self._to(target.dtype) if isinstance(target, type) else self._to(type_target(target)[0])

    # ---- elements ---------------------------------------------------------------------------
    def _index(self, idx):
        if isinstance(idx, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        if not isinstance(idx, int):
            raise RuntimeError(f"can't index a {TypedStorage} with {type(idx)}")
        n = len(self)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} out of range for storage of size {n}")
        return idx % n

    def __getitem__(self, idx):
        return self._t[self._index(idx)].item()

    def __setitem__(self, idx, value):
        if isinstance(value, TypedStorage):
            value = value._t
        if isinstance(idx, slice):
            self._t[idx] = value
        else:
            if not isinstance(idx, int):
                raise RuntimeError(f"can't index a {TypedStorage} with {type(idx)}")
            self._t[idx] = value

    def tolist(self):
        return self._t.tolist()

    def __iter__(self):
        return iter(self.tolist())

    def fill_(self, value):
        self._t.fill_(value)
        return self

    def copy_(self, source, non_blocking=None):
        self._t.copy_(source._t if isinstance(source, TypedStorage) else source)
        return self

    def resize_(self, size):
        _prims.resize_storage(self._st, size)

    # ---- copies -------------------------------------------------------------------------------
    def clone(self):
        return _typed(self._t.clone()._storage)

    def _to(self, dtype=None, device=None):
        """A copy converted to dtype / device (a copy even of the same dtype, as PyTorch's `float()`)."""
        return _typed(self._t.to(device=device, dtype=dtype, copy=True)._storage)

    def to(self, *, device=None, non_blocking=False):
        return _typed(self._st) if as_device(device) == self.device else self._to(device=device)

    def cpu(self):
        return self.to(device="cpu")

    def __copy__(self):
        return self.clone()

    def __deepcopy__(self, memo):
        return memo.setdefault(id(self), self.clone())

    def is_shared(self):
        return self._st in _shared or block_of(self._st) is not None

    def share_memory_(self):
        _shared.add(self._st)
        move_to_shared(self._st)
        return self

    def is_pinned(self, device="cuda"):
        return self._st in _pinned

    def pin_memory(self, device="cuda"):
        return _typed(_pin(self._t)._storage)

    def __repr__(self):
        values = "\n".join(f" {v}" for v in self.tolist()) if len(self) else " "
        return (f"{values}\n[torch.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size "
                f"{len(self)}]")

    __str__ = __repr__

    @classmethod
    def from_file(cls, filename, shared=False, size=0):
        if cls is TypedStorage:
            raise RuntimeError("from_file can only be called on derived classes")
        return _typed(from_file(filename, shared, size, dtype=cls.dtype)._storage)


for _name, _dt in (("bool", _dtype.bool_), ("byte", _dtype.uint8), ("char", _dtype.int8), ("short", _dtype.int16),
                   ("int", _dtype.int32), ("long", _dtype.int64), ("half", _dtype.float16),
                   ("bfloat16", _dtype.bfloat16), ("float", _dtype.float32), ("double", _dtype.float64),
                   ("complex_float", _dtype.complex64), ("complex_double", _dtype.complex128)):
    setattr(TypedStorage, _name, lambda self, _dt=_dt: self._to(_dt))


def _typed(st):
    """A TypedStorage over the Storage record st (no warning)."""
    s = object.__new__(TypedStorage)
    s._st = st
    return s


class _LegacyStorageMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, TypedStorage) and obj.dtype is cls.dtype and obj.device.type == "cpu"

    def __repr__(cls):
        return f"<class 'torch.{cls.__name__}'>"


def _legacy_new(cls, *args, wrap_storage=None, **kwargs):
    for key in kwargs:
        raise _bad_args(cls, f"Keyword argument '{key}' cannot be specified")
    if len(args) > 1:
        raise _bad_args(cls, "Too many positional arguments")
    if args and isinstance(args[0], Tensor):
        raise _bad_args(cls, f"Argument type not recognized: {type(args[0])}")
    if wrap_storage is not None:
        return TypedStorage(wrap_storage=wrap_storage, dtype=cls.dtype)
    return TypedStorage(*args, dtype=cls.dtype)


_LEGACY_NAMES = {_dtype.float32: "FloatStorage", _dtype.float64: "DoubleStorage", _dtype.float16: "HalfStorage",
                 _dtype.bfloat16: "BFloat16Storage", _dtype.int64: "LongStorage", _dtype.int32: "IntStorage",
                 _dtype.int16: "ShortStorage", _dtype.int8: "CharStorage", _dtype.uint8: "ByteStorage",
                 _dtype.bool_: "BoolStorage", _dtype.complex64: "ComplexFloatStorage",
                 _dtype.complex128: "ComplexDoubleStorage"}
_LEGACY = {name: _LegacyStorageMeta(name, (TypedStorage,), {"dtype": dt, "__module__": "torch",
                                                              "__new__": _legacy_new})
           for dt, name in _LEGACY_NAMES.items()}


def is_storage(obj):
    """torch.is_storage: a TypedStorage, an UntypedStorage or a tensor's Storage record."""
    return isinstance(obj, (TypedStorage, UntypedStorage, Storage))


# ---- Tensor methods ----------------------------------------------------------------------------
def storage(self):
    """Tensor.storage(): a TypedStorage over this tensor's memory (PyTorch's deprecation warning)."""
    _warn_typed_storage_removal(stacklevel=2)
    return _typed(self._storage)


def storage_type(self):
    return _LEGACY[_LEGACY_NAMES[self.dtype]]


def _set_args_error(args):
    got = ", ".join(type(a).__name__ if not isinstance(a, TypedStorage) else "torch.storage.TypedStorage"
                    for a in args)
    return TypeError(f"set_() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     " * ()\n * (torch.Storage source)\n"
                     " * (torch.Storage source, int storage_offset, tuple of ints size, tuple of ints stride = None)\n"
                     " * (Tensor source)\n"
                     " * (Tensor source, int storage_offset, tuple of ints size, tuple of ints stride = None)\n")


def set_(self, source=None, storage_offset=None, size=None, stride=None):
    """Tensor.set_(): make self a view of source (a tensor or a storage) with the given geometry, or of a new empty
    storage (no source)."""
    if storage_offset is not None and size is None:
        raise _set_args_error((source, storage_offset))
    check_leaf_inplace(self, overlap_ok=True)
    if source is None:
        st, size, stride, storage_offset = _prims.empty((0,), self.dtype, self.device)._storage, (0,), (1,), 0
    elif isinstance(source, Tensor):
        if source.dtype is not self.dtype:
            raise RuntimeError(f"Could not set tensor of type {_C_TYPE[source.dtype]} to a tensor of type "
                               f"{_C_TYPE[self.dtype]}")
        st = source._storage
        if size is None:
            size, stride, storage_offset = source.shape, source.stride(), source.storage_offset()
    else:
        st = source._st if isinstance(source, TypedStorage) else source._bytes._storage \
            if isinstance(source, UntypedStorage) else source
        if isinstance(source, UntypedStorage) and st.dtype is not self.dtype:
            raise NotImplementedError(f"webtorch: set_ of an UntypedStorage's bytes read as {self.dtype}")
        if st.dtype is not self.dtype:
            raise RuntimeError(f"Expected a Storage of type {_C_TYPE[self.dtype]} or an UntypedStorage, but got "
                               f"type {_LEGACY_NAMES[st.dtype][:-7]} for argument 1 'storage'")
        if size is None:
            size, storage_offset = (st.numel,), 0
    size = tuple(size)
    stride = tuple(stride) if stride is not None else contiguous_strides(size)
    span = storage_offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1 if all(size) else 0
    if span > st.numel:
        _prims.resize_storage(st, span)
    self._storage, self._shape, self._stride, self._offset = st, Size(size), stride, storage_offset
    self._bump()
    return self


_C_TYPE = {_dtype.float32: "float", _dtype.float64: "double", _dtype.float16: "c10::Half",
           _dtype.bfloat16: "c10::BFloat16", _dtype.int64: "long int", _dtype.int32: "int", _dtype.int16: "short int",
           _dtype.int8: "signed char", _dtype.uint8: "unsigned char", _dtype.bool_: "bool",
           _dtype.complex64: "c10::complex<float>", _dtype.complex128: "c10::complex<double>"}


def new(self, *args, device=None):
    """Tensor.new(): the legacy constructor of a tensor of self's dtype (on self's device unless given): no
    arguments an empty one, sizes an uninitialized one, data a copy of it, a storage a view of it."""
    device = self.device if device is None else device
    if not args:
        return _creation.empty(0, dtype=self.dtype, device=device)
    if len(args) == 1 and isinstance(args[0], (TypedStorage, UntypedStorage, Storage)):
        return _creation.empty(0, dtype=self.dtype, device=device).set_(args[0])
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0].detach() if args[0].dtype is self.dtype else _creation.tensor(args[0], dtype=self.dtype)
    if all(type(a) is int for a in args) or len(args) == 1 and isinstance(args[0], Size):
        return _creation.empty(*args, dtype=self.dtype, device=device)
    if len(args) > 1:
        raise TypeError(f"new() received an invalid combination of arguments - got {args}")
    return _creation.tensor(args[0], dtype=self.dtype, device=device)


def share_memory_(self):
    """Tensor.share_memory_(): a numpy-backed cpu storage moves into shared memory (torch.multiprocessing passes it
    to child processes by reference, _shared_memory.py); elsewhere the storage is marked shared."""
    _shared.add(self._storage)
    move_to_shared(self._storage)
    return self


def is_shared(self):
    return self._storage in _shared or block_of(self._storage) is not None


def _pin(t):
    if not _accelerator_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if t.device.type != "cpu":
        raise RuntimeError(f"cannot pin '{t.type()}' only dense CPU tensors can be pinned")
    out = t.clone()
    _pinned.add(out._storage)
    return out


def pin_memory(self, device=None):
    """Tensor.pin_memory(): a copy whose storage is_pinned() (PyTorch's RuntimeError without an accelerator)."""
    return _pin(self)


def is_pinned(self, device=None):
    return self._storage in _pinned


def const_data_ptr(self):
    return self.data_ptr()


def _resize_view(self, sizes, name):
    warnings.warn(f"non-inplace {name} is deprecated", UserWarning, stacklevel=3)
    n = Size(sizes).numel()
    if n != self.numel():
        raise RuntimeError(f"requested resize to {'x'.join(map(str, sizes))} ({n} elements in total), but the given "
                           f"tensor has a size of {'x'.join(map(str, self.shape))} ({self.numel()} elements). "
                           "autograd's resize can only change the shape of a given tensor, while preserving the "
                           "number of elements. ")
    return self.contiguous().view(sizes)


def resize(self, *sizes):
    """Tensor.resize (deprecated): a reshaped copy of the same number of elements."""
    return _resize_view(self, sizes[0] if len(sizes) == 1 and not isinstance(sizes[0], int) else sizes, "resize")


def resize_as(self, tensor):
    return _resize_view(self, tuple(tensor.shape), "resize_as")


# ---- torch functions ---------------------------------------------------------------------------
def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None, pin_memory=False,
              requires_grad=False):
    """torch.from_file: `size` elements of dtype read from the file (a private copy: `shared=True`, a mapping whose
    writes reach the file, raises)."""
    if shared:
        raise NotImplementedError("torch.from_file(shared=True): webtorch does not map files")
    dtype = dtype or _dtype.get_default_dtype()
    with open(filename, "rb") as f:
        data = f.read()
    need = size * dtype.itemsize
    if len(data) < need:
        raise RuntimeError(f"file <{filename}> size <{len(data)}> is smaller than the required mapping size <{need}>")
    t = frombuffer(data, dtype=dtype, count=size) if size else _creation.empty(0, dtype=dtype)
    t = t if device is None else t.to(device)
    return t.requires_grad_() if requires_grad else t


_warned_default_type = []  # PyTorch warns once per process


def set_default_tensor_type(t):
    """Deprecated: the default dtype from a legacy tensor type (torch.DoubleTensor) or its name."""
    if not _warned_default_type:
        _warned_default_type.append(True)
        warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                      "torch.set_default_dtype() and torch.set_default_device() as alternatives.", UserWarning,
                      stacklevel=2)
    try:
        dtype = type_target(t)[0] if not isinstance(t, _dtype.dtype) else None
    except ValueError:
        dtype = None
    if dtype is None or not dtype.is_floating_point:
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    _dtype.set_default_dtype(dtype)


METHODS = {"storage": storage, "storage_type": storage_type, "set_": set_, "new": new, "share_memory_": share_memory_,
           "is_shared": is_shared, "pin_memory": pin_memory, "is_pinned": is_pinned, "const_data_ptr": const_data_ptr,
           "resize": resize, "resize_as": resize_as}
