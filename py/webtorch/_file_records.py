"""torch._C's zip record API, as torch.serialization uses it: PyTorchFileWriter (write_record, ...,
write_end_of_file) and PyTorchFileReader (get_record, get_all_records, get_storage_from_record, ...), on
the zip layout webtorch.save writes (`<archive>/<record>`, 64-byte aligned, stored), and the storage
contexts' types (torch._C makes them with no Python constructor)."""
import hashlib
import io
import os
import struct
import zipfile

from ._tensor import Tensor
from .ops.aliases import frombuffer
from .serialization import _aligned_write, _archive_name


def _as_bytes(data, size):
    if isinstance(data, Tensor):
        return data.detach().cpu().contiguous().numpy().tobytes()[:size]
    if hasattr(data, "_bytes"):  # an UntypedStorage
        return bytes(data.tolist())[:size]
    return bytes(memoryview(data).cast("B")[:size])


class PyTorchFileWriter:
    """Records written to a zip archive (a path or a writable binary file) under `<archive name>/`."""

    def __init__(self, file_name, compute_crc32=True, storage_alignment=64):
        self._f, self._name = file_name, _archive_name(file_name)
        self._buf = io.BytesIO()
        self._zf = zipfile.ZipFile(self._buf, "w", zipfile.ZIP_STORED)
        self._written, self._align, self._min_version = set(), storage_alignment, 3
        self._hash = hashlib.sha1()

    def write_record(self, name, data, size):
        if name in self._written:
            raise RuntimeError(f"Tried to serialize file twice: {name}")
        raw = _as_bytes(data, size)
        _aligned_write(self._zf, self._buf, f"{self._name}/{name}", raw, self._align)
        self._written.add(name)
        self._hash.update(raw)

    def write_record_metadata(self, name, size):
        self.write_record(name, bytes(size), size)

    def set_min_version(self, version):
        self._min_version = version

    def get_all_written_records(self):
        return set(self._written)

    def archive_name(self):
        return self._name

    def serialization_id(self):
        return str(int.from_bytes(self._hash.digest(), "little")).zfill(40)[-40:] if self._zf is None else ""

    def write_end_of_file(self):
        for name, data in (("version", f"{self._min_version}\n".encode()), ("byteorder", b"little")):
            if name not in self._written:
                self.write_record(name, data, len(data))
        sid = str(int.from_bytes(self._hash.digest(), "little")).zfill(40)[-40:].encode("ascii")
        _aligned_write(self._zf, self._buf, f"{self._name}/.data/serialization_id", sid, self._align)
        self._zf.close()
        self._zf = None
        if isinstance(self._f, (str, os.PathLike)):
            with open(self._f, "wb") as fh:
                fh.write(self._buf.getvalue())
        else:
            self._f.write(self._buf.getvalue())


class PyTorchFileReader:
    """The records of a zip archive (a path or a readable binary file) whose entries share one top folder."""

    def __init__(self, file_name):
        if isinstance(file_name, (str, os.PathLike)) and not os.path.exists(file_name):
            raise RuntimeError(f"open file failed because of errno 2 on fopen: No such file or directory, file path: "
                               f"{os.fspath(file_name)}")
        self._zf = zipfile.ZipFile(file_name)
        names = self._zf.namelist()
        self._prefix = names[0].split("/", 1)[0] + "/" if names else ""
        self._names = [n[len(self._prefix):] for n in names if n.startswith(self._prefix)]

    def _info(self, name):
        try:
            return self._zf.getinfo(self._prefix + name)
        except KeyError:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found") from None

    def get_all_records(self):
        return list(self._names)

    def has_record(self, name):
        return name in self._names

    def get_record(self, name):
        return self._zf.read(self._info(name))

    def get_record_size(self, name):
        return self._info(name).file_size

    def get_record_offset(self, name):
        """Where the record's bytes start in the file (past its local header, whose extra field may differ from the
        central directory's)."""
        info = self._info(name)
        fp = self._zf.fp
        fp.seek(info.header_offset + 26)
        name_len, extra_len = struct.unpack("<HH", fp.read(4))
        return info.header_offset + 30 + name_len + extra_len

    get_record_offset_no_read = get_record_offset

    def get_record_header_offset(self, name):
        return self._info(name).header_offset

    def serialization_id(self):
        return self.get_record(".data/serialization_id").decode("ascii") \
            if self.has_record(".data/serialization_id") else ""

    def get_storage_from_record(self, name, numel, dtype):
        """A tensor of no elements whose storage holds the record's `numel` elements of dtype (as torch.load
        reads it: `.untyped_storage()`)."""
        t = frombuffer(self.get_record(name), dtype=dtype, count=numel)
        return Tensor._make(t._storage, (0,), (1,), 0)


class SerializationStorageContext:
    """The keys torch.jit's saving gives storages (made by torch._C only)."""

    def __init__(self, *args, **kwargs):
        raise TypeError("torch._C.SerializationStorageContext: No constructor defined!")

    def has_storage(self, storage):
        return id(storage) in self._keys

    def get_or_add_storage(self, storage):
        return self._keys.setdefault(id(storage), len(self._keys))


class DeserializationStorageContext:
    """The storages torch.jit's loading has read, by name: get_storage gives a tensor of no elements on one."""

    def __init__(self):
        self._storages = {}

    def add_storage(self, name, tensor):
        if name in self._storages:
            raise RuntimeError("!hasStorage(name) INTERNAL ASSERT FAILED")
        self._storages[name] = tensor._storage

    def has_storage(self, name):
        return name in self._storages

    def get_storage(self, name, dtype):
        if name not in self._storages:
            raise RuntimeError("hasStorage(name) INTERNAL ASSERT FAILED")
        return Tensor._make(self._storages[name], (0,), (1,), 0)
