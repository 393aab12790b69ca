"""The base of the modules that apply one function of nn.functional with the arguments they are made with."""
from .module import Module


class _FunctionModule(Module):
    """A module applying ``_function`` to its input and the arguments it is made with (or a
    ``forward`` of its own), held as the attributes named in ``_arguments`` (in the function's order;
    ``__constants__`` unless a class says otherwise). Its repr lists them as ``name=value``,
    ``inplace`` only when it is True."""

    @property
    def _arguments(self):
        return self.__constants__

    def __init__(self, *values):
        super().__init__()
        for name, value in zip(self._arguments, values):
            setattr(self, name, value)

    def forward(self, input):
        return self._function(input, *(getattr(self, name) for name in self._arguments))

    def extra_repr(self):
        shown = [f"{name}={getattr(self, name)}" for name in self._arguments if name != "inplace"]
        if getattr(self, "inplace", False):
            shown.append("inplace=True")
        return ", ".join(shown)
