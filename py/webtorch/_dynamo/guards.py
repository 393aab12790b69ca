"""The guards of a compiled entry: what a call must match to reuse it.

A guard list is a tuple of (source, value) pairs, its own cache key:
  tensors in the arguments     (shape, dtype, device, requires_grad)       TENSOR_MATCH
  Python scalars in arguments  (type, value)                                EQUALS_MATCH
  grad mode, autocast state                                                 GRAD_MODE, AUTOCAST
  every reachable module       its scalar attributes (`training`, a dropout's p, ...)
  every reachable optimizer    the scalar hyper-parameters of its param_groups (lr, momentum, betas, ...;
                               a tensor lr is not guarded, as in PyTorch)
  int/float/bool globals and closure cells the function's code names
Reachable: the arguments, `self` (a compiled module, the object of a bound method), and the
globals/closure cells the code names (one level into a plain object's attributes).
"""
import inspect
import types

from .._tensor import Tensor
from ..autograd import grad_mode

_SCALARS = (bool, int, float, str, type(None))


def _hashable(v):
    if isinstance(v, _SCALARS):
        return (type(v).__name__, v)
    if isinstance(v, (tuple, list)) and all(isinstance(x, _SCALARS) for x in v):
        return (type(v).__name__, tuple(v))
    return None


def _walk(src, v, out, depth=0, held=False):
    """Append the guards of value v (reached as src) to out. A tensor the function holds (not an argument) is
    guarded by identity too: a replay reads and writes the same memory."""
    from ..nn import Module
    from ..optim import Optimizer
    if isinstance(v, Tensor):
        out.append((src, ("tensor", tuple(v.shape), v.dtype.name, v.device.type, v.requires_grad)
                    + ((id(v),) if held else ())))
    elif isinstance(v, _SCALARS):
        out.append((src, _hashable(v)))
    elif isinstance(v, (tuple, list)):
        for i, x in enumerate(v):
            _walk(f"{src}[{i}]", x, out, depth, held)
    elif isinstance(v, dict):
        for k, x in v.items():
            _walk(f"{src}[{k!r}]", x, out, depth, held)
    elif isinstance(v, Module):
        for path, m in v.named_modules():
            base = f"{src}.{path}" if path else src
            out.append((f"{base}._parameters", tuple(id(p) for p in m._parameters.values())))
            out.append((f"{base}._buffers", tuple(id(b) for b in m._buffers.values())))
            for k, x in m.__dict__.items():
                if isinstance(x, (bool, int, float)):
                    out.append((f"{base}.{k}", _hashable(x)))
                elif isinstance(x, Optimizer):
                    _walk(f"{base}.{k}", x, out, depth, True)
    elif isinstance(v, Optimizer):
        for i, g in enumerate(v.param_groups):
            for k, x in g.items():
                h = _hashable(x) if k != "params" else None
                if h is not None:
                    out.append((f"{src}.param_groups[{i}][{k!r}]", h))
    elif depth == 0 and not isinstance(v, (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType)) \
            and isinstance(getattr(v, "__dict__", None), dict):
        for k, x in v.__dict__.items():
            _walk(f"{src}.{k}", x, out, depth + 1, True)


def _code_names(code):
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _code_names(c)
    return names


def collect(fn, root, args, kwargs):
    """The guard list of calling fn (a plain function, its code's globals and closure) on root (self or None)
    with args/kwargs."""
    from ..amp import autocast_mode
    out = [("GRAD_MODE", grad_mode.is_grad_enabled()), ("AUTOCAST", tuple(sorted(
        (k, v.name) for k, v in autocast_mode.STATE.items())))]
    names = arg_names(fn, root)
    for i, a in enumerate(args):
        _walk(f"L[{names[i]!r}]" if i < len(names) else f"L['args'][{i}]", a, out)
    for k in sorted(kwargs):
        _walk(f"L[{k!r}]", kwargs[k], out)
    if root is not None:
        _walk("L['self']", root, out, held=True)
    code = getattr(fn, "__code__", None)
    if code is not None:
        g = fn.__globals__
        for name in sorted(_code_names(code)):
            if name in g:
                _walk(f"G[{name!r}]", g[name], out, 1, True)
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            try:
                v = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            _walk(f"L[{name!r}]", v, out, 1, True)
    return tuple(out)


def arg_names(fn, root):
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return []
    if root is not None and not inspect.ismethod(fn):  # fn is the unbound function: drop its self
        params = params[1:]
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def miss_reason(old, new):
    """Why guard list `new` fails the entry made for `old`: the first guard that differs, as PyTorch words it."""
    old_d = dict(old)
    for src, v in new:
        if src not in old_d:
            return f"{src} is new"
        w = old_d[src]
        if w == v:
            continue
        if src == "GRAD_MODE":
            return "GLOBAL_STATE changed: grad_mode "
        if src == "AUTOCAST":
            return "GLOBAL_STATE changed: autocast "
        if isinstance(w, tuple) and w[0] == "tensor" and v[0] == "tensor":
            name = src[3:-2] if src.startswith("L['") else src
            if len(w[1]) != len(v[1]):
                return f"tensor {name!r} rank mismatch. expected {len(w[1])}, actual {len(v[1])}"
            for i, (a, b) in enumerate(zip(w[1], v[1])):
                if a != b:
                    return f"tensor {name!r} size mismatch at index {i}. expected {a}, actual {b}"
            for what, a, b in (("dtype", w[2], v[2]), ("device", w[3], v[3]), ("requires_grad", w[4], v[4])):
                if a != b:
                    return f"tensor {name!r} {what} mismatch. expected {a}, actual {b}"
            return f"___check_obj_id({src}, {w[5]})"
        if src.endswith(("._parameters", "._buffers")):
            return f"{src} were replaced"
        return f"{src} == {w[1]!r}"
    return "the guards changed"


class Guard:
    """One guard as torch._dynamo.explain's out_guards lists it (PyTorch's printout)."""

    def __init__(self, name, value):
        self.name = name
        state = name in ("GRAD_MODE", "AUTOCAST")
        self.source = "global" if state or name.startswith("G[") else "local"
        if state:
            self.create_fn, self.code_list = name, [f"{name} == {value!r}"]
        elif name.endswith(("._parameters", "._buffers")):
            self.create_fn, self.code_list = "ID_MATCH", [f"[id(t) for t in {name}.values()] == {list(value)}"]
        elif value[0] == "tensor":
            self.create_fn = "TENSOR_MATCH"
            self.code_list = [f"{name}.size() == {list(value[1])}", f"{name}.dtype == torch.{value[2]}",
                              f"{name}.device.type == {value[3]!r}", f"{name}.requires_grad == {value[4]}"]
            if len(value) > 5:
                self.code_list.append(f"___check_obj_id({name}, {value[5]})")
        else:
            self.create_fn, self.code_list = "EQUALS_MATCH", [f"{name} == {value[1]!r}"]
        self.guard_types = [self.create_fn]

    def __str__(self):
        return (f"Name: {self.name!r}\n    Source: {self.source}\n    Create Function: {self.create_fn}\n"
                f"    Guard Types: {self.guard_types}\n    Code List: {self.code_list}\n")

    __repr__ = __str__
