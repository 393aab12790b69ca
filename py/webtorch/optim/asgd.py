"""Averaged SGD, as torch.optim.ASGD (the running average of the iterates is state['ax'])."""
from ..ops import _creation
from . import functional as F
from .optimizer import Optimizer, _check_lr, _check_nonnegative, _to_scalar, f32


class ASGD(Optimizer):
    _scalar_state = ("step", "eta", "mu")
    _capturable_state = ()          # eta and mu are computed from the step in Python

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check_nonnegative(weight_decay=weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _step_group(self, group):
        lr = _to_scalar(group["lr"])
        kw = dict(lr=lr, lambd=group["lambd"], alpha=group["alpha"], t0=group["t0"],
                  weight_decay=group["weight_decay"], maximize=group["maximize"])
        for p, state in self._with_grad(group):
            if len(state) == 0:
                state["step"] = 0.0
                state["eta"] = f32(lr)
                state["mu"] = 1.0
                state["ax"] = _creation.zeros_like(p)
            F.asgd(p, p.grad, state, **kw)


def asgd(params, grads, axs, mus, etas, state_steps, foreach=None, maximize=False, differentiable=False,
         capturable=False, has_complex=False, *, lambd, lr, t0, alpha, weight_decay):
    """PyTorch's functional ASGD: the states in their lists, updated in place."""
    F.per_param(F.asgd, params, grads, {"ax": axs, "mu": mus, "eta": etas, "step": state_steps},
                capturable=capturable, lr=_to_scalar(lr), lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                maximize=maximize)
