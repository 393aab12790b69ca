"""The op recorder: a Graph of webtorch op calls, recorded as they execute, and a runner for it. Behind
`torch.export`, `torch.onnx.export`, `torch.jit.trace` and `torch.compile` (PyTorch's symbolic tracing, which
records Python calls with Proxy objects instead, builds the same Graph: _symbolic_trace.py).

A `Graph` is a plain list of `Node`s, printable with `graph.print()` (or `str(graph)`):

    placeholder    a parameter, buffer or user input (target: its name)
    get_attr       a tensor made during tracing and used as a constant (torch.arange, a mask...)
    call_function  target(*args, **kwargs), target a public webtorch op (torch.add, Tensor.view,
                   nn.functional.linear, ...); Node arguments stand for tensors
    output         the traced function's result (args[0], with Nodes for tensors)

`node.meta["val"]` is the output's `TensorMeta(shape, dtype)` (a tuple of them for ops that return
several tensors, whose elements `operator.getitem` nodes pick). A dimension made dynamic is a `Sym`
(`2*s0 + 1`) wherever it appears: in shapes and in the integer arguments of ops (view sizes...).

Recording. Every public op goes through `overrides.torch_function` (nn.functional's included, as in
PyTorch); while an `OpTracer` is active there, a call made outside any recorded call is recorded:
  - when `tracer.leaf(op)` is true, as one node (what it calls inside is not recorded);
  - otherwise the op runs with recording on: if its tensor outputs come from recorded nodes (it
    decomposed into recorded ops, or returned an input) those nodes stay; if not (it computed
    with backend primitives directly, used a tensor no recorded op made, such as an index built
    with torch.arange, or read a value with .item()) they are dropped and the call is one node.
Tensors made outside recorded ops at the top level (torch.arange in a forward) become get_attr
constants; reading a traced value as a Python number there (`if x.sum() > 0`) calls
`on_value_read` (export raises, jit.trace warns), since the graph would bake in the value.
So the level is the caller's choice: onnx passes leaf = "has an ONNX mapping" and gets linear,
conv2d, batch_norm, layer_norm, scaled_dot_product_attention as single nodes, while ops without
a mapping decompose into the ops they are written in.

How torch.compile (#12) should reuse this: trace a training step with `OpTracer(leaf=...)` choosing
the lowest level it fuses (leaf=lambda op: False records the ops the layers are written in); the
autograd engine runs derivative formulas as webtorch ops, so a tracer kept active through
`loss.backward()` records the backward pass as nodes too (what it must add: grad accumulation
into `.grad` and optimizer in-place updates, which are mutations of placeholders, already
recorded as in-place op nodes). Replay is `GraphRunner(graph).run(...)` on any device; a backend
that compiles the graph (fusing nodes into WGSL kernels) consumes the same Node list.
"""
import inspect
import operator

from .._tensor import Tensor
from ..autograd import grad_mode
from ..nn import Module
from ..ops.shape import clone
from ..overrides import _tracing as _active  # the OpTracer recording now (torch_function looks there)
from .graph import Graph
from .graph_module import GraphModule
from .node import Node, Sym, TensorMeta, map_aggregate, mutates


def _meta(v):
    if isinstance(v, Tensor):
        return TensorMeta(v.shape, v.dtype)
    if isinstance(v, (tuple, list)):
        return tuple(_meta(x) for x in v)
    return None


def _tensors(v):
    if isinstance(v, Tensor):
        return [v]
    if isinstance(v, (tuple, list)):
        return [t for x in v for t in _tensors(x)]
    if isinstance(v, dict):
        return [t for x in v.values() for t in _tensors(x)]
    return []


class OpTracer:
    """Records the webtorch ops run inside `with tracer:` into `tracer.graph` (see the module doc)."""
    value_reads = ("item", "__bool__", "__int__", "__float__", "__index__")  # Tensor methods that reach on_value_read

    def __init__(self, leaf=lambda fn: True, on_value_read=None):
        self.graph = Graph()
        self.graph._recorded = True
        self.leaf = leaf
        self.on_value_read = on_value_read or _refuse_value_read
        self._depth = 0
        self._env = {}    # id(tensor) -> Node (None: stale, written through an alias)
        self._keep = {}   # id(tensor) -> tensor: keeps the ids of recorded tensors unique
        self._undo = []   # (id, previous Node or missing) for rolling a decomposition back
        self._trying = []  # per op being decomposed: whether it used a tensor no recorded op made

    def __enter__(self):
        if _active[0] is not None:
            raise RuntimeError("a trace is already being recorded")
        _active[0] = self
        self._saved = {n: Tensor.__dict__[n] for n in self.value_reads}
        for n, f in self._saved.items():
            setattr(Tensor, n, _guarded(f))
        return self

    def __exit__(self, *exc):
        _active[0] = None
        for n, f in self._saved.items():
            setattr(Tensor, n, f)
        return False

    def _value_read(self, t, what):
        """A traced tensor's value is read as a Python number (control flow, sizes): the graph would
        bake in this example's value. Inside an op being decomposed, that op stays one node."""
        node = self._env.get(id(t))
        if node is None or node.op == "get_attr":
            return
        if self._trying:
            self._trying[-1] = True
        else:
            self.on_value_read(t, what)

    def placeholder(self, name, t):
        node = self.graph.placeholder(name, meta={"val": TensorMeta(t.shape, t.dtype)})
        self._bind(t, node)
        return node

    def _bind(self, t, node):
        k = id(t)
        self._undo.append((k, self._env.get(k, _MISSING), self._keep.get(k)))
        self._env[k], self._keep[k] = node, t

    def node_of(self, t):
        """The node a tensor argument stands for (a constant node for one made outside the trace)."""
        node = self._env.get(id(t), _MISSING)
        if node is None:
            raise RuntimeError(f"a {TensorMeta(t.shape, t.dtype)} tensor was written in place through a view after it "
                               "was used: the traced graph cannot express that; clone it first")
        if node is _MISSING:
            if self._trying:  # an op being decomposed computed this without recorded ops: it stays one node
                self._trying[-1] = True
            else:
                st = t._storage
                for k, other in self._keep.items():
                    if other._storage is st and self._env.get(k) is not None:
                        if (other._shape, other._stride, other._offset) == (t._shape, t._stride, t._offset):
                            return self._env[k]
                        raise RuntimeError("the traced program used a view of a traced tensor made outside "
                                           "webtorch's ops (Tensor._make / an alias): it cannot be recorded")
            node = self.graph._constant(t, {"val": TensorMeta(t.shape, t.dtype)})
            self._bind(t, node)
        return node

    def call(self, public, fn, args, kwargs):
        """overrides.torch_function's hook: run op `fn` (public wrapper `public`), recording it."""
        if self._depth:
            return fn(*args, **kwargs)
        if self.leaf(public):
            self._depth += 1
            try:
                out = fn(*args, **kwargs)
            finally:
                self._depth -= 1
            return self._record(public, args, kwargs, out)
        mark = (len(self.graph.nodes), len(self._undo))
        self._trying.append(False)
        try:
            out = fn(*args, **kwargs)
        finally:
            tainted = self._trying.pop()
        # the decomposition stands when the op's results come from recorded ops on known tensors (and
        # an in-place op's target was rewritten by them); else the op is one node
        outs_known = all(self._env.get(id(t)) is not None for t in _tensors(out))
        if mutates(public) and args and isinstance(args[0], Tensor):
            outs_known = outs_known and any(k == id(args[0]) for k, _, _ in self._undo[mark[1]:])
        if outs_known and not tainted:
            return out
        self._rollback(*mark)
        return self._record(public, args, kwargs, out)

    def _rollback(self, n_nodes, n_undo):
        self.graph.truncate(n_nodes)
        while len(self._undo) > n_undo:
            k, prev, kept = self._undo.pop()
            if prev is _MISSING:
                self._env.pop(k, None)
                self._keep.pop(k, None)
            else:
                self._env[k], self._keep[k] = prev, kept

    def _record(self, public, args, kwargs, out):
        def to_node(x):
            return self.node_of(x) if isinstance(x, Tensor) else x
        a, kw = map_aggregate(args, to_node), map_aggregate(kwargs, to_node)
        writes = mutates(public) and args and isinstance(args[0], Tensor)
        if writes and a[0].op == "get_attr":  # a constant is never written: the write goes to a copy
            a = (self.graph.call_function(clone, (a[0],), meta={"val": a[0].meta["val"]}),) + tuple(a[1:])
        if writes and out is None:  # __setitem__: the node's value is the written tensor
            node = self.graph.call_function(public, a, kw, meta={"val": _meta(args[0])})
            self._rebind(args[0], node)
            return out
        node = self.graph.call_function(public, a, kw, meta={"val": _meta(out)})
        if isinstance(out, Tensor):
            if writes and out is args[0]:
                self._rebind(out, node)
            else:
                self._bind(out, node)
        elif isinstance(out, (tuple, list)):
            for i, o in enumerate(out):
                if isinstance(o, Tensor):
                    self._bind(o, self.graph.call_function(operator.getitem, (node, i), meta={"val": _meta(o)}))
        return out

    def _rebind(self, t, node):
        """t was written in place: it now stands for node; other tensors on its memory go stale."""
        for k, other in list(self._keep.items()):
            if other is not t and other._storage is t._storage and self._env.get(k) is not None:
                self._undo.append((k, self._env[k], other))
                self._env[k] = None
        self._bind(t, node)

    def output(self, result):
        """Finish the graph with `result` (tensors in any nesting) as its output."""
        out = map_aggregate(result, lambda x: self.node_of(x) if isinstance(x, Tensor) else x)
        self.graph.output(out)
        self.graph.eliminate_dead_code()
        return self.graph


_MISSING = object()


def _guarded(f):
    def read(t, *args, **kwargs):
        tracer = _active[0]
        if tracer is None or tracer._depth:
            return f(t, *args, **kwargs)
        tracer._value_read(t, f.__name__)
        tracer._depth += 1  # __bool__ reads through item(): one report
        try:
            return f(t, *args, **kwargs)
        finally:
            tracer._depth -= 1
    read.__name__ = f.__name__
    return read


def _refuse_value_read(t, what):
    raise RuntimeError(f"the traced program reads a traced tensor's value as a Python number (Tensor.{what}, as "
                       "`if x.sum() > 0:` or `int(n)` do): the graph would bake in this example's value. Compute "
                       "with tensor ops instead (torch.where), or make it an input")


class GraphRunner:
    """Runs a recorded graph node by node with eager webtorch ops (any device; equals eager)."""

    def __init__(self, graph, constants=None):
        self.graph = graph
        self.constants = graph.constants if constants is None else constants

    def run(self, inputs, dims=None):
        """inputs: {placeholder name: tensor}; dims: values of the dynamic dims (Sym names)."""
        env = {}
        dims = dims or {}

        def load(x):
            if isinstance(x, Node):
                return env[x.name]
            if isinstance(x, Sym):
                return x.eval(dims)
            return x
        for node in self.graph.nodes:
            if node.op == "placeholder":
                env[node.name] = inputs[node.name]
            elif node.op == "get_attr":
                env[node.name] = self.constants[node.target]
            elif node.op == "output":
                return map_aggregate(node.args[0], load)
            else:
                a, kw = map_aggregate(node.args, load), map_aggregate(node.kwargs, load)
                r = node.target(*a, **kw)
                env[node.name] = a[0] if r is None and mutates(node.target) else r
        return None


def _set_path(root, path, value, kind):
    *mods, leaf = path.split(".")
    m = root
    for name in mods:
        if name not in m._modules:
            m.add_module(name, Module())
        m = m._modules[name]
    if kind == "parameter":
        m.register_parameter(leaf, value)
    else:
        m.register_buffer(leaf, value, persistent=kind == "buffer")


def _get_path(root, path):
    for name in path.split("."):
        root = getattr(root, name)
    return root


class LiftedGraphModule(GraphModule):
    """A GraphModule whose forward runs a recorded graph with parameters lifted to inputs (export's, jit's).
    Parameters and buffers sit where they sat in the traced module (so its state_dict has the same keys);
    `inputs` maps each placeholder to ("parameter"|"buffer"|"constant", target) or ("input", position);
    `dims` maps each dynamic dim's name to (input position, dim)."""

    def __init__(self, graph, tensors, inputs, out_spec=None, dims=None):
        Module.__init__(self)
        self._graph = graph
        graph.owning_module = self
        self._inputs = dict(inputs)
        self._dims = dict(dims or {})
        for kind, target in self._inputs.values():
            if kind in ("parameter", "buffer", "constant"):
                _set_path(self, target, tensors[target], kind)
        for name, t in graph.constants.items():
            self.register_buffer(name, t, persistent=False)
        self._n_user = sum(kind == "input" for kind, _ in self._inputs.values())

    @property
    def code(self):
        return str(self.graph)

    def recompile(self):
        return None

    def forward(self, *args, **kwargs):
        flat = flatten_inputs(args, kwargs)
        if len(flat) != self._n_user:
            raise TypeError(f"forward() expected {self._n_user} tensor input{'s' if self._n_user != 1 else ''} but "
                            f"got {len(flat)}")
        inputs = {}
        for name, (kind, target) in self._inputs.items():
            inputs[name] = flat[target] if kind == "input" else _get_path(self, target)
        dims = {s: flat[p].shape[d] for s, (p, d) in self._dims.items()}
        for node in self.graph.nodes:
            if node.op == "placeholder" and self._inputs[node.name][0] == "input":
                self._check_input(node, inputs[node.name], dims)
        consts = {k: getattr(self, k) for k in self.graph.constants}
        return GraphRunner(self.graph, consts).run(inputs, dims)

    def _check_input(self, node, t, dims):
        pos = self._inputs[node.name][1]
        if not isinstance(t, Tensor):
            raise TypeError(f"Expected input at *args[{pos}] to be a Tensor, but got {type(t).__name__}")
        want = node.meta["val"].shape
        if len(want) != t.dim():
            raise RuntimeError(f"Unexpected number of dimensions in input at *args[{pos}].shape (expected "
                               f"{list(want)}, but got {list(t.shape)})")
        for i, (w, g) in enumerate(zip(want, t.shape)):
            w = w.eval(dims) if isinstance(w, Sym) else w
            if w != g:
                raise RuntimeError(f"Expected input at *args[{pos}].shape[{i}] to be equal to {w}, but got {g}")


def trace_module(module, args, kwargs=None, leaf=lambda fn: True, on_value_read=None):
    """Record module(*args, **kwargs) (a Module or a plain function). Parameters and buffers become
    placeholders p_<path> / b_<path>, tensor arguments placeholders named after forward's
    parameters. Returns (graph, inputs, tensors): `inputs` as GraphModule takes it, `tensors` the
    parameters and buffers by their paths."""
    kwargs = kwargs or {}
    tracer = OpTracer(leaf, on_value_read)
    inputs, tensors = {}, {}
    with tracer, grad_mode.no_grad():
        if hasattr(module, "named_parameters"):
            for kind, prefix, items in (("parameter", "p_", module.named_parameters()),
                                        ("buffer", "b_", module.named_buffers())):
                for path, t in items:
                    node = tracer.placeholder(prefix + path.replace(".", "_"), t)
                    inputs[node.name] = (kind, path)
                    tensors[path] = t
            np_ = set(getattr(module, "_non_persistent_buffers_set", ()))
            for path in tensors:  # a non-persistent buffer is no part of the state dict
                if path in np_:
                    inputs["b_" + path.replace(".", "_")] = ("constant", path)
        fwd = getattr(module, "forward", module)
        try:
            names = list(inspect.signature(fwd).parameters)
        except (TypeError, ValueError):
            names = []
        for i, t in enumerate(flatten_inputs(args, kwargs)):
            base = names[i] if i < len(names) and i < len(args) and args[i] is t else f"arg{i}"
            node = tracer.placeholder(base, t)
            inputs[node.name] = ("input", i)
        out = module(*args, **kwargs)
        graph = tracer.output(out)
    return graph, inputs, tensors


def flatten_inputs(args, kwargs):
    """The tensors among a call's arguments, in order (the graph's user inputs)."""
    return _tensors(list(args) + [kwargs[k] for k in sorted(kwargs)])
