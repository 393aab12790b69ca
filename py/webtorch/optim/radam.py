"""RAdam (rectified Adam), as torch.optim.RAdam."""
from . import functional as F
from .optimizer import Optimizer, _check_adam_args, _check_lr, _init_state, _to_scalar

__all__ = ["RAdam", "radam"]


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check_lr(lr)
        _check_adam_args(eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _step_group(self, group):
        beta1, beta2 = (_to_scalar(b) for b in group["betas"])
        kw = dict(lr=_to_scalar(group["lr"]), beta1=beta1, beta2=beta2, eps=group["eps"],
                  weight_decay=group["weight_decay"], decoupled_weight_decay=group["decoupled_weight_decay"],
                  maximize=group["maximize"])
        for p, state in self._with_grad(group):
            if len(state) == 0:
                _init_state(p, state, "exp_avg", "exp_avg_sq")
            F.radam(p, p.grad, state, **kw)


def radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, decoupled_weight_decay=False, foreach=None,
          differentiable=False, capturable=False, has_complex=False, maximize=False, *, beta1, beta2, lr,
          weight_decay, eps):
    """PyTorch's functional RAdam: the states in their lists, updated in place."""
    F.per_param(F.radam, params, grads, {"exp_avg": exp_avgs, "exp_avg_sq": exp_avg_sqs, "step": state_steps},
                capturable=capturable, lr=_to_scalar(lr), beta1=beta1, beta2=beta2, eps=eps,
                weight_decay=weight_decay, decoupled_weight_decay=decoupled_weight_decay, maximize=maximize)
