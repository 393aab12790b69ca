"""The rest of torch.serialization's public names: load/save options (endianness, crc32, mmap),
storage locations (location_tag, default_restore_location, register_package, validate_*_device),
and checkpoint inspection. Re-exported by serialization.py."""
import enum
import pickletools
import tempfile
import warnings

from . import _dtype
from ._checkpoint_io import _placed, validate_cuda_device  # noqa: F401 (a torch.serialization name)
from ._legacy import TYPES

__all__ = ["LoadEndianness", "SourceChangeWarning", "StorageType", "check_module_version_greater_or_equal",
           "default_restore_location", "get_crc32_options", "get_default_load_endianness",
           "get_default_mmap_options", "location_tag", "mkdtemp", "normalize_storage_type",
           "register_package", "set_crc32_options", "set_default_load_endianness", "set_default_mmap_options",
           "skip_data", "storage_to_tensor_type", "validate_cuda_device", "validate_hpu_device"]


class SourceChangeWarning(Warning):
    pass


class LoadEndianness(enum.Enum):
    NATIVE = 1
    LITTLE = 2
    BIG = 3


MAP_SHARED, MAP_PRIVATE = 1, 2  # mmap's flags (as numbers: Pyodide may lack the mmap module)
_config = {"endianness": None, "crc32": True, "mmap_flags": MAP_PRIVATE}


def get_default_load_endianness():
    return _config["endianness"]


def set_default_load_endianness(endianness):
    """Stored as PyTorch does; webtorch reads little-endian checkpoints only (a 'byteorder' record
    saying otherwise raises)."""
    if not isinstance(endianness, LoadEndianness) and endianness is not None:
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    _config["endianness"] = endianness


def get_crc32_options():
    return _config["crc32"]


def set_crc32_options(compute_crc32):
    """Stored as PyTorch does; webtorch's zip writer always writes each record's CRC32."""
    _config["crc32"] = compute_crc32


def get_default_mmap_options():
    return _config["mmap_flags"]


class set_default_mmap_options:
    """A function or a context manager, as PyTorch's (only MAP_PRIVATE or MAP_SHARED)."""

    def __init__(self, flags):
        if flags not in (MAP_PRIVATE, MAP_SHARED):
            raise ValueError("Invalid argument in function set_default_mmap_options, "
                             f"expected mmap.MAP_PRIVATE or mmap.MAP_SHARED, but got {flags}")
        self.prev = _config["mmap_flags"]
        _config["mmap_flags"] = flags

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _config["mmap_flags"] = self.prev


class skip_data:
    """PyTorch's context manager that saves tensors without their bytes: not supported here."""

    def __init__(self, materialize_fake_tensors=False):
        self.materialize_fake_tensors = materialize_fake_tensors

    def __enter__(self):
        raise RuntimeError("torch.serialization.skip_data is not supported by webtorch (it saves every storage)")

    def __exit__(self, *exc):
        return False


class StorageType:
    """A legacy storage type named in a pickle (`torch.FloatStorage`), with its dtype."""

    def __init__(self, name):
        from_name = {v: k for k, v in _dtype.TENSOR_TYPES.items()}
        self._dtype = from_name[name.replace("Storage", "Tensor")]

    @property
    def dtype(self):
        return self._dtype

    def __str__(self):
        return f"StorageType(dtype={self.dtype})"


def check_module_version_greater_or_equal(module, req_version_tuple, error_if_malformed=True):
    """Whether module.__version__ is at least req_version_tuple (PyTorch's rule and messages)."""
    try:
        fields = module.__version__.split(".")
        requirement_is_met = tuple(type(req)(fields[i]) for i, req in enumerate(req_version_tuple)) >= \
            req_version_tuple
    except Exception as e:
        message = (f"'{module.__name__}' module version string is malformed '{module.__version__}' and cannot be "
                   f"compared with tuple {str(req_version_tuple)}")
        if error_if_malformed:
            raise RuntimeError(message) from e
        warnings.warn(message + ", but continuing assuming that requirement is met", stacklevel=2)
        requirement_is_met = True
    return requirement_is_met


_packages = []  # (priority, tagger, deserializer), as register_package keeps them


def register_package(priority, tagger, deserializer):
    """Add a (tagger, deserializer) pair that location_tag / default_restore_location consult first."""
    _packages.append((priority, tagger, deserializer))
    _packages.sort(key=lambda p: p[0])


def location_tag(storage):
    """The location torch.save would record for storage: a registered tagger's, else its device
    ('cpu', 'webgpu:0'); webtorch itself writes 'cpu' into the pickle so that PyTorch loads it."""
    for _, tagger, _ in _packages:
        tag = tagger(storage)
        if tag:
            return tag
    return str(storage.device)


def default_restore_location(storage, location):
    """storage (on cpu) moved to location, through a registered deserializer first ('cuda' as
    PyTorch without CUDA: its RuntimeError; the WebGPU device under the cuda alias)."""
    for _, _, deserializer in _packages:
        result = deserializer(storage, location)
        if result is not None:
            return result
    return _placed(None, storage, location)


def normalize_storage_type(storage_type):
    return storage_type


def storage_to_tensor_type(storage):
    """The legacy tensor type of storage's dtype (`torch.FloatTensor` for a float32 storage)."""
    return TYPES[_dtype.TENSOR_TYPES[storage.dtype]]


def validate_hpu_device(location):
    raise RuntimeError("Attempting to deserialize object on a HPU device but torch.hpu.is_available() is False. "
                       "If you are running on a CPU-only machine, please use torch.load with "
                       "map_location=torch.device('cpu') to map your storages to the CPU.")


def mkdtemp():
    """A with block's temporary directory (its path), removed after the block."""
    return tempfile.TemporaryDirectory()


def _globals_in_pickle(pkl):
    """The 'module.name' globals a pickle's GLOBAL / STACK_GLOBAL opcodes name (read, never run)."""
    found, strings = set(), []
    for op, arg, _ in pickletools.genops(pkl):
        if op.name == "GLOBAL":
            found.add(arg.replace(" ", "."))
        elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
            found.add(f"{strings[-2]}.{strings[-1]}")
        elif isinstance(arg, str) and "UNICODE" in op.name:
            strings.append(arg)
    return found
