"""Inputs and outputs through pytree for torch.export: dataclasses registered with `register_dataclass` are
flattened into their fields for the trace (placeholders `x_feature`, as PyTorch names them) and rebuilt
around the exported program's module (`ep.module()(Inp(...))` returns an `Out(...)` again)."""
import dataclasses
import inspect

from .. import fx
from .._tensor import Tensor
from ..utils import _pytree as pytree
from .dynamic_shapes import _combine_args

_DATACLASSES = set()


def register_dataclass(cls, *, serialized_type_name=None):
    """torch.export.register_dataclass: a dataclass as an input/output type of export (a pytree node whose
    children are its fields)."""
    if not dataclasses.is_dataclass(cls):
        raise ValueError(f"field_names must be specified with a list of all fields used to initialize {cls}, as it "
                         "is not a dataclass.")
    names = [f.name for f in dataclasses.fields(cls) if f.init]

    def flatten(obj):
        return [getattr(obj, n) for n in names], names

    def unflatten(values, context):
        return cls(**dict(zip(context, values)))

    def flatten_with_keys(obj):
        return [(pytree.GetAttrKey(n), getattr(obj, n)) for n in names], names
    pytree.SUPPORTED_NODES.pop(cls, None)  # registering again replaces it (PyTorch warns and overwrites)
    pytree.register_pytree_node(cls, flatten, unflatten, serialized_type_name=serialized_type_name,
                                flatten_with_keys_fn=flatten_with_keys)
    _DATACLASSES.add(cls)


def _has_dataclass(tree, where):
    """Whether tree holds a registered dataclass; an unregistered one raises as PyTorch's export does."""
    if isinstance(tree, (tuple, list)):
        return any([_has_dataclass(v, where) for v in tree])
    if isinstance(tree, dict):
        return any([_has_dataclass(v, where) for v in tree.values()])
    if type(tree) in _DATACLASSES:
        return True
    if dataclasses.is_dataclass(tree) and not isinstance(tree, type):
        if where == "input":
            raise ValueError(f"Unsupported input type {type(tree)}. Export only supports pytree containers of basic "
                             "types (Tensor, int, float, ...) as input. To register a custom dataclass, use "
                             "torch.export.register_dataclass. To register a custom container type, use "
                             "torch.utils._pytree.register_pytree_node.")
        raise RuntimeError(f"Found {type(tree)} in output, which is not a known type. If this type holds tensors, "
                           "you need to register a pytree for it (torch.export.register_dataclass).")
    return False


class _Call:
    """What fx.trace_module reads of a module (its state, forward's parameter names), calling fn(*leaves)."""

    def __init__(self, module, names, fn, skip_buffers=()):
        self.named_parameters = module.named_parameters
        self.named_buffers = lambda: ((k, v) for k, v in module.named_buffers() if k not in skip_buffers)
        self._non_persistent_buffers_set = getattr(module, "_non_persistent_buffers_set", set())
        fn.__signature__ = inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY)
                                              for n in names])
        self.forward = fn

    def __call__(self, *args):
        return self.forward(*args)


def _leaf_name(path):
    return "_".join(str(getattr(k, "key", getattr(k, "idx", getattr(k, "name", k)))) for k in path)


def flat_call(mod, args, kwargs):
    """(call, tensors, signature, out_specs): mod called on the tensors among the pytree leaves of its arguments
    (by name in forward's order; the other leaves stay this example's), its output flattened when it holds
    dataclasses (out_specs[0] records its TreeSpec)."""
    paths, in_spec = pytree.tree_flatten_with_path(_combine_args(mod, args, kwargs))
    leaves = [v for _, v in paths]
    where = [i for i, v in enumerate(leaves) if isinstance(v, Tensor)]
    out_specs = [None]

    def fn(*tensors):
        flat = list(leaves)
        for i, t in zip(where, tensors):
            flat[i] = t
        out = mod(**pytree.tree_unflatten(flat, in_spec))
        if _has_dataclass(out, "output"):
            out, out_specs[0] = pytree.tree_flatten(out)
            return tuple(out)
        return out
    sig = inspect.signature(getattr(mod, "forward", mod))
    names = [_leaf_name(paths[i][0]) for i in where]
    return _Call(mod, names, fn), tuple(leaves[i] for i in where), sig, out_specs


class TreeModule(fx.LiftedGraphModule):
    """ep.module() for a program whose inputs or outputs hold dataclasses: flattens the call's arguments as
    export did and rebuilds the output's structure."""

    def __init__(self, graph, tensors, inputs, dims, signature, out_spec):
        super().__init__(graph, tensors, inputs, dims=dims)
        self._signature, self._out_spec = signature, out_spec

    def forward(self, *args, **kwargs):
        leaves = pytree.tree_leaves(dict(self._signature.bind(*args, **kwargs).arguments))
        out = super().forward(*[t for t in leaves if isinstance(t, Tensor)])
        return out if self._out_spec is None else pytree.tree_unflatten(list(out), self._out_spec)
