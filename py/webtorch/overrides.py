"""torch.overrides: the `__torch_function__` protocol (the seed's interception hook)."""
import functools

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


def has_torch_function(args):
    return bool(_overloaded(args, None))


def has_torch_function_unary(obj):
    return bool(_overloaded((obj,), None))


def has_torch_function_variadic(*args):
    return bool(_overloaded(args, None))


class DisableTorchFunctionSubclass(_DisableTorchFunction):
    """torch._C.DisableTorchFunctionSubclass: inside the block, Tensor subclasses' __torch_function__ is not
    called (ops run as on plain tensors)."""


class DisableTorchFunction(_DisableTorchFunction):
    """torch._C.DisableTorchFunction: as DisableTorchFunctionSubclass, and torch function modes off too (webtorch
    dispatches to no modes, see TorchFunctionMode)."""


def handle_torch_function(public, relevant_args, *args, **kwargs):
    """PyTorch's: call the __torch_function__ of relevant_args' overriding types on public(*args, **kwargs)."""
    types = _overloaded(relevant_args, None)
    # subclasses before superclasses, as in PyTorch
    types.sort(key=lambda t: -len(t.__mro__))
    for t in types:
        ret = t.__torch_function__(public, tuple(types), args, kwargs)
        if ret is not NotImplemented:
            return ret
    raise TypeError(f"no implementation found for '{public.__name__}' on types that implement "
                    f"__torch_function__: {[t.__name__ for t in types]}")


_tracing = [None]  # the fx.Tracer recording op calls now, if any


_PLAIN = frozenset((Tensor, int, float, bool, type(None)))  # argument types that never override


def torch_function(fn):
    """Route calls through __torch_function__ when an argument overrides it. `fn._fast`, where an op has
    one (ops/_hotpath.py), is tried first on calls without keywords: its result, or None for the general path."""
    fast = getattr(fn, "_fast", None)

    @functools.wraps(fn)
    def public(*args, **kwargs):
        if fast is not None and not kwargs:
            r = fast(args)
            if r is not None:
                return r
        for a in args:
            if type(a) not in _PLAIN and not _tf_state["disabled"] and not isinstance(a, (int, float, bool)):
                if _overloaded(args, kwargs):
                    return handle_torch_function(public, args + tuple(kwargs.values()), *args, **kwargs)
                break
        if _tracing[0] is not None:
            return _tracing[0].call(public, fn, args, kwargs)
        if _late.forward_ad is not None:
            return _late.forward_ad(fn, args, kwargs)
        return fn(*args, **kwargs)
    public._impl = fn
    return public


def is_tensor_like(x):
    return isinstance(x, Tensor) or hasattr(type(x), "__torch_function__")


def _assert(condition, message):
    """torch._assert: Python's assert, symbolically traceable (a Proxy condition is recorded)."""
    if type(condition) is not Tensor and has_torch_function((condition,)):
        return handle_torch_function(_assert, (condition,), condition, message)
    if not condition:
        raise AssertionError(message)


class TorchFunctionMode:
    """torch.overrides.TorchFunctionMode: a subclass can be defined (libraries define theirs at import), but
    webtorch's dispatch consults no mode stack, so entering one raises rather than silently not intercepting."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        raise NotImplementedError(f"{type(self).__name__}: webtorch does not dispatch to torch function modes "
                                  "(subclasses with __torch_function__ are supported)")

    def __exit__(self, exc_type, exc_value, traceback):
        return None
