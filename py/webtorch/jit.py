"""torch.jit where programs touch it: `trace` records a module into a graph (webtorch.fx) that runs
and saves; `script` is not supported (it compiles Python source: use trace or torch.export);
ignore / unused / export / is_scripting / is_tracing / annotate / Final for code written for both.

A traced module saves with `.save(path)` / `torch.jit.save` and loads with `torch.jit.load` in
webtorch's own format (a torch.save file holding the graph as JSON and the tensors: it loads with
weights_only=True, so loading never runs pickled code). It is not a TorchScript archive. The graph
is data: its ops are names resolved only in `_ops()` (the ops fx records), and `_GraphReader`
checks the whole file before a module is built (a bad one raises serialization.CheckpointError).
"""
import builtins
import functools
import types
import typing
import warnings
from collections import namedtuple

from . import futures, fx
from ._graph_file import TracedModule, load, save  # noqa: F401 (torch.jit's names)
from ._tensor import Tensor
from .export import Dim, _export
from .futures import Future

__all__ = ["trace", "script", "ignore", "unused", "export", "is_scripting", "is_tracing", "annotate", "save",
           "load", "freeze", "optimize_for_inference", "ScriptModule", "TracedModule", "Final", "TracerWarning",
           "Future", "fork", "wait", "Attribute", "CompilationUnit", "Error", "ScriptFunction", "enable_onednn_fusion",
           "onednn_fusion_enabled", "export_opnames", "interface", "isinstance", "script_if_tracing",
           "set_fusion_strategy", "strict_fusion", "trace_module"]

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


def fork(func, *args, **kwargs):
    """torch.jit.fork: torch.fork (run now, a completed Future), with TorchScript's deprecation warning."""
    warnings.warn("`torch.jit.fork` is deprecated. Please use `torch.compile` instead.", DeprecationWarning,
                  stacklevel=2)
    return futures.fork(func, *args, **kwargs)


def wait(future):
    warnings.warn("`torch.jit.wait` is deprecated. Please use `torch.compile` instead.", DeprecationWarning,
                  stacklevel=2)
    return futures.wait(future)


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




# ---- TorchScript's remaining names: what PyTorch does where nothing is scripted --------------------------------
Attribute = namedtuple("Attribute", ["value", "type"])  # outside scripting PyTorch's is a plain (value, type) pair


class Error(Exception):
    """torch.jit.Error: a TorchScript program's raised exception."""


class ScriptFunction:
    """What torch.jit.script makes of a function: webtorch never makes one (script is not supported)."""

    def __init__(self, *args, **kwargs):
        raise TypeError("ScriptFunction: No constructor defined!")


class CompilationUnit:
    """A TorchScript compilation unit: empty; TorchScript source to compile raises, as torch.jit.script does."""

    def __init__(self, lang=None, _frames_up=0):
        if lang is not None:
            script(lang)


_state = {"onednn_fusion": False, "fusion_strategy": [("STATIC", 2), ("DYNAMIC", 10)]}


def enable_onednn_fusion(enabled):
    """oneDNN graph fusion of TorchScript (never used here): the flag is stored."""
    _state["onednn_fusion"] = bool(enabled)


def onednn_fusion_enabled():
    return _state["onednn_fusion"]


def set_fusion_strategy(strategy):
    """Stores TorchScript's fusion strategy [("STATIC" | "DYNAMIC", depth), ...]; returns the previous one."""
    warnings.warn("`torch.jit.set_fusion_strategy` is deprecated. Please use `torch.compile` instead.",
                  DeprecationWarning, stacklevel=2)
    old, _state["fusion_strategy"] = _state["fusion_strategy"], [tuple(s) for s in strategy]
    return old


class strict_fusion:
    """Errors on unfused nodes in a scripted function; outside scripting it warns and does nothing, as PyTorch's."""

    def __init__(self):
        warnings.warn("Only works in script mode", stacklevel=2)

    def __enter__(self):
        pass

    def __exit__(self, type, value, tb):
        pass


def export_opnames(m):
    raise NotImplementedError("torch.jit.export_opnames lists a scripted module's TorchScript operators: webtorch has "
                              "no TorchScript (torch.export.export(m, args).graph lists the ops a model runs)")


def interface(obj):
    """Marks a class as a TorchScript interface (an annotation only here: nothing is scripted); returns it."""
    warnings.warn("`torch.jit.interface` is deprecated. Please use `torch.compile` instead.", DeprecationWarning,
                  stacklevel=2)
    if not builtins.isinstance(obj, type):
        raise RuntimeError("interface must be applied to a class")
    return obj


def isinstance(obj, target_type):
    """TorchScript's type refinement: builtins.isinstance, also for List[...], Dict[...], Tuple[...], Optional[...]
    (the module-level name shadows the builtin here, so this module's own checks go through it unchanged)."""
    if builtins.isinstance(target_type, tuple):
        return any(isinstance(obj, t) for t in target_type)
    origin, args = typing.get_origin(target_type), typing.get_args(target_type)
    if origin is None:
        return builtins.isinstance(obj, target_type)
    if origin is list:
        return builtins.isinstance(obj, list) and all(isinstance(e, args[0]) for e in obj)
    if origin is dict:
        return builtins.isinstance(obj, dict) and all(isinstance(k, args[0]) and isinstance(v, args[1])
                                                      for k, v in obj.items())
    if origin is tuple:
        return builtins.isinstance(obj, tuple) and len(obj) == len(args) and all(map(isinstance, obj, args))
    if origin is typing.Union or origin is types.UnionType:
        return obj is None or any(isinstance(obj, t) for t in args)
    return False


def script_if_tracing(fn):
    """PyTorch scripts fn when it is first called while tracing; webtorch's trace records its ops as they run."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5, strict=True,
                 _force_outplace=False, _module_class=None, _compilation_unit=None, example_inputs_is_kwarg=False,
                 _store_inputs=True):
    """torch.jit.trace_module: trace the methods named in `inputs` ({name: example inputs}); webtorch's traced
    module runs forward, so only {"forward": ...} is accepted."""
    if not builtins.isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    if set(inputs) != {"forward"}:
        raise NotImplementedError(f"torch.jit.trace_module: webtorch traces forward only, not {sorted(inputs)}")
    example = inputs["forward"]
    if example_inputs_is_kwarg:
        return trace(mod, example_kwarg_inputs=example, strict=strict)
    return trace(mod, example, strict=strict)
