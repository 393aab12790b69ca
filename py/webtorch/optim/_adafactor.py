"""Adafactor (factored second moments), as torch.optim.Adafactor."""
from .. import finfo
from .._tensor import Tensor
from ..ops import _creation
from . import functional as F
from .optimizer import Optimizer, _to_scalar


class Adafactor(Optimizer):
    _capturable_state = ()          # its step sizes are computed from the step in Python
    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= _to_scalar(lr):
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _step_group(self, group):
        eps1, eps2 = group["eps"]
        kw = dict(lr=_to_scalar(group["lr"]), beta2_decay=group["beta2_decay"], eps2=eps2, d=group["d"],
                  weight_decay=group["weight_decay"], maximize=group["maximize"])
        for p, state in self._with_grad(group):
            if p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
            g = p.grad
            if len(state) == 0:
                state["step"] = 0.0
                if g.dim() > 1:
                    state["row_var"] = _creation.zeros((*g.shape[:-1], 1), dtype=g.dtype, device=g.device)
                    state["col_var"] = _creation.zeros((*g.shape[:-2], 1, g.shape[-1]), dtype=g.dtype,
                                                       device=g.device)
                else:
                    state["variance"] = _creation.zeros_like(g)
            F.adafactor(p, g, state, eps1=finfo(p.dtype).eps if eps1 is None else eps1, **kw)


def adafactor(params, grads, row_vars, col_vars, variances, state_steps, foreach=None, grad_scale=None,
              found_inf=None, has_complex=False, *, d, lr, beta2_decay, weight_decay, eps1, eps2, maximize):
    """PyTorch's functional Adafactor: the states in their lists (None where a parameter has none), updated in
    place."""
    F.per_param(F.adafactor, params, grads, {"row_var": row_vars, "col_var": col_vars, "variance": variances,
                                             "step": state_steps},
                grad_scale=grad_scale, found_inf=found_inf, lr=_to_scalar(lr), beta2_decay=beta2_decay, eps1=eps1,
                eps2=eps2, d=d, weight_decay=weight_decay, maximize=maximize)
