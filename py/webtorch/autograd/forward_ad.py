"""torch.autograd.forward_ad: dual tensors (a primal and its tangent at the open level) and forward-mode AD.

A tangent lives on its tensor (`_fw`: the level's token and the tangent). While a level is open every routed
op (`overrides.torch_function`) whose inputs carry tangents computes its result as usual, then its outputs'
tangents from the derivative table, with no forward rule of its own: the op's vjp `u -> J^T u` is linear in
`u`, so differentiating it once more with respect to `u` along the input tangents gives `J t` (the transpose
trick: two backward passes over that one op). In-place ops set their destination's tangent; a view's tangent
is the view of its base's tangent as a value (not memory shared with the base's tangent), so a dual tensor whose
memory was written through another alias after its tangent was set raises when it is used (never a stale
tangent).
"""
import itertools
from collections import namedtuple

from .. import _late
from ._api import grad
from .grad_mode import enable_grad

UnpackedDualTensor = namedtuple("UnpackedDualTensor", "primal tangent")
_level = [None]   # the open level: (its number, a token unique to this opening)
_openings = itertools.count()


def enter_dual_level():
    if _level[0] is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _level[0] = (0, next(_openings))
    _late.forward_ad = _propagate
    return 0


def exit_dual_level(*, level=None):
    if level is not None and level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if _level[0] is None or (level is not None and level != _level[0][0]):
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This "
                           "is not supported.")
    _level[0] = None
    _late.forward_ad = None


class dual_level:
    """Context manager: `with dual_level(): ...` opens a level; leaving it drops every tangent made in it."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()


def _tangent(x):
    fw = getattr(x, "_fw", None)
    if fw is None or _level[0] is None or fw[0] != _level[0][1]:
        return None
    if fw[2] != x._storage.version:
        raise RuntimeError("forward-mode AD: this dual tensor's memory was written in place through another view or "
                           "its base after its tangent was set; webtorch keeps a view's tangent as a value (not "
                           "memory shared with its base's tangent), so it would be stale. Write into the tensor "
                           "itself, or clone the view before writing")
    return fw[1]


def _set_tangent(x, t):
    x._fw = (_level[0][1], t, x._storage.version)


def make_dual(tensor, tangent, *, level=None):
    if _level[0] is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if not (tensor.dtype.is_floating_point or tensor.dtype.is_complex):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not (tangent.dtype.is_floating_point or tangent.dtype.is_complex):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")
    if tangent.dtype != tensor.dtype:
        tangent = tangent.to(tensor.dtype)
    dual = tensor.view_as(tensor)
    _set_tangent(dual, tangent)
    return dual


def unpack_dual(tensor, *, level=None):
    if not isinstance(tensor, _late.Tensor):
        return UnpackedDualTensor(tensor, None)
    t = _tangent(tensor)
    return UnpackedDualTensor(tensor if t is None else tensor.detach() if not tensor.requires_grad
                              else tensor.view_as(tensor), t)


def _flat(args):
    """(position, tensor) of each tensor argument, lists and tuples opened one level."""
    for i, a in enumerate(args):
        if isinstance(a, (list, tuple)):
            yield from (((i, j), x) for j, x in enumerate(a) if isinstance(x, _late.Tensor))
        elif isinstance(a, _late.Tensor):
            yield (i, None), a


def _put(args, kwargs, pos, x):
    i, j = pos
    where = kwargs if isinstance(i, str) else args
    if j is None:
        where[i] = x
    else:
        where[i] = type(where[i])(x if k == j else v for k, v in enumerate(where[i]))


def _outputs(out):
    if isinstance(out, _late.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [o for o in out if isinstance(o, _late.Tensor)]
    return []


def _inplace(fn):
    n = fn.__name__
    return (n.endswith("_") and not n.endswith("__")) or n.startswith("__i") or n == "setitem"


def _tangents_of(fn, args, kwargs, duals):
    """The tangents of fn(*args, **kwargs)'s outputs along the inputs' tangents, by the transpose trick."""
    args, kwargs = list(args), dict(kwargs)
    leaves, tangents = [], []
    for pos, x in duals:
        leaf = x.detach().requires_grad_(True)
        leaves.append(leaf)
        tangents.append(_tangent(x))
        _put(args, kwargs, pos, leaf)
    inplace = _inplace(fn) and isinstance(args[0], _late.Tensor)
    if inplace:   # the destination is written: compute on a copy
        args[0] = args[0].clone() if args[0].requires_grad else args[0].detach().clone()
    with enable_grad():
        res = fn(*args, **kwargs)
        every = _outputs(args[0] if inplace else res)
        outs = [o for o in every if o.grad_fn is not None and (o.dtype.is_floating_point or o.dtype.is_complex)]
        if not outs:
            return [None] * len(every)
        us = [_late.creation.zeros_like(o).requires_grad_(True) for o in outs]
        vjps = grad(outs, leaves, us, create_graph=True, allow_unused=True)
        pairs = [(v, t) for v, t in zip(vjps, tangents) if v is not None and v.requires_grad]
        jvps = grad([v for v, _ in pairs], us, [t for _, t in pairs], allow_unused=True,
                    create_graph=any(t.requires_grad for _, t in pairs)) if pairs else [None] * len(outs)
    by_out = {id(o): _late.creation.zeros_like(o).detach() if j is None else j for j, o in zip(jvps, outs)}
    return [by_out.get(id(o)) for o in every]


def _propagate(fn, args, kwargs):
    """The hook `overrides.torch_function` calls for every routed op while a level is open."""
    duals = [(pos, x) for pos, x in _flat(args) if _tangent(x) is not None]
    duals += [((k, None), x) for k, x in kwargs.items() if isinstance(x, _late.Tensor) and _tangent(x) is not None]
    if not duals:
        return fn(*args, **kwargs)
    _late.forward_ad = None
    try:
        tangents = _tangents_of(fn, args, kwargs, duals)
        out = fn(*args, **kwargs)
    finally:
        _late.forward_ad = _propagate
    written = _inplace(fn) and isinstance(args[0], _late.Tensor)
    for o, t in zip(_outputs(args[0] if written else out), tangents):
        if t is not None and (o.dtype.is_floating_point or o.dtype.is_complex):
            _set_tangent(o, t)
    return out
