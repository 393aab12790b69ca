"""`import torch` as webtorch, in the two places where that is right: the Pyodide playground
(no real torch can exist there) and `python -m webtorch script.py` / `webtorch-run` (the user
asked for it). Nothing else calls `install()`, so an installed PyTorch is never shadowed.

One meta-path finder maps `torch` and every `torch.a.b` to the module `webtorch.a.b`, so
`import torch.nn as nn`, `import torch.utils.data` and `from torch.optim import lr_scheduler`
all get webtorch's modules; a submodule webtorch lacks raises ModuleNotFoundError naming
`torch.a.b`, as a missing PyTorch submodule does.
"""
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys


class _TorchAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        real = "webtorch" + fullname[len("torch"):]
        try:
            module = importlib.import_module(real)
        except ModuleNotFoundError as e:
            if e.name != real:
                raise
            if fullname in _aside:  # PyTorch's own module, loaded before the alias (its engine's imports)
                module = _aside[fullname]
            else:
                raise ModuleNotFoundError(f"No module named '{fullname}'", name=fullname) from None
        return importlib.machinery.ModuleSpec(fullname, self, loader_state=(module, module.__spec__),
                                              is_package=hasattr(module, "__path__"))

    def create_module(self, spec):
        return spec.loader_state[0]

    def exec_module(self, module):
        # the import system set module.__spec__ to the alias's spec: give webtorch's (or PyTorch's) back
        module.__spec__ = module.__spec__.loader_state[1]


_finder = _TorchAlias()
_aside = {}  # PyTorch's modules set aside by set_aside_pytorch(): name -> module


def set_aside_pytorch():
    """Before install(), where PyTorch was imported (webtorch.distributed's engine under torchrun): take its modules
    out of sys.modules, so `torch` names webtorch, while PyTorch's code keeps its own module objects; a submodule
    webtorch lacks that PyTorch's code imports later resolves to PyTorch's (install's finder)."""
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        _aside[name] = sys.modules.pop(name)


def install():
    """Make `import torch` (and every `torch.*` submodule) import webtorch's modules."""
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)


def uninstall():
    """Undo install(): forget the alias and the `torch*` entries it put in sys.modules."""
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    for name, mod in list(sys.modules.items()):
        if (name == "torch" or name.startswith("torch.")) and getattr(mod, "__name__", "").startswith("webtorch"):
            del sys.modules[name]
