"""torch.func's autodiff transforms: grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, linearize.

Each runs webtorch's autograd on the whole batch of every vmap running around it: the inputs it
differentiates become leaves holding every level's batch (an input the same for every example is expanded),
wrapped back into batched tensors for the function; the outputs are unwrapped to their batches and
differentiated there. Examples never mix in an op, so the gradient of the batch's sum is each example's
gradient. An input already in an outer transform's graph enters as a copy in that graph, so transforms nest
(`grad(grad(f))`, `jacrev(jacrev(f))`). `jvp` is the double-backward trick: the vjp `u -> J^T u` is linear in
`u`, and its derivative along the tangents is `J t`.
"""
import functools

from .. import _late
from ..autograd import grad as _autograd_grad
from ..autograd.grad_mode import enable_grad
from .vmap import BatchedTensor, _levels, materialize, tree_flatten, tree_unflatten


def _physical(x, levels):
    """x's values for every example of every running vmap: shape (B_1, ..., B_k) + x's example shape."""
    for lvl, _b, _r in reversed(levels):
        x = materialize(x, lvl)
    return x


def _batched(p, levels):
    for lvl, _b, _r in levels:
        p = BatchedTensor.wrap(p, lvl)
    return p


class _Leaves:
    """The differentiated inputs of one transform: their physical leaves, and whether an outer graph holds them."""

    def __init__(self, xs, levels):
        self.levels = [list(lv) for lv in levels]
        phys = [_physical(x, self.levels) for x in xs]
        self.nested = any(p.requires_grad for p in phys)
        self.leaves = [p.clone() if p.requires_grad else p.detach().requires_grad_(True) for p in phys]
        self.wrapped = [_batched(p, self.levels) for p in self.leaves]

    def physical(self, x):
        return _physical(x, self.levels)

    def back(self, g):
        if g is None:
            return None
        return _batched(g if self.nested else g.detach(), self.levels)

    def grads(self, outs, grad_outputs, retain_graph=False):
        phys = [self.physical(o) for o in outs]
        gs = _autograd_grad(phys, self.leaves,
                            [self.physical(g) for g in grad_outputs] if grad_outputs is not None
                            else [_late.creation.ones_like(p) for p in phys],
                            retain_graph=retain_graph or self.nested, create_graph=self.nested, allow_unused=True)
        return [self.back(g) if g is not None else _late.creation.zeros_like(w) for g, w in zip(gs, self.wrapped)]


def _check_argnums(argnums, n, name):
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    if isinstance(argnums, tuple) and not argnums:
        raise RuntimeError(f"{name}: argnums must be non-empty")
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(f"{name}: argnums must be int or Tuple[int, ...], got: {type(a)}")
        if not -n <= a < n:
            raise RuntimeError(f"Got argnum={a}, but only {n} positional inputs")
    return tuple(a % n for a in nums)


def _split_aux(out, has_aux, name):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{name}(f, ...)(*args): output of function f should be a tuple: (output, aux) if "
                           "has_aux is True")
    return out


def _detach_tree(tree, nested):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([x if nested or not isinstance(x, _late.Tensor) else x.detach() for x in leaves], spec)


def grad_and_value(func, argnums=0, has_aux=False):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args), "grad_and_value")
        with enable_grad():
            flat = [tree_flatten(args[i]) for i in nums]
            leaves = _Leaves([x for f in flat for x in f[0]], _levels)
            new_args, k = list(args), 0
            for i, (xs, spec) in zip(nums, flat):
                new_args[i] = tree_unflatten(leaves.wrapped[k:k + len(xs)], spec)
                k += len(xs)
            out, aux = _split_aux(func(*new_args, **kwargs), has_aux, "grad_and_value")
            if not isinstance(out, _late.Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(out)}")
            if out.dim() != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                                   f"tensor with {out.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs "
                                   "instead?")
            gs = leaves.grads([out], None) if out.requires_grad else [_late.creation.zeros_like(w)
                                                                      for w in leaves.wrapped]
        grads, k = [], 0
        for xs, spec in flat:
            grads.append(tree_unflatten(gs[k:k + len(xs)], spec))
            k += len(xs)
        g = tuple(grads) if isinstance(argnums, tuple) else grads[0]
        value = _detach_tree(out, leaves.nested)
        return (g, (value, _detach_tree(aux, leaves.nested))) if has_aux else (g, value)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def vjp(func, *primals, has_aux=False):
    with enable_grad():
        flat, spec = tree_flatten(primals)
        leaves = _Leaves(flat, _levels)
        out, aux = _split_aux(func(*tree_unflatten(leaves.wrapped, spec)), has_aux, "vjp")
        outs, out_spec = tree_flatten(out)
        for o in outs:
            if not isinstance(o, _late.Tensor):
                raise RuntimeError(f"vjp(f, *primals): Expected f to be a function that has non-empty output and "
                                   f"returns Tensors, got {type(o)}")

    def vjp_fn(*cotangents):
        cts, ct_spec = tree_flatten(cotangents[0] if len(cotangents) == 1 else cotangents)
        if len(cts) != len(outs):
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of "
                               "outputs to the function")
        for o, c in zip(outs, cts):
            if tuple(o.shape) != tuple(c.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {c.shape} and output[0] has "
                                   f"a shape of {o.shape}.")
        with enable_grad():
            pairs = [(o, c) for o, c in zip(outs, cts) if o.requires_grad]
            gs = leaves.grads([o for o, _ in pairs], [c for _, c in pairs], retain_graph=True) if pairs else \
                [_late.creation.zeros_like(w) for w in leaves.wrapped]
        return tree_unflatten(gs, spec)

    value = _detach_tree(out, leaves.nested)
    return (value, vjp_fn, _detach_tree(aux, leaves.nested)) if has_aux else (value, vjp_fn)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    if not isinstance(primals, (tuple, list)):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    flat_p, spec = tree_flatten(tuple(primals))
    flat_t, t_spec = tree_flatten(tuple(tangents))
    if len(flat_p) != len(flat_t):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, tangents also must be. Got "
                           f"primals with structure {spec} and tangents with structure {t_spec}")
    for p, t in zip(flat_p, flat_t):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to have the same shape. "
                               f"Got primal of shape {p.shape} and tangent of shape {t.shape}")
    with enable_grad():
        leaves = _Leaves(flat_p, _levels)
        out, aux = _split_aux(func(*tree_unflatten(leaves.wrapped, spec)), has_aux, "jvp")
        outs, out_spec = tree_flatten(out)
        phys = [leaves.physical(o) for o in outs]
        us = [_late.creation.zeros_like(p).requires_grad_(True) for p in phys]
        diff = [(p, u) for p, u in zip(phys, us) if p.requires_grad]
        vjps = _autograd_grad([p for p, _ in diff], leaves.leaves, [u for _, u in diff], create_graph=True,
                              allow_unused=True) if diff else [None] * len(flat_p)
        pairs = [(v, leaves.physical(t)) for v, t in zip(vjps, flat_t) if v is not None and v.requires_grad]
        res = _autograd_grad([v for v, _ in pairs], us, [t for _, t in pairs], create_graph=leaves.nested,
                             allow_unused=True) if pairs else [None] * len(us)
    tans = [leaves.back(r) if r is not None else _late.creation.zeros_like(o) for r, o in zip(res, outs)]
    value = _detach_tree(out, leaves.nested)
    result = (value, tree_unflatten(tans, out_spec))
    return result + (_detach_tree(aux, leaves.nested),) if has_aux else result


def _basis_rows(x):
    """The standard basis of x's elements, one tensor of x's shape per element."""
    n = x.numel()
    eye = _late.creation.eye(n, dtype=x.dtype, device=x.device)
    return [eye[i].reshape(x.shape) for i in range(n)]


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    @functools.wraps(func)
    def wrapper(*args):
        nums = _check_argnums(argnums, len(args), "jacrev")
        fixed = list(args)

        def f(*xs):
            for i, x in zip(nums, xs):
                fixed[i] = x
            return func(*fixed)
        res = vjp(f, *[args[i] for i in nums], has_aux=has_aux)
        out, vjp_fn = res[0], res[1]
        outs, out_spec = tree_flatten(out)
        jac = []
        for k, o in enumerate(outs):
            rows = [vjp_fn(tree_unflatten([e if j == k else _late.creation.zeros_like(p) for j, p in enumerate(outs)],
                                          out_spec)) for e in _basis_rows(o)]
            per_in = []
            for i, x in enumerate(args[i] for i in nums):
                if rows:
                    per_in.append(_late.shape.stack([r[i] for r in rows]).reshape(tuple(o.shape) + tuple(x.shape)))
                else:
                    per_in.append(_late.creation.zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype))
            jac.append(tuple(per_in) if isinstance(argnums, tuple) else per_in[0])
        j = tree_unflatten(jac, out_spec)
        return (j, res[2]) if has_aux else j
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    @functools.wraps(func)
    def wrapper(*args):
        nums = _check_argnums(argnums, len(args), "jacfwd")
        primals = [args[i] for i in nums]
        fixed = list(args)

        def f(*xs):
            for i, x in zip(nums, xs):
                fixed[i] = x
            return func(*fixed)
        cols, out, aux = [], None, None
        for i, x in enumerate(primals):
            col = []
            for e in _basis_rows(x):
                tans = [e if j == i else _late.creation.zeros_like(p) for j, p in enumerate(primals)]
                r = jvp(f, tuple(primals), tuple(tans), has_aux=has_aux)
                out, aux = r[0], (r[2] if has_aux else None)
                col.append(tree_flatten(r[1])[0])
            cols.append(col)
        if out is None:
            out = f(*primals)
            out, aux = _split_aux(out, has_aux, "jacfwd")
        outs, out_spec = tree_flatten(out)
        jac = []
        for k, o in enumerate(outs):
            per_in = [_late.shape.stack([c[k] for c in cols[i]], -1).reshape(tuple(o.shape) + tuple(x.shape))
                      if cols[i] else _late.creation.zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype)
                      for i, x in enumerate(primals)]
            jac.append(tuple(per_in) if isinstance(argnums, tuple) else per_in[0])
        j = tree_unflatten(jac, out_spec)
        return (j, aux) if has_aux else j
    return wrapper


def hessian(func, argnums=0):
    return jacfwd(jacrev(func, argnums), argnums)


def linearize(func, *primals):
    out = func(*primals)
    outs, out_spec = tree_flatten(out)

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]
    return _detach_tree(out, False), jvp_fn
