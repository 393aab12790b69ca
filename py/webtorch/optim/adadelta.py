"""Adadelta, as torch.optim.Adadelta."""
from . import functional as F
from .optimizer import Optimizer, _check_lr, _check_nonnegative, _init_state, _to_scalar


class Adadelta(Optimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_nonnegative(epsilon=eps, weight_decay=weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _step_group(self, group):
        kw = dict(lr=_to_scalar(group["lr"]), rho=group["rho"], eps=group["eps"], weight_decay=group["weight_decay"],
                  maximize=group["maximize"])
        for p, state in self._with_grad(group):
            if len(state) == 0:
                _init_state(p, state, "square_avg", "acc_delta")
            F.adadelta(p, p.grad, state, **kw)


def adadelta(params, grads, square_avgs, acc_deltas, state_steps, capturable=False, foreach=None,
             differentiable=False, has_complex=False, *, lr, rho, eps, weight_decay, maximize):
    """PyTorch's functional Adadelta: the states in their lists, updated in place."""
    F.per_param(F.adadelta, params, grads, {"square_avg": square_avgs, "acc_delta": acc_deltas, "step": state_steps},
                capturable=capturable, lr=_to_scalar(lr), rho=rho, eps=eps, weight_decay=weight_decay,
                maximize=maximize)
