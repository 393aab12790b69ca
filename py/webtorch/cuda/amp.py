"""torch.cuda.amp: PyTorch's deprecated spellings of torch.amp with device "cuda", which webtorch
runs on "webgpu". Each warns as PyTorch 2.x does (FutureWarning, PyTorch's text)."""
import warnings

from .. import _dtype, amp as _amp
from ._state import is_available

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


def amp_definitely_not_available():
    """True where "cuda" is no device (no CUDA and no cuda alias), as PyTorch answers without CUDA."""
    return not is_available()


def _deprecated(old, new):
    warnings.warn(f"`torch.cuda.amp.{old}(args...)` is deprecated. Please use `{new}` instead.",
                  FutureWarning, stacklevel=3)


class autocast(_amp.autocast):
    def __init__(self, enabled=True, dtype=_dtype.float16, cache_enabled=True):
        _deprecated("autocast", "torch.amp.autocast('cuda', args...)")
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        _deprecated("GradScaler", "torch.amp.GradScaler('cuda', args...)")
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    _deprecated("custom_fwd", "torch.amp.custom_fwd(args..., device_type='cuda')")
    return _amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd):
    _deprecated("custom_bwd", "torch.amp.custom_bwd(args..., device_type='cuda')")
    return _amp.custom_bwd(bwd, device_type="cuda")
