"""Stochastic weight averaging and EMA of weights, as torch.optim.swa_utils: AveragedModel,
update_bn, SWALR and the averaging functions."""
import copy
import itertools
import math
import warnings

from .. import _dtype
from ..autograd import grad_mode
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from ..ops import _creation
from . import _kernels as K
from .lr_scheduler import LRScheduler, _format_param
from .optimizer import f32

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay=0.999):
    _check_decay(decay)

    @grad_mode.no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        for p_ema, p_model in zip(ema_param_list, current_param_list):
            if p_ema.is_floating_point() or p_ema.is_complex():
                K.lerp_(p_ema, p_model, 1 - decay)
            else:
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    @grad_mode.no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        n = int(num_averaged)
        for p_avg, p_model in zip(averaged_param_list, current_param_list):
            if p_avg.is_floating_point() or p_avg.is_complex():
                # PyTorch's weight 1 / (n + 1) is a float32 tensor turned into a Python scalar
                K.lerp_(p_avg, p_model, f32(1 / (n + 1)))
            else:
                p_avg.add_(p_model - p_avg, alpha=1.0 / (n + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    _check_decay(decay)

    @grad_mode.no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    @grad_mode.no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _creation.tensor(0, dtype=_dtype.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        if self.use_buffers:
            self_param = itertools.chain(self.module.parameters(), self.module.buffers())
            model_param = itertools.chain(model.parameters(), model.buffers())
        else:
            self_param, model_param = self.parameters(), model.parameters()
        averaged, current = [], []
        copy_param = bool(self.n_averaged == 0)
        with grad_mode.no_grad():
            for p_averaged, p_model in zip(self_param, model_param):
                p_model_ = p_model.detach().to(p_averaged.device)
                averaged.append(p_averaged.detach())
                current.append(p_model_)
                if copy_param:
                    p_averaged.detach().copy_(p_model_)
            if self.n_averaged > 0:
                if self.avg_fn is None:
                    # the lists of each (device, dtype), as PyTorch groups them
                    groups = {}
                    for a, c in zip(averaged, current):
                        ga, gc = groups.setdefault((str(a.device), a.dtype), ([], []))
                        ga.append(a)
                        gc.append(c)
                    for (dev, _), (ga, gc) in groups.items():
                        n = self.n_averaged.to(dev)
                        if self.multi_avg_fn is not None:
                            self.multi_avg_fn(ga, gc, n)
                        else:
                            avg_fn = get_swa_avg_fn()
                            for a, c in zip(ga, gc):
                                a.copy_(avg_fn(a, c, n))
                else:
                    for a, c in zip(averaged, current):
                        a.copy_(self.avg_fn(a, c, self.n_averaged.to(a.device)))
            if not self.use_buffers:
                for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                    b_swa.detach().copy_(b_model.detach().to(b_swa.device))
            self.n_averaged += 1


def update_bn(loader, model, device=None):
    """Recompute the BatchNorm running statistics of `model` with one pass over `loader`."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with grad_mode.no_grad():
        for input in loader:
            if isinstance(input, (list, tuple)):
                input = input[0]
            if device is not None:
                input = input.to(device)
            model(input)
    for bn_module in momenta:
        bn_module.momentum = momenta[bn_module]
    model.train(was_training)


class SWALR(LRScheduler):
    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
