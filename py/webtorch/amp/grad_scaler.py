"""GradScaler: loss scaling for low-precision training, with PyTorch's semantics.

The scale and growth tracker live on the host as Python numbers (PyTorch keeps 1-element
device tensors): scaling the loss is then one dispatch with a uniform, and the only device
wait is the one `step()` needs to learn whether any gradient was inf/NaN.
"""
import struct
import warnings
from collections import defaultdict
from enum import Enum

from .. import _dtype
from .._device import cuda_alias
from .._tensor import Tensor
from ..autograd import grad_mode
from ..backends import webgpu
from ..ops.shape import stack


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    def __init__(self, device="webgpu", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        if device == "cuda" and cuda_alias():
            device = "webgpu"
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.", stacklevel=2)
            self._enabled = False
        if device == "webgpu" and enabled:
            if not webgpu.is_available():
                warnings.warn("webtorch.amp.GradScaler is enabled, but WebGPU is not available. Disabling.",
                              stacklevel=1)
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise ValueError("The backoff factor must be < 1.0.")
            self._init_scale = float(init_scale)
            self._scale = None
            self._growth_factor = float(growth_factor)
            self._backoff_factor = float(backoff_factor)
            self._growth_interval = int(growth_interval)
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_refresh)

    def _lazy_init(self):
        if self._scale is None:
            self._scale = self._init_scale
            self._growth_tracker = self._init_growth_tracker

    def is_enabled(self):
        return self._enabled

    # ---- scaling ---------------------------------------------------------------------------------
    def scale(self, outputs):
        if not self._enabled:
            return outputs
        self._lazy_init()
        s = self._scale

        def apply(v):
            if isinstance(v, Tensor):
                if v.dtype.kind == "f" and v.dtype.itemsize < 4:
                    v = v.to(_dtype.float32)  # PyTorch multiplies by a float32 scale tensor
                return v * s
            if isinstance(v, (list, tuple)):
                r = [apply(x) for x in v]
                return type(v)(r) if isinstance(v, tuple) and not hasattr(v, "_fields") else \
                    (type(v)(*r) if isinstance(v, tuple) else r)
            if hasattr(v, "__iter__") and not isinstance(v, (str, bytes, dict)):
                return map(apply, v)
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, allow_fp16):
        checks = defaultdict(list)
        with grad_mode.no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if not allow_fp16 and g.dtype is _dtype.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    checks[g.device].append(g.isfinite().all())
                    g.mul_(inv_scale)
        found = {}
        for dev, oks in checks.items():
            ok = oks[0] if len(oks) == 1 else stack(oks).all()
            found[dev] = ok.logical_not()
        return found

    def unscale_(self, optimizer):
        if not self._enabled:
            return
        st = self._per_optimizer_states[id(optimizer)]
        if st["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if st["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        if self._scale is None:
            raise AssertionError("Attempted unscale_ but _scale is None.  This may indicate your script did not "
                                 "use scaler.scale(loss or outputs) earlier in the iteration.")
        inv_scale = _f32(1.0 / self._scale)
        st["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, False)
        st["stage"] = OptState.UNSCALED

    def _found_inf(self, st):
        # one device wait per device: whether any gradient held inf/NaN
        return sum(float(v.item()) for v in st["found_inf_per_device"].values())

    def step(self, optimizer, *args, **kwargs):
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        if self._scale is None:
            raise AssertionError("Attempted step but _scale is None.  This may indicate your script did not use "
                                 "scaler.scale(loss or outputs) earlier in the iteration.")
        st = self._per_optimizer_states[id(optimizer)]
        if st["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if st["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(st["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        found = self._found_inf(st)
        st["found_inf_value"] = found
        retval = None
        if not found:
            retval = optimizer.step(*args, **kwargs)
        st["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        if not self._enabled:
            return
        if self._scale is None:
            return
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1:
                    raise AssertionError("new_scale should be a single-element tensor")
                if new_scale.requires_grad:
                    raise AssertionError("new_scale should not require grad.")
                new_scale = new_scale.item()
            self._scale = float(new_scale)
        else:
            founds = []
            for st in self._per_optimizer_states.values():
                if "found_inf_value" in st:
                    founds.append(st["found_inf_value"])
                else:
                    founds.extend(float(v.item()) for v in st["found_inf_per_device"].values())
            if len(founds) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            if sum(founds) > 0:
                self._scale = _f32(self._scale * self._backoff_factor)
                self._growth_tracker = 0
            else:
                successful = self._growth_tracker + 1
                if successful == self._growth_interval:
                    grown = _f32(self._scale * self._growth_factor)
                    if grown != float("inf") and grown == grown:
                        self._scale = grown
                    self._growth_tracker = 0
                else:
                    self._growth_tracker = successful
        self._per_optimizer_states = defaultdict(_refresh)

    # ---- accessors and state -----------------------------------------------------------------------
    def get_scale(self):
        if self._enabled:
            return self._init_scale if self._scale is None else self._scale
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if self._enabled:
            return self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker
        return 0

    def state_dict(self):
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale = self._init_scale
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker = self._init_growth_tracker

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            state["_per_optimizer_states"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if self._enabled:
            self._per_optimizer_states = defaultdict(_refresh)


def _f32(x):
    """Round a Python float to float32 (the precision PyTorch's scale tensor has)."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return float("inf") if x > 0 else float("-inf")
