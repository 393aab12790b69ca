"""torch.utils.hooks.RemovableHandle: what every register_*_hook returns."""


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
