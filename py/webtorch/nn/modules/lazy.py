"""Lazy modules (PyTorch's LazyModuleMixin): parameters are UninitializedParameters until the first
call, which infers their shapes from the input, materializes and initializes them, and turns the
module into `cls_to_become` (LazyLinear becomes a Linear)."""
import itertools

from ...autograd import grad_mode
from ..parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self.register_load_state_dict_pre_hook(
            lambda module, *hook_args: module._lazy_load_hook(*hook_args))
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs):
        """A state dict's initialized tensors give the lazy ones their shapes."""
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param) and not is_lazy(state_dict[key]):
                with grad_mode.no_grad():
                    param.materialize(state_dict[key].shape)

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self):
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(), self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None):
        with grad_mode.no_grad():
            module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")


class _LazySized(LazyModuleMixin):
    """A lazy module whose size attribute (``_inferred``, 0 until then) is inferred from its first input."""

    def reset_parameters(self):
        if not self.has_uninitialized_params() and getattr(self, self._inferred) != 0:
            super().reset_parameters()


def _lazy_classes(lazy_base, *modules):
    """Lazy<M> for each module class M: ``lazy_base`` before M, becoming M once initialized (defined in M's
    module, as PyTorch's)."""
    return tuple(type(f"Lazy{m.__name__}", (lazy_base, m), {"cls_to_become": m, "__module__": m.__module__})
                 for m in modules)
