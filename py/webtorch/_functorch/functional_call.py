"""torch.func.functional_call and stack_module_state: a module run with other parameters and buffers, and
the parameters of many same-shaped modules stacked for vmap (model ensembles)."""
from .. import _late


def _tied_names(module):
    """{name: the names sharing its tensor} over the module's parameters and buffers (duplicates kept)."""
    by_id = {}
    for n, t in list(module.named_parameters(remove_duplicate=False)) + list(module.named_buffers(
            remove_duplicate=False)):
        by_id.setdefault(id(t), []).append(n)
    return {n: names for names in by_id.values() for n in names}


def _merge(parameter_and_buffer_dicts):
    if isinstance(parameter_and_buffer_dicts, dict):
        return dict(parameter_and_buffer_dicts)
    merged, repeated = {}, []
    for d in parameter_and_buffer_dicts:
        repeated += [k for k in d if k in merged]
        merged.update(d)
    if repeated:
        raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
    return merged


def _with_tied(values, module, tie_weights):
    if not tie_weights:
        return values
    tied = _tied_names(module)
    out = dict(values)
    for name, v in values.items():
        for other in tied.get(name, ()):
            if other in values and values[other] is not v:
                raise ValueError(f"functional_call got multiple values for keys {sorted([name, other])}, which are "
                                 "tied. Consider using tie_weights=False")
            out[other] = v
    return out


def _check_strict(module, values):
    known = set(_tied_names(module))
    missing = sorted(known - set(values))
    unexpected = sorted(set(values) - known)
    msgs = []
    if unexpected:
        msgs.append("Unexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + ".")
    if missing:
        msgs.append("Missing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
    if msgs:
        raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t" + "\n\t".join(msgs))


def _swap(module, name, value):
    """Put value under the dotted name; give back what was there (a missing entry: ("attr", None))."""
    *path, leaf = name.split(".")
    m = module
    for p in path:
        m = getattr(m, p)
    for store in ("_parameters", "_buffers"):
        d = m.__dict__[store]
        if leaf in d:
            old = d[leaf]
            d[leaf] = value
            return m, store, leaf, old
    old = m.__dict__.get(leaf)
    m.__dict__[leaf] = value
    return m, "attr", leaf, old


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    values = _with_tied(_merge(parameter_and_buffer_dicts), module, tie_weights)
    if strict:
        _check_strict(module, values)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    swapped = [_swap(module, n, v) for n, v in values.items()]
    try:
        return module(*args, **(kwargs or {}))
    finally:
        for m, store, leaf, old in reversed(swapped):
            if store == "attr":
                if old is None:
                    del m.__dict__[leaf]
                else:
                    m.__dict__[leaf] = old
            else:
                m.__dict__[store][leaf] = old


def stack_module_state(models):
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    first = models[0]
    if not all(type(m) is type(first) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(named):
        out = {}
        for name in dict(named(first)):
            ts = [dict(named(m))[name] for m in models]
            s = _late.shape.stack([t.detach() for t in ts])
            out[name] = s.requires_grad_(True) if all(t.requires_grad for t in ts) else s
        return out
    return stacked(lambda m: m.named_parameters()), stacked(lambda m: m.named_buffers())
