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

Modules: this one (the zip layout, torch's names, the trusted unpickler, the pickle writer, the JSON
tree, save and load); _weights_only_unpickler.py (weights_only=True and the safe globals);
_safetensors.py; _checkpoint_io.py (errors, bytes, storages, tensors and files they all share).
"""
import codecs
import hashlib
import importlib
import io
import json
import math
import os
import pickle
import struct
import zipfile
from collections import Counter, OrderedDict

import webtorch

from . import _dtype
from ._checkpoint_io import (  # noqa: F401 (named from here: tests, jit.py)
    _INT64_MAX,
    _ITEM,
    MAX_VIEW_NUMEL,
    CheckpointError,
    UnpicklingError,
    _bad,
    _cpu_storage,
    _make_tensor,
    _placed,
    _source,
    _source_name,
    _storage_bytes,
    _write_out,
)
from ._device import as_device, device as _device_cls
from ._safetensors import _load_safetensors, load_safetensors, save_safetensors
from ._serialization_extras import *  # noqa: F401,F403
from ._serialization_extras import __all__ as _extras_all, _globals_in_pickle
from ._tensor import Size, Storage, Tensor
from ._weights_only_unpickler import (
    _py3_name,
    _Unpickler,
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    safe_globals,
)
from .nn.parameter import Parameter

__all__ = ["save", "load", "save_safetensors", "load_safetensors", "CheckpointError", "UnpicklingError",
           "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals",
           "get_unsafe_globals_in_checkpoint"] + _extras_all

FORMAT_VERSION = 1
_MAX_META = 64 << 20  # the most bytes a non-storage record (data.pkl, webtorch.json) may declare


# ---- torch's storage and dtype names -----------------------------------------------------------
_STORAGE_DTYPE = {"FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
                  "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
                  "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8", "BoolStorage": "bool",
                  "ComplexFloatStorage": "complex64", "ComplexDoubleStorage": "complex128"}
_DTYPE_STORAGE = {v: k for k, v in _STORAGE_DTYPE.items()}
_TORCH_DTYPES = {"float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
                 "float16": "float16", "half": "float16", "bfloat16": "bfloat16", "int64": "int64",
                 "long": "int64", "int32": "int32", "int": "int32", "int16": "int16", "short": "int16",
                 "int8": "int8", "uint8": "uint8", "bool": "bool", "complex64": "complex64", "cfloat": "complex64",
                 "complex128": "complex128", "cdouble": "complex128", "uint16": "uint16", "uint32": "uint32",
                 "uint64": "uint64"}


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
        self.saved_on = {}  # key -> the device webtorch saved it from, where not cpu (webtorch.locations)

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
        location = self.saved_on.get(key, location)
        st = _placed(self.map_location, _cpu_storage(data, dtype, numel), location)
        self.built[key], self.dtypes[key] = st, dtype
        return st

    def from_pid(self, pid):
        """The storage a persistent id ('storage', torch.FloatStorage, key, location, numel) names."""
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise _bad(self.name, f"unsupported persistent id {pid!r:.80}")
        _, stype, key, location, numel = pid
        if stype is _UNTYPED:  # its dtype comes with the tensor (_rebuild_tensor_v3); numel counts bytes
            return _UntypedRef(self, key, numel, location)
        if not isinstance(stype, (_StorageType, _dtype.dtype)):
            raise _bad(self.name, f"unsupported storage type {stype!r:.60}")
        dtype = stype.dtype if isinstance(stype, _StorageType) else stype.name
        return self.get(key, dtype, numel, location)


class _UntypedRef:
    """A persistent id's torch.storage.UntypedStorage (PyTorch's for the dtypes without a legacy storage class:
    uint16, uint32, uint64): read once _rebuild_tensor_v3 names its dtype."""

    def __init__(self, storages, key, nbytes, location):
        self.storages, self.key, self.nbytes, self.location = storages, key, nbytes, location

    def typed(self, dtype):
        if not isinstance(dtype, _dtype.dtype) or dtype.name not in _ITEM or not isinstance(self.nbytes, int):
            raise _bad(self.storages.name, f"bad untyped storage of dtype {dtype!r:.60}")
        return self.storages.get(self.key, dtype.name, self.nbytes // _ITEM[dtype.name], self.location)


_UNTYPED = object()  # what torch.storage.UntypedStorage unpickles to (inside persistent ids only)


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
        if isinstance(storage, _UntypedRef):
            storage = storage.typed(dtype)
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
    g["torch.storage.UntypedStorage"] = _UNTYPED
    return g


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
      ["torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor_v3", "torch._utils._rebuild_parameter",
       "torch.device", "torch.Size", "torch.storage.UntypedStorage"] +
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
            if obj.dtype.name not in _DTYPE_STORAGE:  # uint16/32/64: PyTorch's UntypedStorage of bytes
                return "storage", _T["torch.storage.UntypedStorage"], self.key(obj), "cpu", obj.nbytes()
            return "storage", _T["torch." + _DTYPE_STORAGE[obj.dtype.name]], self.key(obj), "cpu", obj.numel
        return None

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            plain = Tensor._make(obj._storage, tuple(obj._shape), tuple(obj._stride), obj._offset)
            if type(obj).__name__ == "Parameter":
                return _T["torch._utils._rebuild_parameter"], (plain, obj.requires_grad, OrderedDict())
            args = (obj._storage, obj._offset, tuple(obj._shape), tuple(obj._stride), obj.requires_grad,
                    OrderedDict())
            if obj.dtype.name not in _DTYPE_STORAGE:
                return _T["torch._utils._rebuild_tensor_v3"], args + (obj.dtype,)
            return _T["torch._utils._rebuild_tensor_v2"], args
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
    if type(obj) in (dict, OrderedDict, list, tuple):
        if obj:
            if id(obj) in seen:
                raise ValueError("a container is referenced twice")
            seen.add(id(obj))
        return _container_to_json(obj, lambda v: _to_json(v, key, depth + 1, seen))
    if obj is None or type(obj) in (bool, str):
        return obj
    if type(obj) is int:
        return obj if -(1 << 53) < obj < (1 << 53) else {"$int": str(obj)}
    if type(obj) is float:
        return obj if math.isfinite(obj) else {"$float": repr(obj)}
    if type(obj) is Tensor or type(obj).__name__ == "Parameter":
        return {"$tensor": _tensor_to_json(obj, key)}
    if isinstance(obj, _dtype.dtype):
        return {"$dtype": obj.name}
    if isinstance(obj, _device_cls):
        return {"$device": str(obj)}
    raise TypeError(f"webtorch.save cannot store an object of type {type(obj).__name__}: only tensors, numbers, "
                    "strings, None, dtypes, devices and dict/list/tuple/OrderedDict of them")


def _container_to_json(obj, rec):
    if type(obj) is list:
        return [rec(v) for v in obj]
    if type(obj) is tuple:
        return {"$tuple": [rec(v) for v in obj]}
    for k in obj:
        _check_key(k)
    items = [[rec(k), rec(v)] for k, v in obj.items()]
    if not isinstance(obj, OrderedDict):
        return {"$dict": items}
    d = {"$odict": items}
    meta = getattr(obj, "_metadata", None)
    if meta is not None:
        d["$metadata"] = rec(meta)
    return d


def _tensor_to_json(t, key):
    st = t._storage
    d = {"storage": key(st), "dtype": st.dtype.name, "shape": list(t._shape), "stride": list(t._stride),
         "offset": t._offset, "requires_grad": bool(t.requires_grad)}
    if type(t).__name__ == "Parameter":
        d["parameter"] = True
    return d


def _from_json(node, name, storages, meta, depth=0):
    if depth > 500:
        raise _bad(name, "nesting too deep")
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    rec = lambda v: _from_json(v, name, storages, meta, depth + 1)  # noqa: E731
    if isinstance(node, list):
        return [rec(v) for v in node]
    if not isinstance(node, dict) or len(node) not in (1, 2):
        raise _bad(name, f"unexpected JSON node {str(node)[:60]}")
    tag = next(iter(node))
    val = node[tag]
    if tag == "$tuple" and isinstance(val, list):
        return tuple(rec(v) for v in val)
    if tag in ("$dict", "$odict") and isinstance(val, list):
        return _dict_from_json(node, tag, val, name, rec)
    if tag == "$tensor" and isinstance(val, dict):
        return _tensor_from_json(val, name, storages, meta)
    return _scalar_from_json(node, tag, val, name)


def _dict_from_json(node, tag, pairs, name, rec):
    out = OrderedDict() if tag == "$odict" else {}
    for pair in pairs:
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


def _tensor_from_json(val, name, storages, meta):
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


def _scalar_from_json(node, tag, val, name):
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
        on_devices = {keys[id(st)]: str(st.device) for st in storages if st.device.type != "cpu"}
        if on_devices:  # data.pkl says 'cpu' (so PyTorch loads the file); webtorch restores these
            _aligned_write(zf, buf, f"{name}/webtorch.locations", json.dumps(on_devices).encode("utf-8"))
        if tree is not None:
            meta = {keys[id(st)]: {"dtype": st.dtype.name, "numel": st.numel} for st in storages}
            doc = json.dumps({"format": "webtorch", "version": FORMAT_VERSION, "storages": meta, "root": tree},
                             separators=(",", ":"), allow_nan=False)
            _aligned_write(zf, buf, f"{name}/webtorch.json", doc.encode("utf-8"))
        _aligned_write(zf, buf, f"{name}/version", b"3\n")
        sid = str(int.from_bytes(hashlib.sha1(pkl).digest(), "little")).zfill(40)[-40:]
        _aligned_write(zf, buf, f"{name}/.data/serialization_id", sid.encode("ascii"))
    _write_out(f, buf.getvalue())


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


def _json_record(records, rec, name):
    try:
        return json.loads(records.read(rec).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise _bad(name, f"{rec} is not valid JSON ({type(e).__name__})") from None


def get_unsafe_globals_in_checkpoint(f):
    """The 'module.name' globals a torch.save file's data.pkl names that weights_only loading does not
    allow (read from its opcodes, never run)."""
    with _source(f) as (fh, size, name):
        if fh.read(4)[:2] != b"PK":
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        fh.seek(-4, io.SEEK_CUR)
        pkl = bytes(_zip_records(fh, size, name).read("data.pkl", limit=max(_MAX_META, size)))
    safe = set(_torch_globals(_Rebuild(name))) | {"%s.%s" % (g.__module__, g.__qualname__) if not isinstance(g, tuple)
                                                  else g[1] for g in get_safe_globals()}
    return sorted(_globals_in_pickle(pkl) - safe)


def _zip_records(fh, size, name):
    """The records of the torch.save zip in fh (its one <name>/data.pkl names the prefix)."""
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
    return _Records(zf, prefix, name, size)


def _load_zip(fh, size, name, map_location, weights_only, pickle_load_args):
    records = _zip_records(fh, size, name)
    if "byteorder" in records and records.read("byteorder") != b"little":
        raise _bad(name, "only little-endian checkpoints are supported")
    storages = _Storages(name, records, map_location)
    if "webtorch.locations" in records:
        saved_on = _json_record(records, "webtorch.locations", name)
        if not isinstance(saved_on, dict) or not all(isinstance(v, str) for v in saved_on.values()):
            raise _bad(name, "webtorch.locations is not a {storage key: device} map")
        storages.saved_on = saved_on
    if "webtorch.json" in records:
        doc = _json_record(records, "webtorch.json", name)
        if not isinstance(doc, dict) or doc.get("format") != "webtorch" or not isinstance(doc.get("storages"), dict):
            raise _bad(name, "webtorch.json lacks the webtorch header")
        if not isinstance(doc.get("version"), int) or doc["version"] > FORMAT_VERSION:
            raise _bad(name, f"webtorch.json version {doc.get('version')!r} is newer than this webtorch reads")
        return _from_json(doc.get("root"), name, storages, doc["storages"])
    pkl = records.read("data.pkl", limit=max(_MAX_META, size))
    if weights_only:
        return _Unpickler(pkl, name, storages, _torch_globals(_Rebuild(name))).load()
    pickle_load_args.setdefault("encoding", "utf-8")
    try:
        return _FullUnpickler(io.BytesIO(pkl), name, storages, **pickle_load_args).load()
    except CheckpointError:
        raise
    except (pickle.UnpicklingError, EOFError, RecursionError) as e:
        raise _bad(name, f"data.pkl does not unpickle ({type(e).__name__}: {e})") from None


