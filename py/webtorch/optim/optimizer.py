"""The Optimizer base class: parameter groups, per-parameter state, zero_grad, and
state_dict / load_state_dict in PyTorch's format:

    {'state': {0: {'step': tensor(3.), 'exp_avg': ..., ...}, ...},
     'param_groups': [{'lr': 0.001, ..., 'params': [0, 1, ...]}]}

so a state dict saved here loads into `torch.optim` and back. Internally the step count is a
plain Python float (no device round trip per step); `state_dict()` returns it as a 0-d
float32 cpu tensor as PyTorch does.
"""
import copy
import itertools
import struct
import sys
import warnings
from collections import OrderedDict, defaultdict

from .. import _dtype
from .._tensor import Tensor
from ..autograd import grad_mode
from ..ops import _creation
from ..utils._grad import zero_grads
from ..utils.hooks import RemovableHandle


class _RequiredParameter:
    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()



def _to_scalar(x):
    if isinstance(x, Tensor):
        return x.item()
    return x


def _init_state(p, state, *zeros):
    """A parameter's first state: step 0.0, then a zero tensor like p under each name (PyTorch's key order)."""
    state["step"] = 0.0
    for k in zeros:
        state[k] = _creation.zeros_like(p)


def f32(x):
    """x rounded to float32, as PyTorch stores a Python float in a float32 tensor."""
    return struct.unpack("f", struct.pack("f", x))[0]


def _check_lr(lr):
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= _to_scalar(lr):
        raise ValueError(f"Invalid learning rate: {lr}")


def _check_fused(fused, differentiable, foreach):
    """PyTorch's checks on `fused` (the step is the same computation either way here)."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _check_nonnegative(**values):
    """PyTorch's "Invalid <name> value" check of each hyperparameter, in the order given."""
    for name, v in values.items():
        if not 0.0 <= v:
            raise ValueError(f"Invalid {name} value: {v}")


def _check_adam_args(eps, betas, weight_decay):
    _check_nonnegative(epsilon=eps)
    if not 0.0 <= _to_scalar(betas[0]) < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= _to_scalar(betas[1]) < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    _check_nonnegative(weight_decay=weight_decay)


_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """hook(optimizer, args, kwargs) -> None or new (args, kwargs), before every optimizer's step (before its own
    pre-hooks)."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """hook(optimizer, args, kwargs), after every optimizer's step (after its own post-hooks)."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


class Optimizer:
    # state entries PyTorch keeps in 0-d float32 tensors; here Python floats (no device round trip
    # per step; `f32` rounds them as PyTorch's tensors do where they are not integers)
    _scalar_state = ("step",)
    # the entries of _scalar_state the update can read from 0-d device tensors (PyTorch's
    # capturable=True): moved there while a webgpu capture records (_capture_prologue)
    _capturable_state = ("step",)
    # the group flags a later PyTorch added: __setstate__ gives an older pickle's groups their default False
    _flags_added_later = ()

    def __init__(self, params, defaults):
        if defaults.get("differentiable"):
            raise NotImplementedError(f"{type(self).__name__}(differentiable=True) is not supported by webtorch: "
                                      "its optimizer steps are not recorded by autograd")
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {params.type()}")
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for g in param_groups:
            self.add_param_group(g)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_optimizer_step_pre_hooks", OrderedDict())
        self.__dict__.setdefault("_optimizer_step_post_hooks", OrderedDict())
        for g in self.param_groups:
            for k in self._flags_added_later:
                g.setdefault(k, False)

    def __repr__(self):
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"\n    {key}: {group[key]}"
        return s + "\n)"

    # ---- groups -------------------------------------------------------------------------
    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        tensors = param_group["params"] = _group_params(param_group)
        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + type(p).__module__ + "." + type(p).__name__)
            if not self.defaults.get("differentiable", None) and not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(set(map(id, tensors))) != len(tensors):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error", stacklevel=3)
        seen = set()
        for g in self.param_groups:
            seen.update(map(id, g["params"]))
        if seen & set(map(id, tensors)):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ---- gradients ----------------------------------------------------------------------
    def zero_grad(self, set_to_none=True):
        zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    # ---- stepping -----------------------------------------------------------------------
    def step(self, closure=None):
        return self._hooked(self._step, closure)

    def _hooked(self, step, closure):
        """Run `step(closure)` between the registered step pre- and post-hooks; they see
        `(self, closure)` as args, and a pre-hook may return new `(args, kwargs)`, as in PyTorch."""
        args, kwargs = (self,) + ((closure,) if closure is not None else ()), {}
        for hook in [*_global_optimizer_pre_hooks.values(), *self._optimizer_step_pre_hooks.values()]:
            r = hook(self, args, kwargs)
            if r is not None:
                if not (isinstance(r, tuple) and len(r) == 2):
                    raise RuntimeError(f"{step} must return None or a tuple of (new_args, new_kwargs), but got {r}.")
                args, kwargs = r
        loss = step(*args[1:], **kwargs)
        for hook in [*self._optimizer_step_post_hooks.values(), *_global_optimizer_post_hooks.values()]:
            hook(self, args, kwargs)
        return loss

    def _step(self, closure=None):
        loss = None
        if closure is not None:
            with grad_mode.enable_grad():
                loss = closure()
        with grad_mode.no_grad():
            self._capture_prologue()
            for group in self.param_groups:
                self._step_group(group)
        return loss

    def _capture_prologue(self):
        """While a webgpu capture records (backends/webgpu/capture.py), the per-step scalars of
        the state (`_capturable_state`) move into 0-d device tensors: the recorded kernels then
        read them from memory instead of baking per-step Python values into their parameters,
        and each replay advances them."""
        cap = sys.modules.get("webtorch.backends.webgpu.capture")
        active = cap.active() if cap is not None else None
        if active is None or not self._capturable_state:
            return
        with active.setup():             # one-time setup, not part of the recorded step
            for p, st in self.state.items():
                if isinstance(p, Tensor) and p.device.type == "webgpu":
                    for k in self._capturable_state:
                        if k in st and not isinstance(st[k], Tensor):
                            st[k] = _creation.tensor(float(st[k]), device=p.device)

    def _step_group(self, group):
        raise NotImplementedError

    def _with_grad(self, group):
        """(param, its state) for each parameter of the group that has a gradient."""
        for p in group["params"]:
            if p.grad is not None:
                yield p, self.state[p]

    def _register(self, name, hook, prepend=False):
        hooks = self.__dict__.setdefault(name, OrderedDict())
        h = RemovableHandle(hooks)
        hooks[h.id] = hook
        if prepend:
            hooks.move_to_end(h.id, last=False)
        return h

    def _run_hooks(self, name, state_dict=None):
        """Call the hooks registered under `name`; a hook given a state dict may return a new one."""
        for hook in list(self.__dict__.get(name, {}).values()):
            if state_dict is None:
                hook(self)
            else:
                r = hook(self, state_dict)
                state_dict = state_dict if r is None else r
        return state_dict

    def register_step_pre_hook(self, hook):
        return self._register("_optimizer_step_pre_hooks", hook)

    def register_step_post_hook(self, hook):
        return self._register("_optimizer_step_post_hooks", hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer) runs before state_dict() builds the dict."""
        return self._register("_optimizer_state_dict_pre_hooks", hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) -> a replacement state dict or None, after state_dict()."""
        return self._register("_optimizer_state_dict_post_hooks", hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) -> a replacement state dict or None, before loading."""
        return self._register("_optimizer_load_state_dict_pre_hooks", hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer) runs after load_state_dict()."""
        return self._register("_optimizer_load_state_dict_post_hooks", hook, prepend)

    # ---- state dicts --------------------------------------------------------------------
    def state_dict(self):
        self._run_hooks("_optimizer_state_dict_pre_hooks")
        mapping = {}
        start = 0
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {}
        for k, v in self.state.items():
            key = mapping[id(k)] if isinstance(k, Tensor) else k
            state[key] = self._export_state(v) if isinstance(v, dict) else v
        return self._run_hooks("_optimizer_state_dict_post_hooks", {"state": state, "param_groups": groups})

    def _export_state(self, st):
        scalar = self._scalar_state
        return {k: _creation.tensor(float(v), dtype=_dtype.float32) if k in scalar and not isinstance(v, Tensor) else v
                for k, v in st.items()}

    def load_state_dict(self, state_dict):
        state_dict = self._run_hooks("_optimizer_load_state_dict_pre_hooks", dict(state_dict))
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(itertools.chain.from_iterable(g["params"] for g in saved_groups),
                          itertools.chain.from_iterable(g["params"] for g in groups)))
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if isinstance(k, str) and k.isdigit():
                k = int(k)
            if k in id_map:
                param = id_map[k]
                state[param] = {sk: _import_value(param, sk, sv, self._scalar_state) for sk, sv in v.items()}
            else:
                state[k] = v
        new_groups = []
        for g, ng in zip(groups, saved_groups):
            ng["params"] = g["params"]
            if "param_names" in g and "param_names" not in ng:
                ng["param_names"] = g["param_names"]
            if "betas" in ng and isinstance(ng["betas"], list):
                ng["betas"] = tuple(ng["betas"])
            new_groups.append(ng)
        self.__setstate__({"state": state, "param_groups": new_groups})
        self._run_hooks("_optimizer_load_state_dict_post_hooks")


def _import_value(param, key, value, scalar_keys=()):
    """A loaded state entry as this optimizer keeps it: scalars as floats, tensors (webtorch's,
    or PyTorch's / numpy's) on the parameter's device and, if floating, in its dtype."""
    if key in scalar_keys:
        return float(value.item() if hasattr(value, "item") else value)
    if isinstance(value, (list, tuple)):
        return type(value)(_import_value(param, None, v) for v in value)
    if not isinstance(value, Tensor) and hasattr(value, "shape") and hasattr(value, "tolist"):
        if hasattr(value, "detach"):
            value = value.detach().cpu()
        value = _creation.tensor(value.tolist(), dtype=_dtype.BY_NAME.get(str(value.dtype).replace("torch.", "")))
    if isinstance(value, Tensor):
        dt = param.dtype if param.is_floating_point() else value.dtype
        with grad_mode.no_grad():
            v = value.to(param.device, dt)
            return v.clone() if v is value else v
    return copy.deepcopy(value)


def _group_params(param_group):
    """A group's "params" as a list of tensors; (name, tensor) pairs put their names in "param_names"."""
    params = param_group["params"]
    if isinstance(params, Tensor):
        return [params]
    if isinstance(params, set):
        raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                        "of tensors in sets will change between runs. Please use a list instead.")
    names, tensors = [], []
    for p in params:
        if isinstance(p, tuple):
            names.append(p[0])
            tensors.append(p[1])
        else:
            tensors.append(p)
    if names:
        if len(names) != len(tensors):
            raise ValueError("all optimizer params should be with/without names. Some param names are missing")
        param_group["param_names"] = names
    return tensors
