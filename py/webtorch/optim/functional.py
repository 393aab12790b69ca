"""One function per optimizer: the update of one parameter, written as in PyTorch's
single-tensor implementations (same order of operations, so results agree to rounding).

A backend may do a whole update in fused kernels: each function first offers it to the
parameter's backend through the optional hook `fused_step(name, param, grad, state, **hyper)`,
which returns True when it did the update and False for a case it does not cover (the webgpu
backend's SGD, Adam, RMSprop and Adagrad steps: `webtorch/webgpu/fused.py`). The backend never imports optim.
"""
from .._tensor import Tensor
from ..ops import _prims
from . import _kernels as K
from .optimizer import f32


def _fused(name, p, g, state, **hyper):
    """True when p's backend did optimizer `name`'s update of p in fused kernels."""
    step = getattr(p._backend, "fused_step", None)
    return step is not None and step(name, p, g, state, **hyper)


def sgd(p, g, state, *, lr, momentum, dampening, weight_decay, nesterov, maximize):
    if _fused("sgd", p, g, state, lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
              nesterov=nesterov, maximize=maximize):
        return
    if maximize:
        g = K.unary("neg", g)
    if weight_decay != 0:
        g = K.add(g, p, weight_decay)
    if momentum != 0:
        buf = state.get("momentum_buffer")
        if buf is None:
            buf = K.unary("copy", g)
            state["momentum_buffer"] = buf
        else:
            K.inplace("mul", buf, momentum)
            K.add_(buf, g, 1 - dampening)
        g = K.add(g, buf, momentum) if nesterov else buf
    K.add_(p, g, -lr)


def _count_step(state):
    """state["step"] += 1, in place when it lives on the device (a 0-d tensor, see
    Optimizer._capture_prologue); returns the new step."""
    step = state["step"]
    if isinstance(step, Tensor):
        K.inplace("add", step, 1)
    else:
        state["step"] = step = step + 1
    return step


def _start(p, g, state, weight_decay, maximize, decoupled_lr=None):
    """What most steps start with: maximize, the step count, weight decay (L2: g + wd * p; with
    `decoupled_lr`: p *= 1 - lr * wd). Returns (g as used, step)."""
    if maximize:
        g = K.unary("neg", g)
    step = _count_step(state)
    if weight_decay != 0:
        if decoupled_lr is not None:
            K.inplace("mul", p, 1 - decoupled_lr * weight_decay)
        else:
            g = K.add(g, p, weight_decay)
    return g, step


def _adam_start(p, g, state, lr, beta1, beta2, weight_decay, decoupled_weight_decay, maximize):
    """_start, then both Adam moments. Returns (g as used, exp_avg, exp_avg_sq, step)."""
    g, step = _start(p, g, state, weight_decay, maximize, lr if decoupled_weight_decay else None)
    m, v = state["exp_avg"], state["exp_avg_sq"]
    K.lerp_(m, g, 1 - beta1)
    K.inplace("mul", v, beta2)
    K.addcmul_(v, g, g, 1 - beta2)
    return g, m, v, step


def adam(p, g, state, *, lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, decoupled_weight_decay):
    if _fused("adam", p, g, state, lr=lr, beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay,
              amsgrad=amsgrad, maximize=maximize, decoupled_weight_decay=decoupled_weight_decay):
        return
    g, m, v, step = _adam_start(p, g, state, lr, beta1, beta2, weight_decay, decoupled_weight_decay, maximize)
    if isinstance(step, Tensor):
        return _adam_capturable(p, m, v, step, state, lr, beta1, beta2, eps, amsgrad)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    step_size = lr / bias_correction1
    bias_correction2_sqrt = bias_correction2 ** 0.5
    denom = K.new("div", K.unary("sqrt", _vmax(state, v, amsgrad)), bias_correction2_sqrt)
    K.inplace("add", denom, eps)
    K.addcdiv_(p, m, denom, -step_size)


def _vmax(state, v, amsgrad):
    """v, or with amsgrad the running maximum of v (state["max_exp_avg_sq"], updated)."""
    if not amsgrad:
        return v
    vmax = state["max_exp_avg_sq"]
    K.inplace("maximum", vmax, v)
    return vmax


def _adam_capturable(p, m, v, step, state, lr, beta1, beta2, eps, amsgrad):
    """Adam's update with the step count in a device tensor, as PyTorch's capturable=True. The
    0-d values come first, one after another, so that they fuse into one kernel."""
    bias_correction1 = K.new("sub", 1, K.new("pow", beta1, step))
    bias_correction2 = K.new("sub", 1, K.new("pow", beta2, step))
    step_size_neg = K.unary("neg", K.new("div", lr, bias_correction1))
    bias_correction2_sqrt = K.unary("sqrt", bias_correction2)
    scale = K.new("mul", bias_correction2_sqrt, step_size_neg)
    eps_scaled = K.new("div", eps, step_size_neg)
    denom = K.new("div", K.unary("sqrt", _vmax(state, v, amsgrad)), scale)
    K.inplace("add", denom, eps_scaled)
    K.addcdiv_(p, m, denom)


def rmsprop(p, g, state, *, lr, alpha, eps, weight_decay, momentum, centered, maximize):
    if _fused("rmsprop", p, g, state, lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
              centered=centered, maximize=maximize):
        return
    g, _ = _start(p, g, state, weight_decay, maximize)
    sq = state["square_avg"]
    K.inplace("mul", sq, alpha)
    K.addcmul_(sq, g, g, 1 - alpha)
    if centered:
        ga = state["grad_avg"]
        K.lerp_(ga, g, 1 - alpha)
        avg = K.addcmul(sq, ga, ga, -1)
        K.unary_("sqrt", avg)
    else:
        avg = K.unary("sqrt", sq)
    K.inplace("add", avg, eps)
    if momentum > 0:
        buf = state["momentum_buffer"]
        K.inplace("mul", buf, momentum)
        K.addcdiv_(buf, g, avg)
        K.add_(p, buf, -lr)
    else:
        K.addcdiv_(p, g, avg, -lr)


def adagrad(p, g, state, *, lr, lr_decay, weight_decay, eps, maximize):
    if _fused("adagrad", p, g, state, lr=lr, lr_decay=lr_decay, weight_decay=weight_decay, eps=eps,
              maximize=maximize):
        return
    g, step = _start(p, g, state, weight_decay, maximize)
    s = state["sum"]
    K.addcmul_(s, g, g, 1)
    std = K.unary("sqrt", s)
    K.inplace("add", std, eps)
    if lr_decay == 0:
        K.addcdiv_(p, g, std, -lr)
    elif isinstance(step, Tensor):          # the decayed lr from the device step
        clr = K.new("div", lr, K.new("add", K.new("mul", K.new("sub", step, 1), lr_decay), 1))
        K.inplace("sub", p, K.new("mul", K.new("div", g, std), clr))
    else:
        K.addcdiv_(p, g, std, -(lr / (1 + (step - 1) * lr_decay)))


def adadelta(p, g, state, *, lr, rho, eps, weight_decay, maximize):
    g, _ = _start(p, g, state, weight_decay, maximize)
    sq, acc = state["square_avg"], state["acc_delta"]
    K.inplace("mul", sq, rho)
    K.addcmul_(sq, g, g, 1 - rho)
    std = K.new("add", sq, eps)
    K.unary_("sqrt", std)
    delta = K.new("add", acc, eps)
    K.unary_("sqrt", delta)
    K.inplace("div", delta, std)
    K.inplace("mul", delta, g)
    K.inplace("mul", acc, rho)
    K.addcmul_(acc, delta, delta, 1 - rho)
    K.add_(p, delta, -lr)


def adamax(p, g, state, *, lr, beta1, beta2, eps, weight_decay, maximize):
    g, step = _start(p, g, state, weight_decay, maximize)
    m, u = state["exp_avg"], state["exp_inf"]
    K.lerp_(m, g, 1 - beta1)
    K.inplace("mul", u, beta2)
    a = K.unary("abs", g)
    K.inplace("add", a, eps)
    K.inplace("maximum", u, a)
    if isinstance(step, Tensor):            # PyTorch's capturable form
        K.addcdiv_(p, m, K.new("mul", u, K.new("div", K.new("sub", K.new("pow", beta1, step), 1), lr)))
    else:
        K.addcdiv_(p, m, u, -lr / (1 - beta1 ** step))


def nadam(p, g, state, *, lr, beta1, beta2, eps, weight_decay, momentum_decay, decoupled_weight_decay, maximize):
    g, m, v, step = _adam_start(p, g, state, lr, beta1, beta2, weight_decay, decoupled_weight_decay, maximize)
    if isinstance(step, Tensor):
        return _nadam_capturable(p, g, m, v, step, state["mu_product"], lr, beta1, beta2, eps, momentum_decay)
    bias_correction2 = 1 - beta2 ** step
    mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
    mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
    # PyTorch keeps mu_product in a float32 0-d tensor: round as it does
    state["mu_product"] = mu_product = f32(state["mu_product"] * f32(mu))
    denom = K.new("div", v, bias_correction2)
    K.unary_("sqrt", denom)
    K.inplace("add", denom, eps)
    K.addcdiv_(p, g, denom, -lr * (1.0 - mu) / (1.0 - mu_product))
    K.addcdiv_(p, m, denom, (-lr * mu_next) / (1.0 - mu_product * mu_next))


def _nadam_capturable(p, g, m, v, step, mu_product, lr, beta1, beta2, eps, momentum_decay):
    """NAdam's update with the step count and mu_product in device tensors (PyTorch's capturable)."""
    def mu_at(s):          # beta1 * (1 - 0.5 * 0.96 ** (s * momentum_decay))
        return K.new("mul", K.new("sub", 1.0, K.new("mul", K.new("pow", 0.96, K.new("mul", s, momentum_decay)), 0.5)),
                     beta1)
    mu, mu_next = mu_at(step), mu_at(K.new("add", step, 1))
    K.inplace("mul", mu_product, mu)
    denom = K.new("div", v, K.new("sub", 1, K.new("pow", beta2, step)))
    K.unary_("sqrt", denom)
    K.inplace("add", denom, eps)
    mu_product_next = K.new("mul", mu_product, mu_next)
    gs = K.new("mul", g, K.new("div", K.new("mul", K.new("sub", 1.0, mu), -lr), K.new("sub", 1.0, mu_product)))
    ms = K.new("mul", m, K.new("div", K.new("mul", mu_next, -lr), K.new("sub", 1.0, mu_product_next)))
    K.addcdiv_(p, gs, denom)
    K.addcdiv_(p, ms, denom)


def radam(p, g, state, *, lr, beta1, beta2, eps, weight_decay, decoupled_weight_decay, maximize):
    g, m, v, step = _adam_start(p, g, state, lr, beta1, beta2, weight_decay, decoupled_weight_decay, maximize)
    rho_inf = 2 / (1 - beta2) - 1
    if isinstance(step, Tensor):
        return _radam_capturable(p, m, v, step, lr, beta1, beta2, eps, rho_inf)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    update = K.new("mul", K.new("div", m, bias_correction1), lr)
    rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
    if rho_t > 5.0:
        rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        denom = K.unary("sqrt", v)
        K.inplace("add", denom, eps)
        update = K.new("mul", K.new("mul", update, K.new("div", bias_correction2 ** 0.5, denom)), rect)
    K.inplace("sub", p, update)


def _radam_capturable(p, m, v, step, lr, beta1, beta2, eps, rho_inf):
    """RAdam's update with the step count in a device tensor: the rectification's branch is a
    `where` on the device (PyTorch's capturable form)."""
    bias_correction1 = K.new("sub", 1, K.new("pow", beta1, step))
    bias_correction2 = K.new("sub", 1, K.new("pow", beta2, step))
    rho_t = K.new("sub", rho_inf, K.new("div", K.new("mul", K.new("mul", step, 2), K.new("pow", beta2, step)),
                                        bias_correction2))
    rect_num = K.new("mul", K.new("mul", K.new("sub", rho_t, 4), K.new("sub", rho_t, 2)), rho_inf)
    rect = K.new("pow", K.new("div", rect_num, K.new("mul", rho_t, (rho_inf - 4) * (rho_inf - 2))), 0.5)
    adaptive = K.new("div", K.new("pow", bias_correction2, 0.5), K.new("add", K.unary("sqrt", v), eps))
    update = _prims.ewise("where", [K.cmp("lt", 5.0, rho_t), K.new("mul", rect, adaptive), 1.0], v.dtype, v.dtype,
                          shape=v.shape)
    K.inplace("sub", p, K.new("mul", K.new("mul", K.new("div", m, bias_correction1), lr), update))


def asgd(p, g, state, *, lr, lambd, alpha, t0, weight_decay, maximize):
    g, step = _start(p, g, state, weight_decay, maximize)
    eta, mu, ax = state["eta"], state["mu"], state["ax"]
    K.inplace("mul", p, 1 - lambd * eta)
    K.add_(p, g, -eta)
    if mu != 1:
        d = K.new("sub", p, ax)
        K.inplace("mul", d, mu)
        K.inplace("add", ax, d)
    else:
        K.copy_(ax, p)
    # eta and mu live in float32 0-d tensors in PyTorch
    state["eta"] = f32(lr / ((1 + lambd * lr * step) ** alpha))
    state["mu"] = f32(1 / max(1, step - t0))


def rprop(p, g, state, *, etaminus, etaplus, step_size_min, step_size_max, maximize):
    if maximize:
        g = K.unary("neg", g)
    _count_step(state)
    prev, step_size = state["prev"], state["step_size"]
    sign = K.unary("sign", K.new("mul", g, prev))
    # etaplus where the gradient kept its sign, etaminus where it flipped, 1 where either was 0
    # (sign + 1), NaN where the product is NaN
    factor = K.where(K.cmp("lt", 0, sign), etaplus,
                     K.where(K.cmp("lt", sign, 0), etaminus, K.new("add", sign, 1)))
    K.inplace("mul", step_size, factor)
    K.inplace("maximum", step_size, step_size_min)
    K.inplace("minimum", step_size, step_size_max)
    g = K.where(K.cmp("lt", sign, 0), 0, g)
    K.inplace("sub", p, K.new("mul", K.unary("sign", g), step_size))
    K.copy_(prev, g)


def adafactor(p, g, state, *, lr, beta2_decay, eps1, eps2, d, weight_decay, maximize):
    """PyTorch's Adafactor. Its two norms that PyTorch reads back to the host (the relative step
    size and the update clipping) stay on the device here as 0-d tensors."""
    if maximize:
        g = -g
    state["step"] = step = state["step"] + 1
    one_minus_beta2_t = step ** beta2_decay
    rho_t = min(lr, 1 / (step ** 0.5))
    alpha = (p.norm(2) / (p.numel() ** 0.5)).clamp_(min=eps2).mul_(rho_t)
    if weight_decay != 0:
        K.inplace("mul", p, 1 - lr * weight_decay)
    if g.dim() > 1:
        row_var, col_var = state["row_var"], state["col_var"]
        K.lerp_(row_var, g.norm(dim=-1, keepdim=True).square().div_(g.size(-1)), one_minus_beta2_t)
        K.lerp_(col_var, g.norm(dim=-2, keepdim=True).square().div_(g.size(-2)), one_minus_beta2_t)
        var_estimate = row_var @ col_var
        var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
    else:
        variance = state["variance"]
        K.lerp_(variance, K.new("mul", g, g), one_minus_beta2_t)
        var_estimate = variance.clone()
    update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
    update.mul_(g)
    denom = (update.norm(2) / ((update.numel() ** 0.5) * d)).clamp_(min=1.0)
    K.inplace("sub", p, update.mul_(alpha.div_(denom)))


_HOST_STATE = ("step", "mu_product", "eta", "mu")  # 0-d tensors PyTorch's non-capturable updates read as numbers


def per_param(update, params, grads, lists, *, capturable=False, grad_scale=None, found_inf=None, **hyper):
    """PyTorch's functional optimizer API (torch.optim.adam.adam(params, grads, exp_avgs, ...)) on one of the
    updates above: `lists` maps each state key to its list, one entry per parameter (an empty list: a state the
    options do not use), each updated in place as PyTorch's; 0-d step tensors count on the device where
    `capturable`, else as numbers (PyTorch's _get_value)."""
    if grad_scale is not None or found_inf is not None:
        raise RuntimeError("grad_scale and found_inf are the fused kernels' arguments, which webtorch's functional "
                           "optimizers do not take")
    device_state = ("step", "mu_product") if capturable and update not in (asgd, adafactor) else ()
    for i, (p, g) in enumerate(zip(params, grads, strict=True)):
        state = {k: v[i] for k, v in lists.items() if i < len(v) and v[i] is not None}
        host = [k for k in _HOST_STATE if k in state and k not in device_state]
        for k in host:
            state[k] = state[k].item()
        update(p, g, state, **hyper)
        for k, v in lists.items():
            if k in host:
                v[i].fill_(state[k])
            elif k in state:
                v[i] = state[k]


__all__ = ["sgd", "adam", "rmsprop", "adagrad", "adadelta", "adamax", "nadam", "radam", "asgd", "rprop", "adafactor"]
