"""torch.autograd.functional: jacobian, hessian, vjp, jvp (built on autograd.grad)."""
from .. import _late
from ._api import grad


def _tuple(x):
    return x if isinstance(x, tuple) else (x,)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    inputs = tuple(x.detach().requires_grad_(True) for x in _tuple(inputs))
    out = func(*inputs)
    vs = _tuple(v) if v is not None else None
    g = grad(_tuple(out), inputs, vs, create_graph=create_graph, allow_unused=True)
    return out, g if len(g) > 1 else g[0]


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    _creation = _late.creation
    stack = _late.shape.stack
    single = not isinstance(inputs, tuple)
    inputs = tuple(x.detach().requires_grad_(True) for x in _tuple(inputs))
    out = func(*inputs)
    flat = out.reshape(-1)
    rows = []
    for m in range(flat.numel()):
        go = _creation.zeros_like(flat)
        go[m] = 1.0
        gs = grad([out], inputs, [go.reshape(out.shape)], retain_graph=True, create_graph=create_graph,
                  allow_unused=True)
        rows.append([g if g is not None else _creation.zeros_like(x) for g, x in zip(gs, inputs)])
    res = tuple(stack([r[i] for r in rows]).reshape(tuple(out.shape) + tuple(x.shape)) for i, x in enumerate(inputs))
    return res[0] if single else res


def hessian(func, inputs, create_graph=False, strict=False):

    def g(x):
        x = x if x.requires_grad else x.requires_grad_(True)
        return grad(func(x), x, create_graph=True)[0]
    return jacobian(g, inputs)
