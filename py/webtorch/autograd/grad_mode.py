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


class no_grad(_Mode):
    _enabled = False

    def __init__(self):
        pass


class enable_grad(_Mode):
    _enabled = True

    def __init__(self):
        pass


class set_grad_enabled(_Mode):
    def __init__(self, mode):
        # like PyTorch, calling it as a function takes effect immediately
        self._enabled = bool(mode)
        self._prev = (_state["enabled"], _state["inference"])
        _state["enabled"] = self._enabled

    def __enter__(self):
        return self

    def __call__(self, fn):
        _state["enabled"], _state["inference"] = self._prev
        return super().__call__(fn)

    def clone(self):
        m = _Mode()
        m._enabled = self._enabled
        return m


class inference_mode(_Mode):
    def __init__(self, mode=True):
        self._enabled = not mode
        self._inference = bool(mode)
        self._mode = mode

    def clone(self):
        return inference_mode(self._mode)
