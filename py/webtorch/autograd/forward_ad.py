"""torch.autograd.forward_ad: dual tensors (a primal and its tangent at the open level) and forward-mode AD.

A tangent lives on its tensor (`_fw`: the level's token, the tangent, the storage version it was set at). While a
level is open every routed op (`overrides.torch_function`) whose inputs carry tangents computes its result as
usual, then its outputs' tangents from the derivative table, with no forward rule of its own: the op's vjp
`u -> J^T u` is linear in `u`, so differentiating it once more with respect to `u` along the input tangents gives
`J t` (the transpose trick: two backward passes over that one op).

Views, as PyTorch's: a view's tangent is the part of its base's tangent it covers. An in-place op on a view
writes its new tangent into that part of the base's (zeros when the base had none); a view whose memory was
written since its tangent was set reads its tangent from its base's again. A make_dual result and a detached
alias are their own bases (their tangents are not their primal's). A base's tangent is kept as one value per
base (not memory shared with its views' tangents), so reading a view's tangent after a write costs a view of it.
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
    if _level[0] is None:
        return None
    fw = getattr(x, "_fw", None)
    if fw is not None and fw[0] != _level[0][1]:
        fw = None
    if fw is not None and fw[2] == x._storage.version:
        return fw[1]
    base = _fw_base(x)
    bt = _tangent(base) if base is not None else None
    if bt is not None:   # a view: the part of its base's tangent it covers
        flat, origin = _laid_out(base, bt)
        t = flat.as_strided(tuple(x.shape), x.stride(), flat.storage_offset() + x._offset - origin)
    elif fw is not None:   # written through an alias without tangents (a detached one): the tangent stands
        t = fw[1]
    else:
        return None
    _set_tangent(x, t)
    return t


def _set_tangent(x, t):
    x._fw = (_level[0][1], t, x._storage.version)


def _fw_base(x):
    """The tensor whose tangent holds x's: its base for a view (PyTorch's forward-differentiable view), None for
    a tensor that is its own (a base, a make_dual result, a detached alias)."""
    if hasattr(x, "_fw_base"):
        return x._fw_base
    return x._base if getattr(x, "_diff_view", False) else None


def _laid_out(base, bt):
    """(base's tangent laid out as base's memory, flat; the storage position of its element 0)."""
    if base.is_contiguous():
        return bt.reshape(-1), base._offset
    flat = _late.creation.zeros(base._storage.numel, dtype=bt.dtype, device=bt.device)
    return flat.as_strided_scatter(bt, tuple(base.shape), base.stride(), base._offset), 0


def _write_into_base(x, t):
    """An in-place op wrote x, a view: its new tangent t replaces the part of its base's tangent it covers."""
    base = _fw_base(x)
    if base is None:
        return
    bt = _tangent(base)
    flat, origin = _laid_out(base, _late.creation.zeros_like(base) if bt is None else bt)
    flat = flat.as_strided_scatter(t, tuple(x.shape), x.stride(), flat.storage_offset() + x._offset - origin)
    _set_tangent(base, flat.view(base.shape) if base.is_contiguous() else
                 flat.as_strided(tuple(base.shape), base.stride(), base._offset))


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
    dual._fw_base = None   # its tangent is its own, not a part of its primal's
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
            if written:
                _write_into_base(o, t)
            elif o._base is not None:   # a view of a dual input: its forward base is that input's
                src = next((x for _, x in duals if x._storage is o._storage), None)
                if src is not None:
                    o._fw_base = src if _fw_base(src) is None else _fw_base(src)
    return out
