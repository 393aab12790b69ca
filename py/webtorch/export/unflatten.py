"""torch.export.unflatten: an ExportedProgram as a module with the original module hierarchy (`unflat.fc1`,
`unflat.encoder.layers[0]` hold the parameters and buffers the original submodules held, so state_dict keys and
attribute paths match). A submodule the program called is an InterpreterModule running the nodes that call
recorded (`unflat.encoder(x)` runs alone), and each module calls its children in their place, so a module
swapped in (`unflat.encoder = other`) takes effect, as in PyTorch; one it did not call is a plain Module."""
import abc

from .. import fx
from .._tensor import Tensor
from ..fx.node import mutates
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


def _live(call):
    return [n for n in call[0] if not n._erased]


def _replaceable(call):
    """Whether a recorded call can be replaced by calling the module: its arguments are traced values and
    nothing after it uses a value made inside it other than its outputs."""
    live = _live(call)
    if not live or any(i is None for i in call[1]):
        return False
    inside, outs = set(live), set(_nodes(call[2]))
    return all(u in inside or n in outs for n in live for u in n.users)


def _nodes(tree):
    found = []
    fx.map_aggregate(tree, lambda x: found.append(x) if isinstance(x, fx.Node) else None)
    return found


def _bind(tree, value, env):
    """env[node] = the matching part of value, for each node in tree (a call's output structure)."""
    if isinstance(tree, fx.Node):
        env[tree.name] = value
    elif isinstance(tree, (tuple, list)):
        for t, v in zip(tree, value):
            _bind(t, v, env)
    elif isinstance(tree, dict):
        for k, t in tree.items():
            _bind(t, value[k], env)


def _run(owner, prefix, nodes, env, dims):
    """Run nodes (of the exported graph) in env, calling owner's child modules for the calls they recorded;
    returns the output node's value (None for a submodule's range)."""
    def load(x):
        if isinstance(x, fx.Node):
            if x.name not in env:
                raise NotImplementedError(f"{prefix or 'the module'} uses {x.name}, a value computed outside its "
                                          "call in the exported program: it cannot run on its own")
            return env[x.name]
        return x.eval(dims) if isinstance(x, fx.Sym) else x
    starts, skip = {}, set()
    for fqn, call in owner._calls.items():
        parent, _, name = fqn.rpartition(".")
        if parent == prefix and name in owner._modules and _replaceable(call):
            starts[_live(call)[0]] = (name, call)
    for n in nodes:
        if n._erased or n in skip or n.op in ("placeholder", "get_attr"):
            continue
        if n in starts:
            name, call = starts[n]
            skip.update(_live(call))
            args, kwargs = fx.map_aggregate(call[3], load)
            _bind(call[2], getattr(owner, name)(*args, **kwargs), env)
        elif n.op == "output":
            return fx.map_aggregate(n.args[0], load)
        else:
            a, kw = fx.map_aggregate(n.args, load), fx.map_aggregate(n.kwargs, load)
            r = n.target(*a, **kw)
            env[n.name] = a[0] if r is None and mutates(n.target) else r
    return None


class InterpreterModule(Module):
    """A submodule of an unflattened program: its parameters and buffers, and the nodes of its recorded call."""

    def __init__(self, root=None, fqn="", call=None):
        super().__init__()
        for k, v in (("_root", root), ("_fqn", fqn), ("_call", call)):
            object.__setattr__(self, k, v)  # the root is no submodule of its children

    @property
    def _calls(self):
        return self._root._ep._module_calls

    def forward(self, *args, **kwargs):
        if self._call is None or any(i is None for i in self._call[1]):
            raise NotImplementedError("this submodule's call was not recorded with traced inputs: call the "
                                      "UnflattenedModule itself")
        _, ins, outs, _ = self._call
        flat = fx.flatten_inputs(args, kwargs)
        if len(flat) != len(ins):
            raise TypeError(f"forward() expected {len(ins)} tensor inputs but got {len(flat)}")
        env = self._root._state_env()
        dims = {}
        for n, t in zip(ins, flat):
            env[n.name] = t
            dims.update({_dim_name(s): t.shape[d] for d, s in enumerate(n.meta["val"].shape) if _dim_name(s)})
        _run(self, self._fqn, _live(self._call), env, dims)
        return fx.map_aggregate(outs, lambda x: env[x.name] if isinstance(x, fx.Node) else x)


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
            self._submodule(fqn, InterpreterModule(self, fqn, call) if call else Module())
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
        self._check = None  # a LiftedGraphModule checking the inputs' shapes as the export saw them

    @property
    def _calls(self):
        return self._ep._module_calls

    def _submodule(self, fqn, new=None):
        m, names = self, fqn.split(".") if fqn else []
        for i, name in enumerate(names):
            if name not in m._modules:
                m.add_module(name, new if new is not None and i == len(names) - 1 else Module())
            m = m._modules[name]
        return m

    def _state_env(self):
        """The graph's parameters, buffers and constants by node name, read from this module's hierarchy."""
        env = {name: fx._get_path(self, target) for name, (kind, target) in self._ep._inputs.items()
               if kind != "input"}
        env.update({n.name: getattr(self, n.target) for n in self.graph.nodes if n.op == "get_attr"})
        return env

    def forward(self, *args, **kwargs):
        ep = self._ep
        if ep._tree is None:
            flat = fx.flatten_inputs(args, kwargs)
        else:
            leaves = pytree.tree_leaves(dict(ep._tree[0].bind(*args, **kwargs).arguments))
            flat = [t for t in leaves if isinstance(t, Tensor)]
        if self._check is None:
            object.__setattr__(self, "_check", fx.LiftedGraphModule(ep.graph, ep._tensors, ep._inputs, dims=ep._dims))
        n_user = self._check._n_user
        if len(flat) != n_user and self.flat_args_adapter is not None:
            _, input_spec = pytree.tree_flatten((args, kwargs))
            flat = self.flat_args_adapter.adapt(target_spec=None, input_spec=input_spec, input_args=flat)
            self.adapted = True
        if len(flat) != n_user:
            raise TypeError(f"forward() expected {n_user} tensor inputs but got {len(flat)}")
        env = self._state_env()
        dims = {s: flat[p].shape[d] for s, (p, d) in ep._dims.items()}
        for n in self.graph.nodes:
            if n.op == "placeholder" and ep._inputs[n.name][0] == "input":
                env[n.name] = flat[ep._inputs[n.name][1]]
                self._check._check_input(n, env[n.name], dims)
        out = _run(self, "", self.graph.nodes, env, dims)
        return out if ep._tree is None or ep._tree[1] is None else pytree.tree_unflatten(list(out), ep._tree[1])


def unflatten(module, flat_args_adapter=None):
    """torch.export.unflatten: the ExportedProgram `module` as an UnflattenedModule (see the module doc)."""
    return UnflattenedModule(module, flat_args_adapter)
