"""Adagrad, as torch.optim.Adagrad (state is created for every parameter at construction)."""
from ..autograd import grad_mode
from ..ops import _creation
from . import functional as F
from .optimizer import Optimizer, _check_fused, _check_lr, _check_nonnegative, _to_scalar


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_lr(lr)
        _check_nonnegative(lr_decay=lr_decay, weight_decay=weight_decay,
                           initial_accumulator_value=initial_accumulator_value, epsilon=eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        _check_fused(fused, differentiable, foreach)
        with grad_mode.no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    state = self.state[p]
                    state["step"] = 0.0
                    state["sum"] = _creation.full_like(p, group["initial_accumulator_value"])

    def _step_group(self, group):
        kw = dict(lr=_to_scalar(group["lr"]), lr_decay=group["lr_decay"], weight_decay=group["weight_decay"],
                  eps=group["eps"], maximize=group["maximize"])
        for p, state in self._with_grad(group):
            F.adagrad(p, p.grad, state, **kw)


def adagrad(params, grads, state_sums, state_steps, fused=None, grad_scale=None, found_inf=None, has_sparse_grad=False,
            foreach=None, differentiable=False, has_complex=False, *, lr, weight_decay, lr_decay, eps, maximize):
    """PyTorch's functional Adagrad: the states in their lists, updated in place."""
    F.per_param(F.adagrad, params, grads, {"sum": state_sums, "step": state_steps}, grad_scale=grad_scale,
                found_inf=found_inf, lr=_to_scalar(lr), lr_decay=lr_decay, weight_decay=weight_decay, eps=eps,
                maximize=maximize)
