"""torch.export: trace a module into an ExportedProgram (an fx graph with its parameters lifted to
inputs, a graph signature, and `module()` that runs it).

Dynamic dimensions: the module is traced at the example sizes, once more for every set of dynamic
dims made one larger (1 more trace for one dim, 3 for two), and once with all of them changed. The
graphs must match op for op; an integer that changes between them (a view's size, a shape) becomes
a `Sym`, the polynomial linear in each dim through those values (`batch`, `batch*seq`, `2*seq + 1`),
and the last trace checks it, so a size the graph cannot express raises instead of baking in a number.
"""
import dataclasses
import inspect
import itertools

from .. import _graph_file, fx
from .._tensor import Tensor
from ..ops._creation import arange, zeros
from ..utils import _pytree as pytree
from ._draft_export import DraftExportReport, FailureReport, FailureType, _Collector
from ._module_calls import ModuleCalls
from ._tree_io import TreeModule, _Call, _has_dataclass, flat_call, register_dataclass
from .decomp_utils import CustomDecompTable
from .dynamic_shapes import AdditionalInputs, Constraint, Dim, ShapesCollection, _combine_args, _dim_name, dims
from .unflatten import FlatArgsAdapter, UnflattenedModule, unflatten

__all__ = ["export", "ExportedProgram", "ExportGraphSignature", "Dim", "save", "load", "dims",
           "ExportBackwardSignature", "ModuleCallEntry", "ModuleCallSignature", "AdditionalInputs", "Constraint",
           "CustomDecompTable", "default_decompositions", "draft_export", "FlatArgsAdapter", "register_dataclass",
           "ShapesCollection", "unflatten", "UnflattenedModule"]


class InputSpec:
    def __init__(self, kind, name, target):
        self.kind, self.name, self.target = kind, name, target

    def __repr__(self):
        return f"InputSpec(kind={self.kind}, arg={self.name}, target={self.target!r})"


class ExportGraphSignature:
    """Which placeholders are parameters, buffers, constants and user inputs; which outputs are the user's."""

    def __init__(self, inputs, outputs):
        self.input_specs = [InputSpec({"input": "USER_INPUT", "parameter": "PARAMETER", "buffer": "BUFFER",
                                       "constant": "BUFFER"}[kind], name, None if kind == "input" else target)
                            for name, (kind, target) in inputs.items()]
        self.user_outputs = list(outputs)

    def _select(self, kind):
        return {s.name: s.target for s in self.input_specs if s.kind == kind}

    @property
    def parameters(self):
        return list(self._select("PARAMETER").values())

    @property
    def buffers(self):
        return list(self._select("BUFFER").values())

    @property
    def user_inputs(self):
        return list(self._select("USER_INPUT"))

    @property
    def inputs_to_parameters(self):
        return self._select("PARAMETER")

    @property
    def inputs_to_buffers(self):
        return self._select("BUFFER")

    def __str__(self):
        lines = ["# inputs"]
        for s in self.input_specs:
            lines.append(f"{s.name}: {s.kind}" + (f" target={s.target!r}" if s.target else ""))
        lines += ["", "# outputs"] + [f"{o}: USER_OUTPUT" for o in self.user_outputs]
        return "\n".join(lines)


class ExportedProgram:
    def __init__(self, graph, inputs, tensors, dims, example_inputs, tree=None):
        self.graph_module = fx.LiftedGraphModule(graph, tensors, inputs, dims=dims)
        self.graph = graph
        out = graph.nodes[-1].args[0]
        outs = [n.name for n in (out if isinstance(out, (tuple, list)) else (out,)) if isinstance(n, fx.Node)]
        self.graph_signature = ExportGraphSignature(inputs, outs)
        self.state_dict = {t: tensors[t] for kind, t in inputs.values() if kind in ("parameter", "buffer")}
        self.constants = dict(graph.constants)
        self.example_inputs = example_inputs
        self.range_constraints = {s: (2, None) for s in dims}
        self._inputs, self._tensors, self._dims = inputs, tensors, dims
        self._tree = tree  # (forward's signature, output TreeSpec) when inputs or outputs hold dataclasses
        self.module_call_graph = [ModuleCallEntry("")]
        self._module_paths, self._module_calls = [], {}  # the exported module's submodules; their calls' nodes

    def module(self):
        """A module that runs the graph (GraphModule); it checks its inputs' shapes as the export saw them."""
        if self._tree is not None:
            return TreeModule(self.graph, self._tensors, self._inputs, self._dims, *self._tree)
        return fx.LiftedGraphModule(self.graph, self._tensors, self._inputs, dims=self._dims)

    def run_decompositions(self, decomp_table=None, decompose_custom_triton_ops=False):
        """The program traced again with the ops in decomp_table (default: default_decompositions(), every op)
        decomposed into the ops they are written in; an op left out of the table stays one node."""
        table = default_decompositions() if decomp_table is None else decomp_table
        custom = [op for op, fn in table.items() if fn is not op]
        if custom:
            raise NotImplementedError(f"run_decompositions: a decomposition other than the op's own ({custom[0]}) "
                                      "is not supported here: webtorch decomposes an op into the ops it is written in")
        keep = set(table)
        return self._retrace(lambda fn: fn not in keep)

    def _retrace(self, leaf):
        """The program traced again through its own graph, recording at the level `leaf` chooses."""
        flat = fx.LiftedGraphModule(self.graph, self._tensors, self._inputs, dims=self._dims)
        user = [n for n in self.graph.nodes if n.op == "placeholder" and self._inputs[n.name][0] == "input"]
        call = _Call(flat, [n.name for n in user], lambda *ts: flat(*ts), skip_buffers=self.graph.constants)
        tensors = self._example_tensors(user)
        dyn = {(i, d): _dim_name(s) for i, n in enumerate(user) for d, s in enumerate(n.meta["val"].shape)
               if _dim_name(s)}
        graph, inputs, state = fx.trace_module(call, tensors, {}, leaf)
        dims = {}
        if dyn:
            graph, dims = _generalize(call, tensors, {}, dyn, graph, leaf, None)
        ep = ExportedProgram(graph, inputs, state, dims, self.example_inputs, self._tree)
        ep._module_paths = self._module_paths
        return ep

    def _example_tensors(self, user):
        if self.example_inputs is not None:
            args, kwargs = self.example_inputs
            if self._tree is None:
                return tuple(fx.flatten_inputs(args, kwargs))
            leaves = pytree.tree_leaves(dict(self._tree[0].bind(*args, **kwargs).arguments))
            return tuple(t for t in leaves if isinstance(t, Tensor))
        sizes = {s: 3 + i for i, s in enumerate(self._dims)}  # a loaded program: zeros of its input shapes
        return tuple(zeros([d.eval(sizes) if isinstance(d, fx.Sym) else d for d in n.meta["val"].shape],
                           dtype=n.meta["val"].dtype) for n in user)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Unable to call ExportedProgram directly. You should use `exported_program.module()` "
                           "instead.")

    def __str__(self):
        code = _forward_code(self.graph)
        ranges = ", ".join(f"{s}: VR[2, int_oo]" for s in self._dims)
        return (f"ExportedProgram:\n{_indent(code, 4)}\n\nGraph signature:\n{_indent(str(self.graph_signature), 4)}"
                f"\nRange constraints: {{{ranges}}}\n")

    __repr__ = __str__


def _indent(text, n):
    return "\n".join((" " * n + line) if line else line for line in text.split("\n"))


def _forward_code(graph):
    """The graph as the forward of a GraphModule class, as PyTorch prints an ExportedProgram."""
    ph = [f'{n.name}: "{n.meta["val"]}"' for n in graph.nodes if n.op == "placeholder"]
    lines = []
    for n in graph.nodes:
        if n.op == "call_function" or n.op == "get_attr":
            lines.append(n.format_node()[1:].replace(" = ", " = ", 1))
        elif n.op == "output":
            out = n.args[0]
            lines.append("return " + fx._fmt(out if isinstance(out, tuple) else (out,)))
    body = "\n".join("        " + line.replace("%", "") for line in lines)
    return (f"class GraphModule(torch.nn.Module):\n    def forward(self, {', '.join(ph)}):\n{body}")


def export(mod, args, kwargs=None, *, dynamic_shapes=None, strict=False, preserve_module_call_signature=(),
           prefer_deferred_runtime_asserts_over_guards=False):
    """torch.export.export: trace `mod(*args, **kwargs)` into an ExportedProgram."""
    if not isinstance(args, tuple):
        raise ValueError(f"Expecting `args` to be a tuple of example positional inputs, got {type(args)}")
    _exporting[0] = True
    try:
        ep = _export(mod, args, kwargs or {}, dynamic_shapes)
    finally:
        _exporting[0] = False
    if isinstance(dynamic_shapes, AdditionalInputs):
        dynamic_shapes.verify(ep)
    return ep


def draft_export(mod, args, kwargs=None, *, dynamic_shapes=None, preserve_module_call_signature=(), strict=False,
                 prefer_deferred_runtime_asserts_over_guards=False):
    """torch.export.draft_export: export that reports what export would refuse instead of raising (ep._report):
    a traced value read as a Python number keeps this example's branch; dynamic dims the graph cannot express
    are specialized to the example's sizes."""
    if not isinstance(args, tuple):
        raise ValueError(f"Expecting `args` to be a tuple of example positional inputs, got {type(args)}")
    reads = _Collector()
    failures = []
    _exporting[0] = True
    try:
        try:
            ep = _export(mod, args, kwargs or {}, dynamic_shapes, on_value_read=reads)
        except RuntimeError as e:
            if not dynamic_shapes or "graph cannot express" not in str(e):
                raise
            failures.append(FailureReport(FailureType.GUARD_ADDED, {"expr": str(e), "new_dynamic_shapes": None}))
            reads = _Collector()
            ep = _export(mod, args, kwargs or {}, None, on_value_read=reads)
    finally:
        _exporting[0] = False
    ep._report = DraftExportReport(list(reads.failures.values()) + failures)
    return ep


def default_decompositions():
    """torch.export.default_decompositions: the table run_decompositions() uses (every op decomposes)."""
    return CustomDecompTable()


_exporting = [False]  # torch.compiler.is_exporting(): export() is tracing


def _export(mod, args, kwargs, dynamic_shapes, leaf=lambda fn: True, on_value_read=None):
    call = flat_call(mod, args, kwargs) if _has_dataclass((args, kwargs), "input") else None
    ep = _trace_program(mod, args, kwargs, dynamic_shapes, call, leaf, on_value_read)
    if call is None and _has_dataclass(ep.graph.nodes[-1].args[0], "output"):
        ep = _trace_program(mod, args, kwargs, dynamic_shapes, flat_call(mod, args, kwargs), leaf, on_value_read)
    return ep


def _trace_program(mod, args, kwargs, dynamic_shapes, call, leaf, on_value_read):
    """The ExportedProgram of mod(*args, **kwargs); call: flat_call's result when dataclasses are flattened."""
    if call is None:
        target, t_args, t_kwargs = mod, args, kwargs
        flat = fx.flatten_inputs(args, kwargs)
    else:
        target, t_args, t_kwargs = call[0], call[1], {}
        flat = list(call[1])
    dyn = _dynamic_dims(mod, args, kwargs, dynamic_shapes, flat)
    with ModuleCalls(mod) as calls:
        graph, inputs, tensors = fx.trace_module(target, t_args, t_kwargs, leaf, on_value_read)
    dims = {}
    if dyn:
        try:
            graph, dims = _generalize(target, t_args, t_kwargs, dyn, graph, leaf, on_value_read)
        except RuntimeError:
            # Dim.DYNAMIC / Dim.AUTO dims of one example size that the program needs equal (x + y) are one dim
            merged = _merge_auto_dims(dyn, flat)
            if merged == dyn:
                raise
            with ModuleCalls(mod) as calls:
                graph = fx.trace_module(target, t_args, t_kwargs, leaf, on_value_read)[0]
            graph, dims = _generalize(target, t_args, t_kwargs, merged, graph, leaf, on_value_read)
    tree = None if call is None else (call[2], call[3][0])
    ep = ExportedProgram(graph, inputs, tensors, dims, (args, kwargs), tree)
    ep._module_calls = calls.calls
    ep._module_paths = [p for p, _ in mod.named_modules()][1:] if hasattr(mod, "named_modules") else []
    return ep


def _dynamic_dims(mod, args, kwargs, dynamic_shapes, flat):
    """{(flat input index, dim): symbol name} from dynamic_shapes (a dict by argument name or a tuple, entries
    mirroring the inputs' nesting; or a ShapesCollection / AdditionalInputs)."""
    if isinstance(dynamic_shapes, (ShapesCollection, AdditionalInputs)):
        dynamic_shapes = dynamic_shapes.dynamic_shapes(mod, args, kwargs)
    if not dynamic_shapes:
        return {}
    if isinstance(dynamic_shapes, dict):
        bound = _combine_args(mod, args, kwargs)
        unknown = [k for k in dynamic_shapes if k not in bound]
        if unknown:
            raise ValueError(f"dynamic_shapes names {unknown} that are not arguments of forward {list(bound)}")
        pairs = [(bound[k], spec) for k, spec in dynamic_shapes.items()]
    else:
        pairs = list(zip(list(args) + [kwargs[k] for k in kwargs], dynamic_shapes))
    out, auto = {}, [0]
    for value, spec in pairs:
        _spec_dims(value, spec, flat, out, auto)
    return out


def _merge_auto_dims(dyn, flat):
    """dyn with the automatic dims (s0, s1...) of equal example size merged into the first of them."""
    first = {}
    out = {}
    for (k, d), name in dyn.items():
        if name[:1] == "s" and name[1:].isdigit():
            name = first.setdefault(flat[k].shape[d], name)
        out[(k, d)] = name
    return out


def _spec_dims(value, spec, flat, out, auto):
    """Adds the dynamic dims `spec` gives for `value` (a tensor, or a tuple/list/dict holding some) to out."""
    if spec is None:
        return
    if isinstance(value, (tuple, list, dict)) and not isinstance(value, Tensor):
        keys = value.keys() if isinstance(value, dict) else range(len(value))
        specs = spec if isinstance(spec, dict) else dict(enumerate(spec))
        for k in keys:
            _spec_dims(value[k], specs.get(k), flat, out, auto)
        return
    if not isinstance(value, Tensor):
        if spec in (Dim.STATIC,) or isinstance(spec, int):
            return
        raise ValueError("dynamic_shapes gives dims for an argument that is not a tensor (webtorch's export "
                         "specializes Python numbers)")
    idx = next((i for i, t in enumerate(flat) if t is value), None)
    if idx is None:
        raise ValueError("dynamic_shapes gives dims for a tensor that is not among the inputs")
    for d, dim in (spec.items() if isinstance(spec, dict) else enumerate(spec)):
        if dim is None or dim == Dim.STATIC or isinstance(dim, int):
            continue
        if isinstance(dim, Dim) and dim not in (Dim.AUTO, Dim.DYNAMIC):
            name = dim.__name__
        elif isinstance(dim, str):
            name = dim
        else:
            name, auto[0] = f"s{auto[0]}", auto[0] + 1
        d = d + value.dim() if d < 0 else d
        if value.shape[d] < 2:
            raise ValueError(f"dynamic dim {name} (dim {d} of input {idx}) has example size {value.shape[d]}: "
                             "give an example of size 2 or more (sizes 0 and 1 are specialized)")
        out[(idx, d)] = name


def _resized(args, kwargs, dyn, sizes):
    """args/kwargs with each dynamic dim grown to sizes[sym] (repeating the example's own entries)."""
    count = [0]

    def grow(x):
        if not isinstance(x, Tensor):
            return x
        i = count[0]
        count[0] += 1
        for (k, d), s in dyn.items():
            if k == i:
                idx = arange(sizes[s], device=x.device) % x.shape[d]
                x = x.index_select(d, idx)
        return x
    a = fx.map_aggregate(list(args), grow)
    kw = {k: fx.map_aggregate(kwargs[k], grow) for k in sorted(kwargs)}
    return tuple(a), kw


def _generalize(mod, args, kwargs, dyn, graph, leaf, on_value_read):
    flat = fx.flatten_inputs(args, kwargs)
    base = {}
    for (k, d), s in dyn.items():
        if base.setdefault(s, flat[k].shape[d]) != flat[k].shape[d]:
            raise ValueError(f"dynamic dim {s} has two different example sizes")
    syms = list(base)
    subsets = [c for k in range(1, len(syms) + 1) for c in itertools.combinations(syms, k)]
    traces = []
    for subset in subsets:  # each set of dims one larger: fits any polynomial linear in each dim
        sizes = {s: base[s] + (s in subset) for s in syms}
        traces.append(fx.trace_module(mod, *_resized(args, kwargs, dyn, sizes), leaf, on_value_read)[0])
    delta = {s: 2 + i for i, s in enumerate(syms)}
    check = fx.trace_module(mod, *_resized(args, kwargs, dyn, {s: base[s] + delta[s] for s in syms}), leaf,
                            on_value_read)[0]
    traces.append(check)
    where = {}
    for (k, d), s in dyn.items():
        where.setdefault(s, (k, d))
    u = _Unifier(syms, subsets, base, delta)
    for nodes in zip(graph.nodes, *[g.nodes for g in traces]):
        u.node(nodes)
    if not all(len(g.nodes) == len(graph.nodes) for g in traces):
        raise u.error("the graph has a different number of ops")
    for name, t in graph.constants.items():
        others = [g.constants.get(name) for g in traces]
        if any(o is None or tuple(o.shape) != tuple(t.shape) or not bool((o == t).all()) for o in others):
            raise u.error(f"the tensor constant {name} made inside forward changes")
    return graph, where


class _Unifier:
    """Merges the traces of the generalization into the base graph (see the module doc)."""

    def __init__(self, syms, subsets, base, delta):
        self.syms, self.subsets, self.base, self.delta = syms, subsets, base, delta

    def error(self, what):
        return RuntimeError(f"torch.export: {what} when a dynamic dim ({', '.join(self.syms)}) changes size: the "
                            "program depends on the size in a way the graph cannot express (control flow on a "
                            "shape?); export with static shapes")

    def node(self, nodes):
        n0 = nodes[0]
        if any(n.op != n0.op or n.target is not n0.target and n.op == "call_function" for n in nodes):
            raise self.error(f"op {n0.name} differs")
        n0.args = self.value([n.args for n in nodes])
        n0.kwargs = self.value([n.kwargs for n in nodes])
        if "val" in n0.meta:
            n0.meta["val"] = self.value([n.meta["val"] for n in nodes])

    def value(self, vs):
        v0, t = vs[0], type(vs[0])
        if any(type(v) is not t for v in vs):
            raise self.error(f"an argument's type changes ({t.__name__})")
        if t is fx.Node:
            if any(v.name != v0.name for v in vs):
                raise self.error(f"the graph's wiring changes at {v0.name}")
            return v0
        if t is int:
            return self.integer(vs)
        if t is fx.TensorMeta:
            if any(v.dtype is not v0.dtype for v in vs):
                raise self.error("a dtype changes")
            return fx.TensorMeta(self.value([v.shape for v in vs]), v0.dtype)
        if t in (tuple, list) or (isinstance(v0, tuple) and hasattr(t, "_fields")):
            if any(len(v) != len(v0) for v in vs):
                raise self.error("the length of an argument changes")
            items = [self.value(list(col)) for col in zip(*vs)]
            return t(*items) if hasattr(t, "_fields") else t(items)
        if t is dict:
            if any(v.keys() != v0.keys() for v in vs):
                raise self.error("an op's keywords change")
            return {k: self.value([v[k] for v in vs]) for k in v0}
        if t is slice:
            return slice(*(self.value([getattr(v, a) for v in vs]) for a in ("start", "stop", "step")))
        if any(not (v is v0 or v == v0) for v in vs):
            raise self.error(f"the value {v0!r} changes")
        return v0

    def integer(self, vs):
        """The polynomial (linear in each dim) through the traced values, checked on the last trace."""
        v = dict(zip([()] + self.subsets, vs[:-1]))
        poly = {(): v[()]}
        for m in self.subsets:
            # coefficient of prod(dim - base) over m: a finite difference; then expanded in the dims
            c = sum((-1) ** (len(m) - len(s)) * v[s] for s in _subsets(m))
            for t in _subsets(m) if c else ():
                k = c
                for s in m:
                    if s not in t:
                        k *= -self.base[s]
                poly[t] = poly.get(t, 0) + k
        const = poly.pop(())
        poly = {t: c for t, c in poly.items() if c}
        sym = fx.Sym(poly, const)
        if sym.eval({s: self.base[s] + self.delta[s] for s in self.syms}) != vs[-1]:
            raise self.error(f"the integer {v[()]} changes in a way that is not linear in each dim")
        return sym if poly else const


def _subsets(m):
    return [c for k in range(len(m) + 1) for c in itertools.combinations(m, k)]


def save(ep, f, **kwargs):
    """torch.export.save: the program's graph and tensors (webtorch's own format, as torch.jit.save's)."""
    _graph_file._save_graph(ep.graph_module, f)


def load(f, **kwargs):
    """torch.export.load: an ExportedProgram saved by torch.export.save."""
    gm = _graph_file.load(f)
    tensors = {t: fx._get_path(gm, t) for kind, t in gm._inputs.values() if kind != "input"}
    return ExportedProgram(gm.graph, gm._inputs, tensors, gm._dims, None)


@dataclasses.dataclass
class ExportBackwardSignature:
    gradients_to_parameters: dict
    gradients_to_user_inputs: dict
    loss_output: str


@dataclasses.dataclass
class ModuleCallSignature:
    inputs: list
    outputs: list
    in_spec: object
    out_spec: object
    forward_arg_names: list = None


@dataclasses.dataclass
class ModuleCallEntry:
    fqn: str
    signature: ModuleCallSignature = None
