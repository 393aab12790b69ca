"""PyTorch's legacy tensor types: `torch.FloatTensor`, `torch.LongTensor`, ...

Each is a constructor (`torch.FloatTensor([1, 2])` from data, `torch.FloatTensor(2, 3)` from sizes)
and a type for isinstance: `isinstance(torch.randn(2), torch.FloatTensor)` is True, as in PyTorch,
for a cpu tensor of that dtype. `x.type(torch.LongTensor)` casts to its dtype.
"""
from . import _dtype, _late
from ._device import as_device, cuda_alias
from ._tensor import Size, Tensor


class _TensorType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == as_device(cls._device).type

    def __call__(cls, *args, device=None):
        if cls._device == "cuda" and not cuda_alias():
            raise TypeError(f"type {cls.__module__}.{cls.__name__} not available. "
                            "Torch not compiled with CUDA enabled.")
        if device is not None and as_device(device).type != as_device(cls._device).type:  # FloatTensor: a cpu type
            raise RuntimeError(f"legacy constructor expects device type: {as_device(cls._device).type} but device "
                               f"type: {as_device(device).type} was passed")
        device = cls._device
        if not args:
            return _late.creation.empty(0, dtype=cls.dtype, device=device)
        if len(args) == 1 and isinstance(args[0], Tensor):
            t = args[0]
            if t.dtype is not cls.dtype:
                raise TypeError(f"torch.{cls.__name__}(tensor) expected a tensor of dtype {cls.dtype}, got "
                                f"{t.dtype}: use tensor.to({cls.dtype})")
            return t.detach()
        if len(args) == 1 and isinstance(args[0], Size) or all(type(a) is int for a in args):
            return _late.creation.empty(*args, dtype=cls.dtype, device=device)
        if len(args) > 1:
            raise TypeError(f"torch.{cls.__name__}() takes sizes as ints or one sequence of data, got {args}")
        return _late.creation.tensor(args[0], dtype=cls.dtype, device=device)

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


TYPES = {name: _TensorType(name, (), {"dtype": dt, "is_cuda": False, "_device": "cpu", "__module__": "torch"})
         for dt, name in _dtype.TENSOR_TYPES.items() if not dt.is_complex}  # x.type() names only
# torch.cuda.FloatTensor, ...: PyTorch's TypeError without CUDA; under the cuda alias, on webgpu
CUDA_TYPES = {name: _TensorType(name, (), {"dtype": dt, "is_cuda": True, "_device": "cuda", "__module__": "torch.cuda"})
              for dt, name in _dtype.TENSOR_TYPES.items() if not dt.is_complex}


def type_target(t):
    """(dtype, device or None) that `x.type(t)` converts to: t is a dtype (device kept), a legacy
    type such as torch.LongTensor, or its name 'torch.LongTensor' (both mean the cpu)."""
    if isinstance(t, _dtype.dtype):
        return t, None
    if isinstance(t, _TensorType):
        return t.dtype, "cpu"
    if isinstance(t, str) and t.startswith("torch.") and t[6:] in TYPES:
        return TYPES[t[6:]].dtype, "cpu"
    raise ValueError(f"invalid type: {t!r}")
