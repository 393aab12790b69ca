"""torch.autograd.functional: vjp, jvp, vhp, hvp, jacobian, hessian (built on autograd.grad, as PyTorch's).

A tuple of inputs gives a tuple of results, a single Tensor a single one. `jvp` is the double-backward trick
(the vjp is linear in its vector: differentiate it along `v`); `jacobian(strategy="forward-mode")` takes one
forward-mode jvp (`autograd.forward_ad`) per input element.
"""
from .. import _late
from . import forward_ad
from ._api import grad
from .grad_mode import enable_grad


def _as_tuple(x):
    return (True, tuple(x)) if isinstance(x, (tuple, list)) else (False, (x,))


def _post(res, is_tuple):
    return res if is_tuple else res[0]


def _prepare(inputs, create_graph):
    return tuple(x.view_as(x) if create_graph and x.requires_grad else x.detach().requires_grad_(True)
                 for x in inputs)


def _detach(xs, create_graph):
    return tuple(x if create_graph or x is None else x.detach() for x in xs)


def _check_v(v, other, is_tuple):
    if len(v) != len(other):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}."
                           if is_tuple else "The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other)):
        if a.size() != b.size():
            pre = f"Entry {i} in " if is_tuple else ""
            raise RuntimeError(f"{pre}v has invalid size: should be {b.size()} but got {a.size()}.")


def _zeros_for_none(gs, refs, strict, what):
    out = []
    for i, (g, r) in enumerate(zip(gs, refs)):
        if g is None:
            if strict:
                raise RuntimeError(f"The {what} for the user-provided function is independent of input {i}. This "
                                   "is not allowed in strict mode.")
            g = _late.creation.zeros_like(r)
        out.append(g)
    return tuple(out)


def _input_vector(v, inputs, is_in):
    """v as a tuple matching the inputs; None only for a single one-element input (then 1)."""
    if v is None:
        if len(inputs) != 1 or inputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                               "single Tensor with a single element.")
        return (_late.creation.ones_like(inputs[0]),)
    vs = _as_tuple(v)[1]
    _check_v(vs, inputs, is_in)
    return vs


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    with enable_grad():
        is_in, inputs = _as_tuple(inputs)
        inputs = _prepare(inputs, create_graph)
        is_out, outs = _as_tuple(func(*inputs))
        if v is None:
            if len(outs) != 1 or outs[0].nelement() != 1:
                raise RuntimeError("The vector v can only be None if the user-provided function returns a single "
                                   "Tensor with a single element.")
            vs = None
        else:
            vs = _as_tuple(v)[1]
            _check_v(vs, outs, is_out)
        g = grad(outs, inputs, vs, create_graph=create_graph, allow_unused=True)
    return _post(_detach(outs, create_graph), is_out), _post(_zeros_for_none(g, inputs, strict, "output"), is_in)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    with enable_grad():
        is_in, inputs = _as_tuple(inputs)
        inputs = _prepare(inputs, create_graph)
        vs = _input_vector(v, inputs, is_in)
        is_out, outs = _as_tuple(func(*inputs))
        us = [_late.creation.zeros_like(o).requires_grad_(True) for o in outs]
        g = grad(outs, inputs, us, create_graph=True, allow_unused=True)
        pairs = [(a, b) for a, b in zip(g, vs) if a is not None]
        res = grad([a for a, _ in pairs], us, [b for _, b in pairs], create_graph=create_graph,
                   allow_unused=True) if pairs else (None,) * len(outs)
    return _post(_detach(outs, create_graph), is_out), _post(_zeros_for_none(res, outs, strict, "output"), is_out)


def _scalar_output(func, inputs, name):
    is_out, outs = _as_tuple(func(*inputs))
    if is_out or not isinstance(outs[0], _late.Tensor):
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should contain a single element")
    return outs[0]


def vhp(func, inputs, v=None, create_graph=False, strict=False, *, name="vhp"):
    with enable_grad():
        is_in, inputs = _as_tuple(inputs)
        inputs = _prepare(inputs, create_graph)
        vs = _input_vector(v, inputs, is_in)
        out = _scalar_output(func, inputs, name)
        jac = grad(out, inputs, create_graph=True, allow_unused=True)
        pairs = [(j, w, x) for j, w, x in zip(jac, vs, inputs) if j is not None and j.requires_grad]
        res = grad([j for j, _, _ in pairs], inputs, [w for _, w, _ in pairs], create_graph=create_graph,
                   allow_unused=True) if pairs else (None,) * len(inputs)
    return _detach((out,), create_graph)[0], _post(_zeros_for_none(res, inputs, strict, "jacobian"), is_in)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """H v: the Hessian of a twice-differentiable function is symmetric, so this is vhp's product."""
    return vhp(func, inputs, v, create_graph, strict, name="hvp")


def _jacobian_rows(outs, inputs, create_graph, strict):
    """For each output, for each input: d out / d input, of shape out.shape + input.shape (one backward per
    output element)."""
    res = []
    for o in outs:
        flat = o.reshape(-1)
        rows = []
        for m in range(flat.numel()):
            gs = grad([o], inputs, [_basis(o, m)], retain_graph=True, create_graph=create_graph,
                      allow_unused=True) if o.requires_grad else (None,) * len(inputs)
            rows.append(_zeros_for_none(gs, inputs, strict, "output"))
        res.append(tuple(_late.shape.stack([r[i] for r in rows]).reshape(tuple(o.shape) + tuple(x.shape))
                         if rows else _late.creation.zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype)
                         for i, x in enumerate(inputs)))
    return res


def _basis(x, m):
    e = _late.creation.zeros(x.numel(), dtype=x.dtype, device=x.device)
    e[m] = 1.0
    return e.reshape(x.shape)


def _jacobian_forward(func, inputs):
    """Jacobians column by column: one forward-mode jvp per input element."""
    cols, outs = [[] for _ in inputs], None
    for i, x in enumerate(inputs):
        for m in range(x.numel()):
            with forward_ad.dual_level():
                duals = [forward_ad.make_dual(y, _basis(y, m) if j == i else _late.creation.zeros_like(y))
                         for j, y in enumerate(inputs)]
                outs = _as_tuple(func(*duals))
                cols[i].append([forward_ad.unpack_dual(o).tangent for o in outs[1]])
                outs = (outs[0], tuple(o.detach() for o in outs[1]))
    if outs is None:
        outs = _as_tuple(func(*inputs))
    res = []
    for k, o in enumerate(outs[1]):
        res.append(tuple(
            _late.shape.stack([(c[k] if c[k] is not None else _late.creation.zeros_like(o)) for c in cols[i]],
                              -1).reshape(tuple(o.shape) + tuple(x.shape)) for i, x in enumerate(inputs)))
    return outs[0], res


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    is_in, inputs = _as_tuple(inputs)
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                      '`strategy="forward-mode"` are not supported together (yet). Please either '
                                      'set `create_graph=False` or `strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                      "only implemented for `vectorize=True`.")
        is_out, res = _jacobian_forward(func, tuple(x.detach() for x in inputs))
    else:
        with enable_grad():
            inputs = _prepare(inputs, create_graph)
            is_out, outs = _as_tuple(func(*inputs))
            res = _jacobian_rows(outs, inputs, create_graph, strict)
    res = [tuple(j if create_graph else j.detach() for j in r) for r in res]
    res = [_post(r, is_in) for r in res]
    return _post(tuple(res), is_out)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    is_in, t_in = _as_tuple(inputs)

    def jac(*xs):
        out = _scalar_output(func, xs, "hessian")
        g = grad(out, xs, create_graph=True, allow_unused=True)
        return _post(_zeros_for_none(g, xs, strict, "jacobian"), is_in)
    return jacobian(jac, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize)
