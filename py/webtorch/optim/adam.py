"""Adam and AdamW (decoupled weight decay), as torch.optim.Adam / AdamW."""
from .. import _creation
from .optimizer import Optimizer, _to_scalar
from . import functional as F


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if not 0.0 <= _to_scalar(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= _to_scalar(betas[0]) < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= _to_scalar(betas[1]) < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable,
                        fused=fused, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for g in self.param_groups:
            g.setdefault("amsgrad", False)
            g.setdefault("maximize", False)
            g.setdefault("decoupled_weight_decay", False)

    def _step_group(self, group):
        beta1, beta2 = (_to_scalar(b) for b in group["betas"])
        kw = dict(lr=_to_scalar(group["lr"]), beta1=beta1, beta2=beta2, eps=group["eps"],
                  weight_decay=group["weight_decay"], amsgrad=group["amsgrad"], maximize=group["maximize"],
                  decoupled_weight_decay=group["decoupled_weight_decay"])
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if len(state) == 0:
                state["step"] = 0.0
                state["exp_avg"] = _creation.zeros_like(p)
                state["exp_avg_sq"] = _creation.zeros_like(p)
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = _creation.zeros_like(p)
            F.adam(p, p.grad, state, **kw)


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for g in self.param_groups:
            g["decoupled_weight_decay"] = True
