"""Child-process entry points of tests/test_multiprocessing.py (a module spawn's children import cheaply)."""


def square_into(i, q, x, model):
    """Send a result back by value; update a model in shared memory in place (as Hogwild training does)."""
    import webtorch as torch
    q.put((i, (x * x + i).tolist(), x.is_shared(), model.weight.is_shared()))
    with torch.no_grad():
        for p in model.parameters():
            p.add_(i + 1)


def fail(i):
    if i == 1:
        raise ValueError(f"boom in {i}")


def exit3(i):
    raise SystemExit(3)

