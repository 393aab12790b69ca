"""torch.library's Python custom-op API: `custom_op` (a function or a decorator), `register_fake`,
`register_kernel`, `register_autograd`. An op runs its Python function (the one `register_kernel` gave for the
first tensor argument's device type, else the default); it is opaque to autograd, as PyTorch's custom ops are,
unless `register_autograd` gave it a backward (then it is one graph node, an autograd.Function). It is reachable
as `torch.ops.<namespace>.<name>`. The C++-schema API (`Library`, `define`, `impl`) raises NotImplementedError."""
import functools
import inspect
import warnings

from ._tensor import Tensor
from .autograd import grad_mode
from .autograd.function import Function
from .ops.registry import CUSTOM_OPS

__all__ = ["custom_op", "register_fake", "register_kernel", "register_autograd", "Library", "define", "impl",
           "get_ctx", "infer_schema", "impl_abstract"]


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
        self._fake = self._backward = self._setup_context = None
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

    def __call__(self, *args, **kwargs):
        bound = self._signature.bind(*args, **kwargs)  # as the schema does: every argument but keyword-only ones
        bound.apply_defaults()  # positional (setup_context's `inputs`)
        args, kwargs = bound.args, bound.kwargs
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
