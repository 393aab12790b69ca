"""Stochastic gradient descent (optionally with momentum / Nesterov), as torch.optim.SGD."""
from . import functional as F
from .optimizer import Optimizer, _check_fused, _check_lr, _to_scalar


class SGD(Optimizer):
    _flags_added_later = ("nesterov", "maximize")

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        _check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable,
                        fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_fused(fused, differentiable, foreach)

    def _step_group(self, group):
        lr = _to_scalar(group["lr"])
        kw = dict(lr=lr, momentum=group["momentum"], dampening=group["dampening"],
                  weight_decay=group["weight_decay"], nesterov=group["nesterov"], maximize=group["maximize"])
        for p in group["params"]:
            if p.grad is None:
                continue
            if group["momentum"] == 0:
                F.sgd(p, p.grad, {}, **kw)
            else:
                state = self.state[p]
                state.setdefault("momentum_buffer", None)
                F.sgd(p, p.grad, state, **kw)


def sgd(params, d_p_list, momentum_buffer_list, has_sparse_grad=False, foreach=None, fused=None, grad_scale=None,
        found_inf=None, *, weight_decay, momentum, lr, dampening, nesterov, maximize):
    """PyTorch's functional SGD: momentum_buffer_list's None entries get their new buffers."""
    F.per_param(F.sgd, params, d_p_list, {"momentum_buffer": momentum_buffer_list}, grad_scale=grad_scale,
                found_inf=found_inf, lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                nesterov=nesterov, maximize=maximize)
