"""The guards of a compiled entry: what a call must match to reuse it.

A call's guards are values (a tuple of them is the cache key; `collect(..., named=True)` pairs each with its
source, as `L['x']` or `G['model'].0.training`, for the recompile reason and explain's out_guards):
  tensors in the arguments     (shape, dtype, device, requires_grad, strides) TENSOR_MATCH
  Python scalars in arguments  (type, value)                                EQUALS_MATCH
  grad mode, autocast state                                                 GRAD_MODE, AUTOCAST
  every reachable module       its scalar attributes (`training`, a dropout's p, ...), its parameters' and
                               buffers' identities and its parameters' requires_grad
  every reachable optimizer    the scalar hyper-parameters of its param_groups (lr, momentum, betas, ...;
                               a tensor lr is not guarded, as in PyTorch)
  int/float/bool globals and closure cells the function's code names
Reachable: the arguments, `self` (a compiled module, the object of a bound method), and the
globals/closure cells the code names (one level into a plain object's attributes).
"""
import functools
import inspect
import operator
import types

from .._geometry import contiguous_strides
from .._tensor import Tensor
from ..amp import autocast_mode
from ..autograd import grad_mode
from ..nn import Module
from ..optim import Optimizer

_SCALARS = (bool, int, float, str, type(None))
_ATTRS = frozenset((bool, int, float, str, tuple))  # module attributes that may be baked into kernels
OPAQUE = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType)


def _hashable(v):
    if isinstance(v, _SCALARS):
        return (type(v).__name__, v)
    if isinstance(v, (tuple, list)) and all(isinstance(x, _SCALARS) for x in v):
        return (type(v).__name__, tuple(v))
    return None


def _walk(src, v, out, depth=0, held=False):
    """Append the guards of value v (reached as src) to out: (src, value) pairs, or bare values when src is None
    (the cache key, computed per call without formatting a name). A tensor the function holds (not an argument)
    is guarded by identity too: a replay reads and writes the same memory."""
    named = src is not None
    if isinstance(v, Tensor):
        g = ("tensor", tuple(v.shape), v.dtype.name, v.device.type, v.requires_grad, v._stride) + \
            ((id(v),) if held else ())
        out.append((src, g) if named else g)
    elif isinstance(v, _SCALARS):
        out.append((src, _hashable(v)) if named else _hashable(v))
    elif isinstance(v, (tuple, list)):
        if not named:
            out.append((type(v).__name__, len(v)))
        for i, x in enumerate(v):
            _walk(f"{src}[{i}]" if named else None, x, out, depth, held)
    elif isinstance(v, dict):
        if not named:
            out.append(tuple(v))
        for k, x in v.items():
            _walk(f"{src}[{k!r}]" if named else None, x, out, depth, held)
    elif isinstance(v, Module):
        stack = [(src, v)]
        while stack:
            base, m = stack.pop()
            ids = (tuple((k, id(t), t is not None and t.requires_grad) for k, t in m._parameters.items()),
                   tuple(map(id, m._buffers.values())))  # a parameter frozen or unfrozen changes the graph
            out.extend(((f"{base}._parameters", ids[0]), (f"{base}._buffers", ids[1])) if named else ids)
            d = m.__dict__
            for k in _attr_names(m):
                x = d.get(k)
                h = _hashable(x)
                if h is not None:
                    out.append((f"{base}.{k}", h) if named else h)
                elif isinstance(x, Optimizer):
                    _walk(f"{base}.{k}" if named else None, x, out, depth, True)
            subs = [(f"{base}.{k}" if named else None, c) for k, c in m._modules.items() if c is not None]
            stack.extend(reversed(subs))
    elif isinstance(v, Optimizer):
        for i, g in enumerate(v.param_groups):
            for k, x in g.items():
                h = _hashable(x) if k != "params" else None
                if h is not None:
                    out.append((f"{src}.param_groups[{i}][{k!r}]", h) if named else h)
    elif depth == 0 and not isinstance(v, OPAQUE) and isinstance(getattr(v, "__dict__", None), dict):
        if not named:
            out.append(tuple(v.__dict__))
        for k, x in v.__dict__.items():
            _walk(f"{src}.{k}" if named else None, x, out, depth + 1, True)


_NAMES = {}  # id(module) -> (len(its __dict__), the names of its attributes worth guarding)


def _attr_names(m):
    """A module's scalar attributes (and optimizers it holds), by name; looked up again when its __dict__ grows
    or shrinks, so a call walks a few names per module instead of its whole __dict__."""
    d = m.__dict__
    c = _NAMES.get(id(m))
    if c is None or c[0] != len(d):
        c = _NAMES[id(m)] = (len(d), tuple(k for k, x in d.items() if type(x) in _ATTRS or isinstance(x, Optimizer)))
    return c[1]


@functools.lru_cache(maxsize=None)
def code_names(code):
    """The global names a code object (and the functions defined in it) reads, sorted."""
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= set(code_names(c))
    return tuple(sorted(names))


def collect(fn, root, args, kwargs, arg_names, named=False):
    """The guards of calling fn (a plain function: its code's globals and closure) on root (self or None) with
    args/kwargs (arg_names: fn's positional parameter names): a tuple of values, the cache key, or with
    named=True of (source, value) pairs in the same order, for reports."""
    out = [] if named else [len(args)]
    for src, v in (("GRAD_MODE", grad_mode.is_grad_enabled()),
                   ("AUTOCAST", tuple(sorted((k, v.name) for k, v in autocast_mode.STATE.items())))):
        out.append((src, v) if named else v)
    n = len(arg_names)
    for i, a in enumerate(args):
        _walk((f"L[{arg_names[i]!r}]" if i < n else f"L['args'][{i}]") if named else None, a, out)
    for k in sorted(kwargs):
        if not named:
            out.append(k)
        _walk(f"L[{k!r}]" if named else None, kwargs[k], out)
    if root is not None:
        _walk("L['self']" if named else None, root, out, held=True)
    code = getattr(fn, "__code__", None)
    if code is not None:
        g = fn.__globals__
        for name in code_names(code):
            if name in g:
                _walk(f"G[{name!r}]" if named else None, g[name], out, 1, True)
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            try:
                v = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            _walk(f"L[{name!r}]" if named else None, v, out, 1, True)
    return tuple(out)


def arg_names(fn, root):
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return []
    if root is not None and not inspect.ismethod(fn):  # fn is the unbound function: drop its self
        params = params[1:]
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def without_sizes(key):
    """A cache key with its tensors' sizes left out (their ranks kept, and of their strides which ones are
    contiguous strides): the entries of one function that differ in shapes only share it."""
    return tuple(("tensor", len(v[1])) + v[2:5] + (tuple(map(operator.eq, v[5], contiguous_strides(v[1]))),) + v[6:]
                 if type(v) is tuple and v[:1] == ("tensor",) else v for v in key)


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
            for i, (a, b) in enumerate(zip(w[5], v[5])):
                if a != b:
                    return f"tensor {name!r} stride mismatch at index {i}. expected {a}, actual {b}"
            for what, a, b in (("dtype", w[2], v[2]), ("device", w[3], v[3]), ("requires_grad", w[4], v[4])):
                if a != b:
                    return f"tensor {name!r} {what} mismatch. expected {a}, actual {b}"
            return f"___check_obj_id({src}, {w[6]})"
        if src.endswith("._parameters") and [p[:2] for p in w] == [p[:2] for p in v]:
            k, a, b = next((p[0], p[2], q[2]) for p, q in zip(w, v) if p != q)
            return f"tensor '{src}[{k!r}]' requires_grad mismatch. expected {a}, actual {b}"
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
        elif name.endswith("._parameters"):
            self.create_fn = "ID_MATCH"
            self.code_list = [f"[id(t) for t in {name}.values()] == {[v[1] for v in value]}",
                              f"[t.requires_grad for t in {name}.values()] == {[v[2] for v in value]}"]
        elif name.endswith("._buffers"):
            self.create_fn, self.code_list = "ID_MATCH", [f"[id(t) for t in {name}.values()] == {list(value)}"]
        elif value[0] == "tensor":
            self.create_fn = "TENSOR_MATCH"
            self.code_list = [f"{name}.size() == {list(value[1])}", f"{name}.dtype == torch.{value[2]}",
                              f"{name}.device.type == {value[3]!r}", f"{name}.requires_grad == {value[4]}",
                              f"{name}.stride() == {list(value[5])}"]
            if len(value) > 6:
                self.code_list.append(f"___check_obj_id({name}, {value[6]})")
        else:
            self.create_fn, self.code_list = "EQUALS_MATCH", [f"{name} == {value[1]!r}"]
        self.guard_types = [self.create_fn]

    def __str__(self):
        return (f"Name: {self.name!r}\n    Source: {self.source}\n    Create Function: {self.create_fn}\n"
                f"    Guard Types: {self.guard_types}\n    Code List: {self.code_list}\n")

    __repr__ = __str__
