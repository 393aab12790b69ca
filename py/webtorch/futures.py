"""torch.futures and torch.jit's fork/wait: a Future holds a value (or an exception) that arrives once.

webtorch runs forked work eagerly, as PyTorch's eager (unscripted) `torch.jit.fork` does: the call runs
at once, raises at once, and returns a completed Future. Futures completed later, from another thread or by
`set_result`, run their callbacks then; `wait` blocks until then.
"""
import threading

__all__ = ["Future", "collect_all", "wait_all"]


class Future:
    def __init__(self, *, devices=None):
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._value = self._error = None
        self._callbacks = []

    def done(self):
        return self._done.is_set()

    def wait(self):
        self._done.wait()
        return self.value()

    def value(self):
        if not self.done():
            raise RuntimeError("Future.value() called before the Future completed; use wait() to block until it does")
        if self._error is not None:
            raise self._error
        return self._value

    def then(self, callback):
        """A new Future completed with callback(self) (or with its exception) once this one completes."""
        fut = Future()

        def run(f):
            try:
                result = callback(f)
            except Exception as e:
                err = RuntimeError(f"Got the following error when running the callback: {type(e).__name__}: {e}")
                err.__cause__ = e
                fut.set_exception(err)
            else:
                fut.set_result(result)
        self.add_done_callback(run)
        return fut

    def add_done_callback(self, callback):
        with self._lock:
            if not self.done():
                self._callbacks.append(callback)
                return
        callback(self)

    def set_result(self, result):
        self._complete(result, None)

    def set_exception(self, result):
        if not isinstance(result, Exception):
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(None, result)

    def _complete(self, value, error):
        with self._lock:
            if self.done():
                raise RuntimeError("Attempting to mark a completed Future as complete again. Note that a Future can "
                                   "only be marked completed once.")
            self._value, self._error = value, error
            self._done.set()
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)


def collect_all(futures):
    """A Future completed with the list of futures once every one of them has completed."""
    out, pending = Future(), [len(futures)]
    lock = threading.Lock()

    def one_done(_):
        with lock:
            pending[0] -= 1
            last = pending[0] == 0
        if last:
            out.set_result(list(futures))
    if not futures:
        out.set_result([])
    for f in futures:
        f.add_done_callback(one_done)
    return out


def wait_all(futures):
    """The values of futures, waiting for each (the first error raises)."""
    return [f.wait() for f in futures]


def fork(func, *args, **kwargs):
    """torch.jit.fork, eager: runs func(*args, **kwargs) now and returns its completed Future."""
    fut = Future()
    fut.set_result(func(*args, **kwargs))
    return fut


def wait(future):
    """torch.jit.wait: the value of future, once complete."""
    if not isinstance(future, Future):
        raise TypeError(f"wait(): incompatible function arguments. The following argument types are supported:\n"
                        f"    1. (arg0: torch._C.Future) -> object\n\nInvoked with: {future!r}")
    return future.wait()
