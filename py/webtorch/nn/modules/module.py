"""nn.Module: the base class of every layer (PyTorch's semantics, names, key order and messages)."""
import functools
import itertools
import warnings
import weakref
from collections import OrderedDict, namedtuple

from ..._tensor import Tensor
from ...autograd import grad_mode
from ...autograd.function import Function
from ...ops import _creation
from ...utils._grad import zero_grads
from ...utils.hooks import RemovableHandle
from ..parameter import Buffer, Parameter, is_lazy

__all__ = ["Module"]

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s_, num_spaces):
    s = s_.split("\n")
    if len(s) == 1:
        return s_
    first = s.pop(0)
    s = [(num_spaces * " ") + line if line.strip() else "" for line in s]
    return first + "\n" + "\n".join(s)


def _typename(v):
    return v.type() if isinstance(v, Tensor) else type(v).__name__


def _register_hook(hooks, hook, prepend=False, marks=()):
    """Add ``hook`` to the ordered dict ``hooks`` (first where ``prepend``), marked True in each dict of the
    (dict, flag) ``marks`` whose flag is set; the handle removes it from ``hooks`` and every marks dict."""
    handle = RemovableHandle(hooks, *(d for d, _ in marks))
    hooks[handle.id] = hook
    for d, flag in marks:
        if flag:
            d[handle.id] = True
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


_COMPILE = []  # Module.compile's compiler, registered by torch._dynamo (which imports nn)
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()
_global_is_full_backward_hook = None
_global_buffer_registration_hooks = OrderedDict()
_global_module_registration_hooks = OrderedDict()
_global_parameter_registration_hooks = OrderedDict()


def register_module_forward_pre_hook(hook):
    return _register_hook(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook):
    return _register_hook(_global_forward_hooks, hook)


def _has_any_global_hook():
    return bool(_global_backward_pre_hooks or _global_backward_hooks or _global_forward_pre_hooks
                or _global_forward_hooks)


def register_module_backward_hook(hook):
    """hook(module, grad_input, grad_output) on every module, PyTorch's deprecated non-full form (on the
    output's grad_fn)."""
    return _register_global_backward_hook(hook, False)


def register_module_full_backward_hook(hook):
    """hook(module, grad_input, grad_output) -> new grad_input or None, on every module (before the module's own)."""
    return _register_global_backward_hook(hook, True)


def _register_global_backward_hook(hook, full):
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is (not full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a global Module hook. "
                           "Please use only one of them.")
    _global_is_full_backward_hook = full
    return _register_hook(_global_backward_hooks, hook)


def register_module_full_backward_pre_hook(hook):
    """hook(module, grad_output) -> new grad_output or None, on every module (before the module's own)."""
    return _register_hook(_global_backward_pre_hooks, hook)


def register_module_buffer_registration_hook(hook):
    """hook(module, name, buffer) -> new buffer or None, whenever a module registers a buffer."""
    return _register_hook(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook):
    """hook(module, name, submodule) -> new submodule or None, whenever a module registers a submodule."""
    return _register_hook(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook):
    """hook(module, name, param) -> new parameter or None, whenever a module registers a parameter."""
    return _register_hook(_global_parameter_registration_hooks, hook)


def _registered(hooks, module, name, value):
    """`value` as the registration hooks leave it."""
    for hook in hooks.values():
        output = hook(module, name, value)
        if output is not None:
            value = output
    return value


class _WrappedHook:
    """A hook called with the module first (a non-full backward hook on a grad_fn)."""

    def __init__(self, hook, module=None):
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = module is not None
        if module is not None:
            self.module = weakref.ref(module)

    def __call__(self, *args, **kwargs):
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)


class _BackwardHookFn(Function):
    """Identity on a module's inputs or outputs whose backward runs the module's full backward hooks."""
    _node_name = "BackwardHookFunctionBackward"

    @staticmethod
    def forward(ctx, state, is_output, *tensors):
        ctx.state, ctx.is_output = state, is_output
        return tuple(tensors)

    @staticmethod
    def backward(ctx, *grads):
        st = ctx.state
        grads = st.on_output_grads(grads) if ctx.is_output else st.on_input_grads(grads)
        return (None, None) + tuple(grads)


class _BackwardHookState:
    def __init__(self, module, pre_hooks, hooks):
        self.module = module
        self.pre_hooks, self.hooks = pre_hooks, hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_pos = None  # positions (among tensor args) of the wrapped inputs

    def _wrap(self, tensors, is_output):
        pos = [i for i, t in enumerate(tensors) if isinstance(t, Tensor) and t.requires_grad]
        if not pos or not grad_mode.is_grad_enabled():
            return list(tensors), []
        outs = _BackwardHookFn.apply(self, is_output, *[tensors[i] for i in pos])
        res = list(tensors)
        for i, o in zip(pos, outs):
            res[i] = o
        return res, pos

    def wrap_inputs(self, args):
        tpos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        self.n_inputs = len(tpos)
        new, pos = self._wrap([args[i] for i in tpos], False)
        self.input_pos = pos
        args = list(args)
        for i, t in zip(tpos, new):
            args[i] = t
        return tuple(args)

    def wrap_outputs(self, result):
        if isinstance(result, Tensor):
            return self._wrap([result], True)[0][0]
        if isinstance(result, tuple):
            return tuple(self._wrap(list(result), True)[0])
        return result

    def on_output_grads(self, grads):
        m = self.module
        for hook in self.pre_hooks:
            r = hook(m, grads)
            if r is not None:
                grads = tuple(r) if isinstance(r, (tuple, list)) else (r,)
        self.grad_outputs = grads
        if not self.input_pos and self.hooks:
            warnings.warn("Full backward hook is firing when gradients are computed with respect to module outputs "
                          "since no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/"
                          "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details.",
                          stacklevel=2)
            for hook in self.hooks:
                hook(m, (None,) * self.n_inputs, grads)
        return grads

    def on_input_grads(self, grads):
        m = self.module
        full = [None] * self.n_inputs
        for i, g in zip(self.input_pos, grads):
            full[i] = g
        full = tuple(full)
        for hook in self.hooks:
            r = hook(m, full, self.grad_outputs)
            if r is not None:
                full = tuple(r)
        return tuple(full[i] for i in self.input_pos)


_NON_FULL = ("Using non-full backward hooks on a Module that does not {} is deprecated and will be removed in future "
             "versions. This hook will be missing some of the {}. Please use register_full_backward_hook to get the "
             "documented behavior.")
_NON_FULL_NODES = "Using a non-full backward hook when {} is deprecated and will be removed in future versions. " \
    "This hook will be missing some {}."
_FULL_ADVICE = " Please use register_full_backward_hook to get the documented behavior."


def _all_tensors(x):
    return isinstance(x, tuple) and all(isinstance(t, Tensor) for t in x)


def _warn_non_full_backward_hook(inputs, result, grad_fn):
    """PyTorch's FutureWarnings where a non-full backward hook misses some of the gradients."""
    result = (result,) if isinstance(result, Tensor) else result
    inputs = (inputs,) if isinstance(inputs, Tensor) else inputs
    if not _all_tensors(result):
        msg = _NON_FULL.format("return a single Tensor or a tuple of Tensors", "grad_output")
    elif not _all_tensors(inputs):
        msg = _NON_FULL.format("take as input a single Tensor or a tuple of Tensors", "grad_input")
    else:
        out_grad_fn = {r.grad_fn for r in result if r.grad_fn is not None}
        if len(out_grad_fn) == 0 or (len(out_grad_fn) == 1 and grad_fn not in out_grad_fn):
            msg = _NON_FULL_NODES.format("outputs are nested in python data structure", "grad_output")
        elif len(out_grad_fn) > 1:
            msg = _NON_FULL_NODES.format("outputs are generated by different autograd Nodes",
                                         "grad_output") + _FULL_ADVICE
        elif {i.grad_fn for i in inputs if i.grad_fn is not None} != {n[0] for n in grad_fn.next_functions}:
            msg = _NON_FULL_NODES.format("the forward contains multiple autograd Nodes", "grad_input") + _FULL_ADVICE
        else:
            return
    warnings.warn(msg, FutureWarning, stacklevel=3)


def _forward_unimplemented(self, *input):
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')


def _remove(name, *dicts_or_sets):
    """Drop name from each dict or set that holds it (an attribute assigned anew changes kind)."""
    for d in dicts_or_sets:
        if name in d:
            if isinstance(d, dict):
                del d[name]
            else:
                d.discard(name)


def _repr_unless_default(module, head, defaults):
    """PyTorch's extra_repr of RNN and Embedding: `head`, then name=value for each (name, default) the module's
    attribute differs from (by identity for None and bools, by value otherwise); formatted with its attributes."""
    s = head
    for name, default in defaults:
        value = getattr(module, name)
        if value is not default if default is None or isinstance(default, bool) else value != default:
            s += f", {name}={{{name}}}"
    return s.format(**module.__dict__)


def _keep(module, **hyperparameters):
    """Keep a layer's constructor arguments as its attributes, in order (as PyTorch's layers keep them)."""
    for name, value in hyperparameters.items():
        setattr(module, name, value)


def _attribute(module, name):
    """``getattr(module, name)``, or PyTorch's AttributeError where the module has no such attribute."""
    if not hasattr(module, name):
        raise AttributeError(module._get_name() + " has no attribute `" + name + "`")
    return getattr(module, name)


class Module:
    """Base class for all neural network modules."""
    dump_patches = False
    _version = 1
    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if self.call_super_init is False and bool(kwargs):
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if self.call_super_init is False and bool(args):
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} "
                            "were given")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()
        d["_is_full_backward_hook"] = None
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = OrderedDict()
        d["_forward_hooks_always_called"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = OrderedDict()
        d["_state_dict_hooks"] = OrderedDict()
        d["_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_post_hooks"] = OrderedDict()
        d["_modules"] = {}

    forward = _forward_unimplemented

    # ---- registration -------------------------------------------------------------------
    def _check_new_name(self, kind, store, name):
        """register_buffer's and register_parameter's checks of `name` (PyTorch's messages)."""
        if store not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in self.__dict__[store]:
            raise KeyError(f"attribute '{name}' already exists")

    def register_buffer(self, name, tensor, persistent=True):
        self._check_new_name("buffer", "_buffers", name)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        if isinstance(tensor, Buffer):
            tensor = _plain(tensor)
        self._buffers[name] = _registered(_global_buffer_registration_hooks, self, name, tensor)
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        self._check_new_name("parameter", "_parameters", name)
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        elif param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                             f"created explicitly. To express '{name}' as a function of another Tensor, compute "
                             "the value in the forward() method.")
        else:
            self._parameters[name] = _registered(_global_parameter_registration_hooks, self, name, param)

    def add_module(self, name, module):
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        elif not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {type(name).__name__}")
        elif hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        elif "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        elif name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = _registered(_global_module_registration_hooks, self, name, module)

    def register_module(self, name, module):
        self.add_module(name, module)

    def get_submodule(self, target):
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            mod = _attribute(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        atoms = target.split(".")
        parent = self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target):
        module_path, _, param_name = target.rpartition(".")
        param = _attribute(self.get_submodule(module_path), param_name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        module_path, _, buffer_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        buffer = _attribute(mod, buffer_name)
        if buffer_name not in mod._buffers:
            raise AttributeError("`" + buffer_name + "` is not a buffer")
        return buffer

    def get_extra_state(self):
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called.")

    def set_extra_state(self, state):
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called.")

    # ---- attribute protocol -------------------------------------------------------------
    def __getattr__(self, name):
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _remove(name, self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                _remove(name, self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set)
                modules[name] = _registered(_global_module_registration_hooks, self, name, value)
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                    "(torch.nn.Module or None expected)")
                modules[name] = _registered(_global_module_registration_hooks, self, name, value)
            else:
                self._set_buffer_or_attribute(name, value)

    def _set_buffer_or_attribute(self, name, value):
        buffers = self.__dict__.get("_buffers")
        if not isinstance(value, Buffer) and (buffers is None or name not in buffers):
            object.__setattr__(self, name, value)
            return
        if value is not None and not isinstance(value, Tensor):
            raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                            "(torch.nn.Buffer, torch.Tensor or None expected)")
        if isinstance(value, Buffer):
            persistent = value.persistent
        else:
            persistent = name not in self._non_persistent_buffers_set
        _remove(name, self.__dict__, self._parameters, self._modules)
        self.register_buffer(name, value, persistent)

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = list(dir(self.__class__)) + list(self.__dict__) + list(self._parameters) + list(self._modules) \
            + list(self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def __setstate__(self, state):
        self.__dict__.update(state)

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_compiled_call_impl", None)  # as PyTorch: a copy or a pickle is not compiled
        return state

    # ---- calling ------------------------------------------------------------------------
    def _has_call_hooks(self):
        """Whether __call__ runs hooks around forward (module or global ones)."""
        return bool(self._forward_hooks or self._forward_pre_hooks or self._backward_hooks or self._backward_pre_hooks
                    or _has_any_global_hook())

    def _get_backward_hooks(self):
        """(full, non-full) backward hooks of this module, the global ones first."""
        full, non_full = [], []
        for hooks, is_full in ((_global_backward_hooks, _global_is_full_backward_hook),
                               (self._backward_hooks, self._is_full_backward_hook)):
            if is_full is True:
                full += hooks.values()
            elif is_full is False:
                non_full += hooks.values()
        return full, non_full

    def _call_impl(self, *args, **kwargs):
        if not self._has_call_hooks():
            return self.forward(*args, **kwargs)
        for hook_id, hook in itertools.chain(_global_forward_pre_hooks.items(), self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                res = hook(self, args, kwargs)
                if res is not None:
                    if not (isinstance(res, tuple) and len(res) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, "
                                           f"new_kwargs), but got {res}.")
                    args, kwargs = res
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
        bw_state = None
        full_hooks, non_full_hooks = self._get_backward_hooks()
        pre_hooks = [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]
        if full_hooks or pre_hooks:
            bw_state = _BackwardHookState(self, pre_hooks, full_hooks)
            args = bw_state.wrap_inputs(args)
        result = self.forward(*args, **kwargs)
        for hook_id, hook in itertools.chain(_global_forward_hooks.items(), self._forward_hooks.items()):
            if hook_id in self._forward_hooks_with_kwargs:
                res = hook(self, args, kwargs, result)
            else:
                res = hook(self, args, result)
            if res is not None:
                result = res
        if bw_state is not None:
            result = bw_state.wrap_outputs(result)
        if non_full_hooks:
            self._register_non_full_backward_hooks(args, result, non_full_hooks)
        return result

    def _register_non_full_backward_hooks(self, args, result, hooks):
        var = result
        while not isinstance(var, Tensor):
            var = next(v for v in var.values() if isinstance(v, Tensor)) if isinstance(var, dict) else var[0]
        grad_fn = var.grad_fn
        if grad_fn is not None:
            for hook in hooks:
                grad_fn.register_hook(_WrappedHook(hook, self))
            _warn_non_full_backward_hook(args, result, grad_fn)

    def __call__(self, *args, **kwargs):
        compiled = self.__dict__.get("_compiled_call_impl")
        return (compiled or self._call_impl)(*args, **kwargs)

    def compile(self, *args, **kwargs):
        """torch.compile this module's __call__ (hooks included) in place, with torch.compile's arguments: calls run
        compiled, the module and its state_dict keys stay as they are."""
        self.__dict__["_compiled_call_impl"] = _COMPILE[0](self, *args, **kwargs)

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        return _register_hook(self._forward_pre_hooks, hook, prepend,
                              [(self._forward_pre_hooks_with_kwargs, with_kwargs)])

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        return _register_hook(self._forward_hooks, hook, prepend, [(self._forward_hooks_with_kwargs, with_kwargs),
                                                                  (self._forward_hooks_always_called, always_call)])

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) -> new grad_input or None, run when the gradients with
        respect to the module's tensor inputs have been computed."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single "
                               "Module. Please use only one of them.")
        self._is_full_backward_hook = True
        return _register_hook(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook):
        """hook(module, grad_input, grad_output): PyTorch's deprecated non-full form, on the output's grad_fn."""
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single "
                               "Module. Please use only one of them.")
        self._is_full_backward_hook = False
        return _register_hook(self._backward_hooks, hook)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) -> new grad_output or None, run before the module's gradients."""
        return _register_hook(self._backward_pre_hooks, hook, prepend)

    def register_state_dict_pre_hook(self, hook):
        return _register_hook(self._state_dict_pre_hooks, hook)

    def register_load_state_dict_post_hook(self, hook):
        return _register_hook(self._load_state_dict_post_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook):
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs), the module
        first where `with_module`."""
        return _register_hook(self._load_state_dict_pre_hooks, functools.partial(hook, self) if with_module else hook)

    def _register_state_dict_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata) -> a replacement state dict or None."""
        return _register_hook(self._state_dict_hooks, hook)

    def register_state_dict_post_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata), which must return None, after the module's entries."""
        def post_hook(module, state_dict, prefix, local_metadata):
            if hook(module, state_dict, prefix, local_metadata) is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return self._register_state_dict_hook(post_hook)

    # ---- traversal ----------------------------------------------------------------------
    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                name = module_prefix + ("." if module_prefix else "") + k
                yield name, v

    def parameters(self, recurse=True):
        yield from (param for _, param in self.named_parameters(recurse=recurse))

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        yield from (buf for _, buf in self.named_buffers(recurse=recurse))

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def children(self):
        yield from (module for _, module in self.named_children())

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self):
        yield from (module for _, module in self.named_modules())

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if self not in memo:
            if remove_duplicate:
                memo.add(self)
            yield prefix, self
            for name, module in self._modules.items():
                if module is None:
                    continue
                submodule_prefix = prefix + ("." if prefix else "") + name
                yield from module.named_modules(memo, submodule_prefix, remove_duplicate)

    # ---- state ------------------------------------------------------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if getattr(self.__class__, "get_extra_state", Module.get_extra_state) is not Module.get_extra_state:
            destination[extra_state_key] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        if args:  # the deprecated positional form (destination, prefix, keep_vars)
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            hook_result = hook(self, destination, prefix, local_metadata)
            if hook_result is not None:
                destination = hook_result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        persistent_buffers = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(), persistent_buffers.items())
                       if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key in state_dict:
                _load_entry(self, name, param, key, state_dict[key], assign, error_msgs)
            elif strict:
                missing_keys.append(key)
        extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if getattr(self.__class__, "set_extra_state", Module.set_extra_state) is not Module.set_extra_state:
            if extra_state_key in state_dict:
                self.set_extra_state(state_dict[extra_state_key])
            elif strict:
                missing_keys.append(extra_state_key)
        elif strict and (extra_state_key in state_dict):
            unexpected_keys.append(extra_state_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_state_key:
                    input_name = key[len(prefix):].split(".", 1)
                    if input_name[0] not in (self._modules if len(input_name) > 1 else local_state):
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state_dict, prefix=""):
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing_keys,
                                         unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state_dict = {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)}
                    load(child, child_state_dict, child_prefix)
            incompatible_keys = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, incompatible_keys) is not None:
                    raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                         "expected to return new values, if incompatible_keys need to be "
                                         "modified, it should be done inplace.")

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                self.__class__.__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # ---- conversion -------------------------------------------------------------------
    def _apply(self, fn, recurse=True):
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with grad_mode.no_grad():
                param_applied = fn(param)
            if param_applied is not param:
                param.data = param_applied  # keeps the Parameter object (optimizers hold it)
            if param.grad is not None:
                with grad_mode.no_grad():
                    grad_applied = fn(param.grad)
                param._grad = grad_applied.detach()
        for key, buf in self._buffers.items():
            if is_lazy(buf):
                buf.data = fn(buf)  # stays uninitialized (a lazy module materializes it on its first call)
            elif buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def to(self, *args, **kwargs):
        device, dtype, _copy = _creation._parse_to(args, dict(kwargs))
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype={dtype}")

        def convert(t):
            try:
                if dtype is not None and t.is_floating_point():
                    return t.to(device, dtype)
                return t.to(device) if device is not None else t
            except NotImplementedError as e:
                if str(e) != "Cannot copy out of meta tensor; no data!":
                    raise
                raise NotImplementedError(f"{e} Please use torch.nn.Module.to_empty() instead of torch.nn.Module.to() "
                                          "when moving module from meta to a different device.") from None

        return self._apply(convert)

    def cuda(self, device=None):
        """PyTorch's AssertionError without CUDA; under the cuda alias, to the WebGPU device."""
        return self._apply(lambda t: t.cuda(device))

    def webgpu(self):
        return self.to("webgpu")

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    def float(self):
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def to_empty(self, *, device=None, recurse=True):
        return self._apply(lambda t: _creation.empty_like(t, device=device), recurse=recurse)

    # ---- modes ------------------------------------------------------------------------
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        zero_grads(self.parameters(), set_to_none)

    def share_memory(self):
        """Move the parameters and buffers to shared memory (see Tensor.share_memory_)."""
        return self._apply(lambda t: t.share_memory_())

    # ---- printing ---------------------------------------------------------------------
    def _get_name(self):
        return self.__class__.__name__

    def extra_repr(self):
        return ""

    def __repr__(self):
        extra_lines = []
        extra_repr = self.extra_repr()
        if extra_repr:
            extra_lines = extra_repr.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        main_str += ")"
        return main_str


def _plain(t):
    out = Tensor._make(t._storage, t._shape, t._stride, t._offset)
    out._requires_grad = t._requires_grad
    return out


def _foreign_tensor(value, like):
    """A tensor-like from another library (a torch.Tensor or numpy array) as a webtorch tensor."""
    try:
        if hasattr(value, "detach") and hasattr(value, "numpy"):  # torch.Tensor
            value = value.detach().cpu().numpy()
        if hasattr(value, "__array__") and hasattr(value, "shape"):
            return _creation.tensor(value.tolist() if value.ndim else value.item(), dtype=like.dtype,
                                    device=like.device)
    except Exception:
        return None
    return None


def _load_entry(module, name, param, key, input_param, assign, error_msgs):
    """Copy (or with assign, set) one parameter or buffer of `module` from its state-dict entry; what
    does not fit goes to error_msgs with PyTorch's words."""
    if not isinstance(input_param, Tensor):
        received = type(input_param)
        input_param = _foreign_tensor(input_param, param)
        if input_param is None:
            error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or '
                              f"Tensor-like object from checkpoint but received {received}")
            return
    if len(param.shape) == 0 and len(input_param.shape) == 1 and input_param.shape[0] == 1:
        input_param = input_param[0]
    if tuple(input_param.shape) != tuple(param.shape):
        error_msgs.append(f"size mismatch for {key}: copying a param with shape {input_param.shape} "
                          f"from checkpoint, the shape in current model is {param.shape}.")
        return
    try:
        with grad_mode.no_grad():
            if not assign:
                param.copy_(input_param)
                return
            if isinstance(param, Parameter):
                if not isinstance(input_param, Parameter):
                    input_param = Parameter(input_param, requires_grad=param.requires_grad)
                else:
                    input_param.requires_grad_(param.requires_grad)
            setattr(module, name, input_param)
    except Exception as ex:
        error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model '
                          f"are {param.size()} and whose dimensions in the checkpoint are "
                          f"{input_param.size()}, an exception occurred : {ex.args}.")
