"""torch.library's Python custom-op API: `custom_op` (a function or a decorator), `register_fake`,
`register_kernel`, `register_autograd`. An op runs its Python function (the one `register_kernel` gave for the
first tensor argument's device type, else the default); it is opaque to autograd, as PyTorch's custom ops are,
unless `register_autograd` gave it a backward (then it is one graph node, an autograd.Function). It is reachable
as `torch.ops.<namespace>.<name>`. `register_autocast` casts its floating inputs under autocast, and
`register_torch_dispatch` routes calls with a given tensor subclass to a rule. `register_vmap` keeps a rule that
webtorch's vmap does not need (it runs a custom op per sample). `triton_op` defines an op as `custom_op` does;
Triton kernels themselves (`wrap_triton`) need CUDA. The C++-schema API (`Library`, `define`, `impl`) raises
NotImplementedError."""
import functools
import inspect
import warnings

from ._tensor import Tensor
from .amp import autocast_mode
from .autograd import grad_mode
from .autograd.function import Function
from .ops.registry import CUSTOM_OPS

__all__ = ["custom_op", "register_fake", "register_kernel", "register_autograd", "Library", "define", "impl",
           "get_ctx", "infer_schema", "impl_abstract", "fallthrough_kernel", "register_autocast",
           "register_torch_dispatch", "register_vmap", "triton_op", "wrap_triton"]


class _Apply(Function):
    @staticmethod
    def forward(ctx, op, kwargs, *args):
        out = op._run(args, kwargs)
        ctx._op = op
        if op._setup_context is not None:
            op._setup_context(ctx, args, out)
        return out

    @staticmethod
    def backward(ctx, *grads):
        g = ctx._op._backward(ctx, *grads)
        return (None, None) + (tuple(g) if isinstance(g, (tuple, list)) else (g,))


class CustomOpDef:
    def __init__(self, qualname, fn, device_types):
        self._qualname, self._init_fn = qualname, fn
        self._kernels = {d: fn for d in ([device_types] if isinstance(device_types, str) else device_types or ())}
        self._fake = self._backward = self._setup_context = self._vmap = None
        self._autocast, self._dispatch_rules = {}, {}
        self._signature = inspect.signature(fn)
        functools.update_wrapper(self, fn)

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    def register_fake(self, fn):
        self._fake = fn
        return fn

    def register_kernel(self, device_types, fn=None):
        def put(f):
            for d in [device_types] if isinstance(device_types, str) else device_types:
                self._kernels[d] = f
            return f
        return put if fn is None else put(fn)

    def register_autograd(self, backward, *, setup_context=None):
        self._backward, self._setup_context = backward, setup_context

    def _run(self, args, kwargs):
        device = next((a.device.type for a in args if isinstance(a, Tensor)), "cpu")
        fn = self._kernels.get(device, self._init_fn if not self._kernels else None)
        if fn is None:
            raise NotImplementedError(f"{self._qualname}: no kernel registered for device type {device!r}")
        with grad_mode.no_grad():
            return fn(*args, **kwargs)

    def register_vmap(self, func=None):
        def put(f):
            self._vmap = f
            return f
        return put if func is None else put(func)

    def register_torch_dispatch(self, torch_dispatch_class, func=None):
        def put(f):
            self._dispatch_rules[torch_dispatch_class] = f
            return f
        return put if func is None else put(func)

    def _autocast_args(self, args):
        device = next((a.device.type for a in args if isinstance(a, Tensor)), "cpu")
        dtype = self._autocast.get(device)
        if dtype is None or not autocast_mode.is_autocast_enabled(device):
            return args
        return tuple(a.to(dtype) if isinstance(a, Tensor) and a.dtype.is_floating_point else a for a in args)

    def __call__(self, *args, **kwargs):
        bound = self._signature.bind(*args, **kwargs)  # as the schema does: every argument but keyword-only ones
        bound.apply_defaults()  # positional (setup_context's `inputs`)
        args, kwargs = self._autocast_args(bound.args), bound.kwargs
        for cls, rule in self._dispatch_rules.items():
            if any(isinstance(a, cls) for a in args):
                return rule(cls, self, tuple({type(a) for a in args if isinstance(a, Tensor)}), args, kwargs)
        if self._backward is None:
            return self._run(args, kwargs)
        return _Apply.apply(self, kwargs, *args)


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Define the op `namespace::name` from a Python function (the decorator form when fn is None)."""
    def define_op(f):
        op = CUSTOM_OPS[name] = CustomOpDef(name, f, device_types)
        return op
    return define_op if fn is None else define_op(fn)


def _op(op):
    return op if isinstance(op, CustomOpDef) else CUSTOM_OPS[op]


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=True):
    return _op(op).register_fake if func is None else _op(op).register_fake(func)


def impl_abstract(qualname, func=None, *, lib=None, _stacklevel=1):
    warnings.warn("`torch.library.impl_abstract` was renamed to `torch.library.register_fake`. Please use that "
                  "instead; we will remove `torch.library.impl_abstract` in a future version of PyTorch.",
                  FutureWarning, stacklevel=2)
    return register_fake(qualname, func)


def register_kernel(op, device_types, func=None, /, *, lib=None):
    return _op(op).register_kernel(device_types, func)


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    _op(op).register_autograd(backward, setup_context=setup_context)


def register_autocast(op, device_type, cast_inputs, /, *, lib=None):
    """Under autocast on device_type, the op's floating tensor inputs are cast to cast_inputs first."""
    _op(op)._autocast[device_type] = cast_inputs


def register_torch_dispatch(op, torch_dispatch_class, func=None, /, *, lib=None):
    """Calls of op with an argument of torch_dispatch_class run func(cls, op, types, args, kwargs) instead."""
    return _op(op).register_torch_dispatch(torch_dispatch_class, func)


def register_vmap(op, func=None, /, *, lib=None):
    return _op(op).register_vmap(func)


def triton_op(name, fn=None, /, *, mutates_args, schema=None):
    """An op whose body launches Triton kernels: defined as custom_op defines it."""
    return custom_op(name, fn, mutates_args=mutates_args, schema=schema)


def wrap_triton(triton_kernel, /):
    raise RuntimeError("wrap_triton: Triton kernels compile for CUDA/ROCm GPUs, which webtorch does not have")


def fallthrough_kernel():
    """A dummy kernel: a dispatch key registered with it falls through (never called)."""
    raise NotImplementedError("fallthrough_kernel() should never be called.")


def get_ctx():
    raise NotImplementedError("torch.library.get_ctx: webtorch runs fake kernels only as plain functions")


def infer_schema(prototype_function, /, *, mutates_args, op_name=None):
    raise NotImplementedError("torch.library.infer_schema: webtorch's custom ops keep no schema")


class Library:
    def __init__(self, ns, kind, dispatch_key=""):
        raise NotImplementedError("torch.library.Library (C++ schemas and dispatch keys): use torch.library.custom_op")


def define(qualname, schema, *, lib=None, tags=()):
    raise NotImplementedError("torch.library.define (C++ schemas): use torch.library.custom_op")


def impl(qualname, types, func=None, *, lib=None):
    raise NotImplementedError("torch.library.impl (dispatch keys): use torch.library.custom_op")
