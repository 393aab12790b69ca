"""torch.autograd: backward, grad, Function, grad modes, gradcheck."""
from .grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled,
                        is_inference_mode_enabled)
from .function import Function, FunctionCtx, once_differentiable
from .graph import Node
from . import graph
from ._api import backward, grad
from .gradcheck import gradcheck, gradgradcheck
from . import functional  # noqa: F401
