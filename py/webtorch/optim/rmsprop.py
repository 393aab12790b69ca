"""RMSprop, as torch.optim.RMSprop."""
from ..ops import _creation
from . import functional as F
from .optimizer import Optimizer, _check_lr, _check_nonnegative, _init_state, _to_scalar


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        _check_nonnegative(epsilon=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach, maximize=maximize,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _step_group(self, group):
        kw = dict(lr=_to_scalar(group["lr"]), alpha=group["alpha"], eps=group["eps"],
                  weight_decay=group["weight_decay"], momentum=group["momentum"], centered=group["centered"],
                  maximize=group["maximize"])
        for p, state in self._with_grad(group):
            if len(state) == 0:
                _init_state(p, state, "square_avg")
                if group["momentum"] > 0:
                    state["momentum_buffer"] = _creation.zeros_like(p)
                if group["centered"]:
                    state["grad_avg"] = _creation.zeros_like(p)
            F.rmsprop(p, p.grad, state, **kw)


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps, foreach=None, maximize=False,
            differentiable=False, capturable=False, has_complex=False, *, lr, alpha, eps, weight_decay, momentum,
            centered):
    """PyTorch's functional RMSprop: the states in their lists, updated in place."""
    F.per_param(F.rmsprop, params, grads, {"square_avg": square_avgs, "grad_avg": grad_avgs,
                                           "momentum_buffer": momentum_buffer_list, "step": state_steps},
                capturable=capturable, lr=_to_scalar(lr), alpha=alpha, eps=eps, weight_decay=weight_decay,
                momentum=momentum, centered=centered, maximize=maximize)
