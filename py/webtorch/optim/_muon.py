"""Muon, as torch.optim.Muon (PyTorch 2.13's torch/optim/_muon.py): momentum, then the update orthogonalized by
a quintic Newton-Schulz iteration, for 2-D parameters.

PyTorch runs the iteration in bfloat16, which webtorch's backends cannot store: each step here is computed in
float32 and rounded to bfloat16's 8 significant bits where PyTorch's bfloat16 result would be (`_bf16`,
Veltkamp's exact splitting, float32 arithmetic only), which gives PyTorch's numbers on every device."""
import math

from .._tensor import Tensor
from ..ops import _creation
from ..ops.linalg import addmm
from .optimizer import Optimizer, _to_scalar

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5


def _bf16(t):
    """t's float32 values rounded to the nearest bfloat16 (to nearest, ties almost always to even)."""
    c = t * 65537.0  # 2**16 + 1: splits off the low 16 of float32's 24 significant bits
    return c - (c - t)


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = grad.size(0) > grad.size(1)
    x = _bf16(grad.T if tall else grad)
    x = _bf16(x / _bf16(_bf16(x.norm()).clamp(min=eps)))
    for _ in range(ns_steps):
        gram = _bf16(x @ x.T)
        update = _bf16(addmm(gram, gram, gram, beta=b, alpha=c))
        x = _bf16(addmm(x, update, x, beta=a))
    return x.T if tall else x


def _adjust_lr(lr, adjust_lr_fn, param_shape):
    A, B = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, A / B))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(A, B))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    _scalar_state = _capturable_state = ()

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS, ns_steps=DEFAULT_NS_STEPS,
                 adjust_lr_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        for name, v in (("Learning rate", lr), ("momentum", momentum), ("weight decay", weight_decay)):
            if not 0.0 <= _to_scalar(v):
                raise ValueError(f"{name} should be >= 0 but is: {v}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                                      ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                                      adjust_lr_fn=adjust_lr_fn))
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def _step_group(self, group):
        params = list(self._with_grad(group))
        for p, state in params:  # all checked before any is updated, as PyTorch's _init_group
            if p.is_complex():
                raise RuntimeError("Muon does not support complex parameters")
            if p.grad.is_sparse:
                raise RuntimeError("Muon does not support sparse gradients")
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = _creation.zeros_like(p.grad)
        lr, momentum = _to_scalar(group["lr"]), group["momentum"]
        for p, state in params:
            grad, buf = p.grad, state["momentum_buffer"]
            if grad.ndim != 2:
                raise ValueError("Param gradient must be a 2D matrix")
            buf.lerp_(grad, 1 - momentum)
            update = grad.lerp(buf, momentum) if group["nesterov"] else buf
            update = _zeropower_via_newtonschulz(update, group["ns_coefficients"], group["ns_steps"], group["eps"])
            p.mul_(1 - lr * group["weight_decay"])
            p.add_(update, alpha=-_adjust_lr(lr, group["adjust_lr_fn"], p.shape))
