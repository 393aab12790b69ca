"""The graph file: what torch.jit.save / torch.export.save write and torch.jit.load / torch.export.load read
(webtorch's own format: a JSON graph whose ops are named from one table, and the tensors; see _GraphReader)."""

import functools
import inspect
import json
import math
import operator
import sys

import webtorch

from . import _dtype, fx, linalg, nn, special
from ._device import device
from ._tensor import Tensor
from .nn import Parameter
from .serialization import CheckpointError, UnpicklingError, _source_name, load as _load, save as _save

_FORMAT = "webtorch.fx graph 1"


class TracedModule(fx.LiftedGraphModule):
    """What torch.jit.trace returns: the module's graph, run by the interpreter (`.graph`, `.code`)."""

    def save(self, f, _extra_files=None):
        _save_graph(self, f)


# ---- save / load ---------------------------------------------------------------------------------------
def save(m, f, _extra_files=None):
    if not isinstance(m, fx.LiftedGraphModule):
        raise RuntimeError("torch.jit.save: expected a module from torch.jit.trace (webtorch does not script)")
    _save_graph(m, f)


@functools.cache
def _ops():
    """{(namespace, name): op}: the only ops a graph file may name. They are what fx records: the
    functions routed through __torch_function__ that webtorch's op namespaces hold, and
    operator.getitem (a multi-output op's pick). Each is named by the module defining it where it
    is found there (the spelling since format 1), else by Tensor or the namespace holding it.
    The writer names only what is here and the reader resolves only here: a name in a file is
    never imported or looked up anywhere else."""
    spaces = {"Tensor": Tensor, "webtorch": webtorch, "webtorch.nn.functional": nn.functional,
              "webtorch.linalg": linalg, "webtorch.special": special}
    found = [(label, name, fn) for label, ns in spaces.items() for name, fn in vars(ns).items()
             if inspect.isfunction(fn) and hasattr(fn, "_impl")]
    table = {("operator", "getitem"): operator.getitem}
    for _, _, fn in found:
        if vars(sys.modules[fn.__module__]).get(fn.__name__) is fn:
            table.setdefault((fn.__module__, fn.__name__), fn)
    for label, name, fn in found:
        table.setdefault((label, name), fn)
    return table


@functools.cache
def _refs():
    """{op: (namespace, name)}: how the writer names each op of _ops (its first name there)."""
    refs = {}
    for ref, fn in _ops().items():
        refs.setdefault(fn, ref)
    return refs


def _target_ref(fn):
    ref = _refs().get(fn)
    if ref is None:
        raise RuntimeError(f"torch.jit.save: the op {fx.target_name(fn)} cannot be saved by reference")
    return list(ref)


def _enc(v):
    if isinstance(v, fx.Node):
        return {"node": v.name}
    if isinstance(v, fx.Sym):
        return {"sym": [[[list(k), c] for k, c in v.coefs.items()], v.const]}
    if isinstance(v, fx.TensorMeta):
        return {"meta": [_enc(v.shape), v.dtype.name]}
    if isinstance(v, _dtype.dtype):
        return {"dtype": v.name}
    if type(v) is tuple or (isinstance(v, tuple) and not hasattr(type(v), "_fields")):
        return {"tuple": [_enc(x) for x in v]}
    if isinstance(v, list):
        return [_enc(x) for x in v]
    if isinstance(v, dict):
        return {"dict": [[k, _enc(x)] for k, x in v.items()]}
    if isinstance(v, slice):
        return {"slice": [_enc(v.start), _enc(v.stop), _enc(v.step)]}
    if v is Ellipsis:
        return {"ellipsis": 1}
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if type(v).__name__ == "device":
        return {"device": str(v)}
    raise RuntimeError(f"torch.jit.save: cannot save an argument of type {type(v).__name__}")


def _save_graph(gm, f):
    nodes = [[n.name, n.op, n.target if n.op != "call_function" else _target_ref(n.target), _enc(n.args),
              _enc(n.kwargs), _enc(n.meta.get("val"))] for n in gm.graph.nodes]
    tensors = {target: fx._get_path(gm, target).detach() for kind, target in gm._inputs.values() if kind != "input"}
    tensors.update({"_constants." + k: getattr(gm, k).detach() for k in gm.graph.constants})
    inputs = {k: list(v) for k, v in gm._inputs.items()}
    _save({"format": _FORMAT, "graph": json.dumps({"nodes": nodes, "inputs": inputs,
                                                    "dims": {k: list(v) for k, v in gm._dims.items()}}),
           "tensors": tensors}, f)


def load(f, map_location=None, _extra_files=None):
    """torch.jit.load: a module saved by torch.jit.save / TracedModule.save (webtorch's format). A
    file that is not one, or is malformed or hostile, raises serialization.CheckpointError (see
    _GraphReader); nothing it names is imported or called while it loads."""
    name = _source_name(f)
    not_ours = CheckpointError("torch.jit.load: not a module saved by webtorch's torch.jit.save (webtorch cannot "
                               "read TorchScript archives: save a state_dict in PyTorch and load it into the model)")
    try:
        obj = _load(f, map_location=map_location, weights_only=True)
    except UnpicklingError:  # a global in the pickle (TorchScript's __torch__ classes): no graph file has one
        raise not_ours from None
    if not isinstance(obj, dict) or type(obj.get("format")) is not str or obj["format"] != _FORMAT:
        raise not_ours
    return _GraphReader(name, obj, CheckpointError).module()


_MAX_NESTING = 64        # how deep a node's arguments may nest in a graph file
_MAX_NUMEL = 1 << 31     # the most elements a tensor in a graph file may declare
_INT64 = 1 << 63
_KINDS = ("input", "parameter", "buffer", "constant")


class _GraphReader:
    """A graph file's JSON, checked as it decodes into a TracedModule: every node's op comes from
    _ops() with arguments its signature binds; nodes refer only to earlier nodes (so the graph has
    no cycle), names are unique, one output ends it; placeholders, constants, inputs and dynamic
    dims agree with each other and with the file's tensors; values are JSON scalars, dtypes,
    devices, slices, Syms over the file's dims and tensor metas of at most 2**31 elements, nested
    at most 64 deep, integers within int64. Anything else raises CheckpointError."""

    def __init__(self, name, obj, error):
        self.name, self.error, self.nodes, self.sigs = name, error, {}, {}
        graph, self.tensors = obj.get("graph"), obj.get("tensors")
        if type(graph) is not str or type(self.tensors) is not dict or \
                not all(type(k) is str and isinstance(v, Tensor) for k, v in self.tensors.items()):
            raise self.bad("it needs a JSON graph and a dict of named tensors")
        try:
            doc = json.loads(graph)
        except (ValueError, RecursionError) as e:
            raise self.bad(f"the graph is not valid JSON ({type(e).__name__})") from None
        if type(doc) is not dict or type(doc.get("nodes")) is not list or type(doc.get("inputs")) is not dict or \
                type(doc.get("dims")) is not dict:
            raise self.bad("the graph lacks its nodes, inputs or dims")
        self.inputs = {k: self.input(k, v) for k, v in doc["inputs"].items()}
        self.n_user = sum(kind == "input" for kind, _ in self.inputs.values())
        if sorted(t for kind, t in self.inputs.values() if kind == "input") != list(range(self.n_user)):
            raise self.bad("the user inputs' positions are not 0, 1, ...")
        self.dims = {k: self.dim(k, v) for k, v in doc["dims"].items()}
        self.graph = fx.Graph()
        self.graph._recorded = True
        for entry in doc["nodes"]:
            self.node(entry)
        self.check()

    def bad(self, why):
        return self.error(f"{self.name} is not a valid webtorch graph file: {why}")

    def integer(self, v):
        if type(v) is not int or not -_INT64 <= v < _INT64:
            raise self.bad(f"{v!r:.60} is not an int64")
        return v

    def input(self, k, v):
        if type(v) is not list or len(v) != 2 or v[0] not in _KINDS:
            raise self.bad(f"bad input {k!r:.60}: {v!r:.100}")
        kind, target = v
        if (type(target), kind == "input") not in ((int, True), (str, False)) or \
                kind != "input" and target not in self.tensors:
            raise self.bad(f"input {k!r:.60} refers to {target!r:.60}, which the file does not hold")
        return kind, target

    def dim(self, k, v):
        if type(v) is not list or len(v) != 2 or not 0 <= self.integer(v[0]) < self.n_user or self.integer(v[1]) < 0:
            raise self.bad(f"bad dynamic dim {k!r:.60}: {v!r:.100}")
        return tuple(v)

    def node(self, entry):
        if type(entry) is not list or len(entry) != 6:
            raise self.bad(f"bad node {entry!r:.100}")
        name, op, target, args, kwargs, val = entry
        if type(name) is not str or name in self.nodes:
            raise self.bad(f"the node name {name!r:.60} is not a string or is used twice")
        if self.nodes and self.graph.nodes[-1].op == "output":
            raise self.bad("nodes follow the output")
        if op == "call_function":
            fn = _ops().get(tuple(target)) if type(target) is list and len(target) == 2 and \
                all(type(t) is str for t in target) else None
            if fn is None:
                raise self.bad(f"node {name!r:.60} calls {target!r:.100}, which is not a webtorch op")
            target = fn
        elif op not in ("placeholder", "get_attr", "output") or type(target) is not str:
            raise self.bad(f"node {name!r:.60} is a {op!r:.60} of {target!r:.60}")
        args, kwargs, val = self.value(args), self.value(kwargs), self.value(val)
        if type(args) is not tuple or type(kwargs) is not dict or not all(type(k) is str for k in kwargs):
            raise self.bad(f"node {name!r:.60} has malformed arguments")
        if op == "call_function":
            try:
                self.signature(target).bind(*args, **kwargs)
            except TypeError as e:
                raise self.bad(f"node {name!r:.60} calls {fx.target_name(target)} with arguments it does not "
                               f"take ({e})") from None
        elif kwargs or len(args) != (op == "output"):  # output(value); placeholder and get_attr take none
            raise self.bad(f"the {op} node {name!r:.60} has arguments")
        if op == "placeholder" and (name not in self.inputs or type(val) is not fx.TensorMeta):
            raise self.bad(f"placeholder {name!r:.60} is no input of the graph or has no tensor meta")
        if op == "get_attr" and "_constants." + target not in self.tensors:
            raise self.bad(f"the constant {target!r:.60} is not in the file")
        self.nodes[name] = self.graph.create_node(op, target, args, kwargs, name=name,
                                                  meta={} if val is None else {"val": val})

    def signature(self, fn):
        if fn not in self.sigs:
            self.sigs[fn] = inspect.signature(getattr(fn, "_impl", fn))
        return self.sigs[fn]

    def value(self, v, depth=0):
        if depth > _MAX_NESTING:
            raise self.bad(f"arguments nest deeper than {_MAX_NESTING}")
        if v is None or type(v) in (bool, float, str):
            return v
        if type(v) is int:
            return self.integer(v)
        if type(v) is list:
            return [self.value(x, depth + 1) for x in v]
        if type(v) is not dict or len(v) != 1:
            raise self.bad(f"unexpected value {v!r:.100}")
        (k, x), = v.items()
        if k in ("node", "sym", "meta"):
            return self.reference(k, x, v, depth)
        return self.literal(k, x, v, depth)

    def reference(self, k, x, v, depth):
        """{"node": name}, {"sym": [[term, ...], constant]} or {"meta": [value, meta]}: what refers to the graph."""
        if k == "node" and type(x) is str and x in self.nodes:
            return self.nodes[x]
        if k == "node":
            raise self.bad(f"an argument refers to node {x!r:.60}, which no earlier node defines")
        if k == "sym" and type(x) is list and len(x) == 2 and type(x[0]) is list:
            return fx.Sym({self.sym_term(t): self.integer(t[1]) for t in x[0]}, self.integer(x[1]))
        if k == "meta" and type(x) is list and len(x) == 2:
            return self.meta(self.value(x[0], depth + 1), x[1])
        raise self.bad(f"unexpected value {v!r:.100}")

    def literal(self, k, x, v, depth):
        if k == "dtype" and type(x) is str and x in _dtype.BY_NAME:
            return _dtype.BY_NAME[x]
        if k == "tuple" and type(x) is list:
            return tuple(self.value(i, depth + 1) for i in x)
        if k == "dict" and type(x) is list and all(type(p) is list and len(p) == 2 for p in x):
            return {self.key(a): self.value(b, depth + 1) for a, b in x}
        if k == "slice" and type(x) is list and len(x) == 3:
            return slice(*(self.value(i, depth + 1) for i in x))
        if k == "ellipsis" and x == 1:
            return Ellipsis
        if k == "device" and type(x) is str:
            try:
                return device(x)
            except (RuntimeError, ValueError, TypeError):
                pass
        raise self.bad(f"unexpected value {v!r:.100}")

    def key(self, k):
        if k is not None and type(k) not in (bool, int, float, str):
            raise self.bad(f"a dict key {k!r:.60} is not a scalar")
        return k

    def sym_term(self, t):
        if type(t) is not list or len(t) != 2 or type(t[0]) is not list or \
                not all(type(s) is str and s in self.dims for s in t[0]):
            raise self.bad(f"a size refers to {t!r:.100}, which is not the file's dynamic dims")
        return tuple(t[0])

    def meta(self, shape, dtype):
        if type(shape) is not tuple or type(dtype) is not str or dtype not in _dtype.BY_NAME or \
                not all(type(s) is fx.Sym or type(s) is int and s >= 0 for s in shape):
            raise self.bad(f"bad tensor meta {shape!r:.100} {dtype!r:.20}")
        if math.prod(s for s in shape if type(s) is int) > _MAX_NUMEL:
            raise self.bad(f"a tensor of size {list(shape)!r:.100} has more than 2**31 elements")
        return fx.TensorMeta(shape, _dtype.BY_NAME[dtype])

    def check(self):
        """The whole graph: one output, last; the inputs are its placeholders; the dims their dims."""
        nodes = self.graph.nodes
        if not nodes or nodes[-1].op != "output":
            raise self.bad("the graph does not end with its output")
        placeholders = {n.name: n for n in nodes if n.op == "placeholder"}
        if placeholders.keys() != self.inputs.keys():
            raise self.bad("the graph's inputs are not its placeholders")
        users = {t: placeholders[k] for k, (kind, t) in self.inputs.items() if kind == "input"}
        if not all(d < len(users[p].meta["val"].shape) for p, d in self.dims.values()):
            raise self.bad("a dynamic dim lies outside its input")

    def module(self):
        g, tensors = self.graph, self.tensors
        g.constants = {n.target: tensors["_constants." + n.target] for n in g.nodes if n.op == "get_attr"}
        try:
            state = {t: Parameter(tensors[t]) if kind == "parameter" else tensors[t]
                     for kind, t in self.inputs.values() if kind != "input"}
            return TracedModule(g, state, self.inputs, dims=self.dims)
        except (KeyError, TypeError, RuntimeError) as e:  # a name no module takes ("", "a..b", "forward"), ...
            raise self.bad(f"its tensors do not make a module ({type(e).__name__}: {e})") from None
