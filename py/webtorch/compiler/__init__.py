"""torch.compiler: torch.compile's public switches (reset, disable, set_stance, is_compiling, ...) and config."""
import functools

from .. import _compile, _dynamo, export as _export
from .._dynamo import eval_frame as _ef
from .._dynamo.decorators import substitute_in_graph
from .._tensor import Tensor
from ..nn.parameter import Parameter
from ..ops._creation import as_tensor
from ..utils import _pytree
from . import config

__all__ = ["reset", "disable", "is_compiling", "is_dynamo_compiling", "set_stance", "list_backends",
           "cudagraph_mark_step_begin", "allow_in_graph", "assume_constant_result", "substitute_in_graph", "config",
           "compile", "get_default_backend", "set_default_backend", "is_exporting", "nested_compile_region",
           "save_cache_artifacts", "load_cache_artifacts", "load_compiled_function", "wrap_numpy",
           "set_enable_guard_collectives", "skip_guard_on_inbuilt_nn_modules_unsafe",
           "skip_guard_on_all_nn_modules_unsafe", "keep_tensor_guards_unsafe", "skip_guard_on_globals_unsafe",
           "skip_all_guards_unsafe", "keep_portable_guards_unsafe"]


def reset():
    """Drop every torch.compile'd callable's compiled entries (the next call traces again)."""
    _dynamo.reset()


def disable(fn=None, recursive=True, *, reason=None):
    """fn runs eagerly and untraced, also when called from a compiled function (a graph break there)."""
    return _ef.disable(fn, recursive, reason=reason)


def is_compiling():
    """True while a torch.compile'd callable runs its function (outside torch.compiler.disable'd code)."""
    return _dynamo.is_compiling()


is_dynamo_compiling = is_compiling


def set_stance(stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
    """The compiler's stance, as a function, context manager or decorator (see torch._dynamo.set_stance): "default",
    "force_eager", "eager_on_recompile", "fail_on_recompile", "eager_then_compile", "aot_eager_then_compile".
    Inside a compiled function it raises, as PyTorch's does."""
    if is_compiling():
        raise AssertionError(f"Attempt to trace forbidden callable {set_stance}")
    return _dynamo.set_stance(stance, skip_guard_eval_unsafe=skip_guard_eval_unsafe, force_backend=force_backend)


def list_backends(exclude_tags=("debug", "experimental")):
    """The backend names torch.compile accepts (webtorch runs each the same way)."""
    return _dynamo.list_backends(exclude_tags)


def cudagraph_mark_step_begin():
    """A new iteration begins (PyTorch: CUDA-graph outputs of the last one may be overwritten). Nothing to do: a
    webtorch replay hands out fresh outputs."""


def allow_in_graph(fn):
    """Accepted; webtorch traces the function's ops into the graph anyway (returns fn)."""
    return _dynamo.allow_in_graph(fn)


def assume_constant_result(fn):
    """Marks fn as PyTorch does and returns it; webtorch calls it every time (its result is guarded like any
    Python value its caller reads)."""
    return _dynamo.assume_constant_result(fn)


def compile(*args, **kwargs):  # noqa: A001 (PyTorch's name)
    """torch.compiler.compile: torch.compile."""
    return _compile.compile(*args, **kwargs)


_state = {"guard_collectives": False}


def get_default_backend():
    """The backend torch.compile uses when none is given ("inductor" until set_default_backend)."""
    return _compile.DEFAULT_BACKEND[0]


def set_default_backend(backend):
    """torch.compile's backend when none is given; None resets it to "inductor"."""
    if backend is not None and not isinstance(backend, str) and not callable(backend):
        raise TypeError(f"backend must be a string or callable, got {type(backend)}")
    _compile.DEFAULT_BACKEND[0] = "inductor" if backend is None else backend


def is_exporting():
    """True while torch.export.export traces a module."""
    return _export._exporting[0]


def nested_compile_region(fn=None, *, options=None, max_reuse_entries=8, reuse_hash_fn=None):
    """Marks fn as a region torch.compile may compile once and reuse; eagerly (and in webtorch's traces, which
    record its ops inline) fn runs as it is."""
    if options is not None:
        raise RuntimeError("nested_compile_region config is an experimental feature for testing only.")
    if fn is None:
        return functools.partial(nested_compile_region, max_reuse_entries=max_reuse_entries,
                                 reuse_hash_fn=reuse_hash_fn)

    @functools.wraps(fn)
    def region(*args, **kwargs):
        return fn(*args, **kwargs)
    return region


def save_cache_artifacts():
    """PyTorch's compile caches (Inductor's kernels, AOTAutograd's graphs) serialized: webtorch compiles into no
    cache that outlives the process, so there are none (None, as PyTorch with no artifacts)."""
    return None


def load_cache_artifacts(serialized_artifacts):
    """Hot-loads PyTorch's serialized compile caches: none are webtorch's to load, so nothing is loaded (None, as
    PyTorch returns for artifacts it cannot read); the next compile traces as usual."""
    return None


def load_compiled_function(file, *, f_globals=None, external_data=None):
    raise NotImplementedError("torch.compiler.load_compiled_function loads a pickled AOT-compiled PyTorch function: "
                              "webtorch never unpickles code; compile the function with torch.compile instead")


def wrap_numpy(fn):
    """fn from numpy arrays to numpy arrays, called on tensors: tensor arguments go in as arrays, array results
    come back as tensors."""
    @functools.wraps(fn)
    def wrap(*args, **kwargs):
        import numpy as np  # optional: fn computes with numpy
        args, kwargs = _pytree.tree_map_only(Tensor, lambda x: x.numpy(), (args, kwargs))
        return _pytree.tree_map_only(np.ndarray, as_tensor, fn(*args, **kwargs))
    return wrap


def set_enable_guard_collectives(enabled):
    """Guard evaluation synchronized across ranks (PyTorch's distributed compile): stored; returns whether it was
    enabled before, as PyTorch's does."""
    old, _state["guard_collectives"] = _state["guard_collectives"], bool(enabled)
    return old


# guard_filter_fn helpers (torch.compile(options={"guard_filter_fn": ...})): PyTorch's, on its guard entries
def skip_guard_on_inbuilt_nn_modules_unsafe(guard_entries):
    return [not entry.orig_guard.source.is_unspecialized_builtin_nn_module() for entry in guard_entries]


def skip_guard_on_all_nn_modules_unsafe(guard_entries):
    return [not entry.orig_guard.source.is_unspecialized_nn_module() for entry in guard_entries]


def keep_tensor_guards_unsafe(guard_entries, keep_parameters=False):
    return [entry.guard_type == "TENSOR_MATCH" and (keep_parameters or not isinstance(entry.value, Parameter))
            for entry in guard_entries]


def skip_guard_on_globals_unsafe(guard_entries):
    return [not entry.is_global for entry in guard_entries]


def skip_all_guards_unsafe(guard_entries):
    return [False for entry in guard_entries]


def keep_portable_guards_unsafe(guard_entries):
    return [g.guard_type in ("GLOBAL_STATE", "SHAPE_ENV") or (g.guard_type == "TENSOR_MATCH" and not g.is_global)
            for g in guard_entries]
