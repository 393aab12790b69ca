"""torch.backends.nnpack: NNPACK, which webtorch does not use."""
import contextlib

enabled = False


def is_available():
    return False


def set_flags(_enabled):
    global enabled
    previous, enabled = (enabled,), _enabled
    return previous


@contextlib.contextmanager
def flags(enabled=False):
    previous = set_flags(enabled)
    try:
        yield
    finally:
        set_flags(*previous)
