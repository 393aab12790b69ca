"""torch.export.unflatten: an ExportedProgram as a module with the original module hierarchy (`unflat.fc1`,
`unflat.encoder.layers[0]` are InterpreterModules holding the parameters and buffers the original submodules
held, so state_dict keys and attribute paths match), whose call runs the exported graph.

A submodule is not callable on its own here: the recorded graph does not mark where one submodule's ops
end (PyTorch's nn_module_stack), so calling one raises instead of guessing."""
import abc

from .. import fx
from .._tensor import Tensor
from ..nn import Module
from ..utils import _pytree as pytree

__all__ = ["FlatArgsAdapter", "InterpreterModule", "UnflattenedModule", "unflatten"]


class FlatArgsAdapter(abc.ABC):
    """Adapts the flat inputs of a call to the ones the exported program takes (when they differ)."""

    @abc.abstractmethod
    def adapt(self, target_spec, input_spec, input_args, metadata=None, obj=None):
        """NOTE: This adapter may mutate given ``input_args_with_path``."""

    def get_flat_arg_paths(self):
        """Returns a list of paths that are used to access the flat args."""
        return []


class InterpreterModule(Module):
    """A submodule of an unflattened program: holds the original submodule's parameters and buffers."""

    def forward(self, *args, **kwargs):
        raise NotImplementedError("webtorch's unflatten does not run a submodule on its own (the exported graph does "
                                  "not mark submodule boundaries); call the UnflattenedModule itself")


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
        for fqn in sorted((e.fqn for e in ep.module_call_graph if e.fqn), key=lambda p: p.count(".")):
            self._submodule(fqn)
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

    def _submodule(self, fqn):
        m = self
        for name in fqn.split(".") if fqn else ():
            if name not in m._modules:
                m.add_module(name, InterpreterModule())
            m = m._modules[name]
        return m

    def _runner(self):
        ep = self._ep
        tensors = {t: fx._get_path(self, t) for kind, t in ep._inputs.values() if kind != "input"}
        if self._run is None or any(self._run[0][k] is not v for k, v in tensors.items()):
            gm = fx.LiftedGraphModule(ep.graph, tensors, ep._inputs, dims=ep._dims)
            object.__setattr__(self, "_run", (tensors, gm))  # not a submodule: it shares these tensors
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
