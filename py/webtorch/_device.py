"""torch.device and the backend behind each device type.

"cuda" is a device type as in PyTorch built without CUDA: `device("cuda")` exists, and a tensor
placed there raises PyTorch's AssertionError. Under the cuda alias (`python -m webtorch --device
webgpu`, `set_cuda_alias(True)`) "cuda" names the WebGPU device: `device("cuda:0")` is
`device(type='webgpu', index=0)`.
"""
from .backends import webgpu
from .backends.meta import MetaBackend

_TYPES = ("cpu", "webgpu", "cuda", "meta")
_cuda_alias = [False]
NO_CUDA = "Torch not compiled with CUDA enabled"


class device:
    """torch.device; also a context manager that makes it the default device (as in PyTorch)."""
    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, str) and ":" in type:
            type, _, idx = type.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'")
            index = int(idx)
        if type == "cuda" and _cuda_alias[0]:
            type, index = "webgpu", (0 if index is None else index)
        if type not in _TYPES:
            raise RuntimeError(f"Expected one of cpu, webgpu, cuda, meta device type at start of device string: {type}")
        if type == "webgpu" and index is None:
            index = 0
        if isinstance(index, int) and index < 0:
            raise RuntimeError(f"Device index must not be negative, got {index}")
        if index is not None and index != 0 and type != "cuda":
            raise RuntimeError(f"webtorch has one {type} device; got index {index}")
        self.type = type
        self.index = index

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and self.type == other.type and (self.index or 0) == (other.index or 0)

    def __hash__(self):
        return hash((self.type, self.index or 0))

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        index = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{index})"

    def __enter__(self):
        _outer.append(_default[0])
        _default[0] = self
        return self

    def __exit__(self, *exc):
        _default[0] = _outer.pop()
        return False


CPU = device("cpu")
_default = [CPU]  # where factory functions put tensors when no device is given
_outer = []  # the defaults that enclosing `with torch.device(...)` blocks restore
_backends = {}


def set_default_device(d):
    """torch.set_default_device: e.g. "webgpu" so that torch.randn(...) lands on the GPU."""
    _default[0] = CPU if d is None else as_device(d)


def get_default_device():
    return _default[0]


_by_str = {"cpu": CPU}  # one device object per string: equal devices are then mostly identical


def set_cuda_alias(on):
    """Make "cuda" name the WebGPU device (True) or PyTorch's absent CUDA device (False)."""
    _cuda_alias[0] = bool(on)
    for k in [k for k in _by_str if k.startswith("cuda")]:
        del _by_str[k]


def cuda_alias():
    return _cuda_alias[0]


_cpu_only = [False]


def set_cpu_only(on):
    """`python -m webtorch --device cpu`: the script sees a machine without an accelerator, as PyTorch's
    on a CPU-only machine (`torch.accelerator.is_available()` False), so it runs, and draws, on the cpu."""
    _cpu_only[0] = bool(on)


def cpu_only():
    return _cpu_only[0]


def as_device(d):
    if d is None:
        return _default[0]
    if isinstance(d, device):
        return d
    if isinstance(d, str):
        dev = _by_str.get(d)
        if dev is None:
            dev = _by_str[d] = device(d)
        return dev
    return device(d)


def backend_for(dev):
    b = _backends.get(dev.type)
    if b is None:
        if dev.type == "cuda":
            raise AssertionError(NO_CUDA)
        if dev.type == "cpu":
            from .backends.cpu import make_backend  # lazy: imports numpy when present
            b = make_backend()
        elif dev.type == "meta":
            b = MetaBackend()
        else:
            b = webgpu.get_backend()
        _backends[dev.type] = b
    return b
