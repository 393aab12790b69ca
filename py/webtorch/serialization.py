"""webtorch.save / webtorch.load: checkpoints that never run code from the file.

Formats
-------
`save(obj, f)` writes one zip in PyTorch's layout (`<name>/data.pkl`, `<name>/data/<key>`,
`<name>/byteorder`, `<name>/version`, 64-byte aligned records) so that real
`torch.load(f, weights_only=True)` reads it, plus `<name>/webtorch.json`: the same object tree
as JSON. webtorch reads the JSON and the raw little-endian storages; it never unpickles.

`save(obj, "x.safetensors")` (or `save_safetensors`) writes safetensors: a flat
{name: tensor} dict, an 8-byte header length, a JSON header, then the raw bytes.

`load(f)` recognizes its own zips, safetensors files, and PyTorch's `.pt` zips (as written by
`torch.save(model.state_dict(), f)`). For a PyTorch zip it interprets `data.pkl` with a small
opcode interpreter that can only build containers, numbers, strings and tensors: the only
globals it knows are OrderedDict, torch's tensor-rebuild functions, storage types and dtypes.
Any other global (`os.system`, ...) raises `UnpicklingError` naming it; nothing is imported or
called. A malformed, truncated or hostile file raises `CheckpointError` (a RuntimeError):
"... is not a valid webtorch/PyTorch checkpoint: <why>".

Tensors hold: None, bool, int, float, str, list, tuple, dict, OrderedDict, webtorch.dtype,
webtorch.device and Tensor (views sharing storage stay shared). Bytes go through numpy when
it is importable and through array/struct otherwise (Pyodide without numpy).
"""
import array
import io
import json
import math
import os
import pickle
import struct
import sys
import zipfile
from collections import OrderedDict

from . import _dtype, _prims
from ._device import as_device, device as _device_cls
from ._tensor import Tensor

try:
    import numpy as _np
except ImportError:  # pragma: no cover - Pyodide without numpy
    _np = None

__all__ = ["save", "load", "save_safetensors", "load_safetensors", "CheckpointError", "UnpicklingError"]

FORMAT_VERSION = 1
_LITTLE = sys.byteorder == "little"


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
        return a.astype(a.dtype.newbyteorder("=")), dtype
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
    from .backends.base import View
    dt = storage.dtype.name
    v = View(storage.buf, (storage.numel,), (1,), 0, dt)
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


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


# ---- map_location ------------------------------------------------------------------------------
def _target_device(map_location, location="cpu"):
    if map_location is None:
        return as_device("cpu")
    if isinstance(map_location, dict):
        return as_device(map_location.get(location, "cpu"))
    if callable(map_location) and not isinstance(map_location, (str, _device_cls)):
        raise TypeError("webtorch.load: a callable map_location is not supported; pass a device or a dict")
    return as_device(map_location)


class _Storages:
    """Storages read lazily from the archive, built once each on the target device."""

    def __init__(self, name, read, map_location):
        self.name, self.read, self.map_location = name, read, map_location
        self.built = {}

    def get(self, key, dtype, numel, location="cpu"):
        k = (key, dtype)
        if k in self.built:
            st = self.built[k]
            if st.numel != numel and st.dtype.name == dtype:
                raise _bad(self.name, f"storage {key!r} is used with two different sizes")
            return st
        if dtype not in _ITEM:
            raise _bad(self.name, f"unknown storage dtype {dtype!r}")
        if not isinstance(numel, int) or numel < 0:
            raise _bad(self.name, f"bad storage size {numel!r}")
        data = self.read(key)
        if len(data) != numel * _ITEM[dtype]:
            raise _bad(self.name, f"storage {key!r} holds {len(data)} bytes, expected {numel * _ITEM[dtype]} "
                                  f"({numel} x {dtype})")
        values, dt = _from_bytes(data, dtype)
        dev = _target_device(self.map_location, location)
        t = _prims.from_flat(values, (numel,), _dtype.BY_NAME[dt], dev)
        self.built[k] = t._storage
        return t._storage


def _make_tensor(name, storage, offset, size, stride, requires_grad=False):
    if not isinstance(size, (tuple, list)) or not all(isinstance(s, int) and s >= 0 for s in size):
        raise _bad(name, f"bad tensor size {size!r}")
    if not isinstance(stride, (tuple, list)) or len(stride) != len(size) or \
            not all(isinstance(s, int) and s >= 0 for s in stride):
        raise _bad(name, f"bad tensor stride {stride!r} for size {size!r}")
    if not isinstance(offset, int) or offset < 0:
        raise _bad(name, f"bad storage offset {offset!r}")
    if _numel(size) > 0:
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
    try:
        from .nn.parameter import Parameter
    except Exception:  # nn not available: a leaf tensor that requires grad
        t.requires_grad_(bool(requires_grad))
        return t
    return Parameter(t, requires_grad=bool(requires_grad))


# ---- the restricted pickle interpreter ---------------------------------------------------------
class _Global:
    """A global the interpreter knows: a marker, never an imported object."""
    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __repr__(self):
        return f"{self.module}.{self.name}"


_ALLOWED = {("collections", "OrderedDict"), ("torch._utils", "_rebuild_tensor_v2"),
            ("torch._utils", "_rebuild_tensor_v3"), ("torch._utils", "_rebuild_parameter"),
            ("torch._utils", "_rebuild_parameter_with_state"), ("torch", "device"),
            ("builtins", "set"), ("builtins", "frozenset"), ("__builtin__", "set"), ("torch", "Size"),
            ("torch.serialization", "_get_layout"), ("torch", "strided")}
_ALLOWED |= {("torch", n) for n in _STORAGE_DTYPE} | {("torch", n) for n in _TORCH_DTYPES}
_MAX_LEN = 1 << 31


class _Unpickler:
    """Interprets pickle opcodes (protocols 2-5) building only allowed objects."""

    def __init__(self, data, name, storages):
        self.data, self.pos, self.name, self.storages = data, 0, name, storages

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
        if (module, qual) not in _ALLOWED:
            raise UnpicklingError(f"{self.name}: Weights only load failed: unsupported global {module}.{qual} "
                                  f"(GLOBAL {module}.{qual} is not an allowed global; webtorch.load only "
                                  "builds tensors, numbers, strings and containers and never runs code from a "
                                  "checkpoint)")
        return _Global(module, qual)

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
                n = self._u("<Q")
                if n > _MAX_LEN:
                    raise _bad(self.name, f"string of {n} bytes")
                S.append(self._str(n))
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
                S.append(tuple(self._pop_mark()))
            elif op in (0x85, 0x86, 0x87):  # TUPLE1/2/3
                n = op - 0x84
                if len(S) < n:
                    raise _bad(self.name, "data.pkl stack underflow")
                items = tuple(S[-n:])
                del S[-n:]
                S.append(items)
            elif op == 0x6C:  # LIST
                S.append(list(self._pop_mark()))
            elif op == 0x64:  # DICT
                items = self._pop_mark()
                S.append(self._pairs({}, items))
            elif op == 0x61:  # APPEND
                v = self._pop()
                self._append(self._top(), [v])
            elif op == 0x65:  # APPENDS
                items = self._pop_mark()
                self._append(self._top(), items)
            elif op == 0x90:  # ADDITEMS
                items = self._pop_mark()
                t = self._top()
                if not isinstance(t, set):
                    raise _bad(self.name, "ADDITEMS on a non-set")
                t.update(self._hashable(i) for i in items)
            elif op == 0x73:  # SETITEM
                v = self._pop()
                k = self._pop()
                self._pairs(self._top(), [k, v])
            elif op == 0x75:  # SETITEMS
                items = self._pop_mark()
                self._pairs(self._top(), items)
            elif op in (0x71, 0x72, 0x94):  # BINPUT, LONG_BINPUT, MEMOIZE
                idx = self._take(1)[0] if op == 0x71 else self._u("<I") if op == 0x72 else len(self.memo)
                if not S:
                    raise _bad(self.name, "memoizing an empty stack")
                self.memo[idx] = S[-1]
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
                fn = self._pop()
                S.append(self._call(fn, args))
            elif op in (0x81, 0x92):  # NEWOBJ, NEWOBJ_EX
                kwargs = self._pop() if op == 0x92 else {}
                args = self._pop()
                cls = self._pop()
                if kwargs:
                    raise _bad(self.name, "NEWOBJ_EX with keyword arguments")
                S.append(self._call(cls, args))
            elif op == 0x62:  # BUILD
                state = self._pop()
                self._build(self._top(), state)
            elif op == 0x51:  # BINPERSID
                pid = self._pop()
                S.append(self._persistent(pid))
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
        return d

    def _append(self, lst, items):
        if not isinstance(lst, list):
            raise _bad(self.name, f"APPEND on a {type(lst).__name__}")
        lst.extend(items)

    def _build(self, obj, state):
        if isinstance(obj, OrderedDict) and isinstance(state, dict):
            for k, v in state.items():
                if k != "_metadata":
                    raise _bad(self.name, f"unexpected attribute {k!r} set on an OrderedDict")
                obj._metadata = v
            return
        if isinstance(obj, Tensor) and (state is None or isinstance(state, (dict, tuple))):
            return  # tensor subclass python state (hooks, attributes): ignored
        raise _bad(self.name, f"BUILD on a {type(obj).__name__} is not allowed")

    def _persistent(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise _bad(self.name, f"unsupported persistent id {pid!r:.80}")
        _, stype, key, location, numel = pid
        if isinstance(stype, _Global) and stype.module == "torch":
            dtype = _STORAGE_DTYPE.get(stype.name) or _TORCH_DTYPES.get(stype.name)
        else:
            dtype = None
        if dtype is None:
            raise _bad(self.name, f"unsupported storage type {stype!r}")
        if not isinstance(key, str) or not isinstance(location, str):
            raise _bad(self.name, "bad storage key")
        return self.storages.get(key, dtype, numel, location)

    def _call(self, fn, args):
        if not isinstance(fn, _Global):
            raise _bad(self.name, f"REDUCE on a non-global {type(fn).__name__}")
        if not isinstance(args, tuple):
            raise _bad(self.name, "REDUCE arguments are not a tuple")
        key = (fn.module, fn.name)
        try:
            if key == ("collections", "OrderedDict"):
                return OrderedDict(*args)
            if key in (("torch._utils", "_rebuild_tensor_v2"), ("torch._utils", "_rebuild_tensor_v3")):
                if len(args) < 4:
                    raise _bad(self.name, "_rebuild_tensor with too few arguments")
                storage, offset, size, stride = args[:4]
                req = args[4] if len(args) > 4 else False
                if not hasattr(storage, "numel") or isinstance(storage, Tensor):
                    raise _bad(self.name, "_rebuild_tensor without a storage")
                return _make_tensor(self.name, storage, offset, size, stride, bool(req))
            if key in (("torch._utils", "_rebuild_parameter"), ("torch._utils", "_rebuild_parameter_with_state")):
                data, req = args[0], args[1]
                if not isinstance(data, Tensor):
                    raise _bad(self.name, "_rebuild_parameter without a tensor")
                return _as_parameter(data, req)
            if key == ("torch", "device"):
                return _device_cls(*args)
            if key in (("builtins", "set"), ("__builtin__", "set")):
                return set(*args)
            if key == ("builtins", "frozenset"):
                return frozenset(*args)
            if key == ("torch", "Size"):
                return tuple(*args)
            if key == ("torch.serialization", "_get_layout"):
                return "torch.strided"
        except CheckpointError:
            raise
        except Exception as e:
            raise _bad(self.name, f"cannot rebuild {fn!r}: {type(e).__name__}: {e}") from None
        raise _bad(self.name, f"{fn!r} is not callable")


def _resolve_markers(obj, name, depth=0):
    """Replace dtype/layout markers left in the tree by real objects."""
    if depth > 500:
        raise _bad(name, "nesting too deep")
    if isinstance(obj, _Global):
        if obj.module == "torch" and obj.name in _TORCH_DTYPES:
            return _dtype.BY_NAME[_TORCH_DTYPES[obj.name]]
        if obj.module == "torch" and obj.name == "strided":
            return "torch.strided"
        raise _bad(name, f"a bare reference to {obj!r} is not a value")
    if isinstance(obj, OrderedDict):
        out = OrderedDict((k, _resolve_markers(v, name, depth + 1)) for k, v in obj.items())
        if hasattr(obj, "_metadata"):
            out._metadata = obj._metadata
        return out
    if isinstance(obj, dict):
        return {k: _resolve_markers(v, name, depth + 1) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_resolve_markers(v, name, depth + 1) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_resolve_markers(v, name, depth + 1) for v in obj)
    return obj


# ---- the pickle writer (what torch.load(weights_only=True) reads) ------------------------------
class _PickleWriter:
    def __init__(self, storage_key):
        self.out = bytearray(b"\x80\x02")
        self.key = storage_key

    def global_(self, module, name):
        self.out += b"c" + module.encode() + b"\n" + name.encode() + b"\n"

    def dump(self, obj, depth=0):
        if depth > 500:
            raise ValueError("webtorch.save: object nesting is too deep")
        o = self.out
        if obj is None:
            o += b"N"
        elif obj is True:
            o += b"\x88"
        elif obj is False:
            o += b"\x89"
        elif isinstance(obj, int):
            if 0 <= obj < 256:
                o += b"K" + bytes([obj])
            elif 0 <= obj < 65536:
                o += b"M" + struct.pack("<H", obj)
            elif -(1 << 31) <= obj < (1 << 31):
                o += b"J" + struct.pack("<i", obj)
            else:
                b = obj.to_bytes((obj.bit_length() + 8) // 8, "little", signed=True)
                o += b"\x8a" + bytes([len(b)]) + b
        elif isinstance(obj, float):
            o += b"G" + struct.pack(">d", obj)
        elif isinstance(obj, str):
            b = obj.encode("utf-8")
            o += b"X" + struct.pack("<I", len(b)) + b
        elif isinstance(obj, Tensor):
            self.tensor(obj)
        elif isinstance(obj, _dtype.dtype):
            self.global_("torch", obj.name)
        elif isinstance(obj, _device_cls):
            self.global_("torch", "device")
            self.dump((str(obj),), depth + 1)
            o += b"R"
        elif isinstance(obj, dict):
            if isinstance(obj, OrderedDict):
                self.global_("collections", "OrderedDict")
                o += b")R"
            else:
                o += b"}"
            if obj:
                o += b"("
                for k, v in obj.items():
                    _check_key(k)
                    self.dump(k, depth + 1)
                    self.dump(v, depth + 1)
                o += b"u"
            meta = getattr(obj, "_metadata", None) if isinstance(obj, OrderedDict) else None
            if meta is not None:
                o += b"}"
                self.dump("_metadata", depth + 1)
                self.dump(meta, depth + 1)
                o += b"sb"
        elif isinstance(obj, list):
            o += b"]"
            if obj:
                o += b"("
                for v in obj:
                    self.dump(v, depth + 1)
                o += b"e"
        elif isinstance(obj, tuple):
            if not obj:
                o += b")"
            else:
                o += b"("
                for v in obj:
                    self.dump(v, depth + 1)
                o += b"t"
        else:
            raise TypeError(f"webtorch.save cannot store an object of type {type(obj).__name__}: only tensors, "
                            "numbers, strings, None, dtypes, devices and dict/list/tuple/OrderedDict of them")

    def tensor(self, t):
        st = t._storage
        key = self.key(st)
        is_param = type(t).__name__ == "Parameter"
        o = self.out
        if is_param:
            self.global_("torch._utils", "_rebuild_parameter")
        self.global_("torch._utils", "_rebuild_tensor_v2")
        o += b"(("
        self.dump("storage")
        self.global_("torch", _DTYPE_STORAGE[st.dtype.name])
        self.dump(key)
        self.dump("cpu")
        self.dump(st.numel)
        o += b"tQ"
        self.dump(t._offset)
        self.dump(tuple(t._shape))
        self.dump(tuple(t._stride))
        self.dump(bool(t.requires_grad) and not is_param)
        self.global_("collections", "OrderedDict")
        o += b")Rt"
        o += b"R"
        if is_param:
            self.dump(bool(t.requires_grad))
            self.global_("collections", "OrderedDict")
            o += b")R\x87R"


def _check_key(k):
    if not isinstance(k, (str, int, float, bool, type(None), tuple)):
        raise TypeError(f"webtorch.save: dict keys must be str/int/float/bool/None/tuple, got {type(k).__name__}")


# ---- the JSON tree (webtorch's own reading path) -----------------------------------------------
def _to_json(obj, key, depth=0):
    if depth > 500:
        raise ValueError("webtorch.save: object nesting is too deep")
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return obj if -(1 << 53) < obj < (1 << 53) else {"$int": str(obj)}
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else {"$float": repr(obj)}
    if isinstance(obj, Tensor):
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
    if isinstance(obj, dict):
        for k in obj:
            _check_key(k)
        items = [[_to_json(k, key, depth + 1), _to_json(v, key, depth + 1)] for k, v in obj.items()]
        if isinstance(obj, OrderedDict):
            d = {"$odict": items}
            meta = getattr(obj, "_metadata", None)
            if meta is not None:
                d["$metadata"] = _to_json(meta, key, depth + 1)
            return d
        return {"$dict": items}
    if isinstance(obj, list):
        return [_to_json(v, key, depth + 1) for v in obj]
    if isinstance(obj, tuple):
        return {"$tuple": [_to_json(v, key, depth + 1) for v in obj]}
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
    """Save obj (tensors, numbers, strings, containers) to a path or a writable binary file."""
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

    tree = _to_json(obj, key)
    pw = _PickleWriter(key)
    pw.dump(obj)
    pw.out += b"."
    meta = {keys[id(st)]: {"dtype": st.dtype.name, "numel": st.numel} for st in storages}
    doc = json.dumps({"format": "webtorch", "version": FORMAT_VERSION, "storages": meta, "root": tree},
                     separators=(",", ":"), allow_nan=False)
    name = _archive_name(f)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        _aligned_write(zf, buf, f"{name}/data.pkl", bytes(pw.out))
        _aligned_write(zf, buf, f"{name}/.format_version", b"1")
        _aligned_write(zf, buf, f"{name}/.storage_alignment", b"64")
        _aligned_write(zf, buf, f"{name}/byteorder", b"little")
        _aligned_write(zf, buf, f"{name}/webtorch.json", doc.encode("utf-8"))
        for st in storages:
            _aligned_write(zf, buf, f"{name}/data/{keys[id(st)]}", _storage_bytes(st))
        _aligned_write(zf, buf, f"{name}/version", b"3\n")
    _write_out(f, buf.getvalue())


def _write_out(f, data):
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            fh.write(data)
    else:
        f.write(data)


def _read_in(f):
    if isinstance(f, (str, os.PathLike)):
        name = os.fspath(f)
        with open(name, "rb") as fh:
            return fh.read(), repr(name)
    if isinstance(f, (bytes, bytearray, memoryview)):
        return bytes(f), "<bytes>"
    if hasattr(f, "read"):
        return f.read(), repr(getattr(f, "name", "<file>"))
    raise TypeError(f"webtorch.load expects a path or a readable binary file, got {type(f).__name__}")


# ---- loading -----------------------------------------------------------------------------------
def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **pickle_load_args):
    """Load what `save` wrote, a safetensors file, or a PyTorch `.pt` zip state dict.
    map_location: None (cpu), a device / string ('webgpu'), or a {saved_location: device} dict."""
    if weights_only is False:
        raise ValueError("webtorch.load only supports weights_only=True: it never unpickles arbitrary objects")
    data, name = _read_in(f)
    if data[:4] == b"PK\x03\x04" or data[:4] == b"PK\x05\x06":
        return _load_zip(data, name, map_location)
    if len(data) >= 10 and data[8:9] == b"{":
        return _load_safetensors_bytes(data, name, map_location)
    if data[:2] in (b"\x80\x02", b"\x80\x04", b"\x80\x05"):
        raise _bad(name, "this is a raw pickle (PyTorch's legacy format or a plain pickle), which webtorch does "
                         "not read; re-save it with torch.save(obj, f) (zip format) or as safetensors")
    if not data:
        raise _bad(name, "the file is empty")
    raise _bad(name, f"unrecognized format (starts with {data[:8]!r})")


def _load_zip(data, name, map_location):
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
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
    infos = {i.filename: i for i in zf.infolist()}

    def read(rec):
        info = infos.get(prefix + rec)
        if info is None:
            raise _bad(name, f"record {rec!r} is missing")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise _bad(name, f"record {rec!r} uses an unsupported compression")
        try:
            return zf.read(info)
        except (zipfile.BadZipFile, ValueError, OSError, EOFError, struct.error, NotImplementedError) as e:
            raise _bad(name, f"cannot read record {rec!r} ({e})") from None
        except Exception as e:  # zlib.error and friends
            raise _bad(name, f"cannot read record {rec!r} ({type(e).__name__}: {e})") from None

    bo = infos.get(prefix + "byteorder")
    if bo is not None and read("byteorder") != b"little":
        raise _bad(name, "only little-endian checkpoints are supported")
    storages = _Storages(name, lambda k: read("data/" + k), map_location)
    try:
        if prefix + "webtorch.json" in infos:
            try:
                doc = json.loads(read("webtorch.json").decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as e:
                raise _bad(name, f"webtorch.json is not valid JSON ({e})") from None
            if not isinstance(doc, dict) or doc.get("format") != "webtorch" or not isinstance(doc.get("storages"),
                                                                                              dict):
                raise _bad(name, "webtorch.json lacks the webtorch header")
            if not isinstance(doc.get("version"), int) or doc["version"] > FORMAT_VERSION:
                raise _bad(name, f"webtorch.json version {doc.get('version')!r} is newer than this webtorch reads")
            return _from_json(doc.get("root"), name, storages, doc["storages"])
        obj = _Unpickler(read("data.pkl"), name, storages).load()
        return _resolve_markers(obj, name)
    except RecursionError:
        raise _bad(name, "nesting too deep") from None


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
            from .ops.shape import clone
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
    data, name = _read_in(f)
    return _load_safetensors_bytes(data, name, device)


def _load_safetensors_bytes(data, name, map_location):
    if len(data) < 8:
        raise _bad(name, "safetensors file is truncated")
    n = struct.unpack("<Q", data[:8])[0]
    if n > len(data) - 8 or n > 100_000_000:
        raise _bad(name, f"safetensors header of {n} bytes does not fit in a {len(data)}-byte file")
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise _bad(name, f"safetensors header is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise _bad(name, "safetensors header is not a JSON object")
    body = memoryview(data)[8 + n:]
    out = {}
    spans = []
    for k, info in header.items():
        if k == "__metadata__":
            continue
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
        if not 0 <= b <= e <= len(body):
            raise _bad(name, f"tensor {k!r:.60} lies outside the file (bytes {b}..{e} of {len(body)})")
        numel = _numel(shape)
        if e - b != numel * _ITEM[dt]:
            raise _bad(name, f"tensor {k!r:.60} has {e - b} bytes for shape {shape} of {dt}")
        spans.append((b, e))
        values, real = _from_bytes(bytes(body[b:e]), dt)
        dev = _target_device(map_location)
        t = _prims.from_flat(values, (numel,), _dtype.BY_NAME[real], dev)
        out[k] = t.reshape(shape) if shape else t.reshape(())
    spans.sort()
    pos = 0
    for b, e in spans:
        if b != pos:
            raise _bad(name, "safetensors data has gaps or overlapping tensors")
        pos = e
    if pos != len(body):
        raise _bad(name, f"safetensors data holds {len(body) - pos} bytes that belong to no tensor")
    return out
