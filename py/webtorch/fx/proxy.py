"""torch.fx.Proxy: the value a symbolic trace passes through the user's code; every operation on it (an
operator, a Tensor method, a torch function through __torch_function__, an attribute) records a Node."""
import dis
import inspect
import operator

import webtorch

from .._tensor import Tensor

__all__ = ["Proxy", "Attribute", "TraceError", "ParameterProxy"]


class TraceError(ValueError):
    pass


def _is_tensor_method(fn):
    name = getattr(fn, "__name__", None)
    if not name or getattr(Tensor, name, None) is not fn:
        return False
    return getattr(webtorch, name, None) is not fn


class Proxy:
    """Stands for a Node's value while tracing: operations on it are recorded by its tracer."""

    def __init__(self, node, tracer=None):
        if tracer is None:
            raise RuntimeError("a Proxy needs its tracer")
        self.tracer, self.node = tracer, node

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, k):
        if k in ("tracer", "node"):
            raise AttributeError(k)
        return Attribute(self, k)

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        frame = inspect.currentframe().f_back
        insts = list(dis.get_instructions(frame.f_code))
        here = [i for i in insts if i.offset >= frame.f_lasti][:1]  # the instruction iterating (a, b = proxy)
        if here and here[0].opname == "UNPACK_SEQUENCE":
            return (self[i] for i in range(here[0].argval))
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the Proxy is used in a loop or "
                         "as a *args or **kwargs function argument. See the torch.fx docs on pytorch.org for a more "
                         "detailed explanation of what types of control flow can be traced, and check out the Proxy "
                         "docstring for help troubleshooting Proxy iteration errors")

    def __bool__(self):
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want this call to be "
                           "recorded, please call torch.fx.wrap('len') at module scope")

    def keys(self):
        return self.tracer.create_proxy("call_method", "keys", (self,), {})

    @classmethod
    def __torch_function__(cls, orig_method, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        tracer = None
        for a in list(args) + list(kwargs.values()):
            for x in (a if type(a) in (list, tuple) else (a,)):
                if isinstance(x, Proxy):
                    tracer = x.tracer
                    break
            if tracer is not None:
                break
        if _is_tensor_method(orig_method):
            return tracer.create_proxy("call_method", orig_method.__name__, args, kwargs)
        return tracer.create_proxy("call_function", orig_method, args, kwargs,
                                   name=tracer.graph._target_to_str(orig_method))


class Attribute(Proxy):
    """proxy.attr: a call_method node when called, else a getattr call_function node (made on first use)."""

    def __init__(self, root, attr):
        self.root, self.attr, self.tracer = root, attr, root.tracer
        self._node = None

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


class ParameterProxy(Proxy):
    """A parameter's get_attr proxy: its shape, size(), dim() and ndim are the parameter's own values."""

    def __init__(self, tracer, node, name, param):
        super().__init__(node, tracer)
        self.param, self.name = param, name

    @property
    def shape(self):
        return self.param.shape

    def size(self, dim=None):
        return self.param.size() if dim is None else self.param.size(dim)

    def dim(self):
        return self.param.dim()

    @property
    def ndim(self):
        return self.param.ndim

    def numel(self):
        return self.param.numel()

    nelement = numel


_BINARY = ("add", "sub", "mul", "floordiv", "truediv", "mod", "pow", "lshift", "rshift", "and_", "or_", "xor",
           "matmul")
_COMPARE = ("eq", "ne", "lt", "gt", "le", "ge", "getitem")
_UNARY = ("neg", "pos", "invert", "abs")


def _define(name, fn, reflected=False):
    def impl(self, *rest):
        args = (rest[0], self) if reflected else (self,) + rest
        return self.tracer.create_proxy("call_function", fn, args, {})
    impl.__name__ = name
    setattr(Proxy, name, impl)


for _op in _BINARY:
    _dunder = _op.rstrip("_")
    _define(f"__{_dunder}__", getattr(operator, _op))
    _define(f"__r{_dunder}__", getattr(operator, _op), reflected=True)
for _op in _COMPARE + _UNARY:
    _define(f"__{_op}__", getattr(operator, _op))
