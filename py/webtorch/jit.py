"""torch.jit where programs touch it: `trace` records a module into a graph (webtorch.fx) that runs
and saves; `script` is not supported (it compiles Python source: use trace or torch.export);
ignore / unused / export / is_scripting / is_tracing / annotate / Final for code written for both.

A traced module saves with `.save(path)` / `torch.jit.save` and loads with `torch.jit.load` in
webtorch's own format (a torch.save file holding the graph as JSON and the tensors: it loads with
weights_only=True, so loading never runs pickled code). It is not a TorchScript archive. The graph
is data: its ops are names resolved only in `_ops()` (the ops fx records), and `_GraphReader`
checks the whole file before a module is built (a bad one raises serialization.CheckpointError).
"""
import warnings

from . import futures, fx
from ._graph_file import TracedModule, load, save  # noqa: F401 (torch.jit's names)
from ._tensor import Tensor
from .export import Dim, _export
from .futures import Future

__all__ = ["trace", "script", "ignore", "unused", "export", "is_scripting", "is_tracing", "annotate", "save",
           "load", "freeze", "optimize_for_inference", "ScriptModule", "TracedModule", "Final", "TracerWarning",
           "Future", "fork", "wait"]

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


