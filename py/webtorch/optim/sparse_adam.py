"""SparseAdam, as torch.optim.SparseAdam: Adam's moments updated only at the rows a sparse gradient holds
(lazily, as PyTorch's: the moments of the other rows keep their values)."""
import math

from .._tensor import Tensor
from ..ops import _creation
from .optimizer import Optimizer, _to_scalar


class SparseAdam(Optimizer):
    _scalar_state = _capturable_state = ()  # "step" stays a Python int, as PyTorch's

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < _to_scalar(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i in (0, 1):
            if not 0.0 <= betas[i] < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        for kind, test, why in (("Sparse", lambda p: p.is_sparse, "SparseAdam requires dense parameter tensors"),
                                ("Complex", lambda p: p.is_complex(),
                                 "SparseAdam does not support complex parameters")):
            found = [[i, j] for i, g in enumerate(self.param_groups) for j, p in enumerate(g["params"]) if test(p)]
            if found:
                raise ValueError(f"{kind} params at indices {found}: {why}")

    def _step_group(self, group):
        beta1, beta2 = group["betas"]
        lr, eps = _to_scalar(group["lr"]), group["eps"]
        for p, state in self._with_grad(group):
            if not p.grad.is_sparse:
                raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
            if len(state) == 0:
                state["step"] = 0
                state["exp_avg"], state["exp_avg_sq"] = _creation.zeros_like(p), _creation.zeros_like(p)
            state["step"] += 1
            grad = (-p.grad if group.get("maximize", False) else p.grad).coalesce()
            values = grad._values()
            if values.numel() == 0:
                continue
            at = tuple(grad._indices())
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            old_avg, old_sq = exp_avg[at], exp_avg_sq[at]
            avg_update = (values - old_avg) * (1 - beta1)
            sq_update = (values.pow(2) - old_sq) * (1 - beta2)
            exp_avg.index_put_(at, avg_update, accumulate=True)
            exp_avg_sq.index_put_(at, sq_update, accumulate=True)
            numer, denom = avg_update + old_avg, (sq_update + old_sq).sqrt() + eps
            step = state["step"]
            step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
            p.index_put_(at, -step_size * (numer / denom), accumulate=True)
