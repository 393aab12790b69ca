"""torch.autograd.functional: vjp, jvp, vhp, hvp, jacobian, hessian (built on autograd.grad, as PyTorch's).

A tuple of inputs gives a tuple of results, a single Tensor a single one. `jvp` is the double-backward trick
(the vjp is linear in its vector: differentiate it along `v`). `jacobian` takes one backward per output element,
or with `vectorize=True` one backward vmapped over the identity (`grad(is_grads_batched=True)`);
`strategy="forward-mode"` vmaps forward-mode AD (`autograd.forward_ad`'s dual tensors) over the identity of the
inputs' elements, as PyTorch's.
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


def _standard_basis(tensors):
    """PyTorch's _construct_standard_basis_for: the identity over all the tensors' elements, split by tensor:
    one (total, numel) block each."""
    numels = [t.numel() for t in tensors]
    blocks, diag = [], 0
    for t, n in zip(tensors, numels):
        b = t.new_zeros(sum(numels), n)
        b.diagonal(diag).fill_(1)
        blocks.append(b)
        diag -= n
    return blocks, numels


def _jacobian_vectorized(outs, inputs, create_graph):
    """One backward vmapped over the identity of the outputs' elements (autograd.grad(is_grads_batched=True))."""
    basis, numels = _standard_basis(outs)
    diff = [(o.reshape(-1), b) for o, b in zip(outs, basis) if o.requires_grad]
    rows = grad([o for o, _ in diff], inputs, [b for _, b in diff], create_graph=create_graph, allow_unused=True,
                is_grads_batched=True) if diff else (None,) * len(inputs)
    rows = [_late.creation.zeros_like(x).expand((sum(numels),) + tuple(x.shape)) if r is None else r
            for r, x in zip(rows, inputs)]
    per_in = [[j.view(tuple(o.shape) + tuple(x.shape)) for j, o in zip(r.split(numels, 0), outs)]
              for r, x in zip(rows, inputs)]
    return [tuple(p[k] for p in per_in) for k in range(len(outs))]


def _jacobian_forward(func, inputs):
    """forward-mode AD (dual tensors) vmapped over the identity of the inputs' elements, as PyTorch's _jacfwd."""
    basis, numels = _standard_basis(inputs)
    info = []

    def jvp(*tangents):
        with forward_ad.dual_level():
            duals = tuple(forward_ad.make_dual(x, t.view_as(x)) for x, t in zip(inputs, tangents))
            is_out, outs = _as_tuple(func(*duals))
            info[:] = [is_out, [forward_ad.unpack_dual(o).primal.detach() for o in outs]]
            return tuple(_late.creation.zeros_like(o) if t is None else t
                         for o, t in ((o, forward_ad.unpack_dual(o).tangent) for o in outs))
    cols = _late.vmap(jvp)(*basis)
    is_out, outs = info
    res = [tuple(j.permute(*range(1, j.dim()), 0).reshape(tuple(o.shape) + tuple(x.shape))
                 for j, x in zip(c.split(numels, 0), inputs)) for c, o in zip(cols, outs)]
    return is_out, res


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
        if strict:
            raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are '
                               'not supported together (yet). Please either set `strict=False` or '
                               '`strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                      "only implemented for `vectorize=True`.")
        is_out, res = _jacobian_forward(func, inputs)
    else:
        with enable_grad():
            inputs = _prepare(inputs, create_graph)
            is_out, outs = _as_tuple(func(*inputs))
            if vectorize and strict:
                raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are "
                                   "not supported together. Please either set `strict=False` or "
                                   "`vectorize=False`.")
            res = _jacobian_vectorized(outs, inputs, create_graph) if vectorize else \
                _jacobian_rows(outs, inputs, create_graph, strict)
    res = [tuple(j if create_graph else j.detach() for j in r) for r in res]
    res = [_post(r, is_in) for r in res]
    return _post(tuple(res), is_out)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Jacobian of the gradient: reverse-over-reverse, or forward-over-reverse (outer_jacobian_strategy)."""
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    is_in = _as_tuple(inputs)[0]

    def jac(*xs):
        if outer_jacobian_strategy == "forward-mode":
            xs = tuple(x.requires_grad_(True) for x in xs)
        with enable_grad():
            out = _scalar_output(func, xs, "hessian")
            g = grad(out, xs, create_graph=True, allow_unused=True)
        return _post(_zeros_for_none(g, xs, strict, "jacobian"), is_in)
    return jacobian(jac, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                    strategy=outer_jacobian_strategy)
