"""torch._dynamo's decorators and switches: set_stance, run, optimize, graph_break, allow_in_graph,
disallow_in_graph, assume_constant_result, substitute_in_graph (PyTorch's names, arguments and errors).

webtorch traces at the op level (eval_frame.py): every function called in a compiled frame records its ops into the
graph, so allow_in_graph, disallow_in_graph, assume_constant_result and substitute_in_graph change nothing webtorch
computes and return the function (disallow_in_graph: PyTorch breaks the graph at each call, webtorch does not, so
only explain's counts differ)."""
import functools
import inspect
import types

from .. import fx
from .eval_frame import DynamoStance, _set_stance, _state, compile_callable

_GRAPH_BREAK = ("Call to `torch._dynamo.graph_break()`\n  Explanation: User-inserted graph break. Message: {msg}\n"
                "  Hint: Remove the `torch._dynamo.graph_break()` call.\n\n  Developer debug context: Called "
                "`torch._dynamo.graph_break()` with args `[]`, kwargs `{kwargs}`\n\n For more details about this graph "
                "break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0025.html")


def graph_break(msg=""):
    """An explicit graph break: inside a compiled function it breaks the graph (and splits the frame) there, as a
    `.item()` does; fullgraph=True raises Unsupported naming the line. Elsewhere it does nothing."""
    tracer = fx._active[0]
    if tracer is not None and _state["compiling"]:
        kwargs = "{'msg': LazyVariableTracker(realized: ConstantVariable(str: %r))}" % msg if msg else "{}"
        tracer.on_value_read(None, "graph_break", _GRAPH_BREAK.format(msg=msg or None, kwargs=kwargs))


class set_stance:
    """torch.compiler.set_stance(stance="default", *, skip_guard_eval_unsafe=False, force_backend=None): a function,
    context manager or decorator. "force_eager" runs compiled callables eagerly; "eager_on_recompile" runs a call
    with no matching compiled entry eagerly (the first call too) and uses those there are; "fail_on_recompile"
    raises PyTorch's RuntimeError before any compile; "eager_then_compile"/"aot_eager_then_compile" run a callable's
    first call eagerly. skip_guard_eval_unsafe: a recompile raises PyTorch's RuntimeError (webtorch still checks
    every guard);
    force_backend names a backend (webtorch runs every name the same way)."""

    def __init__(self, stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
        if force_backend is not None and stance != "default":
            raise RuntimeError("non-default stance cannot have force_backend set")
        if force_backend is not None and not isinstance(force_backend, str):
            raise NotImplementedError("set_stance(force_backend=<a callable>): webtorch compiles every graph itself; "
                                      "pass a backend name")
        self.stance = DynamoStance(stance, skip_guard_eval_unsafe, force_backend)
        self.prev = _set_stance(self.stance)

    def __call__(self, fn):
        _set_stance(self.prev)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = _set_stance(self.stance)
            try:
                return fn(*args, **kwargs)
            finally:
                _set_stance(prev)
        return wrapper

    def __enter__(self):
        _set_stance(self.stance)

    def __exit__(self, *exc):
        _set_stance(self.prev)


class _RunOnly:
    """torch._dynamo.run()'s result: a decorator (used in a `with`, PyTorch's error)."""

    def __call__(self, fn):
        @functools.wraps(fn)
        def run_only(*args, **kwargs):
            _state["run_only"] += 1
            try:
                return fn(*args, **kwargs)
            finally:
                _state["run_only"] -= 1
        return run_only

    def __enter__(self):
        raise RuntimeError("torch._dynamo.optimize(...) is used with a context manager. Please refer to "
                           "https://pytorch.org/tutorials/intermediate/torch_compile_tutorial.html to use "
                           "torch._dynamo.optimize(...) as an annotation/decorator. ")

    def __exit__(self, *exc):
        pass


def run(fn=None):
    """Don't do any dynamic compiles, just use prior optimizations: while fn runs, a compiled callable runs the
    entries it has and runs any other call eagerly."""
    if fn is not None:
        if not callable(fn):
            raise AssertionError("fn must be callable")
        return _RunOnly()(fn)
    return _RunOnly()


class _OptimizeContext:
    def __init__(self, kwargs):
        self.kwargs = kwargs

    def __call__(self, fn):
        return compile_callable(fn, **self.kwargs)


def optimize(backend="inductor", *, nopython=False, error_on_graph_break=None, guard_export_fn=None,
             guard_fail_fn=None, guard_filter_fn=None, disable=False, dynamic=None, package=None,
             recompile_limit=None, isolate_recompiles=False, shapes_spec=None):
    """The deprecated entry point: torch._dynamo.optimize(backend, nopython=...)(fn) is torch.compile(fn,
    backend=backend, fullgraph=nopython). Guard callbacks and compile packages are not supported."""
    if any(f is not None for f in (guard_export_fn, guard_fail_fn, guard_filter_fn, package)):
        raise NotImplementedError("torch._dynamo.optimize with guard callbacks or a package: webtorch's guards are "
                                  "its own (see torch._dynamo.explain)")
    return _OptimizeContext(dict(fullgraph=bool(nopython or error_on_graph_break), dynamic=dynamic, backend=backend,
                                 disable=disable, recompile_limit=recompile_limit))


def allow_in_graph(fn):
    if isinstance(fn, (list, tuple)):
        return [allow_in_graph(x) for x in fn]
    if not callable(fn):
        raise AssertionError("allow_in_graph expects a callable")
    return fn


def disallow_in_graph(fn):
    if not callable(fn):
        raise AssertionError("disallow_in_graph expects a callable")
    return fn


def assume_constant_result(fn):
    fn._dynamo_marked_constant = True
    return fn


def _is_function(f):
    return isinstance(f, (types.FunctionType, types.BuiltinFunctionType, types.MethodDescriptorType,
                          types.WrapperDescriptorType))


def _sig_ident(sig):
    params = sig.parameters.values()
    var = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return (tuple(p.name for p in params if p.kind not in var + (inspect.Parameter.KEYWORD_ONLY,)),
            {p.name for p in params if p.kind == p.KEYWORD_ONLY},
            {p.name: p.default for p in params if p.kind not in var})


def substitute_in_graph(original_fn, *, can_constant_fold_through=False, skip_signature_check=False):
    """Register a polyfill for original_fn (PyTorch's checks); the result calls original_fn (webtorch traces the
    original's ops)."""
    if not _is_function(original_fn):
        raise TypeError(f"substitute_in_graph expects a function but got {type(original_fn)!r}")

    def wrapper(traceable_fn):
        if not _is_function(traceable_fn):
            raise TypeError(f"@substitute_in_graph(...) expects a function but got {type(traceable_fn)!r}")
        if not skip_signature_check:
            try:
                original_sig = inspect.signature(original_fn)
            except ValueError:
                original_sig = None
            if original_sig is not None:
                traceable_sig = inspect.signature(traceable_fn)
                wildcard = _sig_ident(inspect.signature(lambda *args, **kwargs: None))
                a, b = _sig_ident(original_sig), _sig_ident(traceable_sig)
                if a != b and wildcard not in (a, b):
                    raise TypeError(f"Signature mismatch between {original_fn} and {traceable_fn}: "
                                    f"{original_sig} != {traceable_sig}")

        @functools.wraps(original_fn)
        def wrapped(*args, **kwargs):
            return original_fn(*args, **kwargs)
        wrapped.__torch_dynamo_original__ = original_fn
        wrapped.__torch_dynamo_polyfill__ = traceable_fn
        wrapped.__torch_dynamo_can_constant_fold_through__ = can_constant_fold_through
        return wrapped
    return wrapper


__all__ = ["graph_break", "set_stance", "run", "optimize", "allow_in_graph", "disallow_in_graph",
           "assume_constant_result", "substitute_in_graph"]
