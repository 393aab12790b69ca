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
from .vmap import BatchedTensor, _levels, materialize, tree_flatten, tree_unflatten, vmap


def _physical(x, levels):
    """x's values for every example of every running vmap: shape (B_1, ..., B_k) + x's example shape."""
    for lvl, _b, _r in reversed(levels):
        x = materialize(x, lvl)
    return x


def _batched(p, levels):
    """p's leading dims as the batches of `levels`; under the batch of a higher level (a vmap running inside
    the transform, as jacrev's over its vjp) that batch stays outermost."""
    if levels and isinstance(p, BatchedTensor) and p._level > levels[-1][0]:
        return BatchedTensor.wrap(_batched(p._value.movedim(0, len(levels)), levels), p._level)
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


def _check_argnums(argnums, n):
    """argnums wrapped into range(n), with PyTorch's checks in its order."""
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(f"argnum must be int, got: {type(a)}")
        if not -n <= a < n:
            raise RuntimeError(f"Got argnum={a}, but only {n} positional inputs")
    nums = tuple(a % n for a in nums)
    if isinstance(argnums, tuple) and not argnums:
        raise RuntimeError("argnums must be non-empty")
    if len(set(nums)) != len(nums):
        raise RuntimeError(f"argnums elements must be unique, got {nums}")
    return nums


def _split_aux(out, has_aux, api):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return out


def _detach_tree(tree, nested):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([x if nested or not isinstance(x, _late.Tensor) else x.detach() for x in leaves], spec)


def grad_and_value(func, argnums=0, has_aux=False):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        with enable_grad():
            flat = [tree_flatten(args[i]) for i in nums]
            leaves = _Leaves([x for f in flat for x in f[0]], _levels)
            new_args, k = list(args), 0
            for i, (xs, spec) in zip(nums, flat):
                new_args[i] = tree_unflatten(leaves.wrapped[k:k + len(xs)], spec)
                k += len(xs)
            out, aux = _split_aux(func(*new_args, **kwargs), has_aux, "grad_and_value(f)(*args)")
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
        out, aux = _split_aux(func(*tree_unflatten(leaves.wrapped, spec)), has_aux, "vjp(f, *primals)")
        outs, out_spec = tree_flatten(out)
        for o in outs:
            if not isinstance(o, _late.Tensor):
                raise RuntimeError(f"vjp(f, *primals): expected f(*primals) to return only tensors, got unsupported "
                                   f"type {type(o)}")

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


def _batched_at(x, level):
    while isinstance(x, BatchedTensor):
        if x._level == level:
            return True
        x = x._value
    return False


def _jvp_forward(func, flat_p, spec, has_aux):
    """func on leaves batched only at the vmaps where some primal is (under jacfwd's vmap over the identity, or any
    vmap of the tangents alone, the function runs once, its tangents batched); again on every running vmap's
    batch when an output is batched where no primal is (func closes over a batched tensor)."""
    for levels in ([lv for lv in _levels if any(_batched_at(p, lv[0]) for p in flat_p)], _levels):
        leaves = _Leaves(flat_p, levels)
        out, aux = _split_aux(func(*tree_unflatten(leaves.wrapped, spec)), has_aux, "jvp(f, primals, tangents)")
        if levels is _levels or not any(_batched_at(o, lv[0]) for o in tree_flatten(out)[0]
                                        for lv in _levels if lv not in levels):
            return leaves, out, aux


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
        leaves, out, aux = _jvp_forward(func, flat_p, spec, has_aux)
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


def _basis_chunks(flat, chunk_size=None):
    """PyTorch's _chunked_standard_basis_for_: the identity over the elements of every tensor in `flat` (their
    numels concatenated), `chunk_size` rows at a time; each chunk is one tensor per input, (rows,) + its shape."""
    numels = [x.numel() for x in flat]
    total = sum(numels)
    size = chunk_size if chunk_size and chunk_size < total else total
    for start in range(0, total or 1, size or 1):   # an empty output: one chunk of no rows
        rows, chunk, diag = min(size, total - start), [], start
        for x, n in zip(flat, numels):
            c = x.new_zeros(rows, n)
            c.diagonal(diag).fill_(1)
            chunk.append(c.view(rows, *x.shape))
            diag -= n
        yield chunk


def _argnum_primals(args, argnums):
    """(the differentiated arguments as a tuple, func's call with those replaced)."""
    nums = _check_argnums(argnums, len(args))

    def call(func, *xs):
        full = list(args)
        for i, x in zip(nums, xs):
            full[i] = x
        return func(*full)
    return tuple(args[i] for i in nums), call


def _per_input(jacs, primals_spec, argnums):
    """One output's Jacobians (one per flat primal) in the primals' structure (the first alone for an int argnums)."""
    per = tree_unflatten(list(jacs), primals_spec)
    return per if isinstance(argnums, tuple) else per[0]


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """vjp once, then vmap(vjp_fn) over the rows of the identity of the outputs' elements (chunk_size rows at a
    time; one plain vjp_fn per row for chunk_size=1), as PyTorch's."""
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args):
        primals, call = _argnum_primals(args, argnums)
        res = vjp(lambda *xs: call(func, *xs), *primals, has_aux=has_aux)
        out, vjp_fn = res[0], res[1]
        flat_out, out_spec = tree_flatten(out)
        flat_primals, primals_spec = tree_flatten(primals)
        parts = []
        for chunk in _basis_chunks(flat_out, chunk_size):
            if chunk_size == 1:
                rows = tree_flatten(vjp_fn(tree_unflatten([c[0] for c in chunk], out_spec)))[0]
                parts.append([r.unsqueeze(0) for r in rows])
            else:
                parts.append(tree_flatten(vmap(vjp_fn)(tree_unflatten(chunk, out_spec)))[0])
        stacked = [p[0] if len(parts) == 1 else _late.shape.cat(list(p), 0) for p in zip(*parts)]
        numels = [o.numel() for o in flat_out]
        splits = [s.split(numels, 0) for s in stacked]
        jac = [_per_input([sp[k].view(tuple(o.shape) + tuple(x.shape)) for sp, x in zip(splits, flat_primals)],
                          primals_spec, argnums) for k, o in enumerate(flat_out)]
        j = tree_unflatten(jac, out_spec)
        return (j, res[2]) if has_aux else j
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """vmap(jvp) over the rows of the identity of the inputs' elements, as PyTorch's."""
    @functools.wraps(func)
    def wrapper(*args):
        primals, call = _argnum_primals(args, argnums)
        flat_primals, primals_spec = tree_flatten(primals)

        def push_jvp(*basis):
            r = jvp(lambda *xs: call(func, *xs), primals, tree_unflatten(list(basis), primals_spec), has_aux=has_aux)
            return (r[1], r[2]) if has_aux else r[1]
        results = vmap(push_jvp, randomness=randomness)(*next(_basis_chunks(flat_primals)))
        aux = None
        if has_aux:
            results, aux = results
            flat_aux, aux_spec = tree_flatten(aux)
            aux = tree_unflatten([a[0] for a in flat_aux], aux_spec)
        flat_jac, spec = tree_flatten(results)
        numels = [x.numel() for x in flat_primals]
        jac = [_per_input([c.unflatten(-1, tuple(x.shape)) if x.dim() else c.squeeze(-1)
                           for c, x in zip(j.movedim(0, -1).split(numels, -1), flat_primals)],
                          primals_spec, argnums) for j in flat_jac]
        j = tree_unflatten(jac, spec)
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
