"""torch.ModuleDict / ParameterDict / BufferDict / Capsule: TorchScript's C++ types at torch's top level.

The three dicts are views of one module's direct submodules, parameters or buffers (TorchScript takes a
script module; webtorch has no script modules, so any nn.Module, a traced one included, is taken).
"""


class _SlotView:
    _slot = None  # the nn.Module dict viewed: "_modules", "_parameters" or "_buffers"

    def __init__(self, module):
        if not hasattr(module, self._slot):
            raise TypeError(f"__init__(): incompatible constructor arguments. The following argument types are "
                            f"supported:\n    1. torch._C.{type(self).__name__}(arg0: torch._C.ScriptModule)\n\n"
                            f"Invoked with: {module!r}")
        self._module = module

    def _entries(self):
        return {k: v for k, v in getattr(self._module, self._slot).items() if v is not None}

    def items(self):
        return list(self._entries().items())

    def contains(self, key):
        return key in self._entries()

    def getattr(self, key):
        entries = self._entries()
        if key not in entries:
            raise RuntimeError(f"{type(self._module).__name__} does not have a field with name '{key}'")
        return entries[key]

    def setattr(self, key, value):
        setattr(self._module, key, value)


class ModuleDict(_SlotView):
    _slot = "_modules"


class ParameterDict(_SlotView):
    _slot = "_parameters"


class BufferDict(_SlotView):
    _slot = "_buffers"


class Capsule:
    """An opaque C pointer in TorchScript: never made from Python."""

    def __init__(self, *args, **kwargs):
        raise TypeError("torch._C.Capsule: No constructor defined!")
