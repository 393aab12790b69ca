"""torch.cuda.profiler: the CUDA profiler's start/stop, absent without CUDA."""
import contextlib

from ._state import _lazy_init

__all__ = ["start", "stop", "profile"]


def init(output_file, flags=None, output_mode="key_value"):
    _lazy_init()


def start():
    _lazy_init()


def stop():
    _lazy_init()


@contextlib.contextmanager
def profile():
    start()
    try:
        yield
    finally:
        stop()
