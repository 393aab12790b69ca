"""torch.fx.Node: one operation of a Graph (placeholder, get_attr, call_function, call_method, call_module,
output), its arguments (Nodes inside any nesting of tuples, lists, dicts, slices), its users and meta."""
import builtins
import inspect
import operator

import webtorch

from .._tensor import Tensor

__all__ = ["Node", "map_arg", "map_aggregate", "Argument", "Target"]

Argument = object
Target = object


class TensorMeta:
    """A recorded tensor's shape and dtype (node.meta["val"] of the op recorder's graphs)."""
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), dtype

    def __repr__(self):
        return f"{_DT.get(self.dtype.name, self.dtype.name)}[{', '.join(str(s) for s in self.shape)}]"


_DT = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16", "int64": "i64", "int32": "i32",
       "int16": "i16", "int8": "i8", "uint8": "u8", "bool": "b8"}


class Sym:
    """An integer that depends on the dynamic dimensions: a polynomial, const + sum of coef * product of
    dims (coefs: {tuple of dim names: coef}), as `batch`, `2*batch + 1` or `batch*seq`."""
    __slots__ = ("coefs", "const")

    def __init__(self, coefs, const=0):
        self.coefs, self.const = {tuple(k): c for k, c in dict(coefs).items()}, const

    def eval(self, dims):
        total = self.const
        for names, c in self.coefs.items():
            for s in names:
                c *= dims[s]
            total += c
        return total

    def __eq__(self, other):
        return isinstance(other, Sym) and self.coefs == other.coefs and self.const == other.const

    def __hash__(self):
        return hash((tuple(sorted(self.coefs.items())), self.const))

    def __repr__(self):
        parts = ["*".join(names) if c == 1 else f"{c}*{'*'.join(names)}" for names, c in self.coefs.items()]
        if self.const:
            parts.append(str(self.const))
        return " + ".join(parts).replace("+ -", "- ")


class Node:
    """One operation in a Graph. `users` maps each node that uses this one to None (PyTorch's dict); a node's
    arguments are kept with their users up to date (`args`/`kwargs` setters, `replace_all_uses_with`)."""

    def __init__(self, graph, name, op, target, args=(), kwargs=None, return_type=None):
        if op not in ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output", "root"):
            raise ValueError(f"Invalid op {op!r}")
        self.graph, self.name, self.op, self.target, self.type = graph, name, op, target, return_type
        self.users = {}
        self.meta = {}
        self._input_nodes = {}
        self._args, self._kwargs = (), {}
        self._erased = False
        self._update_args_kwargs(tuple(args), dict(kwargs or {}))

    # ---- arguments and users -----------------------------------------------------------------------------------
    @property
    def args(self):
        return self._args

    @args.setter
    def args(self, a):
        self._update_args_kwargs(tuple(a), self._kwargs)

    @property
    def kwargs(self):
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k):
        self._update_args_kwargs(self._args, dict(k))

    def _update_args_kwargs(self, args, kwargs):
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._args, self._kwargs = args, kwargs
        self._input_nodes = {}
        map_arg((args, kwargs), self._input_nodes.setdefault)
        for n in self._input_nodes:
            n.users.setdefault(self, None)

    @property
    def all_input_nodes(self):
        return list(self._input_nodes)

    def update_arg(self, idx, arg):
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key, arg):
        self.kwargs = {**self.kwargs, key: arg}

    def replace_all_uses_with(self, replace_with, delete_user_cb=lambda user: True, *, propagate_meta=False):
        """Every use of this node becomes a use of replace_with; returns the users changed."""
        if propagate_meta:
            for k, v in self.meta.items():
                replace_with.meta.setdefault(k, v)
        changed = [u for u in list(self.users) if delete_user_cb(u)]
        for user in changed:
            user.replace_input_with(self, replace_with)
        return changed

    def replace_input_with(self, old_input, new_input):
        def swap(n):
            return new_input if n is old_input else n
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    # ---- position in the graph ---------------------------------------------------------------------------------
    @property
    def next(self):
        nodes = self.graph._nodes
        i = nodes.index(self)
        return nodes[i + 1] if i + 1 < len(nodes) else self.graph._root

    @property
    def prev(self):
        nodes = self.graph._nodes
        i = nodes.index(self)
        return nodes[i - 1] if i else self.graph._root

    def prepend(self, x):
        """Insert x before this node (moving it if it is in the graph)."""
        self.graph._move(x, self.graph._nodes.index(self) if x is not self else None)

    def append(self, x):
        """Insert x after this node (moving it if it is in the graph)."""
        self.graph._move(x, self.graph._nodes.index(self) + 1)

    def is_impure(self, impure_random=True):
        """Whether removing this node changes the program: placeholders, outputs, in-place ops, side effects."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            return self.target in _side_effectful or mutates(self.target)
        if self.op == "call_method":
            return self.target.endswith("_") and not self.target.endswith("__")
        if self.op == "call_module":
            mod = self.graph.owning_module.get_submodule(self.target) if self.graph.owning_module else None
            return bool(getattr(mod, "_is_impure", False))
        return False

    def normalized_arguments(self, root=None, arg_types=None, kwarg_types=None, normalize_to_only_use_kwargs=False):
        """The call's arguments bound to the target's signature, defaults filled in."""
        if self.op == "call_module" and root is not None:
            fn = root.get_submodule(self.target).forward
        elif self.op == "call_function":
            fn = getattr(self.target, "_impl", self.target)
        else:
            return None
        b = inspect.signature(fn).bind(*self.args, **self.kwargs)
        b.apply_defaults()
        return b.arguments

    # ---- printing ----------------------------------------------------------------------------------------------
    def format_node(self, placeholder_names=None, maybe_return_typename=None, *, include_tensor_metadata=False):
        if self.graph._recorded:
            return self._format_recorded()
        typ = f"{_type_repr(self.type)} " if self.type is not None else ""
        head = f"%{self.name} : {typ}[num_users={len(self.users)}] = {self.op}"
        if self.op == "placeholder":
            if placeholder_names is not None:
                placeholder_names.append(self.target)
                return None
            default = "(default=" + str(self.args[0]) + ")" if self.args else ""
            return f"{head}[target={self.target}]{default}"
        if self.op == "get_attr":
            return f"{head}[target={self.target}]"
        if self.op == "output":
            return f"return {self.args[0]}"
        target = _pretty_target(self.target) if callable(self.target) else self.target
        return f"{head}[target={target}](args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})"

    def _format_recorded(self):
        """A node of the op recorder (export, jit, torch.compile) prints its shape and dtype."""
        val = self.meta.get("val")
        ann = f': "{val}"' if isinstance(val, TensorMeta) else ""
        if self.op == "output":
            return f"return {_fmt(self.args[0])}"
        if self.op in ("placeholder", "get_attr"):
            return f"%{self.name}{ann} = {self.op}[target={self.target}]"
        args = ", ".join([_fmt(a) for a in self.args] + [f"{k}={_fmt(v)}" for k, v in self.kwargs.items()])
        return f"%{self.name}{ann} = {target_name(self.target)}({args})"

    def __repr__(self):
        return self.name

    def __getstate__(self):
        state = dict(self.__dict__)
        if callable(self.target) and "<locals>" in getattr(self.target, "__qualname__", ""):
            state["target"] = _OpRef(target_name(self.target))  # webtorch's ops are made by factories
        return state

    def __setstate__(self, state):
        if isinstance(state.get("target"), _OpRef):
            state["target"] = state["target"].resolve()
        self.__dict__.update(state)


class _OpRef:
    """A pickled webtorch op, by its public name (torch.relu, torch.Tensor.add, torch.nn.functional.gelu)."""

    def __init__(self, name):
        self.name = name

    def resolve(self):
        obj = webtorch
        for part in self.name.split(".")[1:]:
            obj = getattr(obj, part)
        return obj


_side_effectful = set()


def has_side_effect(fn):
    """Mark fn as side-effectful: its call nodes are never removed as dead code."""
    _side_effectful.add(fn)
    return fn


def mutates(fn):
    """Whether op fn writes into its first argument (add_, copy_, __setitem__, operator.setitem)."""
    if fn is operator.setitem:
        return True
    name = getattr(fn, "__name__", "")
    return (name.endswith("_") and not name.startswith("_")) or name == "setitem"


def _type_repr(t):
    return t.__name__ if isinstance(t, type) and t.__module__ == "builtins" else repr(t)


def _format_arg(arg):
    if isinstance(arg, list):
        return "[" + ", ".join(_format_arg(a) for a in arg) + "]"
    if isinstance(arg, tuple):
        return "(" + ", ".join(_format_arg(a) for a in arg) + ("," if len(arg) == 1 else "") + ")"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    if isinstance(arg, Node):
        return "%" + str(arg)
    return str(arg)


_METHOD_ONLY = frozenset("view view_as expand expand_as contiguous type_as to float double long int bool half repeat "
                         "reshape_as new_zeros new_ones new_full new_empty".split())


def _pretty_target(fn):
    """A call_function target as a printed graph shows it (builtins qualified: builtins.getattr)."""
    if (getattr(fn, "__module__", None) or "") == "builtins" and hasattr(fn, "__name__"):
        return f"builtins.{fn.__name__}"
    return _qualified_name(fn)


def _qualified_name(fn):
    """PyTorch's spelling of a callable target: builtins bare, operator.add, torch.relu, torch.Tensor.add, ..."""
    name = getattr(fn, "__name__", repr(fn))
    if getattr(builtins, name, None) is fn:
        return name
    if getattr(operator, name, None) is fn:
        return f"operator.{name}"
    module = getattr(fn, "__module__", None) or ""
    if module.startswith("webtorch") or module.startswith("torch"):
        return target_name(fn)
    return f"{module}.{getattr(fn, '__qualname__', name)}"


def target_name(fn):
    """How a recorded op target prints: PyTorch's spelling of where the op lives."""
    if fn is operator.getitem:
        return "operator.getitem"
    if hasattr(fn, "_fx_target_name"):  # a call that is no webtorch op (an optimizer's step in torch.compile's graph)
        return fn._fx_target_name
    name = fn.__name__
    if name in ("getitem", "setitem"):
        return f"torch.Tensor.__{name}__"
    if (getattr(fn, "__module__", "") or "").endswith("nn.functional"):
        return f"torch.nn.functional.{name}"
    return f"torch.{name}" if getattr(webtorch, name, None) is fn and name not in _METHOD_ONLY \
        else f"torch.Tensor.{name}"


def _fmt(a):
    """An argument as the op recorder's graphs print it."""
    if isinstance(a, Node):
        return "%" + a.name
    if isinstance(a, tuple):
        return "(" + ", ".join(_fmt(x) for x in a) + ("," if len(a) == 1 else "") + ")"
    if isinstance(a, list):
        return "[" + ", ".join(_fmt(x) for x in a) + "]"
    if isinstance(a, dict):
        return "{" + ", ".join(f"{k!r}: {_fmt(v)}" for k, v in a.items()) + "}"
    if isinstance(a, slice):
        return f"slice({_fmt(a.start)}, {_fmt(a.stop)}, {_fmt(a.step)})"
    if isinstance(a, Tensor):
        return f"tensor({TensorMeta(a.shape, a.dtype)})"
    if hasattr(a, "is_floating_point") and hasattr(a, "itemsize"):
        return f"torch.{a.name}"
    return repr(a)


def map_arg(a, fn):
    """a with every Node in it (inside tuples, lists, dicts, slices) replaced by fn(node)."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def map_aggregate(a, fn):
    """a with fn applied to every leaf inside tuples, lists, dicts and slices (namedtuples keep their type)."""
    t = type(a)
    if t is tuple or t is list:
        return t(map_aggregate(x, fn) for x in a)
    if isinstance(a, tuple) and hasattr(t, "_fields"):  # a namedtuple (return_types)
        return t(*(map_aggregate(x, fn) for x in a))
    if t is dict:
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if t is slice:
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)
