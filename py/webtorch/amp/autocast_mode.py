"""autocast: run the matmul family (matmul, mm, bmm, and so linear and conv, which lower to
matmul) in a lower precision, and reductions / softmax / log_softmax (and so the losses built
on them) in float32, as PyTorch's autocast does. On cpu (bfloat16 by default) PyTorch's CPU lists
hold: reductions and softmax keep their input's dtype, the losses of its fp32 list (`fp32_on_cpu`) run
in float32.

The ops consult `STATE` (device type -> dtype in force); it is empty when no autocast region
is active, so the check costs one truth test per op. On webgpu the lower precision is float16
when the adapter has `shader-f16`, or bfloat16 (any adapter); elsewhere autocast still runs, in
float32, says so once with a warning, and reports the dtype it used as `autocast.fast_dtype`.
"""
import functools
import warnings

from .. import _dtype
from .._device import cuda_alias
from .._tensor import Tensor
from ..backends import webgpu

STATE = {}          # device type -> the low-precision dtype in force (absent: autocast off)
_warned = set()

_DEFAULT = {"webgpu": _dtype.float16, "cuda": _dtype.float16, "cpu": _dtype.bfloat16}
_CONFIG = {"ipu": _dtype.float16, "xla": _dtype.bfloat16}  # set_autocast_dtype's dtypes (else _DEFAULT's)
_nesting = [0]      # autocast_increment_nesting / autocast_decrement_nesting
_cache = [True]     # is_autocast_cache_enabled: a flag only (webtorch keeps no cache of cast weights)


def _device_type(device_type):
    """"cuda" is the WebGPU device under the cuda alias; without it, PyTorch's absent CUDA."""
    return "webgpu" if device_type == "cuda" and cuda_alias() else device_type


def _supported(device_type, dt):
    """Can this device compute in dt? (float32 always.)"""
    if dt is _dtype.float32:
        return True
    if device_type == "webgpu":
        if dt is not _dtype.float16:
            return dt is _dtype.bfloat16   # (stored as f32 words, computed in f32: any adapter)
        try:
            return webgpu.get_backend().has_f16
        except Exception:
            return False
    if device_type == "cpu":
        return dt in (_dtype.float16, _dtype.bfloat16)
    return False


def _resolve(device_type, dtype):
    want = dtype if dtype is not None else _DEFAULT[device_type]
    if _supported(device_type, want):
        return want
    key = (device_type, want.name)
    if key not in _warned:
        _warned.add(key)
        why = ("this adapter lacks the 'shader-f16' feature" if device_type == "webgpu" and want is _dtype.float16
               else f"webtorch's {device_type} backend has no {want.name} kernels")
        warnings.warn(f"autocast: {want.name} is unavailable on {device_type} ({why}); float32 is used instead.",
                      UserWarning, stacklevel=3)
    return _dtype.float32


class autocast:
    """`with webtorch.autocast("webgpu"):` (or as a decorator). `fast_dtype` is the dtype the
    matmul family actually runs in (float32 when the requested one is unavailable)."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        device_type = _device_type(device_type.split(":")[0])
        if device_type == "cuda" and enabled:
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
            enabled = False
        if device_type not in _DEFAULT:
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        if dtype is not None and not isinstance(dtype, _dtype.dtype):
            raise ValueError(f"dtype must be a webtorch dtype, got {dtype!r}")
        if dtype is not None and not dtype.is_floating_point:
            raise RuntimeError(f"autocast only supports floating dtypes, got {dtype}")
        self.device = device_type
        self.requested_dtype = dtype if dtype is not None else _configured(device_type)
        self._enabled = bool(enabled)
        self.fast_dtype = _resolve(device_type, self.requested_dtype) if enabled else self.requested_dtype
        self._cache_enabled = cache_enabled
        self._prev = []

    def __enter__(self):
        self._prev.append((STATE.get(self.device, None), _cache[0]))
        if self._enabled:
            STATE[self.device] = self.fast_dtype
        else:
            STATE.pop(self.device, None)
        _nesting[0] += 1
        if self._cache_enabled is not None:
            _cache[0] = bool(self._cache_enabled)
        return self

    def __exit__(self, *exc):
        prev, _cache[0] = self._prev.pop()
        _nesting[0] -= 1
        if prev is None:
            STATE.pop(self.device, None)
        else:
            STATE[self.device] = prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with autocast(self.device, self.requested_dtype, self._enabled, self._cache_enabled):
                return fn(*args, **kwargs)
        return wrapper


def is_autocast_enabled(device_type=None):
    device_type = _device_type(device_type or "webgpu")
    _configured(device_type)  # PyTorch's RuntimeError for an unknown device type
    return device_type in STATE


def _configured(device_type):
    dt = _CONFIG.get(device_type, _DEFAULT.get(device_type))
    if dt is None:
        raise RuntimeError(f"Expected one of {', '.join(list(_DEFAULT) + list(_CONFIG))} device type at start of "
                           f"device string: {device_type}")
    return dt


def _fast(device_type):
    """The dtype autocast computes in on device_type: the configured one, where this device can."""
    want = _configured(device_type)
    return _resolve(device_type, want) if device_type in ("cpu", "webgpu") else want


def get_autocast_dtype(device_type):
    """The dtype the matmul family runs in under autocast on device_type (when enabled)."""
    device_type = _device_type(device_type)
    dt = STATE.get(device_type)
    return dt if dt is not None else _fast(device_type)


def set_autocast_enabled(device_type, enabled=None):
    """torch.set_autocast_enabled(device_type, enabled); the one-argument form is the default device's."""
    if enabled is None:
        device_type, enabled = None, device_type
    if not isinstance(enabled, bool):
        raise TypeError(f"set_autocast_enabled(): argument 'enabled' (position {1 if device_type is None else 2}) "
                        f"must be bool, not {type(enabled).__name__}")
    device_type = _device_type(device_type or "webgpu")
    if enabled:
        STATE[device_type] = _fast(device_type)
    else:
        STATE.pop(device_type, None)


def set_autocast_dtype(device_type, dtype):
    if not isinstance(dtype, _dtype.dtype):
        raise TypeError(f"set_autocast_dtype(): argument 'dtype' (position 2) must be torch.dtype, not "
                        f"{type(dtype).__name__}")
    device_type = _device_type(device_type)
    _CONFIG[device_type] = dtype
    if device_type in STATE:
        STATE[device_type] = _fast(device_type)


def autocast_increment_nesting():
    _nesting[0] += 1
    return _nesting[0]


def autocast_decrement_nesting():
    _nesting[0] -= 1
    return _nesting[0]


def clear_autocast_cache():
    """Nothing to clear: webtorch casts weights per call and keeps no cache of them."""


def is_autocast_cache_enabled():
    return _cache[0]


def set_autocast_cache_enabled(enabled):
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
    _cache[0] = enabled


def _deprecated(old, new):
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.", DeprecationWarning, stacklevel=3)


def _per_device(device_type, short):
    """PyTorch's deprecated per-device forms (get_autocast_cpu_dtype, is_autocast_xla_enabled, ...)."""
    def get_dtype():
        _deprecated(f"get_autocast_{short}_dtype()", f"get_autocast_dtype('{device_type}')")
        return get_autocast_dtype(device_type)

    def set_dtype(dtype):
        if not isinstance(dtype, _dtype.dtype):
            raise TypeError(f"dtype must be a torch.dtype (got {type(dtype).__name__})")
        _deprecated(f"set_autocast_{short}_dtype(dtype)", f"set_autocast_dtype('{device_type}', dtype)")
        set_autocast_dtype(device_type, dtype)

    def is_enabled():
        _deprecated(f"is_autocast_{short}_enabled()", f"is_autocast_enabled('{device_type}')")
        return is_autocast_enabled(device_type)

    def set_enabled(enabled):
        _deprecated(f"set_autocast_{short}_enabled(enabled)", f"set_autocast_enabled('{device_type}', enabled)")
        set_autocast_enabled(device_type, enabled)
    fns = get_dtype, set_dtype, is_enabled, set_enabled
    for f, name in zip(fns, ("get_autocast_{}_dtype", "set_autocast_{}_dtype", "is_autocast_{}_enabled",
                             "set_autocast_{}_enabled")):
        f.__name__ = f.__qualname__ = name.format(short)
    return fns


get_autocast_cpu_dtype, set_autocast_cpu_dtype, is_autocast_cpu_enabled, set_autocast_cpu_enabled = \
    _per_device("cpu", "cpu")
get_autocast_gpu_dtype, set_autocast_gpu_dtype = _per_device("cuda", "gpu")[:2]
get_autocast_ipu_dtype, set_autocast_ipu_dtype, is_autocast_ipu_enabled, set_autocast_ipu_enabled = \
    _per_device("ipu", "ipu")
get_autocast_xla_dtype, set_autocast_xla_dtype, is_autocast_xla_enabled, set_autocast_xla_enabled = \
    _per_device("xla", "xla")


def is_autocast_available(device_type):
    return device_type in _DEFAULT


# ---- the hooks the ops call (only while STATE is non-empty) ----------------------------------------
def cast_lower(*tensors):
    """Operands of a matmul-family op, cast to the autocast dtype of their device (float32 and
    float16 tensors only; float64 and integers are left alone, as in PyTorch)."""
    t0 = tensors[0]
    dt = STATE.get(t0.device.type)
    if dt is None:
        return tensors
    return tuple(t.to(dt) if t.dtype is not dt and t.dtype.kind == "f" and t.dtype is not _dtype.float64 else t
                 for t in tensors)


def cast_fp32(t):
    """Input of a reduction / softmax / loss: low-precision floats are widened to float32 (not on cpu, whose
    autocast lists leave reductions and softmax alone)."""
    dev = t.device.type
    if dev in STATE and dev != "cpu" and t.dtype.kind == "f" and t.dtype.itemsize < 4:
        return t.to(_dtype.float32)
    return t


def _fp32(a):
    if isinstance(a, Tensor) and a.device.type == "cpu" and a.dtype.kind == "f" and a.dtype.itemsize < 4:
        return a.to(_dtype.float32)
    return a


def fp32_on_cpu(fn):
    """A loss of PyTorch's CPU autocast fp32 list: under autocast("cpu") its low-precision float tensor
    arguments are cast to float32."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if "cpu" in STATE:
            args, kwargs = [_fp32(a) for a in args], {k: _fp32(v) for k, v in kwargs.items()}
        return fn(*args, **kwargs)
    return wrapper


# ---- custom autograd Functions under autocast (torch.amp.custom_fwd / custom_bwd) --------------------
def _cast(value, device_type, dt):
    """Floating tensors of device_type in value (nested lists/tuples/dicts) cast to dt, as PyTorch."""
    if isinstance(value, Tensor):
        ok = value.dtype.is_floating_point and value.device.type == device_type and value.dtype is not _dtype.float64
        return value.to(dt) if ok else value
    if isinstance(value, dict):
        return {k: _cast(v, device_type, dt) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dt) for v in value)
    return value


def _device_str(device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    return _device_type(device_type)


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for a custom Function's forward: with cast_inputs, floating inputs are cast to it
    and forward runs with autocast off (only inside an autocast region), as torch.amp.custom_fwd."""
    device = _device_str(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = get_autocast_dtype(device)
        on = device in STATE
        if cast_inputs is None:
            args[0]._fwd_used_autocast = on
            return fwd(*args, **kwargs)
        args[0]._fwd_used_autocast = False
        if not on:
            return fwd(*args, **kwargs)
        with autocast(device, enabled=False):
            return fwd(*_cast(args, device, cast_inputs), **_cast(kwargs, device, cast_inputs))
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorator for a custom Function's backward: it runs with forward's autocast state."""
    device = _device_str(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device, enabled=args[0]._fwd_used_autocast, dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
