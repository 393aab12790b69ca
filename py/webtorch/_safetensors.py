"""safetensors: a JSON header (dtype, shape, byte range per tensor) then the tensors' bytes, back to back."""
import json
import struct

from ._checkpoint_io import (
    _ITEM,
    _bad,
    _checked_numel,
    _cpu_storage,
    _placed,
    _read_exact,
    _source,
    _storage_bytes,
    _write_out,
)
from ._geometry import contiguous_strides
from ._tensor import Tensor
from .ops.shape import clone

_ST_DTYPE = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16", "I64": "int64",
             "I32": "int32", "I16": "int16", "I8": "int8", "U8": "uint8", "BOOL": "bool"}


_DTYPE_ST = {v: k for k, v in _ST_DTYPE.items()}


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
