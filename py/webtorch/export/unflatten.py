"""torch.export.unflatten: an ExportedProgram as a module with the original module hierarchy (`unflat.fc1`,
`unflat.encoder.layers[0]` hold the parameters and buffers the original submodules held, so state_dict keys and
attribute paths match), whose call runs the exported graph. A submodule the program called is an
InterpreterModule running the part of the graph that call recorded (`unflat.encoder(x)` runs alone); one it
did not call is a plain Module, as in PyTorch."""
import abc

from .. import fx
from .._tensor import Tensor
from ..nn import Module
from ..utils import _pytree as pytree
from .dynamic_shapes import _dim_name

__all__ = ["FlatArgsAdapter", "InterpreterModule", "UnflattenedModule", "unflatten"]


class FlatArgsAdapter(abc.ABC):
    """Adapts the flat inputs of a call to the ones the exported program takes (when they differ)."""

    @abc.abstractmethod
    def adapt(self, target_spec, input_spec, input_args, metadata=None, obj=None):
        """NOTE: This adapter may mutate given ``input_args_with_path``."""

    def get_flat_arg_paths(self):
        """Returns a list of paths that are used to access the flat args."""
        return []


class _NotStandalone(Exception):
    pass


def _subgraph(ep, call):
    """(graph, input names, {placeholder: state path}) running one recorded submodule call on its own; None when
    the call used a value computed outside it (then it cannot run alone)."""
    nodes, ins, outs = call
    if any(n is None for n in ins):
        return None
    g = fx.Graph()
    vmap = {n: g.placeholder(n.name, meta=dict(n.meta)) for n in dict.fromkeys(ins)}
    state = {}

    def arg(x):
        if x not in vmap:
            kind, target = ep._inputs.get(x.name, (None, None)) if x.op == "placeholder" else (None, None)
            if kind in ("parameter", "buffer", "constant"):
                vmap[x], state[x.name] = g.placeholder(x.name, meta=dict(x.meta)), target
            elif x.op == "get_attr":
                vmap[x] = g.node_copy(x)
                g.constants[x.target] = ep.graph.constants[x.target]
            else:
                raise _NotStandalone
        return vmap[x]
    try:
        for n in nodes:
            if not n._erased:
                vmap[n] = g.node_copy(n, arg)
        g.output(fx.map_arg(outs, arg))
    except _NotStandalone:
        return None
    return g, [n.name for n in dict.fromkeys(ins)], state


class InterpreterModule(Module):
    """A submodule of an unflattened program: its parameters and buffers, and the graph of its recorded call."""

    def __init__(self, root=None, sub=None):
        super().__init__()
        object.__setattr__(self, "_root", root)  # where the state paths start (not a submodule)
        object.__setattr__(self, "_sub", sub)

    def forward(self, *args, **kwargs):
        if self._sub is None:
            raise NotImplementedError("this submodule's call used values computed outside it in the exported program "
                                      "(or was not recorded): call the UnflattenedModule itself")
        graph, names, state = self._sub
        flat = fx.flatten_inputs(args, kwargs)
        if len(flat) != len(names):
            raise TypeError(f"forward() expected {len(names)} tensor inputs but got {len(flat)}")
        inputs = dict(zip(names, flat))
        inputs.update({name: fx._get_path(self._root, path) for name, path in state.items()})
        dims = {}
        for n in graph.nodes:
            if n.op == "placeholder" and n.name in names:
                dims.update({_dim_name(s): inputs[n.name].shape[d] for d, s in enumerate(n.meta["val"].shape)
                             if _dim_name(s)})
        consts = {k: getattr(self._root, k) for k in graph.constants}  # the root's buffers (moved by .to())
        return fx.GraphRunner(graph, consts).run(inputs, dims)


class UnflattenedModule(Module):
    def __init__(self, export_module, flat_args_adapter=None):
        super().__init__()
        ep = export_module
        self.graph = ep.graph
        self.graph_signature = ep.graph_signature
        self.module_call_graph = ep.module_call_graph
        self.range_constraints = ep.range_constraints
        self.flat_args_adapter = flat_args_adapter
        self.adapted = False
        for fqn in sorted(ep._module_paths, key=lambda p: p.count(".")):
            call = ep._module_calls.get(fqn)
            self._submodule(fqn, InterpreterModule(self, call and _subgraph(ep, call)) if call else Module())
        for kind, target in ep._inputs.values():
            if kind == "input":
                continue
            *mods, leaf = target.split(".")
            owner = self._submodule(".".join(mods))
            if kind == "parameter":
                owner.register_parameter(leaf, ep._tensors[target])
            else:
                owner.register_buffer(leaf, ep._tensors[target], persistent=kind == "buffer")
        for name, t in ep.graph.constants.items():
            self.register_buffer(name, t, persistent=False)
        self._ep = ep
        self._run = None  # (the tensors it was built on, the LiftedGraphModule running the graph)

    def _submodule(self, fqn, new=None):
        m, names = self, fqn.split(".") if fqn else []
        for i, name in enumerate(names):
            if name not in m._modules:
                m.add_module(name, new if new is not None and i == len(names) - 1 else Module())
            m = m._modules[name]
        return m

    def _runner(self):
        ep = self._ep
        tensors = {t: fx._get_path(self, t) for kind, t in ep._inputs.values() if kind != "input"}
        consts = {k: getattr(self, k) for k in ep.graph.constants}
        if self._run is None or any(self._run[0].get(k) is not v for k, v in {**tensors, **consts}.items()):
            gm = fx.LiftedGraphModule(ep.graph, tensors, ep._inputs, dims=ep._dims)
            for k, v in consts.items():
                setattr(gm, k, v)
            object.__setattr__(self, "_run", ({**tensors, **consts}, gm))  # not a submodule: shares these tensors
        return self._run[1]

    def forward(self, *args, **kwargs):
        tree = self._ep._tree
        if tree is None:
            flat = fx.flatten_inputs(args, kwargs)
        else:
            leaves = pytree.tree_leaves(dict(tree[0].bind(*args, **kwargs).arguments))
            flat = [t for t in leaves if isinstance(t, Tensor)]
        runner = self._runner()
        if len(flat) != runner._n_user and self.flat_args_adapter is not None:
            _, input_spec = pytree.tree_flatten((args, kwargs))
            flat = self.flat_args_adapter.adapt(target_spec=None, input_spec=input_spec, input_args=flat)
            self.adapted = True
        out = runner(*flat)
        return out if tree is None or tree[1] is None else pytree.tree_unflatten(list(out), tree[1])


def unflatten(module, flat_args_adapter=None):
    """torch.export.unflatten: the ExportedProgram `module` as an UnflattenedModule (see the module doc)."""
    return UnflattenedModule(module, flat_args_adapter)
