"""torch.jit where programs touch it: `trace` records a module into a graph (webtorch.fx) that runs
and saves; `script` is not supported (it compiles Python source: use trace or torch.export);
ignore / unused / export / is_scripting / is_tracing / annotate / Final for code written for both.

A traced module saves with `.save(path)` / `torch.jit.save` and loads with `torch.jit.load` in
webtorch's own format (a torch.save file holding the graph as JSON and the tensors: it loads with
weights_only=True, so loading never runs pickled code). It is not a TorchScript archive.
"""
import importlib
import json
import operator
import warnings

from . import _dtype, fx
from ._tensor import Tensor
from .export import _export, Dim
from ._device import device
from .nn import Parameter

__all__ = ["trace", "script", "ignore", "unused", "export", "is_scripting", "is_tracing", "annotate", "save",
           "load", "freeze", "optimize_for_inference", "ScriptModule", "TracedModule", "Final", "TracerWarning"]

_FORMAT = "webtorch.fx graph 1"


class TracedModule(fx.GraphModule):
    """What torch.jit.trace returns: the module's graph, run by the interpreter (`.graph`, `.code`)."""

    def save(self, f, _extra_files=None):
        _save_graph(self, f)


ScriptModule = TracedModule
Final = object  # typing.Final's stand-in: `x: torch.jit.Final[int]` annotations stay legal


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
          example_kwarg_inputs=None, _store_inputs=True):
    """torch.jit.trace: record func(*example_inputs) into a TracedModule. When every tensor input has
    the same first dimension (2 or more) it is made dynamic if the graph allows it, so the traced
    module takes other batch sizes, as a TorchScript trace of shape-generic code does. Reading a
    traced value as a Python number warns (TracerWarning), as PyTorch's trace does."""
    if example_inputs is None and example_kwarg_inputs is None:
        raise RuntimeError("torch.jit.trace: example_inputs is required")
    args = example_inputs if isinstance(example_inputs, tuple) else (() if example_inputs is None
                                                                      else (example_inputs,))
    kwargs = example_kwarg_inputs or {}
    flat = fx.flatten_inputs(args, kwargs)
    sizes = {t.shape[0] for t in flat if t.dim() > 0}
    ep = None
    if flat and len(sizes) == 1 and all(t.dim() > 0 for t in flat) and sizes.pop() >= 2 and not kwargs:
        batch = Dim("batch")
        try:
            ep = _export(func, args, kwargs, tuple({0: batch} if isinstance(a, Tensor) else None for a in args))
        except (RuntimeError, ValueError, StopIteration):
            ep = None
    if ep is None:
        ep = _export(func, args, kwargs, None, on_value_read=_warn_value_read)
    return TracedModule(ep.graph, ep._tensors, ep._inputs, dims=ep._dims)


class TracerWarning(Warning):
    pass


def _warn_value_read(t, what):
    warnings.warn(f"Converting a tensor to a Python value (Tensor.{what}) might cause the trace to be incorrect. We "
                  "can't record the data flow of Python values, so this value will be treated as a constant in the "
                  "future. This means that the trace might not generalize to other inputs!", TracerWarning,
                  stacklevel=3)


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    raise NotImplementedError(
        "torch.jit.script is not supported in webtorch (it compiles Python source to TorchScript): use "
        "torch.jit.trace(model, example_inputs) or torch.export.export(model, args) to capture the model as a graph, "
        "or run the model as it is")


def ignore(drop=False, **kwargs):
    """Decorator: leave a function out of scripting (webtorch never scripts: the function is unchanged)."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    return fn


def export(fn):
    return fn


def is_scripting():
    return False


def is_tracing():
    return fx._active[0] is not None


def annotate(the_type, the_value):
    return the_value


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    return mod


def optimize_for_inference(mod, other_methods=None):
    return mod


# ---- save / load ---------------------------------------------------------------------------------------
def save(m, f, _extra_files=None):
    if not isinstance(m, fx.GraphModule):
        raise RuntimeError("torch.jit.save: expected a module from torch.jit.trace (webtorch does not script)")
    _save_graph(m, f)


def _target_ref(fn):
    if fn is operator.getitem:
        return ["operator", "getitem"]
    mod, name = fn.__module__, fn.__name__
    if getattr(importlib.import_module(mod), name, None) is fn:
        return [mod, name]
    if getattr(Tensor, name, None) is fn:
        return ["Tensor", name]
    raise RuntimeError(f"torch.jit.save: the op {fx.target_name(fn)} cannot be saved by reference")


def _target(ref):
    mod, name = ref
    return getattr(Tensor if mod == "Tensor" else importlib.import_module(mod), name)


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


def _dec(v, nodes):
    if isinstance(v, list):
        return [_dec(x, nodes) for x in v]
    if not isinstance(v, dict):
        return v
    (k, x), = v.items()
    if k == "node":
        return nodes[x]
    if k == "sym":
        return fx.Sym({tuple(k): c for k, c in x[0]}, x[1])
    if k == "meta":
        return fx.TensorMeta(_dec(x[0], nodes), _dtype.BY_NAME[x[1]])
    if k == "dtype":
        return _dtype.BY_NAME[x]
    if k == "tuple":
        return tuple(_dec(i, nodes) for i in x)
    if k == "dict":
        return {a: _dec(b, nodes) for a, b in x}
    if k == "slice":
        return slice(*(_dec(i, nodes) for i in x))
    if k == "ellipsis":
        return Ellipsis
    return device(x)


def _save_graph(gm, f):
    from .serialization import save as _save  # lazy: serialization imports numpy when present
    nodes = [[n.name, n.op, n.target if n.op != "call_function" else _target_ref(n.target), _enc(n.args),
              _enc(n.kwargs), _enc(n.meta.get("val"))] for n in gm.graph.nodes]
    tensors = {target: fx._get_path(gm, target).detach() for kind, target in gm._inputs.values() if kind != "input"}
    tensors.update({"_constants." + k: getattr(gm, k).detach() for k in gm.graph.constants})
    inputs = {k: list(v) for k, v in gm._inputs.items()}
    _save({"format": _FORMAT, "graph": json.dumps({"nodes": nodes, "inputs": inputs,
                                                    "dims": {k: list(v) for k, v in gm._dims.items()}}),
           "tensors": tensors}, f)


def load(f, map_location=None, _extra_files=None):
    """torch.jit.load: a module saved by torch.jit.save / TracedModule.save (webtorch's format)."""
    from .serialization import load as _load  # lazy: serialization imports numpy when present
    obj = _load(f, map_location=map_location, weights_only=True)
    if not isinstance(obj, dict) or obj.get("format") != _FORMAT:
        raise RuntimeError("torch.jit.load: not a module saved by webtorch's torch.jit.save (webtorch cannot read "
                           "TorchScript archives: save a state_dict in PyTorch and load it into the model)")
    meta = json.loads(obj["graph"])
    g, by_name = fx.Graph(), {}
    for name, op, target, args, kwargs, val in meta["nodes"]:
        node = g.create_node(op, _target(target) if op == "call_function" else target, _dec(args, by_name),
                             _dec(kwargs, by_name), name=name, meta={} if val is None else {"val": _dec(val, by_name)})
        by_name[name] = node
    tensors = obj["tensors"]
    g.constants = {k: tensors["_constants." + k] for n in g.nodes if n.op == "get_attr" for k in [n.target]}
    inputs = {k: tuple(v) for k, v in meta["inputs"].items()}
    state = {t: Parameter(tensors[t]) if kind == "parameter" else tensors[t] for kind, t in inputs.values()
             if kind != "input"}
    return TracedModule(g, state, inputs, dims={k: tuple(v) for k, v in meta["dims"].items()})

