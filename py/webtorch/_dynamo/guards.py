"""The guards of a compiled entry: what a call must match to reuse it.

A call's guards are values (a tuple of them is the cache key; `collect(..., named=True)` pairs each with its
source, as `L['x']` or `G['model'].0.training`, for the recompile reason and explain's out_guards). Dynamo guards
each Python value its trace read; webtorch's trace sees ops, not Python reads, so the guards cover every value the
call can reach:
  grad mode, autocast state                                                         GRAD_MODE, AUTOCAST
  tensors in the arguments   shape, dtype, device, requires_grad, strides           TENSOR_MATCH
  other tensors              the same and their identity (a replay reads and writes their memory)
  Python scalars             type and value                                         EQUALS_MATCH
  lists, tuples, dicts, sets their length, keys or items, then each item            LIST_LENGTH, DICT_KEYS
  modules                    their parameters' and buffers' identities and parameters' requires_grad, then
                             every other attribute (`training`, a dropout's p, a list of gains, a plain tensor)
  optimizers                 the scalar hyper-parameters of their param_groups (a tensor lr is not guarded, as
                             in PyTorch)
  plain objects              class and attribute (or slot) names, then each attribute: objects of user and
                             webtorch classes, SimpleNamespace, argparse.Namespace  TYPE_MATCH
  user functions             code, then closure cells, defaults and the globals the code names (a user module
                             there: its attributes the code names)                  FUNCTION_MATCH
  user classes               each attribute and method, as above (class attributes, methods' globals)
  numpy arrays               shape, dtype and values
  anything else              identity (ID_MATCH): library functions, classes, modules and other objects (a
                             logger, a random.Random: their state is not guarded), compiled callables (ById)
A value no guard can check (a container or array of over MAX_ITEMS items, nesting deeper than MAX_DEPTH) makes the
entry run eagerly.
Reached: the arguments, `self` (a compiled module, the object of a bound method), and the globals and closure
cells the function's code names; user code is code outside webtorch, the standard library and site-packages.
An object reached twice is guarded once, then as an alias (OBJECT_ALIASING).
"""
import argparse
import collections
import functools
import inspect
import itertools
import operator
import os
import sys
import sysconfig
import types

from .._geometry import contiguous_strides
from .._tensor import Tensor
from ..amp import autocast_mode
from ..autograd import grad_mode
from ..nn import Module
from ..optim import Optimizer

_SCALARS = (bool, int, float, str, type(None))
_VALUES = _SCALARS + (complex, bytes, range)  # immutable: guarded by value
_SCALAR_TYPES = frozenset(_SCALARS)
MAX_ITEMS = 1024
MAX_DEPTH = 16
_NAMESPACES = (types.SimpleNamespace, argparse.Namespace)  # library classes of plain config objects
_MODULE_OWN = frozenset(Module().__dict__) - {"training"}  # Module's bookkeeping (hooks: the caller checks them)
_CLASS_OWN = frozenset(("__dict__", "__weakref__", "__module__", "__doc__", "__qualname__", "__slots__",
                        "__annotations__"))
_LIBRARY = tuple({os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep} |
                 {os.path.abspath(p) + os.sep for k, p in sysconfig.get_paths().items()
                  if k in ("stdlib", "platstdlib", "purelib", "platlib")})


class ById:
    """A base for webtorch's own objects that a guard checks by identity only (a compiled callable's state)."""


@functools.lru_cache(maxsize=None)
def _user_file(path):
    return not (path.startswith("<frozen") or os.path.isabs(path) and os.path.abspath(path).startswith(_LIBRARY))


def _user_module(name):
    f = getattr(sys.modules.get(name), "__file__", None)
    return name == "__main__" if f is None else _user_file(f)


@functools.lru_cache(maxsize=None)
def _user_classes(t):
    """The classes of t's MRO defined in user code."""
    return tuple(c for c in t.__mro__ if c is not object and _user_module(c.__module__))


@functools.lru_cache(maxsize=None)
def _slots(t):
    """The attribute names a class's __slots__ declare (through its MRO)."""
    out = []
    for c in t.__mro__:
        s = c.__dict__.get("__slots__", ())
        out += [s] if isinstance(s, str) else [n for n in s if n not in ("__dict__", "__weakref__")]
    return tuple(out)


@functools.lru_cache(maxsize=None)
def _by_id(t):
    """Whether a guard checks objects of class t by identity only: compiled callables, and library classes outside
    webtorch (a logger's state is the library's; a logger reaches every logger) but for the config namespaces."""
    return issubclass(t, ById) or t not in _NAMESPACES and not _user_module(t.__module__) and \
        not t.__module__.startswith("webtorch")


def _hashable(v):
    if isinstance(v, _SCALARS):
        return (type(v).__name__, v)
    if isinstance(v, (tuple, list)) and all(isinstance(x, _SCALARS) for x in v):
        return (type(v).__name__, tuple(v))
    return None


def _key(k):
    """A dict key or set item as a guard holds it: a scalar (or tuple of them) by value, anything else by identity
    (a tensor's == is elementwise)."""
    return _hashable(k) or ("id", id(k))


class _Walk:
    """One walk over what a call reaches. out: the guards; seen: id -> order of the containers and objects walked;
    found: a list to collect the tensors a call holds (not its arguments) and the optimizers it reaches, or None."""

    def __init__(self, named, top, found):
        self.named, self.top, self.found, self.out, self.seen = named, top, found, [], {}

    def add(self, src, g):
        self.out.append((src, g) if self.named else g)

    def value(self, src, v, held, depth=0, names=()):
        """Guard value v, reached as src (None when not named), held: not an argument's tensor; names: the names
        the code that reached v reads (a user module's attributes to guard)."""
        t = type(v)
        if t in _SCALAR_TYPES:
            return self.add(src, (t.__name__, v))
        if isinstance(v, Tensor):
            return self.tensor(src, v, held)
        if isinstance(v, _VALUES):
            return self.add(src, (t.__name__, v))
        if depth > MAX_DEPTH:
            return self.add(src, ("unguarded", f"nested deeper than {MAX_DEPTH}"))
        if isinstance(v, (tuple, list, collections.deque)):
            return self.sequence(src, v, held, depth)
        if self.alias(src, v):
            return
        if isinstance(v, dict):
            return self.mapping(src, v, held, depth)
        if isinstance(v, (set, frozenset)):
            return self.add(src, ("set", t.__name__, frozenset(map(_key, v))))
        if isinstance(v, Module):
            return self.module(src, v, depth)
        if isinstance(v, Optimizer):
            return self.optimizer(src, v)
        if isinstance(v, (types.FunctionType, types.MethodType, functools.partial)):
            return self.callable_value(src, v, depth)
        if isinstance(v, (type, types.ModuleType)):
            self.add(src, ("id", t.__name__, id(v)))
            return self.cls(v, depth) if isinstance(v, type) else self.user_module(src, v, depth, names)
        return self.other(src, v, depth)

    def tensor(self, src, v, held):
        g = ("tensor", tuple(v.shape), v.dtype.name, v.device.type, v.requires_grad, v._stride)
        if held:
            g += (id(v),)
            if self.found is not None:
                self.found.append(v)
        self.add(src, g)

    def sequence(self, src, v, held, depth):
        t = type(v)
        if len(v) > MAX_ITEMS:
            return self.add(src, ("unguarded", f"a {t.__name__} of {len(v)} items"))
        if not isinstance(v, tuple) and self.alias(src, v):
            return
        self.add(src, ("len", t.__name__, len(v)))
        for i, x in enumerate(v):
            self.value(f"{src}[{i}]" if self.named else None, x, held, depth + 1)

    def mapping(self, src, v, held, depth):
        if len(v) > MAX_ITEMS:
            return self.add(src, ("unguarded", f"a {type(v).__name__} of {len(v)} items"))
        self.add(src, ("keys", type(v).__name__, tuple(map(_key, v))))
        for k, x in v.items():
            self.value(f"{src}[{k!r}]" if self.named else None, x, held, depth + 1)

    def optimizer(self, src, v):
        if self.found is not None:
            self.found.append(v)
        for i, g in enumerate(v.param_groups):
            for k, x in g.items():
                h = _hashable(x) if k != "params" else None
                if h is not None:
                    self.add(f"{src}.param_groups[{i}][{k!r}]" if self.named else None, h)

    def callable_value(self, src, v, depth):
        """A function (its code, closure, defaults, globals), a bound method or a functools.partial."""
        named = self.named
        if isinstance(v, types.FunctionType):
            if not _user_file(v.__code__.co_filename):
                return self.add(src, ("id", type(v).__name__, id(v)))
            self.add(src, ("fn", id(v.__code__)))
            return self.function(src, v, depth)
        if isinstance(v, types.MethodType):
            self.value(f"{src}.__self__" if named else None, v.__self__, True, depth + 1)
            self.value(f"{src}.__func__" if named else None, v.__func__, True, depth + 1)
            return
        self.value(f"{src}.func" if named else None, v.func, True, depth + 1)
        self.value(f"{src}.args" if named else None, v.args, True, depth + 1)
        self.value(f"{src}.keywords" if named else None, v.keywords, True, depth + 1)

    def user_module(self, src, v, depth, names):
        """A user's module: the attributes the code reads from it."""
        if _user_module(v.__name__):
            d = v.__dict__
            for n in names:
                if n in d:
                    self.value(f"{src}.{n}" if self.named else None, d[n], True, depth + 1)

    def other(self, src, v, depth):
        """A numpy value, a user object (its attributes and class), or a library object (by identity)."""
        t = type(v)
        if t.__module__ == "numpy" and hasattr(v, "tobytes"):  # a numpy array or scalar: its values
            if v.size > MAX_ITEMS:
                return self.add(src, ("unguarded", f"an array of {v.size} items"))
            return self.add(src, ("array", v.shape, v.dtype.str, v.tobytes()))
        if _by_id(t) or not isinstance(getattr(v, "__dict__", None), dict) and not _slots(t):
            # a library object (its state is the library's), compiled state, an object of a C type
            return self.add(src, ("id", t.__name__, id(v)))
        d = getattr(v, "__dict__", None)
        attrs = dict(d) if isinstance(d, dict) else {}
        attrs.update((s, getattr(v, s)) for s in _slots(t) if hasattr(v, s))
        self.add(src, ("obj", id(t), tuple(attrs)))
        for k, x in attrs.items():
            self.value(f"{src}.{k}" if self.named else None, x, True, depth + 1)
        self.cls(t, depth)

    def alias(self, src, v):
        """Whether v was walked already (then guarded as an alias of it); else marks it seen."""
        k = id(v)
        if k in self.seen:
            self.add(src, ("alias", self.seen[k]))
            return True
        self.seen[k] = len(self.seen)
        return False

    def module(self, src, m, depth):
        named = self.named
        params, bufs = m._parameters, m._buffers
        # a parameter frozen or unfrozen changes the graph
        self.add(f"{src}._parameters" if named else None,
                 tuple((k, id(p), p is not None and p.requires_grad) for k, p in params.items()))
        self.add(f"{src}._buffers" if named else None, tuple(map(id, bufs.values())))
        if self.found is not None:
            self.found += [t for t in itertools.chain(params.values(), bufs.values()) if t is not None]
        d = m.__dict__
        attrs = tuple(k for k in d if k not in _MODULE_OWN)
        self.add(src, ("obj", id(type(m)), attrs))
        for k in attrs:
            self.value(f"{src}.{k}" if named else None, d[k], True, depth + 1)
        for k, c in m._modules.items():
            if c is not None:
                self.value(f"{src}.{k}" if named else None, c, True, depth + 1)
        self.cls(type(m), depth)

    def function(self, src, fn, depth, top=False):
        """fn's closure cells, defaults and the globals its code names (top: the compiled function itself, its
        cells named L[...] and globals G[...])."""
        named, code = self.named, fn.__code__
        names = code_names(code)
        for i, (n, cell) in enumerate(zip(code.co_freevars, fn.__closure__ or ())):
            at = (f"L[{n!r}]" if top else f"{src}.__closure__[{i}].cell_contents") if named else None
            try:
                v = cell.cell_contents
            except ValueError:  # an empty cell
                self.add(at, ("empty",))
                continue
            self.value(at, v, True, depth + 1, names)
        at = code.co_name if top else src
        self.value(f"{at}.__defaults__" if named else None, fn.__defaults__, True, depth + 1)
        self.value(f"{at}.__kwdefaults__" if named else None, fn.__kwdefaults__, True, depth + 1)
        g = fn.__globals__
        for n in names:
            if n in g:
                at = (f"G[{n!r}]" if g is self.top else f"{src}.__globals__[{n!r}]") if named else None
                self.value(at, g[n], True, depth + 1, names)

    def cls(self, c, depth):
        """A user class's attributes and methods (each class of its MRO once)."""
        for k in _user_classes(c):
            if id(k) in self.seen:
                continue
            self.seen[id(k)] = len(self.seen)
            for n, x in k.__dict__.items():
                if n in _CLASS_OWN:
                    continue
                if isinstance(x, (staticmethod, classmethod)):
                    x = x.__func__
                elif isinstance(x, property):
                    x = (x.fget, x.fset)
                self.value(f"{k.__module__}.{k.__qualname__}.{n}" if self.named else None, x, True, depth + 1)


@functools.lru_cache(maxsize=None)
def code_names(code):
    """The names a code object (and the functions defined in it) reads as globals or attributes, sorted."""
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= set(code_names(c))
    return tuple(sorted(names))


def collect(fn, root, args, kwargs, arg_names, named=False, found=None):
    """The guards of calling fn (a plain function: its code's globals and closure) on root (self or None) with
    args/kwargs (arg_names: fn's positional parameter names): a tuple of values, the cache key, or with
    named=True of (source, value) pairs in the same order, for reports. found: a list to append the tensors the
    call holds besides its arguments (parameters, buffers, tensors in attributes, globals and cells) and the
    optimizers it reaches."""
    w = _Walk(named, getattr(fn, "__globals__", None), found)
    if not named:
        w.out.append(len(args))
    w.add("GRAD_MODE", grad_mode.is_grad_enabled())
    w.add("AUTOCAST", tuple(sorted((k, v.name) for k, v in autocast_mode.STATE.items())))
    n = len(arg_names)
    for i, a in enumerate(args):
        w.value((f"L[{arg_names[i]!r}]" if i < n else f"L['args'][{i}]") if named else None, a, False)
    for k in sorted(kwargs):
        if not named:
            w.out.append(k)
        w.value(f"L[{k!r}]" if named else None, kwargs[k], False)
    if root is not None:
        w.value("L['self']" if named else None, root, True)
    if getattr(fn, "__code__", None) is not None:
        w.function(None, fn, 0, top=True)
    return tuple(w.out)


def unguarded(named):
    """Why an entry with guards `named` cannot replay: the first value no guard can check (None: none)."""
    return next((f"{src} cannot be guarded ({v[1]})" for src, v in named
                 if type(v) is tuple and v[:1] == ("unguarded",)), None)


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
            return _tensor_miss(src, w, v)
        if src.endswith("._parameters") and [p[:2] for p in w] == [p[:2] for p in v]:
            k, a, b = next((p[0], p[2], q[2]) for p, q in zip(w, v) if p != q)
            return f"tensor '{src}[{k!r}]' requires_grad mismatch. expected {a}, actual {b}"
        if src.endswith(("._parameters", "._buffers")):
            return f"{src} were replaced"
        was, now = Guard(src, w).code_list, Guard(src, v).code_list
        return next((a for a, b in zip(was, now) if a != b), was[0])
    return "the guards changed"



def _tensor_miss(src, w, v):
    """Why tensor guard v fails w, as PyTorch words it."""
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

def _show_key(k):
    return f"<object at {k[1]:#x}>" if k[0] == "id" else repr(k[1])


_KINDS = {  # a guard value's tag -> (PyTorch's create function, its code list)
    "len": ("LIST_LENGTH", lambda n, v: [f"len({n}) == {v[2]}"]),
    "keys": ("DICT_KEYS_MATCH", lambda n, v: [f"list({n}.keys()) == [{', '.join(map(_show_key, v[2]))}]"]),
    "set": ("EQUALS_MATCH", lambda n, v: [f"{n} == {{{', '.join(sorted(map(_show_key, v[2])))}}}"]),
    "obj": ("TYPE_MATCH", lambda n, v: [f"___check_type_id({n}, {v[1]})", f"list(vars({n})) == {list(v[2])}"]),
    "fn": ("FUNCTION_MATCH", lambda n, v: [f"___check_obj_id({n}.__code__, {v[1]})"]),
    "array": ("EQUALS_MATCH", lambda n, v: [f"{n}.shape == {v[1]}", f"{n}.dtype.str == {v[2]!r}",
                                            f"{n}.tobytes() == {v[3]!r}"]),
    "id": ("ID_MATCH", lambda n, v: [f"___check_obj_id({n}, {v[2]})"]),
    "alias": ("OBJECT_ALIASING", lambda n, v: [f"{n} is the object guarded #{v[1]}"]),
    "empty": ("CLOSURE_MATCH", lambda n, v: [f"{n} is an empty cell"]),
    "unguarded": ("UNGUARDED", lambda n, v: [f"{n} cannot be guarded ({v[1]}): the entry runs eagerly"]),
}


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
        elif value[0] in _KINDS:
            self.create_fn, code = _KINDS[value[0]]
            self.code_list = code(name, value)
        else:
            self.create_fn, self.code_list = "EQUALS_MATCH", [f"{name} == {value[1]!r}"]
        self.guard_types = [self.create_fn]

    def __str__(self):
        return (f"Name: {self.name!r}\n    Source: {self.source}\n    Create Function: {self.create_fn}\n"
                f"    Guard Types: {self.guard_types}\n    Code List: {self.code_list}\n")

    __repr__ = __str__
