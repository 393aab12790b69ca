"""torch.fx.symbolic_trace and Tracer: run a module's forward (or a function) on Proxy objects and record every
operation as a Node: leaf modules (torch.nn's own, not Sequential) as call_module, Tensor methods as
call_method, functions as call_function, parameters and constant tensors as get_attr."""
import builtins
import functools
import inspect
import math

from .._tensor import Tensor
from ..nn import Module, Parameter, Sequential
from ..overrides import _assert
from .graph import Graph
from .graph_module import GraphModule
from .node import Node
from .proxy import ParameterProxy, Proxy

__all__ = ["Tracer", "symbolic_trace", "wrap", "PH", "ProxyableClassMeta"]

_wrapped_fns = {}  # (globals id, name) -> the module's globals, for fx.wrap("name") / fx.wrap(fn)


class _PH:
    """A placeholder in concrete_args: this argument stays an input of the traced graph."""

    def __repr__(self):
        return "PH"


PH = _PH()


class ProxyableClassMeta(type):
    """Instances of a class with this metaclass made from proxies are recorded as one call_function."""

    def __call__(cls, *args, **kwargs):
        found = [a for a in list(args) + list(kwargs.values()) if isinstance(a, Proxy)]
        if found:
            return found[0].tracer.create_proxy("call_function", cls, args, kwargs)
        return super().__call__(*args, **kwargs)


def wrap(fn_or_name):
    """At module scope: calls of this global function inside traced code are recorded as call_function
    (not traced through). Returns its argument (usable as a decorator)."""
    name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    if not isinstance(fn_or_name, str) and not callable(fn_or_name):
        raise RuntimeError("Unsupported type for global function! Must be either a callable or string name")
    frame = inspect.currentframe().f_back
    if frame.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_fns[(id(frame.f_globals), name)] = frame.f_globals
    return fn_or_name


class _Patcher:
    """Temporary attribute and global replacements, undone in reverse order."""

    def __init__(self):
        self._undo = []

    def patch(self, obj, name, new, is_dict=False):
        old = obj.get(name, _MISSING) if is_dict else obj.__dict__.get(name, _MISSING)
        self._undo.append((obj, name, old, is_dict))
        if is_dict:
            obj[name] = new
        else:
            setattr(obj, name, new)

    def undo(self):
        for obj, name, old, is_dict in reversed(self._undo):
            if is_dict:
                if old is _MISSING:
                    obj.pop(name, None)
                else:
                    obj[name] = old
            elif old is _MISSING:
                delattr(obj, name)
            else:
                setattr(obj, name, old)
        self._undo = []


_MISSING = object()


class Tracer:
    """Builds a Graph from running `root` on Proxy objects. Subclass to choose the leaf modules
    (is_leaf_module), how values become arguments (create_arg) or how nodes are made (create_proxy)."""

    def __init__(self, autowrap_modules=(math,), autowrap_functions=(), param_shapes_constant=False):
        self._autowrap_ids = {id(v) for m in autowrap_modules for k, v in vars(m).items()
                              if not k.startswith("_") and callable(v)} | {id(f) for f in autowrap_functions}
        self._autowrap_modules = tuple(autowrap_modules)
        self._autowrap_functions = tuple(autowrap_functions)
        self.param_shapes_constant = param_shapes_constant
        self.root = None
        self.graph = None
        self.tensor_attrs = {}
        self.submodule_paths = None
        self.scope = None

    # ---- hooks a subclass overrides ----------------------------------------------------------------------------
    def is_leaf_module(self, m, module_qualified_name):
        mod = type(m).__module__ or ""
        return mod.startswith(("torch.nn", "torch.ao.nn", "webtorch.nn")) and not isinstance(m, Sequential)

    def path_of_module(self, mod):
        if self.submodule_paths:
            path = self.submodule_paths.get(mod)
            if path is None:
                raise NameError("module is not installed as a submodule")
            return path
        for n, p in self.root.named_modules():
            if mod is p:
                return n
        raise NameError("module is not installed as a submodule")

    def call_module(self, m, forward, args, kwargs):
        name = self.path_of_module(m)
        if not self.is_leaf_module(m, name):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", name, args, kwargs)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        if not isinstance(attr_val, Parameter):
            return attr_val
        for n, p in self.root.named_parameters():
            if attr_val is p:
                if n not in parameter_proxy_cache:
                    parameter_proxy_cache[n] = (
                        ParameterProxy(self, self.create_node("get_attr", n, (), {}), n, attr_val)
                        if self.param_shapes_constant else self.create_proxy("get_attr", n, (), {}))
                return parameter_proxy_cache[n]
        return attr_val

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node):
        return Proxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, proxy_factory_fn=None):
        args_, kwargs_ = self.create_arg(args), self.create_arg(kwargs)
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a):
        """A value as a node argument: proxies become their nodes, parameters and tensors get_attr nodes."""
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, Node) or a is None or isinstance(a, (str, int, float, bool, complex, type(Ellipsis))):
            return a
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            return type(a)(*(self.create_arg(x) for x in a))
        if isinstance(a, (tuple, list)):
            return type(a)(self.create_arg(x) for x in a)
        if isinstance(a, dict):
            return {k: self.create_arg(v) for k, v in a.items()}
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, Tensor):
            return self._tensor_arg(a)
        if _plain_constant(a):
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def _tensor_arg(self, a):
        for n, p in self.root.named_parameters():
            if a is p:
                return self.create_node("get_attr", n, (), {})
        for n, b in self.root.named_buffers():
            if a is b:
                return self.create_node("get_attr", n, (), {})
        name = self.tensor_attrs.get(id(a))
        if name is None:
            i = 0
            while hasattr(self.root, f"_tensor_constant{i}"):
                i += 1
            name = f"_tensor_constant{i}"
            setattr(self.root, name, a)
            self.tensor_attrs[id(a)] = name
        return self.create_node("get_attr", name, (), {})

    # ---- tracing -----------------------------------------------------------------------------------------------
    def trace(self, root, concrete_args=None):
        """The Graph of root (a Module: its forward; or a function) on proxies for its arguments."""
        if isinstance(root, Module):
            self.root, fn = root, type(root).forward
        else:
            self.root, fn = Module(), root
        self.graph = Graph(tracer_cls=type(self))
        self.tensor_attrs = {}
        self.submodule_paths = {m: n for n, m in self.root.named_modules()}
        fn_globals = fn.__globals__
        args = self._placeholders(fn, isinstance(root, Module), concrete_args)
        patcher = _Patcher()
        cache = {}
        try:
            self._patch(patcher, fn_globals, cache)
            result = fn(*args)
        finally:
            patcher.undo()
        self.create_node("output", "output", (self.create_arg(result),), {}, type_expr=fn.__annotations__.get(
            "return"))
        self.submodule_paths = None
        return self.graph

    def _placeholders(self, fn, is_method, concrete_args):
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())
        args = [self.root] if is_method else []
        if is_method:
            params = params[1:]
        concrete = dict(concrete_args or {})
        for p in params:
            if p.name in concrete:
                args.append(self._concrete(p.name, concrete[p.name]))
                continue
            name = ("*" if p.kind == p.VAR_POSITIONAL else "**" if p.kind == p.VAR_KEYWORD else "") + p.name
            default = p.default is not inspect.Parameter.empty
            node = self.graph.placeholder(name, None if p.annotation is inspect.Parameter.empty else p.annotation,
                                          p.default if default else None, _default=default)
            args.append(self.proxy(node))
        return args

    def _concrete(self, name, value):
        """A concrete argument: still an input (name_1), checked to equal the value the trace specialized on."""
        proxy = self.proxy(self.graph.placeholder(f"{name}_1"))
        if value is PH:
            return proxy
        if type(value) in (bool, int, float, str):
            _assert(proxy == value, f"{name} has been specialized to have value {value} but got another value")
        return value

    def _patch(self, patcher, fn_globals, cache):
        tracer = self
        orig_call, orig_getattr = Module.__call__, Module.__getattr__

        def module_call(mod, *args, **kwargs):
            def forward(*a, **kw):
                return orig_call(mod, *a, **kw)
            return tracer.call_module(mod, forward, args, kwargs)

        def module_getattr(mod, attr):
            return tracer.getattr(attr, orig_getattr(mod, attr), cache)

        patcher.patch(Module, "__call__", module_call)
        patcher.patch(Module, "__getattr__", module_getattr)
        for namespace in [fn_globals] + [vars(m) for m in self._autowrap_modules]:
            for name, value in list(namespace.items()):
                if id(value) in self._autowrap_ids and not name.startswith("_"):
                    patcher.patch(namespace, name, _recorded_call(value), is_dict=True)
        for (_, name), g in _wrapped_fns.items():
            fn = g.get(name, getattr(builtins, name, None))
            if fn is not None:
                patcher.patch(g, name, _recorded_call(fn), is_dict=True)


def _recorded_call(fn):
    """fn, recorded as one call_function node when an argument is a Proxy."""
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        for a in list(args) + list(kwargs.values()):
            if isinstance(a, Proxy):
                proxy = a.tracer.create_proxy("call_function", fn, args, kwargs)
                proxy.node.meta["is_wrapped"] = True
                return proxy
        return fn(*args, **kwargs)
    return wrapped


def _plain_constant(a):
    t = type(a)
    return t.__module__.startswith("webtorch") and t.__name__ in ("dtype", "device", "layout", "memory_format",
                                                                  "Size")


def symbolic_trace(root, concrete_args=None):
    """root (a Module or function) traced into a GraphModule."""
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)

