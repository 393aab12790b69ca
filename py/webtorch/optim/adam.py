"""Adam, as torch.optim.Adam."""
from .._tensor import Tensor
from ..ops import _creation
from . import functional as F
from .optimizer import Optimizer, _check_adam_args, _check_fused, _check_lr, _init_state, _to_scalar


class Adam(Optimizer):
    _flags_added_later = ("amsgrad", "maximize", "decoupled_weight_decay")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
        _check_lr(lr)
        _check_adam_args(eps, betas, weight_decay)
        if not (all(isinstance(b, float) for b in betas) or all(isinstance(b, Tensor) for b in betas)):
            raise ValueError("betas must be either both floats or both Tensors")
        for i, b in enumerate(betas):
            if isinstance(b, Tensor):
                if not capturable and foreach:
                    raise ValueError(f"betas[{i}] as a Tensor is not supported for capturable=False and foreach=True")
                if b.numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = tuple(map(_to_scalar, betas))
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable,
                        fused=fused, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        _check_fused(fused, differentiable, foreach)

    def _step_group(self, group):
        beta1, beta2 = (_to_scalar(b) for b in group["betas"])
        kw = dict(lr=_to_scalar(group["lr"]), beta1=beta1, beta2=beta2, eps=group["eps"],
                  weight_decay=group["weight_decay"], amsgrad=group["amsgrad"], maximize=group["maximize"],
                  decoupled_weight_decay=group["decoupled_weight_decay"])
        for p, state in self._with_grad(group):
            if len(state) == 0:
                _init_state(p, state, "exp_avg", "exp_avg_sq")
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = _creation.zeros_like(p)
            F.adam(p, p.grad, state, **kw)


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, foreach=None, capturable=False,
         differentiable=False, fused=None, grad_scale=None, found_inf=None, has_complex=False,
         decoupled_weight_decay=False, *, amsgrad, beta1, beta2, lr, weight_decay, eps, maximize):
    """PyTorch's functional Adam: the states in their lists, updated in place."""
    F.per_param(F.adam, params, grads, {"exp_avg": exp_avgs, "exp_avg_sq": exp_avg_sqs,
                                        "max_exp_avg_sq": max_exp_avg_sqs, "step": state_steps},
                capturable=capturable, grad_scale=grad_scale, found_inf=found_inf, lr=_to_scalar(lr),
                beta1=_to_scalar(beta1), beta2=_to_scalar(beta2), eps=eps, weight_decay=weight_decay,
                amsgrad=amsgrad, maximize=maximize, decoupled_weight_decay=decoupled_weight_decay)
