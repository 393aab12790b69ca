"""One function per optimizer: the update of one parameter, written as in PyTorch's
single-tensor implementations (same order of operations, so results agree to rounding).

`FUSED` maps an optimizer name to a replacement `fn(param, grad, state, **hyper)` for a
device type; a backend with a fused kernel registers it there, e.g.
`FUSED[("adam", "webgpu")] = my_fused_adam`, and the optimizer classes pick it up.
"""
from . import _kernels as K

FUSED = {}


def _fused(name, p):
    return FUSED.get((name, p.device.type)) if FUSED else None


def sgd(p, g, state, *, lr, momentum, dampening, weight_decay, nesterov, maximize):
    f = _fused("sgd", p)
    if f is not None:
        return f(p, g, state, lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                 nesterov=nesterov, maximize=maximize)
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


def adam(p, g, state, *, lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, decoupled_weight_decay):
    f = _fused("adam", p)
    if f is not None:
        return f(p, g, state, lr=lr, beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay,
                 amsgrad=amsgrad, maximize=maximize, decoupled_weight_decay=decoupled_weight_decay)
    if maximize:
        g = K.unary("neg", g)
    state["step"] = step = state["step"] + 1
    if weight_decay != 0:
        if decoupled_weight_decay:
            K.inplace("mul", p, 1 - lr * weight_decay)
        else:
            g = K.add(g, p, weight_decay)
    m, v = state["exp_avg"], state["exp_avg_sq"]
    K.lerp_(m, g, 1 - beta1)
    K.inplace("mul", v, beta2)
    K.addcmul_(v, g, g, 1 - beta2)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    step_size = lr / bias_correction1
    bias_correction2_sqrt = bias_correction2 ** 0.5
    if amsgrad:
        vmax = state["max_exp_avg_sq"]
        K.inplace("maximum", vmax, v)
        v = vmax
    denom = K.new("div", K.unary("sqrt", v), bias_correction2_sqrt)
    K.inplace("add", denom, eps)
    K.addcdiv_(p, m, denom, -step_size)


def rmsprop(p, g, state, *, lr, alpha, eps, weight_decay, momentum, centered, maximize):
    f = _fused("rmsprop", p)
    if f is not None:
        return f(p, g, state, lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                 centered=centered, maximize=maximize)
    if maximize:
        g = K.unary("neg", g)
    state["step"] = state["step"] + 1
    if weight_decay != 0:
        g = K.add(g, p, weight_decay)
    sq = state["square_avg"]
    K.inplace("mul", sq, alpha)
    K.addcmul_(sq, g, g, 1 - alpha)
    if centered:
        ga = state["grad_avg"]
        K.lerp_(ga, g, 1 - alpha)
        avg = K.new("sub", sq, K.new("mul", ga, ga))
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
    f = _fused("adagrad", p)
    if f is not None:
        return f(p, g, state, lr=lr, lr_decay=lr_decay, weight_decay=weight_decay, eps=eps, maximize=maximize)
    state["step"] = step = state["step"] + 1
    if maximize:
        g = K.unary("neg", g)
    if weight_decay != 0:
        g = K.add(g, p, weight_decay)
    clr = lr / (1 + (step - 1) * lr_decay)
    s = state["sum"]
    K.addcmul_(s, g, g, 1)
    std = K.unary("sqrt", s)
    K.inplace("add", std, eps)
    K.addcdiv_(p, g, std, -clr)


__all__ = ["sgd", "adam", "rmsprop", "adagrad", "FUSED"]
