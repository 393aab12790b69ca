"""webtorch.save / webtorch.load: PyTorch's checkpoint contract, hardened against hostile files.

Saving
------
`save(obj, f)` writes PyTorch's zip layout (`archive/data.pkl`, `.format_version`,
`.storage_alignment`, `byteorder`, `data/<key>`, `version`, `.data/serialization_id`; 64-byte
aligned, uncompressed records) with `data.pkl` pickled as torch.save pickles: storages as
persistent ids, tensors as `torch._utils._rebuild_tensor_v2`, Parameters as `_rebuild_parameter`,
views sharing one storage record. So real `torch.load` reads it: `weights_only=True` for tensors,
containers and numbers; `weights_only=False` for what only plain pickle builds. Any picklable
object can be saved: a webtorch Module pickles under its own class path
(`webtorch.nn.modules.linear.Linear`), which webtorch loads back with `weights_only=False` (real
torch does not import webtorch). When obj is a plain tree (tensors, numbers, strings, None,
dtypes, devices, dict/list/tuple/OrderedDict) the zip also holds `webtorch.json`, the same tree
as JSON, which webtorch reads without unpickling. `save(obj, "x.safetensors")` writes safetensors.

Loading
-------
`load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None)`:
- weights_only=True (the default, as in PyTorch): `data.pkl` goes through an opcode interpreter
  that builds only PyTorch's weights_only allow-list (tensors, Parameters, primitive containers,
  OrderedDict, Counter, set, bytes/bytearray, complex, torch dtypes / Size / device / storage
  types) plus what `add_safe_globals` / `safe_globals` allow. Anything else raises
  `UnpicklingError` (a `pickle.UnpicklingError`) with PyTorch's "Weights only load failed..." text.
- weights_only=False: a real `pickle.Unpickler` for files the caller trusts (it runs code from
  the file), with torch's names mapped to webtorch's (`torch.nn.modules.linear.Linear` ->
  `webtorch.nn.modules.linear.Linear`, rebuild functions, dtypes, storage types), so a module
  pickled whole by torch.save loads and runs here.
- map_location: None (where saved; locations webtorch lacks such as 'cuda:0' land on cpu), a
  device or str ('webgpu'), a {saved_location: target} dict, or a callable
  (storage, location) -> storage or None.

Hostile files
-------------
A malformed, truncated or hostile file raises `CheckpointError` (a RuntimeError): "... is not a
valid webtorch/PyTorch checkpoint: <why>"; a disallowed global raises `UnpicklingError`, a
subclass of both CheckpointError and pickle.UnpicklingError. The weights_only path is iterative
and linear in the file: shared (memo) references are never copied or walked, containers may nest
at most 1000 deep, a dict key or set element may expand to at most 100000 nodes (so nothing
hashes a deep or exponentially shared tuple), records are inflated at most once, in 1 MiB chunks
capped by their declared size (which must match what the pickle declares), deflated records may
not declare more than deflate's 1032:1 ratio and may inflate to 64 MiB + 64x the file in all,
and sizes/strides/offsets are checked against the storage with PyTorch's overflow rule
("numel: integer multiplication overflow").

Bytes go through numpy when it is importable and through array/struct otherwise (Pyodide).
"""
import array
import codecs
import contextlib
import _compat_pickle
import hashlib
import importlib
import io
import json
import math
import os
import pickle
import struct
import sys
import zipfile
from collections import Counter, OrderedDict

import webtorch
from . import _dtype
from .ops import _prims
from ._device import as_device, device as _device_cls
from ._tensor import Tensor, Size, Storage
from ._geometry import contiguous_strides
from .backends.base import Strided
from .nn.parameter import Parameter
from .ops._creation import from_numpy
from .ops.shape import clone

try:
    import numpy as _np
except ImportError:  # pragma: no cover - Pyodide without numpy
    _np = None

__all__ = ["save", "load", "save_safetensors", "load_safetensors", "CheckpointError", "UnpicklingError",
           "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals"]

FORMAT_VERSION = 1
_LITTLE = sys.byteorder == "little"
_MAX_META = 64 << 20  # the most bytes a non-storage record (data.pkl, webtorch.json) may declare
MAX_VIEW_NUMEL = 1 << 31  # a view may have more elements than its storage (stride 0) up to this many


class CheckpointError(RuntimeError):
    """The file is not a valid webtorch/PyTorch checkpoint (malformed, truncated or hostile)."""


class UnpicklingError(CheckpointError, pickle.UnpicklingError):
    """A PyTorch checkpoint asked for something webtorch will not build (a disallowed global)."""


def _bad(name, why):
    return CheckpointError(f"{name} is not a valid webtorch/PyTorch checkpoint: {why}")


# ---- dtypes and bytes --------------------------------------------------------------------------
_STORAGE_DTYPE = {"FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
                  "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
                  "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8", "BoolStorage": "bool"}
_DTYPE_STORAGE = {v: k for k, v in _STORAGE_DTYPE.items()}
_TORCH_DTYPES = {"float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
                 "float16": "float16", "half": "float16", "bfloat16": "bfloat16", "int64": "int64",
                 "long": "int64", "int32": "int32", "int": "int32", "int16": "int16", "short": "int16",
                 "int8": "int8", "uint8": "uint8", "bool": "bool"}
_ST_DTYPE = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16", "I64": "int64",
             "I32": "int32", "I16": "int16", "I8": "int8", "U8": "uint8", "BOOL": "bool"}
_DTYPE_ST = {v: k for k, v in _ST_DTYPE.items()}
_ITEM = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4, "int16": 2,
         "int8": 1, "uint8": 1, "bool": 1}
_ARRAY_CODE = {"float32": "f", "float64": "d", "int64": "q", "int32": "i", "int16": "h", "int8": "b",
               "uint8": "B"}
_NP_LE = {"float32": "<f4", "float64": "<f8", "float16": "<f2", "int64": "<i8", "int32": "<i4", "int16": "<i2",
          "int8": "i1", "uint8": "u1", "bool": "u1"}


def _from_bytes(data, dtype):
    """Raw little-endian bytes -> (values for backend.from_flat, webtorch dtype name)."""
    if dtype == "bfloat16":  # no bfloat16 storage here: widen exactly to float32
        if _np is not None:
            u = _np.frombuffer(data, dtype="<u2").astype(_np.uint32) << 16
            return u.view(_np.float32), "float32"
        hi = struct.unpack(f"<{len(data) // 2}H", data)
        return list(struct.unpack(f"<{len(hi)}f", struct.pack(f"<{len(hi)}I", *[h << 16 for h in hi]))), "float32"
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
        fmt = {"int64": "q", "int32": "i", "int16": "h"}[dtype]
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
        if dt == "bool":
            return a.astype(_np.uint8).tobytes()
        return a.astype(_NP_LE[dt]).tobytes()
    flat = be.to_flat(v)
    if dt == "bool":
        return bytes(1 if x else 0 for x in flat)
    if dt == "float16":
        return struct.pack(f"<{len(flat)}e", *flat)
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
    else:  # where it was saved; one webtorch has no device for ('cuda:0', 'mps') lands on cpu
        try:
            dev = as_device(location)
        except Exception:
            dev = as_device("cpu")
    if dev.type == "cpu":
        return storage
    return Tensor._make(storage, (storage.numel,), (1,), 0).to(dev)._storage


def _cpu_storage(data, dtype, numel):
    """A cpu storage from raw little-endian bytes. A bytearray the caller gives up becomes the
    storage's memory where numpy holds cpu tensors (no copy); read-only bytes are copied."""
    values, dt = _from_bytes(data, dtype)
    if _np is not None and values.flags.writeable:
        return from_numpy(values)._storage
    return _prims.from_flat(values, (numel,), _dtype.BY_NAME[dt], as_device("cpu"))._storage


class _Records:
    """A zip's records, each read once, streamed in chunks with its declared size as the cap;
    deflated ones inflate to at most 64 MiB + 64x the file's size in all."""

    def __init__(self, zf, prefix, name, file_size):
        self.zf, self.prefix, self.name = zf, prefix, name
        self.infos = {i.filename: i for i in zf.infolist()}
        self.inflate_budget = (64 << 20) + 64 * file_size

    def __contains__(self, rec):
        return self.prefix + rec in self.infos

    def read(self, rec, expected=None, limit=_MAX_META):
        info = self.infos.get(self.prefix + rec)
        if info is None:
            raise _bad(self.name, f"record {rec!r} is missing")
        size = info.file_size
        if expected is not None and size != expected:
            raise _bad(self.name, f"record {rec!r} holds {size} bytes, expected {expected}")
        if expected is None and size > limit:
            raise _bad(self.name, f"record {rec!r} declares {size} bytes (more than {limit})")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise _bad(self.name, f"record {rec!r} uses an unsupported compression")
        if info.compress_type == zipfile.ZIP_DEFLATED:
            if size > 1032 * info.compress_size + 1024:
                raise _bad(self.name, f"record {rec!r} declares {size} bytes from {info.compress_size} deflated ones")
            self.inflate_budget -= size
            if self.inflate_budget < 0:
                raise _bad(self.name, "its deflated records inflate to more than 64 MiB + 64x the file's size; "
                                      "re-save it uncompressed (torch.save / webtorch.save write it so)")
        out = bytearray()
        try:
            with self.zf.open(info) as fh:  # zipfile stops at the declared size and checks the CRC there
                while len(out) < size:
                    chunk = fh.read(min(1 << 20, size - len(out)))
                    if not chunk:
                        break
                    out += chunk
        except Exception as e:  # BadZipFile, zlib.error, EOFError, ... on damaged data
            raise _bad(self.name, f"cannot read record {rec!r} ({type(e).__name__}: {e})") from None
        if len(out) != size:
            raise _bad(self.name, f"record {rec!r} is truncated ({len(out)} of {size} bytes)")
        return out


class _Storages:
    """Storages read lazily from the archive, built once each, placed per map_location."""

    def __init__(self, name, records, map_location):
        self.name, self.records, self.map_location = name, records, map_location
        self.built, self.dtypes = {}, {}

    def get(self, key, dtype, numel, location="cpu"):
        if not isinstance(key, str) or not isinstance(location, str):
            raise _bad(self.name, "bad storage key")
        if key in self.built:
            st = self.built[key]
            if st.numel != numel or self.dtypes[key] != dtype:
                raise _bad(self.name, f"storage {key!r} is used with two different sizes or dtypes")
            return st
        if dtype not in _ITEM:
            raise _bad(self.name, f"unknown storage dtype {dtype!r}")
        if not isinstance(numel, int) or isinstance(numel, bool) or not 0 <= numel <= _INT64_MAX:
            raise _bad(self.name, f"bad storage size {numel!r:.60}")
        data = self.records.read("data/" + key, expected=numel * _ITEM[dtype])
        st = _placed(self.map_location, _cpu_storage(data, dtype, numel), location)
        self.built[key], self.dtypes[key] = st, dtype
        return st

    def from_pid(self, pid):
        """The storage a persistent id ('storage', torch.FloatStorage, key, location, numel) names."""
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise _bad(self.name, f"unsupported persistent id {pid!r:.80}")
        _, stype, key, location, numel = pid
        if not isinstance(stype, (_StorageType, _dtype.dtype)):
            raise _bad(self.name, f"unsupported storage type {stype!r:.60}")
        dtype = stype.dtype if isinstance(stype, _StorageType) else stype.name
        return self.get(key, dtype, numel, location)


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


def _as_parameter(t, requires_grad):
    return Parameter(t, requires_grad=bool(requires_grad))


# ---- torch's names, mapped to webtorch's objects -------------------------------------------------
class _StorageType:
    """What `torch.FloatStorage` & co. unpickle to: only used inside persistent ids."""

    def __init__(self, name):
        self.name, self.dtype = name, _STORAGE_DTYPE[name]

    def __repr__(self):
        return f"torch.{self.name}"


class _Rebuild:
    """PyTorch's tensor-rebuild functions for one file (name is the file, for error messages)."""

    def __init__(self, name):
        self.name = name

    def tensor_v2(self, storage, offset, size, stride, requires_grad=False, backward_hooks=None, metadata=None):
        if not isinstance(storage, Storage):
            raise _bad(self.name, "_rebuild_tensor without a storage")
        return _make_tensor(self.name, storage, offset, size, stride, bool(requires_grad))

    def tensor(self, storage, offset, size, stride):
        return self.tensor_v2(storage, offset, size, stride)

    def tensor_v3(self, storage, offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
        return self.tensor_v2(storage, offset, size, stride, requires_grad)

    def parameter(self, data, requires_grad, backward_hooks=None, state=None):
        if not isinstance(data, Tensor):
            raise _bad(self.name, "_rebuild_parameter without a tensor")
        return _as_parameter(data, requires_grad)

    def from_type_v2(self, func, new_type, args, state):
        t = func(*args)
        if isinstance(new_type, type) and issubclass(new_type, Tensor) and type(t) is not new_type:
            t = t.as_subclass(new_type)
        if isinstance(state, dict):
            for k, v in state.items():
                setattr(t, k, v)
        return t


def _torch_globals(rb):
    """{'module.name': object} for the torch names PyTorch's weights_only=True allows and webtorch has."""
    g = {"collections.OrderedDict": OrderedDict, "collections.Counter": Counter, "torch.Size": Size,
         "torch.Tensor": Tensor, "torch.device": _device_cls, "torch.nn.parameter.Parameter": Parameter,
         "torch.serialization._get_layout": lambda name: "torch.strided", "_codecs.encode": codecs.encode,
         "builtins.bytearray": bytearray, "builtins.set": set, "builtins.complex": complex,
         "torch._utils._rebuild_tensor": rb.tensor, "torch._utils._rebuild_tensor_v2": rb.tensor_v2,
         "torch._utils._rebuild_tensor_v3": rb.tensor_v3, "torch._utils._rebuild_parameter": rb.parameter,
         "torch._utils._rebuild_parameter_with_state": rb.parameter,
         "torch._tensor._rebuild_from_type_v2": rb.from_type_v2}
    g.update({f"torch.{n}": _dtype.BY_NAME[d] for n, d in _TORCH_DTYPES.items()})
    g.update({f"torch.{n}": _StorageType(n) for n in _STORAGE_DTYPE})
    return g


def _py3_name(module, name):
    """Protocol-2 pickles name Python 2 modules (`__builtin__.set`): map them as pickle does."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


# ---- user-allowed globals (torch.serialization.add_safe_globals & co.) ---------------------------
_safe_globals = []


def _global_path(g):
    if isinstance(g, tuple):
        if len(g) != 2:
            raise ValueError(f"Expected tuple of length 2 (global, str of callable full path), but got tuple of "
                             f"length: {len(g)}")
        if not isinstance(g[1], str):
            raise TypeError(f"Expected second item in tuple to be str of callable full path, but got: {type(g[1])}")
        return g[1], g[0]
    return f"{g.__module__}.{g.__qualname__}", g


def _user_globals():
    return dict(_global_path(g) for g in _safe_globals)


def add_safe_globals(safe_globals):
    """Mark globals (classes/functions, or (obj, 'module.name') pairs) as safe for weights_only load."""
    for g in safe_globals:
        _global_path(g)
        if g not in _safe_globals:
            _safe_globals.append(g)


def get_safe_globals():
    """The user-added globals that are safe for weights_only load."""
    return list(_safe_globals)


def clear_safe_globals():
    """Forget every user-added safe global."""
    _safe_globals.clear()


class safe_globals:
    """Context manager: `with safe_globals([MyClass]): load(f)` allows MyClass inside the block."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc):
        _safe_globals[:] = [g for g in _safe_globals if g not in self.safe_globals]


_UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, "
    "but it can result in arbitrary code execution. Do it only if you got the file from a trusted source.")
_DOCS_MESSAGE = ("\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
                 "weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")


def _weights_only_error(message, unsafe_global=False):
    """PyTorch's UnpicklingError text for a weights_only=True refusal."""
    if unsafe_global:
        text = ("Weights only load failed. This file can still be loaded, to do so you have two options, "
                "\033[1mdo those steps only if you trust the source of the checkpoint\033[0m. "
                f"\n\t(1) {_UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` please check "
                "the recommended steps in the following error message.\n\tWeightsUnpickler error: " + message)
    else:
        text = (f"Weights only load failed. {_UNSAFE_MESSAGE}\nPlease file an issue with the following so that we "
                "can make `weights_only=True` compatible with your use case: WeightsUnpickler error: \n\n" + message)
    return UnpicklingError(text + _DOCS_MESSAGE)


# ---- the weights_only=True interpreter -----------------------------------------------------------
_MAX_DEPTH = 1000        # containers nested deeper than this are refused (Python's recursion limit)
_MAX_KEY_NODES = 100000  # a dict key / set element expanding to more nodes than this is refused


class _Unpickler:
    """Interprets pickle opcodes (protocols 2-5) with PyTorch's weights_only rules: only the
    allow-listed globals plus add_safe_globals' may be built or called. Iterative, and every
    container records its nesting depth and expanded size, so a deep or shared structure is refused
    before anything (hash, compare) would walk it."""

    def __init__(self, data, name, storages):
        self.data, self.pos, self.name, self.storages = data, 0, name, storages
        self.known = _torch_globals(_Rebuild(name))
        self.user = _user_globals()
        self.callable = {id(v) for v in list(self.known.values()) + list(self.user.values())}
        self.shape = {}  # id(container) -> (container, depth, expanded size)

    def _take(self, n):
        if n < 0 or self.pos + n > len(self.data):
            raise _bad(self.name, f"data.pkl is truncated (wanted {n} bytes at {self.pos})")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def _u(self, fmt):
        return struct.unpack(fmt, self._take(struct.calcsize(fmt)))[0]

    def _str(self, n):
        try:
            return bytes(self._take(n)).decode("utf-8")
        except UnicodeDecodeError as e:
            raise _bad(self.name, f"bad string in data.pkl: {e}") from None

    def _global(self, module, qual):
        path = "%s.%s" % _py3_name(module, qual)
        if path in self.known:
            return self.known[path]
        if path in self.user:
            return self.user[path]
        shown = path[len("builtins."):] if path.startswith("builtins.") else path
        raise _weights_only_error(
            f"Unsupported global: GLOBAL {shown} was not an allowed global by default. Please use "
            f"`torch.serialization.add_safe_globals([{shown}])` or the `torch.serialization.safe_globals([{shown}])` "
            "context manager to allowlist this global if you trust this class/function.", unsafe_global=True)

    def _nest(self, obj, items):
        """Record obj's depth and expanded size after `items` went into it."""
        depth, size = self.shape.get(id(obj), (None, 1, 1))[1:]
        for x in items:
            _, d, s = self.shape.get(id(x), (None, 0, 1))
            depth = max(depth, d + 1)
            size = min(size + s, 1 << 62)
        if depth > _MAX_DEPTH:
            raise _bad(self.name, f"containers nest deeper than {_MAX_DEPTH}")
        if depth > 1 or size > 1:
            self.shape[id(obj)] = (obj, depth, size)
        return obj

    def _pop_mark(self):
        if not self.marks:
            raise _bad(self.name, "data.pkl pops a MARK that was never pushed")
        m = self.marks.pop()
        items = self.stack[m:]
        del self.stack[m:]
        return items

    def _pop(self):
        if not self.stack:
            raise _bad(self.name, "data.pkl stack underflow")
        return self.stack.pop()

    def load(self):
        self.stack, self.marks, self.memo = [], [], {}
        S = self.stack
        while True:
            if self.pos >= len(self.data):
                raise _bad(self.name, "data.pkl ends without STOP")
            op = self.data[self.pos]
            self.pos += 1
            if op == 0x80:  # PROTO
                p = self._take(1)[0]
                if p > 5:
                    raise _bad(self.name, f"unsupported pickle protocol {p}")
            elif op == 0x95:  # FRAME
                self._take(8)
            elif op == 0x2E:  # STOP
                if len(S) != 1:
                    raise _bad(self.name, "data.pkl stops with a malformed stack")
                return S[0]
            elif op == 0x28:  # MARK
                self.marks.append(len(S))
            elif op == 0x4E:  # NONE
                S.append(None)
            elif op == 0x88:
                S.append(True)
            elif op == 0x89:
                S.append(False)
            elif op == 0x4B:  # BININT1
                S.append(self._take(1)[0])
            elif op == 0x4D:  # BININT2
                S.append(self._u("<H"))
            elif op == 0x4A:  # BININT
                S.append(self._u("<i"))
            elif op == 0x8A:  # LONG1
                n = self._take(1)[0]
                S.append(int.from_bytes(self._take(n), "little", signed=True))
            elif op == 0x8B:  # LONG4
                n = self._u("<i")
                if n < 0 or n > 4096:
                    raise _bad(self.name, f"LONG4 of {n} bytes")
                S.append(int.from_bytes(self._take(n), "little", signed=True))
            elif op == 0x47:  # BINFLOAT
                S.append(self._u(">d"))
            elif op == 0x58:  # BINUNICODE
                S.append(self._str(self._u("<I")))
            elif op == 0x8C:  # SHORT_BINUNICODE
                S.append(self._str(self._take(1)[0]))
            elif op == 0x8D:  # BINUNICODE8
                S.append(self._str(self._u("<Q")))
            elif op == 0x43:  # SHORT_BINBYTES
                S.append(bytes(self._take(self._take(1)[0])))
            elif op == 0x42:  # BINBYTES
                S.append(bytes(self._take(self._u("<I"))))
            elif op == 0x7D:  # EMPTY_DICT
                S.append({})
            elif op == 0x5D:  # EMPTY_LIST
                S.append([])
            elif op == 0x29:  # EMPTY_TUPLE
                S.append(())
            elif op == 0x8F:  # EMPTY_SET
                S.append(set())
            elif op == 0x74:  # TUPLE
                items = self._pop_mark()
                S.append(self._nest(tuple(items), items))
            elif op in (0x85, 0x86, 0x87):  # TUPLE1/2/3
                n = op - 0x84
                if len(S) < n:
                    raise _bad(self.name, "data.pkl stack underflow")
                items = tuple(S[-n:])
                del S[-n:]
                S.append(self._nest(items, items))
            elif op == 0x6C:  # LIST
                items = self._pop_mark()
                S.append(self._nest(items, items))
            elif op == 0x64:  # DICT
                S.append(self._pairs({}, self._pop_mark()))
            elif op == 0x61:  # APPEND
                v = self._pop()
                self._append(self._top(), [v])
            elif op == 0x65:  # APPENDS
                items = self._pop_mark()
                self._append(self._top(), items)
            elif op == 0x90:  # ADDITEMS
                items = self._pop_mark()
                t = self._top()
                if type(t) is not set:
                    raise _bad(self.name, "ADDITEMS on a non-set")
                t.update(self._hashable(i) for i in items)
                self._nest(t, items)
            elif op == 0x73:  # SETITEM
                v = self._pop()
                k = self._pop()
                self._pairs(self._top(), [k, v])
            elif op == 0x75:  # SETITEMS
                items = self._pop_mark()
                self._pairs(self._top(), items)
            elif op in (0x71, 0x72, 0x94):  # BINPUT, LONG_BINPUT, MEMOIZE
                idx = self._take(1)[0] if op == 0x71 else self._u("<I") if op == 0x72 else len(self.memo)
                self.memo[idx] = self._top()
            elif op in (0x68, 0x6A):  # BINGET, LONG_BINGET
                idx = self._take(1)[0] if op == 0x68 else self._u("<I")
                if idx not in self.memo:
                    raise _bad(self.name, f"data.pkl refers to memo {idx} that was never stored")
                S.append(self.memo[idx])
            elif op == 0x63:  # GLOBAL
                module = self._line()
                qual = self._line()
                S.append(self._global(module, qual))
            elif op == 0x93:  # STACK_GLOBAL
                qual = self._pop()
                module = self._pop()
                if not isinstance(module, str) or not isinstance(qual, str):
                    raise _bad(self.name, "STACK_GLOBAL with non-string names")
                S.append(self._global(module, qual))
            elif op == 0x52:  # REDUCE
                args = self._pop()
                S.append(self._call(self._pop(), args))
            elif op in (0x81, 0x92):  # NEWOBJ, NEWOBJ_EX
                kwargs = self._pop() if op == 0x92 else {}
                args = self._pop()
                S.append(self._new(self._pop(), args, kwargs))
            elif op == 0x62:  # BUILD
                state = self._pop()
                self._build(self._top(), state)
            elif op == 0x51:  # BINPERSID
                S.append(self.storages.from_pid(self._pop()))
            elif op == 0x30:  # POP
                self._pop()
            elif op == 0x31:  # POP_MARK
                self._pop_mark()
            elif op == 0x32:  # DUP
                S.append(self._top())
            else:
                raise _bad(self.name, f"unsupported pickle opcode 0x{op:02x} at byte {self.pos - 1} of data.pkl")

    def _line(self):
        end = self.data.find(b"\n", self.pos, self.pos + 256)
        if end < 0:
            raise _bad(self.name, "GLOBAL name is not terminated")
        s = self._str(end - self.pos)
        self.pos += 1
        return s

    def _top(self):
        if not self.stack:
            raise _bad(self.name, "data.pkl stack underflow")
        return self.stack[-1]

    def _hashable(self, k):
        if self.shape.get(id(k), (None, 0, 1))[2] > _MAX_KEY_NODES:
            raise _bad(self.name, f"a dict key or set element expands to more than {_MAX_KEY_NODES} nodes")
        try:
            hash(k)
        except TypeError:
            raise _bad(self.name, f"unhashable key of type {type(k).__name__}") from None
        return k

    def _pairs(self, d, items):
        if not isinstance(d, dict):
            raise _bad(self.name, f"SETITEM on a {type(d).__name__}")
        if len(items) % 2:
            raise _bad(self.name, "odd number of items for a dict")
        for i in range(0, len(items), 2):
            d[self._hashable(items[i])] = items[i + 1]
        return self._nest(d, items)

    def _append(self, lst, items):
        if type(lst) is not list:
            raise _weights_only_error(f"Can only append to lists, but got {type(lst)}")
        lst.extend(items)
        self._nest(lst, items)

    def _args(self, args):
        if not isinstance(args, tuple):
            raise _bad(self.name, "call arguments are not a tuple")
        return args

    def _call(self, fn, args):
        if id(fn) not in self.callable:
            raise _weights_only_error(f"Trying to call reduce for unrecognized function {fn!r:.100}")
        args = self._args(args)
        if fn in (Tensor, bytearray) and any(isinstance(a, int) for a in args):
            raise _bad(self.name, f"{fn.__name__}() sized by the file (an allocation bomb)")
        if fn in (set, OrderedDict, Counter) and args:  # hashes what it is given: check first
            items = list(args[0]) if isinstance(args[0], (list, tuple)) else None
            if items is None or fn is OrderedDict and not all(isinstance(p, tuple) and len(p) == 2 for p in items):
                raise _bad(self.name, f"{fn.__name__} built from {type(args[0]).__name__}")
            for x in items:
                self._hashable(x[0] if fn is OrderedDict else x)
        try:
            return fn(*args)
        except CheckpointError:
            raise
        except Exception as e:
            raise _bad(self.name, f"cannot rebuild {getattr(fn, '__qualname__', fn)!r}: {type(e).__name__}: {e}") \
                from None

    def _new(self, cls, args, kwargs):
        if kwargs:
            raise _bad(self.name, "NEWOBJ_EX with keyword arguments")
        if cls is Parameter:
            return self._call(cls, args)
        if not isinstance(cls, type) or id(cls) not in self.callable:
            raise _weights_only_error("Can only create new object for nn.Parameter or classes allowlisted via "
                                      f"`add_safe_globals` but got {cls!r:.100}")
        try:
            return cls.__new__(cls, *self._args(args))
        except CheckpointError:
            raise
        except Exception as e:
            raise _bad(self.name, f"cannot create a {cls.__name__}: {type(e).__name__}: {e}") from None

    def _build(self, obj, state):
        if isinstance(obj, Tensor) and (state is None or isinstance(state, (dict, tuple))):
            return  # tensor python state (hooks, attributes): ignored
        if type(obj) is OrderedDict and isinstance(state, dict):
            obj.__dict__.update(state)
            return
        if id(type(obj)) not in self.callable or type(obj) in (set, list, dict, tuple):
            raise _weights_only_error("Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                                      f"`add_safe_globals`, but got {type(obj)}")
        try:
            if hasattr(obj, "__setstate__"):
                obj.__setstate__(state)
                return
            slots = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slots = state
            if state:
                obj.__dict__.update(state)
            for k, v in (slots or {}).items():
                setattr(obj, k, v)
        except Exception as e:
            raise _bad(self.name, f"cannot set the state of a {type(obj).__name__}: {type(e).__name__}: {e}") \
                from None


# ---- the weights_only=False unpickler (trusted files only) ---------------------------------------
class _FullUnpickler(pickle.Unpickler):
    """Plain pickle for a file the caller trusts, with torch's names mapped to webtorch's:
    torch.nn.modules.linear.Linear -> webtorch.nn.modules.linear.Linear, rebuild functions, dtypes,
    storage types. Any other global is imported as pickle does (this runs code from the file)."""

    def __init__(self, file, name, storages, **kw):
        super().__init__(file, **kw)
        self.name, self.storages = name, storages
        self.known = _torch_globals(_Rebuild(name))

    def find_class(self, module, name):
        path = "%s.%s" % _py3_name(module, name)
        if path in self.known:
            return self.known[path]
        if module == "torch" or module.startswith("torch."):
            try:
                return getattr(importlib.import_module("webtorch" + module[len("torch"):]), name)
            except (ImportError, AttributeError):
                found = getattr(webtorch.nn if module.startswith("torch.nn.") else webtorch, name, None)
            if found is None:
                raise UnpicklingError(f"{self.name}: the file needs {module}.{name}, which webtorch does not have")
            return found
        return super().find_class(module, name)

    def persistent_load(self, pid):
        return self.storages.from_pid(pid)


# ---- the pickle writer (what torch.load reads) ---------------------------------------------------
class _TorchName:
    """Pickles as the global `module.name` (a torch name webtorch cannot import)."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle wants a callable in a reduce tuple; never called here
        raise TypeError(f"{self.module}.{self.name} is a name in a pickle, not a function")


_T = {n: _TorchName(*n.rsplit(".", 1)) for n in
      ["torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_parameter", "torch.device", "torch.Size"] +
      [f"torch.{n}" for n in list(_STORAGE_DTYPE) + list(_ITEM)]}


class _Pickler(pickle._Pickler):
    """pickle's Pickler writing webtorch tensors exactly as torch.save does: storages as persistent
    ids ('storage', torch.FloatStorage, key, 'cpu', numel), tensors as _rebuild_tensor_v2,
    Parameters as _rebuild_parameter, dtypes/devices/Size as torch's globals. Everything else
    (modules, user classes, numpy arrays) pickles as pickle does, under its own class path."""
    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, protocol, key):
        super().__init__(file, protocol)
        self.key = key

    def _torch_name(self, obj):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("ascii"))
        self.memoize(obj)

    def _save_dtype(self, obj):
        self.save(_T.setdefault("torch." + obj.name, _TorchName("torch", obj.name)))

    dispatch[_TorchName] = _torch_name
    dispatch[_dtype.dtype] = _save_dtype

    def persistent_id(self, obj):
        if type(obj) is Storage:
            return "storage", _T["torch." + _DTYPE_STORAGE[obj.dtype.name]], self.key(obj), "cpu", obj.numel
        return None

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            plain = Tensor._make(obj._storage, tuple(obj._shape), tuple(obj._stride), obj._offset)
            if type(obj).__name__ == "Parameter":
                return _T["torch._utils._rebuild_parameter"], (plain, obj.requires_grad, OrderedDict())
            return _T["torch._utils._rebuild_tensor_v2"], (
                obj._storage, obj._offset, tuple(obj._shape), tuple(obj._stride), obj.requires_grad, OrderedDict())
        if isinstance(obj, _device_cls):
            return _T["torch.device"], (str(obj),)
        if type(obj) is Size:
            return _T["torch.Size"], (tuple(obj),)
        return NotImplemented


# ---- the JSON tree (webtorch's own reading path) -----------------------------------------------
def _check_key(k):
    if not isinstance(k, (str, int, float, bool, type(None), tuple)):
        raise TypeError(f"webtorch.save: dict keys must be str/int/float/bool/None/tuple, got {type(k).__name__}")


def _to_json(obj, key, depth=0, seen=None):
    """The JSON tree of a plain obj. Exact types only, each container once: a subclass (namedtuple,
    torch.Size) raises TypeError and a container met twice ValueError, and the file then holds
    data.pkl alone, which keeps types and shared references."""
    if depth > 500:
        raise ValueError("webtorch.save: object nesting is too deep")
    seen = set() if seen is None else seen
    if type(obj) in (dict, OrderedDict, list, tuple) and obj:
        if id(obj) in seen:
            raise ValueError("a container is referenced twice")
        seen.add(id(obj))
    if obj is None or type(obj) in (bool, str):
        return obj
    if type(obj) is int:
        return obj if -(1 << 53) < obj < (1 << 53) else {"$int": str(obj)}
    if type(obj) is float:
        return obj if math.isfinite(obj) else {"$float": repr(obj)}
    if type(obj) is Tensor or type(obj).__name__ == "Parameter":
        st = obj._storage
        d = {"storage": key(st), "dtype": st.dtype.name, "shape": list(obj._shape), "stride": list(obj._stride),
             "offset": obj._offset, "requires_grad": bool(obj.requires_grad)}
        if type(obj).__name__ == "Parameter":
            d["parameter"] = True
        return {"$tensor": d}
    if isinstance(obj, _dtype.dtype):
        return {"$dtype": obj.name}
    if isinstance(obj, _device_cls):
        return {"$device": str(obj)}
    if type(obj) in (dict, OrderedDict):
        for k in obj:
            _check_key(k)
        items = [[_to_json(k, key, depth + 1, seen), _to_json(v, key, depth + 1, seen)] for k, v in obj.items()]
        if isinstance(obj, OrderedDict):
            d = {"$odict": items}
            meta = getattr(obj, "_metadata", None)
            if meta is not None:
                d["$metadata"] = _to_json(meta, key, depth + 1, seen)
            return d
        return {"$dict": items}
    if type(obj) is list:
        return [_to_json(v, key, depth + 1, seen) for v in obj]
    if type(obj) is tuple:
        return {"$tuple": [_to_json(v, key, depth + 1, seen) for v in obj]}
    raise TypeError(f"webtorch.save cannot store an object of type {type(obj).__name__}: only tensors, numbers, "
                    "strings, None, dtypes, devices and dict/list/tuple/OrderedDict of them")


def _from_json(node, name, storages, meta, depth=0):
    if depth > 500:
        raise _bad(name, "nesting too deep")
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if isinstance(node, list):
        return [_from_json(v, name, storages, meta, depth + 1) for v in node]
    if not isinstance(node, dict) or len(node) not in (1, 2):
        raise _bad(name, f"unexpected JSON node {str(node)[:60]}")
    tag = next(iter(node))
    val = node[tag]
    rec = lambda v: _from_json(v, name, storages, meta, depth + 1)  # noqa: E731
    if tag == "$tuple" and isinstance(val, list):
        return tuple(rec(v) for v in val)
    if tag in ("$dict", "$odict") and isinstance(val, list):
        out = OrderedDict() if tag == "$odict" else {}
        for pair in val:
            if not isinstance(pair, list) or len(pair) != 2:
                raise _bad(name, "bad dict entry")
            k = rec(pair[0])
            try:
                out[k] = rec(pair[1])
            except TypeError:
                raise _bad(name, f"unhashable dict key {k!r:.40}") from None
        if "$metadata" in node:
            out._metadata = rec(node["$metadata"])
        return out
    if tag == "$int" and isinstance(val, str):
        try:
            return int(val)
        except ValueError:
            raise _bad(name, f"bad integer {val!r:.40}") from None
    if tag == "$float" and val in ("inf", "-inf", "nan"):
        return float(val)
    if tag == "$dtype" and val in _dtype.BY_NAME:
        return _dtype.BY_NAME[val]
    if tag == "$device" and isinstance(val, str):
        try:
            return as_device(val)
        except Exception as e:
            raise _bad(name, f"bad device {val!r:.40}: {e}") from None
    if tag == "$tensor" and isinstance(val, dict):
        key = val.get("storage")
        sm = meta.get(key) if isinstance(key, str) else None
        if not isinstance(sm, dict):
            raise _bad(name, f"tensor refers to unknown storage {key!r:.40}")
        if sm.get("dtype") != val.get("dtype"):
            raise _bad(name, "tensor dtype differs from its storage's")
        st = storages.get(key, sm.get("dtype"), sm.get("numel"))
        t = _make_tensor(name, st, val.get("offset"), val.get("shape"), val.get("stride"),
                         bool(val.get("requires_grad")) and not val.get("parameter"))
        if val.get("parameter"):
            return _as_parameter(t, bool(val.get("requires_grad")))
        return t
    raise _bad(name, f"unexpected JSON node {str(node)[:60]}")


# ---- zip writing -------------------------------------------------------------------------------
def _archive_name(f):
    if isinstance(f, (str, os.PathLike)):
        base = os.path.splitext(os.path.basename(os.fspath(f)))[0]
        if base and all(c.isalnum() or c in "_-." for c in base):
            return base
    return "archive"


def _aligned_write(zf, buf, name, data, align=64):
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    offset = buf.tell()
    header = 30 + len(name.encode("utf-8"))
    pad = (-(offset + header + 4)) % align
    info.extra = struct.pack("<HH", 0x4246, pad) + b"Z" * pad
    zf.writestr(info, data)


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save any picklable obj as torch.save does, to a path or a writable binary file (a path
    ending in '.safetensors' writes safetensors)."""
    if isinstance(f, (str, os.PathLike)) and os.fspath(f).endswith(".safetensors"):
        return save_safetensors(obj, f)
    keys = {}
    storages = []

    def key(st):
        k = keys.get(id(st))
        if k is None:
            k = keys[id(st)] = str(len(storages))
            storages.append(st)
        return k

    out = io.BytesIO()
    _Pickler(out, pickle_protocol, key).dump(obj)
    pkl = out.getvalue()
    try:
        tree = _to_json(obj, key)
    except (TypeError, ValueError):  # not a plain tree (a module, a user class, ...): data.pkl alone holds it
        tree = None
    name = _archive_name(f)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        _aligned_write(zf, buf, f"{name}/data.pkl", pkl)
        _aligned_write(zf, buf, f"{name}/.format_version", b"1")
        _aligned_write(zf, buf, f"{name}/.storage_alignment", b"64")
        if not _disable_byteorder_record:
            _aligned_write(zf, buf, f"{name}/byteorder", b"little")
        for st in storages:
            _aligned_write(zf, buf, f"{name}/data/{keys[id(st)]}", _storage_bytes(st))
        if tree is not None:
            meta = {keys[id(st)]: {"dtype": st.dtype.name, "numel": st.numel} for st in storages}
            doc = json.dumps({"format": "webtorch", "version": FORMAT_VERSION, "storages": meta, "root": tree},
                             separators=(",", ":"), allow_nan=False)
            _aligned_write(zf, buf, f"{name}/webtorch.json", doc.encode("utf-8"))
        _aligned_write(zf, buf, f"{name}/version", b"3\n")
        sid = str(int.from_bytes(hashlib.sha1(pkl).digest(), "little")).zfill(40)[-40:]
        _aligned_write(zf, buf, f"{name}/.data/serialization_id", sid.encode("ascii"))
    _write_out(f, buf.getvalue())


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


# ---- loading -----------------------------------------------------------------------------------
def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **pickle_load_args):
    """Load what torch.save / webtorch.save wrote (PyTorch's zip format) or a safetensors file.
    weights_only=True (the default) builds only PyTorch's allow-list plus add_safe_globals';
    weights_only=False unpickles anything (only for files you trust), mapping torch's names to
    webtorch's. map_location: None, a device or str, a {saved: target} dict, or a callable."""
    if weights_only is None:
        weights_only = True
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    with _source(f) as (fh, size, name):
        head = fh.read(10)
        fh.seek(-len(head), io.SEEK_CUR)
        if head[:4] == b"PK\x03\x04" or head[:4] == b"PK\x05\x06":
            return _load_zip(fh, size, name, map_location, weights_only, pickle_load_args)
        if len(head) >= 10 and head[8:9] == b"{":
            return _load_safetensors(fh, size, name, map_location)
    if head[:2] in (b"\x80\x02", b"\x80\x04", b"\x80\x05"):
        raise _bad(name, "this is a raw pickle (PyTorch's legacy format or a plain pickle), which webtorch does "
                         "not read; re-save it with torch.save(obj, f) (zip format) or as safetensors")
    if not head:
        raise _bad(name, "the file is empty")
    raise _bad(name, f"unrecognized format (starts with {head[:8]!r})")


def _load_zip(fh, size, name, map_location, weights_only, pickle_load_args):
    try:
        zf = zipfile.ZipFile(fh)
        names = zf.namelist()
    except Exception as e:  # BadZipFile, struct.error, UnicodeDecodeError, ... on a damaged directory
        raise _bad(name, f"bad zip archive ({type(e).__name__}: {e})") from None
    prefix = None
    for n in names:
        if n.endswith("/data.pkl") and n.count("/") == 1:
            prefix = n[:-len("data.pkl")]
            break
    if prefix is None:
        raise _bad(name, "the zip has no <name>/data.pkl record")
    records = _Records(zf, prefix, name, size)
    if "byteorder" in records and records.read("byteorder") != b"little":
        raise _bad(name, "only little-endian checkpoints are supported")
    storages = _Storages(name, records, map_location)
    if "webtorch.json" in records:
        try:
            doc = json.loads(records.read("webtorch.json").decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            raise _bad(name, f"webtorch.json is not valid JSON ({type(e).__name__})") from None
        if not isinstance(doc, dict) or doc.get("format") != "webtorch" or not isinstance(doc.get("storages"), dict):
            raise _bad(name, "webtorch.json lacks the webtorch header")
        if not isinstance(doc.get("version"), int) or doc["version"] > FORMAT_VERSION:
            raise _bad(name, f"webtorch.json version {doc.get('version')!r} is newer than this webtorch reads")
        return _from_json(doc.get("root"), name, storages, doc["storages"])
    pkl = records.read("data.pkl", limit=max(_MAX_META, size))
    if weights_only:
        return _Unpickler(pkl, name, storages).load()
    pickle_load_args.setdefault("encoding", "utf-8")
    try:
        return _FullUnpickler(io.BytesIO(pkl), name, storages, **pickle_load_args).load()
    except CheckpointError:
        raise
    except (pickle.UnpicklingError, EOFError, RecursionError) as e:
        raise _bad(name, f"data.pkl does not unpickle ({type(e).__name__}: {e})") from None


# ---- safetensors -------------------------------------------------------------------------------
def save_safetensors(tensors, f, metadata=None):
    """Write a flat {str: Tensor} dict as safetensors (to a path or a writable binary file)."""
    if not isinstance(tensors, dict):
        raise TypeError("safetensors stores a flat dict of {name: tensor}; got " + type(tensors).__name__)
    header, chunks, offset = {}, [], 0
    if metadata is not None:
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise TypeError("safetensors metadata must be a dict of str to str")
        header["__metadata__"] = dict(metadata)
    items = sorted(tensors.items(), key=lambda kv: (-_ITEM[kv[1].dtype.name] if isinstance(kv[1], Tensor) else 0,
                                                     str(kv[0])))
    for k, t in items:
        if not isinstance(k, str) or not isinstance(t, Tensor):
            raise TypeError(f"safetensors stores str -> Tensor entries; got {type(k).__name__} -> "
                            f"{type(t).__name__}")
        if k == "__metadata__":
            raise ValueError("'__metadata__' is reserved in safetensors")
        c = t.detach()
        if not c.is_contiguous() or c._offset != 0 or c._storage.numel != c.numel():
            c = clone(c).contiguous() if c.is_contiguous() else c.contiguous()
            if c._offset != 0 or c._storage.numel != c.numel():
                c = clone(c)
        b = _storage_bytes(c._storage)
        header[k] = {"dtype": _DTYPE_ST[c.dtype.name], "shape": list(c.shape),
                     "data_offsets": [offset, offset + len(b)]}
        chunks.append(b)
        offset += len(b)
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * ((-len(h)) % 8)
    _write_out(f, struct.pack("<Q", len(h)) + h + b"".join(chunks))


def load_safetensors(f, device="cpu"):
    with _source(f) as (fh, size, name):
        return _load_safetensors(fh, size, name, device)


def _load_safetensors(fh, size, name, map_location):
    """A safetensors file, its header checked whole before any tensor is read; each tensor is then
    read into memory of its own, which its storage adopts (peak memory about the tensors' size)."""
    if size < 8:
        raise _bad(name, "safetensors file is truncated")
    n = struct.unpack("<Q", fh.read(8))[0]
    if n > size - 8 or n > 100_000_000:
        raise _bad(name, f"safetensors header of {n} bytes does not fit in a {size}-byte file")
    try:
        header = json.loads(fh.read(n).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise _bad(name, f"safetensors header is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise _bad(name, "safetensors header is not a JSON object")
    meta = header.pop("__metadata__", None)
    if meta is not None and (not isinstance(meta, dict) or
                             not all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items())):
        raise _bad(name, "safetensors __metadata__ must map str to str")
    body = size - 8 - n
    entries = []
    for k, info in header.items():
        if not isinstance(info, dict) or info.get("dtype") not in _ST_DTYPE or \
                not isinstance(info.get("shape"), list) or not isinstance(info.get("data_offsets"), list):
            raise _bad(name, f"bad safetensors entry for {k!r:.60}")
        dt = _ST_DTYPE[info["dtype"]]
        shape = info["shape"]
        offs = info["data_offsets"]
        if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape) or len(offs) != 2 or \
                not all(isinstance(o, int) and not isinstance(o, bool) for o in offs):
            raise _bad(name, f"bad shape or offsets for {k!r:.60}")
        b, e = offs
        if not 0 <= b <= e <= body:
            raise _bad(name, f"tensor {k!r:.60} lies outside the file (bytes {b}..{e} of {body})")
        numel = _checked_numel(name, shape)
        if e - b != numel * _ITEM[dt]:
            raise _bad(name, f"tensor {k!r:.60} has {e - b} bytes for shape {shape} of {dt}")
        entries.append((b, e, k, dt, shape, numel))
    entries.sort(key=lambda entry: entry[:2])
    pos = 0
    for b, e, *_ in entries:
        if b != pos:
            raise _bad(name, "safetensors data has gaps or overlapping tensors")
        pos = e
    if pos != body:
        raise _bad(name, f"safetensors data holds {body - pos} bytes that belong to no tensor")
    out = {}
    for b, e, k, dt, shape, numel in entries:
        st = _placed(map_location, _cpu_storage(_read_exact(fh, e - b, name), dt, numel), "cpu")
        out[k] = Tensor._make(st, tuple(shape), contiguous_strides(shape) if shape else (), 0)
    return {k: out[k] for k in header}
