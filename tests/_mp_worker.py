"""Child-process entry points of tests/test_multiprocessing.py (a module spawn's children import cheaply)."""


def square_into(i, q, x):
    q.put((i, (x * x + i).tolist()))


def fail(i):
    if i == 1:
        raise ValueError(f"boom in {i}")


def exit3(i):
    raise SystemExit(3)
