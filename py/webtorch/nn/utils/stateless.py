"""torch.nn.utils.stateless.functional_call: a module called with other tensors in place of its
parameters and buffers (each swapped in by name for the call, then put back)."""
import warnings
from contextlib import contextmanager

from ..parallel import DataParallel

__all__ = ["functional_call"]


def _owner(module, name):
    *path, leaf = name.split(".")
    for p in path:
        module = getattr(module, p)
    return module, leaf


def _swap(module, name, value):
    """Put value at `name` (a parameter, a buffer or a plain attribute); return what was there."""
    owner, leaf = _owner(module, name)
    for table in (owner._parameters, owner._buffers):
        if leaf in table:
            old, table[leaf] = table[leaf], value
            return old
    old = getattr(owner, leaf)
    setattr(owner, leaf, value)
    return old


def _untied(module, tensors):
    """tensors with every name a given tensor's tied parameter or buffer has (tie_weights=True)."""
    names = {}
    for name, t in list(module.named_parameters(remove_duplicate=False)) + \
            list(module.named_buffers(remove_duplicate=False)):
        names.setdefault(id(t), []).append(name)
    out = dict(tensors)
    for group in names.values():
        given = [n for n in group if n in tensors]
        if len({id(tensors[n]) for n in given}) > 1:
            raise ValueError(f"functional_call got multiple values for keys {given}, which are tied. Consider using "
                             "tie_weights=False")
        for n in group if given else ():
            out.setdefault(n, tensors[given[0]])
    return out


@contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False):
    tensors = _untied(module, parameters_and_buffers) if tie_weights else dict(parameters_and_buffers)
    if strict:
        known = {n for n, _ in module.named_parameters(remove_duplicate=False)} | \
            {n for n, _ in module.named_buffers(remove_duplicate=False)}
        errors = []
        unexpected = [k for k in tensors if k not in known]
        missing = [k for k in sorted(known) if k not in tensors]
        if unexpected:
            errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if errors:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(),
                                                                                 "\n\t".join(errors)))
    originals = {}
    try:
        for name, value in tensors.items():
            originals[name] = _swap(module, name, value)
        yield
    finally:
        for name, value in originals.items():
            _swap(module, name, value)


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in a "
                  "future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in "
                  "replacement.", FutureWarning, stacklevel=2)
    if isinstance(module, DataParallel):
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    kwargs = {} if kwargs is None else kwargs
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)
