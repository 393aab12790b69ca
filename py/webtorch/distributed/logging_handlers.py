"""torch.distributed.logging_handlers: the log handlers c10d's loggers use, by name."""
import logging

__all__ = []

_log_handlers = {"default": logging.NullHandler()}
