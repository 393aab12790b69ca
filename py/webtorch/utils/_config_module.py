"""torch.utils._config_module: the one implementation behind torch._dynamo.config, torch._inductor.config,
torch._functorch.config and torch.compiler.config (PyTorch's behaviour, keys and defaults from _config_snapshot.py).

A config module reads a known key as its value (a sub-config's through a proxy: `config.triton.cudagraphs` is key
'triton.cudagraphs'), stores a known key on assignment, raises AttributeError("<module>.<key> does not exist") for
any other name, redirects an alias to the key it names (possibly in another config module), warns once on a
deprecated key, hides a deleted key until it is set again (what unittest.mock.patch needs), and has PyTorch's patch
(context manager and decorator), get_config_copy, save_config and load_config.
"""
import contextlib
import copy
import importlib
import pickle
import types
import warnings


class ConfigModule(types.ModuleType):
    """A config module's class after install_config_module (its keys live in _values, never in __dict__)."""

    def __getattr__(self, name):
        values = self.__dict__.get("_values")
        if values is not None:
            if name in values and name not in self._hidden:
                self._warn_if_deprecated(name)
                return values[name]
            if name in self._aliases:
                module, key = self._alias(name)
                return getattr(module, key)
        raise AttributeError(f"{_torch_name(self)}.{name} does not exist")

    def __setattr__(self, name, value):
        if name.startswith("__") and name.endswith("__"):  # module attributes (the import system sets __spec__)
            super().__setattr__(name, value)
        elif name in self._values:
            self._warn_if_deprecated(name)
            self._values[name] = value
            self._hidden.discard(name)
        elif name in self._aliases:
            module, key = self._alias(name)
            setattr(module, key, value)
        else:
            raise AttributeError(f"{_torch_name(self)}.{name} does not exist")

    def __delattr__(self, name):
        """Hides the key until it is set again (unittest.mock.patch deletes, then sets), as PyTorch's does."""
        if name not in self._values:
            raise AttributeError(f"{_torch_name(self)}.{name} does not exist")
        self._hidden.add(name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | {k.split(".")[0] for k in self._values} | set(self._aliases))

    def _warn_if_deprecated(self, name):
        if name in self._deprecated and name not in self._warned:
            self._warned.add(name)
            warnings.warn(f"{_torch_name(self)}.{name} is deprecated and {self._deprecated[name]}. "
                          "It will be removed in a future version of PyTorch.", FutureWarning, stacklevel=3)

    def _alias(self, name):
        module, key = self._aliases[name].rsplit(".", 1)
        return importlib.import_module("webtorch" + module[len("torch"):]), key

    def get_config_copy(self):
        """Every key (aliases excepted) and its value, copied."""
        return copy.deepcopy(self._values)

    to_dict = get_config_copy

    def save_config(self):
        """The config as a pickled blob (without the keys in `_save_config_ignore`)."""
        ignored = self._values.get("_save_config_ignore") or ()
        return pickle.dumps({k: v for k, v in self.get_config_copy().items() if k not in ignored}, protocol=2)

    def load_config(self, maybe_pickled_config):
        """Restore from save_config() or get_config_copy(); a key this config does not know warns."""
        config = maybe_pickled_config if isinstance(maybe_pickled_config, dict) else \
            pickle.loads(maybe_pickled_config)
        for k, v in config.items():
            if k in self._values:
                setattr(self, k, v)
            else:
                warnings.warn(f"key {k} with value {v} is not understood by this config", stacklevel=1)

    def patch(self, arg1=None, arg2=None, **kwargs):
        """Temporary changes, as a context manager or decorator: patch("name", val), patch(name=val, ...),
        patch({"name": val})."""
        if arg1 is not None:
            if arg2 is not None:
                if not isinstance(arg1, str):
                    raise AssertionError("first argument must be a string when passing 2 positional args to patch")
                changes = {arg1: arg2}
            else:
                if not isinstance(arg1, dict):
                    raise AssertionError("first argument must be a dict when passing a single positional arg to "
                                         "patch")
                changes = arg1
            if kwargs:
                raise AssertionError("cannot pass both positional and keyword arguments to patch")
        else:
            changes = kwargs
            if arg2 is not None:
                raise AssertionError("second positional argument is only valid when first argument is a key string")
        if not isinstance(changes, dict):
            raise AssertionError(f"expected `dict` got {type(changes)}")
        return _ConfigPatch(self, changes)


def _torch_name(module):
    """The module's name as PyTorch spells it (torch._dynamo.config), for messages."""
    return "torch" + module.__name__[len("webtorch"):]


class _ConfigPatch(contextlib.ContextDecorator):
    def __init__(self, config, changes):
        self.config, self.changes, self.priors = config, changes, []

    def __enter__(self):
        prior = {k: self.config.__getattr__(k) for k in self.changes}  # an unknown key raises before any change
        try:
            for k, v in self.changes.items():
                setattr(self.config, k, v)
        except Exception:
            for k, v in prior.items():
                setattr(self.config, k, v)
            raise
        self.priors.append(prior)

    def __exit__(self, *exc):
        for k, v in self.priors.pop().items():
            setattr(self.config, k, v)


class SubConfigProxy:
    """`config.triton`: reads and writes `config`'s keys under the prefix 'triton.'."""

    def __init__(self, config, prefix):
        object.__setattr__(self, "_config", config)
        object.__setattr__(self, "_prefix", prefix)

    def __getattr__(self, name):
        return self._config.__getattr__(self._prefix + name)

    def __setattr__(self, name, value):
        self._config.__setattr__(self._prefix + name, value)

    def __delattr__(self, name):
        self._config.__delattr__(self._prefix + name)


def install_config_module(module, defaults, aliases, deprecated):
    """Turn `module` into a config module holding `defaults` (a key -> default dict, sub-configs' keys dotted)."""
    module.__class__ = ConfigModule
    d = module.__dict__
    d["_values"], d["_aliases"], d["_deprecated"] = copy.deepcopy(defaults), aliases, deprecated
    d["_warned"], d["_hidden"] = set(), set()
    for prefix in sorted({k.split(".")[0] for k in defaults if "." in k}):  # one level, as PyTorch 2.13's configs
        d[prefix] = SubConfigProxy(module, prefix + ".")
