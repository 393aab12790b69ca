"""Grad mode: whether operations record the autograd graph."""
import functools

_state = {"enabled": True, "inference": False}


def is_grad_enabled():
    return _state["enabled"]


def is_inference_mode_enabled():
    return _state["inference"]


class _Mode:
    """Context manager and decorator that sets grad mode for its body."""
    _enabled = True
    _inference = None

    def __enter__(self):
        self._prev = (_state["enabled"], _state["inference"])
        _state["enabled"] = self._enabled
        if self._inference is not None:
            _state["inference"] = self._inference
        return self

    def __exit__(self, *exc):
        _state["enabled"], _state["inference"] = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class _NoParamMode(_Mode):
    """no_grad / enable_grad: also usable as a bare decorator (`@torch.no_grad`)."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)

    def __init__(self, orig_func=None):
        pass


class no_grad(_NoParamMode):
    _enabled = False


class enable_grad(_NoParamMode):
    _enabled = True


class set_grad_enabled(_Mode):
    """As PyTorch's: constructing it sets the mode at once (so it works as a plain function);
    entering sets it again, leaving restores the mode seen at construction."""

    def __init__(self, mode):
        self.prev = _state["enabled"]
        self.mode = bool(mode)
        _state["enabled"] = self.mode

    def __enter__(self):
        _state["enabled"] = self.mode
        return None

    def __exit__(self, *exc):
        _state["enabled"] = self.prev
        return False

    def __call__(self, fn):
        _state["enabled"] = self.prev
        return super().__call__(fn)

    def clone(self):
        return self.__class__(self.mode)

    def __repr__(self):
        return f"torch.autograd.grad_mode.set_grad_enabled(mode={self.mode})"


class inference_mode(_Mode):
    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # used as a bare decorator

    def __init__(self, mode=True):
        self._enabled = not mode
        self._inference = bool(mode)
        self._mode = mode

    def clone(self):
        return inference_mode(self._mode)


# the engine's switches that have no effect here: webtorch's engine runs on one thread and always accumulates
# gradients densely in the parameters' layout
class _Switch:
    """A context manager (and a function) setting a flag, restored on exit."""

    def __init__(self, mode=True):
        self.prev, type(self).mode = type(self).mode, bool(mode)

    def __enter__(self):
        pass

    def __exit__(self, *args):
        type(self).mode = self.prev

    def clone(self):
        return self.__class__(self.mode)


class set_multithreading_enabled(_Switch):
    mode = True


class enforce_grad_layout_policy(_Switch):
    mode = True
