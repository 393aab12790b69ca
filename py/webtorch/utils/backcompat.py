"""torch.utils.backcompat: switches for warnings about old broadcasting and keepdim behaviour (off by default)."""


class Warning:
    def __init__(self, setter, getter):
        self.setter, self.getter = setter, getter

    def set_enabled(self, value):
        self.setter(value)

    def get_enabled(self):
        return self.getter()

    enabled = property(get_enabled, set_enabled)


def _flag():
    state = [False]

    def setter(value):
        state[0] = bool(value)
    return setter, lambda: state[0]


broadcast_warning = Warning(*_flag())
keepdim_warning = Warning(*_flag())
