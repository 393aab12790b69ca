"""torch.backends.mkl: Intel MKL, which webtorch does not use (numpy or pure Python on cpu)."""
VERBOSE_OFF = 0
VERBOSE_ON = 1


def is_available():
    return False


class verbose:
    """`with torch.backends.mkl.verbose(level):` (nothing to report here)."""

    def __init__(self, enable):
        self.enable = enable

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
