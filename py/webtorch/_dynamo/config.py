"""torch._dynamo.config: the settings torch.compile reads (PyTorch's names and defaults)."""
import sys
import types

recompile_limit = 8  # compiled entries per function; beyond it, calls with new guards run eagerly (with a warning)
accumulated_recompile_limit = 256
fail_on_recompile_limit_hit = False  # raise FailOnRecompileLimitHit instead of falling back to eager
disable = False  # every torch.compile'd callable runs eagerly

_ALIASES = {"cache_size_limit": "recompile_limit", "accumulated_cache_size_limit": "accumulated_recompile_limit"}


class _ConfigModule(types.ModuleType):
    """`cache_size_limit` is PyTorch's alias of `recompile_limit` (reads and writes go to one value)."""

    def __getattr__(self, name):
        if name in _ALIASES:
            return getattr(self, _ALIASES[name])
        raise AttributeError(f"module '{self.__name__}' has no attribute '{name}'")

    def __setattr__(self, name, value):
        super().__setattr__(_ALIASES.get(name, name), value)


sys.modules[__name__].__class__ = _ConfigModule
