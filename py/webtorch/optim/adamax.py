"""Adamax (Adam with the infinity norm), as torch.optim.Adamax."""
from . import functional as F
from .optimizer import Optimizer, _check_adam_args, _check_lr, _init_state, _to_scalar


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check_adam_args(eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _step_group(self, group):
        beta1, beta2 = (_to_scalar(b) for b in group["betas"])
        kw = dict(lr=_to_scalar(group["lr"]), beta1=beta1, beta2=beta2, eps=group["eps"],
                  weight_decay=group["weight_decay"], maximize=group["maximize"])
        for p, state in self._with_grad(group):
            if len(state) == 0:
                _init_state(p, state, "exp_avg", "exp_inf")
            F.adamax(p, p.grad, state, **kw)


def adamax(params, grads, exp_avgs, exp_infs, state_steps, foreach=None, maximize=False, differentiable=False,
           capturable=False, has_complex=False, *, eps, beta1, beta2, lr, weight_decay):
    """PyTorch's functional Adamax: the states in their lists, updated in place."""
    F.per_param(F.adamax, params, grads, {"exp_avg": exp_avgs, "exp_inf": exp_infs, "step": state_steps},
                capturable=capturable, lr=_to_scalar(lr), beta1=beta1, beta2=beta2, eps=eps,
                weight_decay=weight_decay, maximize=maximize)
