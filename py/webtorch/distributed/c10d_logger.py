"""torch.distributed.c10d_logger: the decorators PyTorch wraps its c10d functions in (`_exception_logger` logs an
exception's process-group details before re-raising; `_time_logger` times a call); here they log to the
"torch.distributed.c10d" logger."""
import functools
import logging
import time

from .logging_handlers import _log_handlers

__all__ = []

_c10d_logger = logging.getLogger("torch.distributed.c10d")
_c10d_logger.addHandler(_log_handlers["default"])


def _get_or_create_logger(destination="default"):
    return _c10d_logger


def _exception_logger(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except Exception as error:
            _c10d_logger.debug("%s raised %r", func.__name__, error)
            raise
    return wrapper


def _time_logger(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        start = time.perf_counter_ns()
        result = func(*args, **kwargs)
        _c10d_logger.debug("%s took %d ns", func.__name__, time.perf_counter_ns() - start)
        return result
    return wrapper
