"""torch.utils.hooks: RemovableHandle (what every register_*_hook returns), unserializable_hook, warn_if_has_hooks."""
import warnings


class RemovableHandle:
    """Removes a hook from the dict(s) it was registered in; usable as a context manager."""
    _next_id = 0

    def __init__(self, hooks_dict, *extra_dicts):
        self.hooks_dict_ref = hooks_dict
        self.extra_dicts = extra_dicts
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1

    def remove(self):
        self.hooks_dict_ref.pop(self.id, None)
        for d in self.extra_dicts:
            d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self.remove()


def unserializable_hook(f):
    """Mark a hook as one that is not saved with its tensor (silences warn_if_has_hooks)."""
    f.__torch_unserializable__ = True
    return f


def warn_if_has_hooks(tensor):
    """Warn for each backward hook of a leaf tensor that saving it will drop (unless marked unserializable_hook)."""
    for hook in getattr(tensor, "_hooks", None) or ():
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this is expected, you can "
                          "decorate the function with @torch.utils.hooks.unserializable_hook to suppress this warning",
                          stacklevel=2)
