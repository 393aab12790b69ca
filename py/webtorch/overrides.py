"""torch.overrides: the `__torch_function__` protocol (the seed's interception hook)."""
import contextlib
import functools
import inspect
import sys

from . import _late
from ._tensor import Tensor, _DisableTorchFunction, _tf_state


def _disabled_torch_function_impl(cls, func, types, args=(), kwargs=None):
    with _DisableTorchFunction():
        return func(*args, **(kwargs or {}))


_DEFAULT = (Tensor.__torch_function__.__func__, _disabled_torch_function_impl)


def _overloaded(args, kwargs):
    found = []
    for a in list(args) + (list(kwargs.values()) if kwargs else []):
        items = a if type(a) in (list, tuple) else (a,)
        for x in items:
            t = type(x)
            if t is not Tensor and hasattr(t, "__torch_function__") and (isinstance(x, Tensor) or t is not type):
                f = getattr(t.__torch_function__, "__func__", t.__torch_function__)
                if f not in _DEFAULT and t not in found:
                    found.append(t)
    return found


def has_torch_function(relevant_args):
    """Whether an element of relevant_args overrides __torch_function__, or a torch function mode is on."""
    if _skip_hop[0]:
        _skip_hop[0] = False
        return False
    return bool(_modes) or bool(_overloaded(relevant_args, None))


def has_torch_function_unary(obj):
    return bool(_modes) or bool(_overloaded((obj,), None))


def has_torch_function_variadic(*args):
    return bool(_modes) or bool(_overloaded(args, None))


class DisableTorchFunctionSubclass(_DisableTorchFunction):
    """torch._C.DisableTorchFunctionSubclass: inside the block, Tensor subclasses' __torch_function__ is not
    called (ops run as on plain tensors)."""


class DisableTorchFunction(_DisableTorchFunction):
    """torch._C.DisableTorchFunction: as DisableTorchFunctionSubclass, and the torch function modes set aside."""

    def __enter__(self):
        super().__enter__()
        self._saved = _modes[:]
        _modes.clear()

    def __exit__(self, *exc):
        _modes[:] = self._saved
        super().__exit__(*exc)


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """PyTorch's: public_api(*args, **kwargs) through the innermost mode, else the __torch_function__ of the types in
    relevant_args that override it (subclasses first); guard it with has_torch_function(relevant_args)."""
    types = _overloaded(relevant_args, None)
    return _mode_call(public_api, args, kwargs, types) if _modes else _dispatch(public_api, types, args, kwargs)


def _dispatch(public, types, args, kwargs):
    """The first answer other than NotImplemented of the types' __torch_function__, subclasses first (PyTorch's)."""
    types.sort(key=lambda t: -len(t.__mro__))
    for t in types:
        ret = t.__torch_function__(public, tuple(types), args, kwargs)
        if ret is not NotImplemented:
            return ret
    raise TypeError(f"no implementation found for '{public.__name__}' on types that implement "
                    f"__torch_function__: {[t.__name__ for t in types]}")


def wrap_torch_function(dispatcher):
    """A decorator making a function overridable: dispatcher(*args, **kwargs) names its relevant arguments."""
    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant_args = dispatcher(*args, **kwargs)
            if has_torch_function(relevant_args):
                return handle_torch_function(wrapped, relevant_args, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner


def is_tensor_method_or_property(func):
    """Whether func is a Tensor method or a property's getter (webtorch's methods are its functions: torch.add is
    Tensor.add, where PyTorch's are two objects)."""
    return getattr(func, "__name__", None) == "__get__" or getattr(Tensor, getattr(func, "__name__", ""), None) is func


_NAMESPACES = ((), ("nn", "functional"), ("linalg",), ("fft",), ("special",))


def _public_callables():
    """(namespace, function) for the public functions of torch's namespaces and Tensor's methods."""
    spaces = [functools.reduce(getattr, path, sys.modules["webtorch"]) for path in _NAMESPACES] + [Tensor]
    for space in spaces:
        for name, f in vars(space).items():
            if not name.startswith("_") and callable(f) and not isinstance(f, type):
                yield space, f


def get_overridable_functions():
    """{namespace: [functions]} whose calls reach __torch_function__ (webtorch's routed ops)."""
    found = {}
    for space, f in _public_callables():
        if hasattr(f, "_impl") and f not in found.setdefault(space, []):
            found[space].append(f)
    return found


def get_ignored_functions():
    """The public functions __torch_function__ never sees (factories, utilities: no tensor to dispatch on)."""
    return {f for _, f in _public_callables() if not hasattr(f, "_impl")}


def get_testing_overrides():
    """{overridable function: a dummy with its signature that returns -1}, as PyTorch's table for tests."""
    def dummy(f):
        def override(*args, **kwargs):
            return -1
        with contextlib.suppress(TypeError, ValueError):
            override.__signature__ = inspect.signature(f)
        return override
    return {f: dummy(f) for fs in get_overridable_functions().values() for f in fs}


_skip_hop = [False]  # redispatch_function: the next dispatch check passes over the overriding types once


def redispatch_function(func, types, args, kwargs):
    """Call func one dispatch level down (inside a __torch_function__): its own code runs, and the ops it calls
    still reach __torch_function__."""
    impl = getattr(func, "_impl", None)
    if impl is not None:
        return impl(*args, **(kwargs or {}))
    _skip_hop[0] = True
    try:
        return func(*args, **(kwargs or {}))
    finally:
        _skip_hop[0] = False


@contextlib.contextmanager
def enable_reentrant_dispatch():
    """PyTorch restores its Python dispatch state inside (a TLS snapshot); webtorch's dispatch keeps none."""
    yield


_tracing = [None]  # the fx.Tracer recording op calls now, if any


_PLAIN = frozenset((Tensor, int, float, bool, type(None)))  # argument types that never override


def torch_function(fn):
    """Route calls through __torch_function__ when an argument overrides it. `fn._fast`, where an op has
    one (ops/_hotpath.py), is tried first on calls without keywords: its result, or None for the general path."""
    fast = getattr(fn, "_fast", None)

    @functools.wraps(fn)
    def public(*args, **kwargs):
        if _modes:
            return _mode_call(public, args, kwargs)
        if fast is not None and not kwargs:
            r = fast(args)
            if r is not None:
                return r
        for a in args:
            if type(a) not in _PLAIN and not _tf_state["disabled"] and not isinstance(a, (int, float, bool)):
                types = _overloaded(args, kwargs)
                if types:
                    return _dispatch(public, types, args, kwargs)
                break
        if _tracing[0] is not None:
            return _tracing[0].call(public, fn, args, kwargs)
        if _late.forward_ad is not None:
            return _late.forward_ad(fn, args, kwargs)
        return fn(*args, **kwargs)
    public._impl = fn
    return public


def mode_aware(fn):
    """fn, seen by torch function modes: a factory (no tensor argument to route through __torch_function__)."""
    @functools.wraps(fn)
    def public(*args, **kwargs):
        if _modes:
            return _mode_call(public, args, kwargs)
        return fn(*args, **kwargs)
    return public


def is_tensor_like(x):
    return isinstance(x, Tensor) or hasattr(type(x), "__torch_function__")


def _assert(condition, message):
    """torch._assert: Python's assert, symbolically traceable (a Proxy condition is recorded)."""
    if type(condition) is not Tensor and has_torch_function((condition,)):
        return handle_torch_function(_assert, (condition,), condition, message)
    if not condition:
        raise AssertionError(message)


_modes = []  # the torch function mode stack, innermost last


def _mode_call(public, args, kwargs, types=None):
    """public(*args, **kwargs) under the innermost mode: its __torch_function__ runs with the mode off the stack (the
    ops it calls go to the next mode, then to tensor subclasses); NotImplemented passes the call to the subclasses
    (`types`: those overriding, default: found in args and kwargs)."""
    kwargs = kwargs or {}
    types = _overloaded(args, kwargs) if types is None else types
    with _pop_mode_temporarily() as mode:
        ret = mode.__torch_function__(public, tuple(types), args, kwargs)
        if ret is NotImplemented and types:
            ret = _dispatch(public, types, args, kwargs)
    if ret is NotImplemented:
        raise TypeError(f"Multiple dispatch failed for '{resolve_name(public)}'; all __torch_function__ handlers "
                        f"returned NotImplemented:\n\n  - mode object {mode!r}\n\nFor more information, try "
                        "re-running with TORCH_LOGS=not_implemented")
    return ret


def _push_mode(mode):
    _modes.append(mode)


def _pop_mode():
    return _modes.pop()


@contextlib.contextmanager
def _pop_mode_temporarily():
    mode = _modes.pop()
    try:
        yield mode
    finally:
        _modes.append(mode)


def _get_current_function_mode():
    return _modes[-1] if _modes else None


def _get_current_function_mode_stack():
    return list(_modes)


def _len_torch_function_stack():
    return len(_modes)


def resolve_name(f):
    """The name PyTorch prints for an overridable function, e.g. 'torch.add', or None."""
    module = getattr(f, "__module__", None) or ""
    name = getattr(f, "__name__", None)
    return None if name is None else ("torch" + module[len("webtorch"):].split(".ops")[0].split("._")[0]
                                      if module.startswith("webtorch") else module) + "." + name


class TorchFunctionMode:
    """torch.overrides.TorchFunctionMode: `with Mode():` pushes it on the mode stack; while it is there, every torch
    function, nn.functional function and Tensor method call (an op routed through `torch_function`, factories
    included) goes first to the innermost mode's `__torch_function__(func, types, args, kwargs)`, which runs with the
    mode popped (calling `func` inside reaches the next mode, then tensor subclasses). `func` is the function form
    (`torch.add` for `x + y` and `x.add(y)`, where PyTorch passes `Tensor.add`)."""
    inner: "TorchFunctionMode"

    def __init__(self):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _pop_mode()
