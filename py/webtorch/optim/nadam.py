"""NAdam (Adam with Nesterov momentum), as torch.optim.NAdam."""
from . import functional as F
from .optimizer import Optimizer, _check_adam_args, _check_lr, _check_nonnegative, _init_state, _to_scalar


class NAdam(Optimizer):
    _scalar_state = ("step", "mu_product")
    _capturable_state = ("step", "mu_product")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_lr(lr)
        _check_adam_args(eps, betas, weight_decay)
        _check_nonnegative(momentum_decay=momentum_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _step_group(self, group):
        beta1, beta2 = (_to_scalar(b) for b in group["betas"])
        kw = dict(lr=_to_scalar(group["lr"]), beta1=beta1, beta2=beta2, eps=group["eps"],
                  weight_decay=group["weight_decay"], momentum_decay=group["momentum_decay"],
                  decoupled_weight_decay=group["decoupled_weight_decay"], maximize=group["maximize"])
        for p, state in self._with_grad(group):
            if len(state) == 0:
                _init_state(p, state, "exp_avg", "exp_avg_sq")
                state["mu_product"] = 1.0
            F.nadam(p, p.grad, state, **kw)


def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, decoupled_weight_decay=False, foreach=None,
          capturable=False, differentiable=False, has_complex=False, maximize=False, *, beta1, beta2, lr,
          weight_decay, momentum_decay, eps):
    """PyTorch's functional NAdam: the states in their lists, updated in place."""
    F.per_param(F.nadam, params, grads, {"exp_avg": exp_avgs, "exp_avg_sq": exp_avg_sqs, "mu_product": mu_products,
                                         "step": state_steps},
                capturable=capturable, lr=_to_scalar(lr), beta1=beta1, beta2=beta2, eps=eps,
                weight_decay=weight_decay, momentum_decay=momentum_decay,
                decoupled_weight_decay=decoupled_weight_decay, maximize=maximize)
