"""torch.autograd.detect_anomaly / set_detect_anomaly: with anomaly mode on, a backward node that
returns a NaN gradient raises RuntimeError naming the node (as PyTorch's engine does; each check
reads the gradient back, so this mode is for debugging)."""
import functools
import warnings

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]

_state = {"enabled": False, "check_nan": True}


def is_anomaly_enabled():
    return _state["enabled"]


def is_anomaly_check_nan_enabled():
    return _state["check_nan"]


def set_anomaly_enabled(enabled, check_nan=True):
    _state["enabled"], _state["check_nan"] = bool(enabled), bool(check_nan)


def check_gradients(node, grads):
    """PyTorch's engine check: called on each node's returned gradients while anomaly mode checks NaN."""
    for i, g in enumerate(grads):
        if g is not None and g.dtype.is_floating_point and bool((g != g).any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


class detect_anomaly:
    def __init__(self, check_nan=True):
        self.prev, self.prev_check_nan = is_anomaly_enabled(), is_anomaly_check_nan_enabled()
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", stacklevel=2)

    def __enter__(self):
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args):
        set_anomaly_enabled(self.prev, self.prev_check_nan)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    def __init__(self, mode, check_nan=True):
        self.prev, self.prev_check_nan = is_anomaly_enabled(), is_anomaly_check_nan_enabled()
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *args):
        set_anomaly_enabled(self.prev, self.prev_check_nan)
