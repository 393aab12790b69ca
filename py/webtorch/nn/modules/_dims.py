"""A layer family's 1d, 2d and 3d classes (Conv1d, Conv2d, Conv3d, ...) from one definition."""


def per_dim(name, base, module, **members):
    """``name.format(n)`` for n = 1, 2, 3: subclasses of ``base`` with ``_n = n`` and ``members``,
    defined in ``module`` (so that they pickle by name)."""
    return tuple(type(name.format(n), (base,), {"_n": n, "__module__": module, **members}) for n in (1, 2, 3))
