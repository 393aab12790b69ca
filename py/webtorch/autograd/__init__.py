"""torch.autograd: backward, grad, Function, grad modes, gradcheck."""
import importlib

from . import (
    forward_ad,  # noqa: F401
    functional,  # noqa: F401
    graph,
)
from ._api import backward, grad
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .function import Function, FunctionCtx, NestedIOFunction, once_differentiable
from .grad_mode import (
    enable_grad,
    enforce_grad_layout_policy,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
    set_multithreading_enabled,
)
from .gradcheck import gradcheck, gradgradcheck
from .graph import Node
from .variable import Variable, variable


def __getattr__(name):
    """torch.autograd.profiler and profiler_util load on first use (they sit on torch function modes)."""
    if name in ("profiler", "profiler_util"):
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'webtorch.autograd' has no attribute '{name}'")
