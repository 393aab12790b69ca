"""Resilient backpropagation, as torch.optim.Rprop."""
from ..ops import _creation
from . import functional as F
from .optimizer import Optimizer, _check_lr, _to_scalar


class Rprop(Optimizer):
    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _step_group(self, group):
        (etaminus, etaplus), (smin, smax) = group["etas"], group["step_sizes"]
        kw = dict(etaminus=etaminus, etaplus=etaplus, step_size_min=smin, step_size_max=smax,
                  maximize=group["maximize"])
        for p, state in self._with_grad(group):
            if len(state) == 0:
                state["step"] = 0.0
                state["prev"] = _creation.zeros_like(p)
                state["step_size"] = _creation.full_like(p.grad, _to_scalar(group["lr"]))
            F.rprop(p, p.grad, state, **kw)


def rprop(params, grads, prevs, step_sizes, state_steps, foreach=None, capturable=False, maximize=False,
          differentiable=False, has_complex=False, *, step_size_min, step_size_max, etaminus, etaplus):
    """PyTorch's functional Rprop: the states in their lists, updated in place."""
    F.per_param(F.rprop, params, grads, {"prev": prevs, "step_size": step_sizes, "step": state_steps},
                capturable=capturable, etaminus=etaminus, etaplus=etaplus, step_size_min=step_size_min,
                step_size_max=step_size_max, maximize=maximize)
