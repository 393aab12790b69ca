"""torch.autograd.Function: the one way every differentiable op enters the graph.

Built-in ops are Function subclasses too (named like PyTorch's nodes via `_node_name`), so a
user's Function and `torch.mul` record the graph through the same code.
"""
from . import grad_mode
from .graph import Node, SavedTensor, grad_edge

_node_classes = {}
_Tensor = []  # webtorch.Tensor, filled by _tensor.py (which imports this package first)


# nodes PyTorch defines in C++ outside its generated code: name() says their namespace
_NAMESPACED = {"CopySlices", "CopyBackwards"}


def node_class(name, fn):
    key = (name, fn)
    cls = _node_classes.get(key)
    if cls is None:
        ns = {"_fn": fn}
        if name in _NAMESPACED:
            ns["name"] = classmethod(lambda c: "torch::autograd::" + c.__name__)
        cls = _node_classes[key] = type(name, (Node,), ns)
    return cls


class FunctionCtx(Node):
    pass


class FunctionMeta(type):
    def __init__(cls, name, bases, ns):
        super().__init__(name, bases, ns)
        cls._backward_cls = node_class(ns.get("_node_name", name + "Backward"), cls)
        cls._builtin = cls.__module__.startswith("webtorch.")


class Function(metaclass=FunctionMeta):
    """Subclass with static `forward(ctx, *args)` and `backward(ctx, *grad_outputs)`; call
    with `.apply(*args)`."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    # built-in ops: argument positions where PyTorch's op takes a Tensor, so that a Python number
    # there still shows in next_functions as (None, 0) (`x * 2`), as PyTorch wraps it
    _scalar_edges = ()
    # built-in ops: positions of optional Tensor arguments that PyTorch's node lists as (None, 0)
    # when absent (conv's bias), and of Tensor arguments it never differentiates (nll_loss's weight)
    _optional_edges = ()
    _no_edges = ()

    @classmethod
    def _edges_of(cls, args):
        Tensor = _Tensor[0]
        if not cls._builtin:  # a user's Function: one edge per tensor argument, as in PyTorch
            return tuple([grad_edge(a) if isinstance(a, Tensor) else None for a in args])
        # a built-in op: edges for its differentiable (floating) inputs only, as PyTorch's nodes
        return tuple([None if k in cls._no_edges else
                      grad_edge(a) if isinstance(a, Tensor) and a.dtype.kind in "fc" else
                      (None, 0) if k in cls._scalar_edges and isinstance(a, (Tensor, bool, int, float)) or
                      (a is None and k in cls._optional_edges) else None
                      for k, a in enumerate(args)])

    @classmethod
    def apply(cls, *args):
        Tensor = _Tensor[0]
        ctx = cls._backward_cls()
        needs = tuple([isinstance(a, Tensor) and (a._requires_grad or a._base is not None and a.requires_grad)
                       for a in args]) \
            if grad_mode._state["enabled"] else ()
        if not any(needs):  # nothing to record (grad mode off, or no input requires grad)
            ctx.needs_input_grad = (False,) * len(args)
            return cls.forward(ctx, *args)
        ctx.needs_input_grad = needs
        grad_mode._state["enabled"] = False
        try:
            out = cls.forward(ctx, *args)
        finally:
            grad_mode._state["enabled"] = True
        is_tuple = isinstance(out, tuple)
        outs = list(out) if is_tuple else [out]
        ctx._edges = cls._edges_of(args)
        nondiff = {id(t) for t in ctx._non_differentiable} if ctx._non_differentiable else ()
        meta, renamed = [], {}
        for i, o in enumerate(outs):
            if isinstance(o, Tensor):
                if any(o is a for a in args):  # an input returned as is: give the output its own identity
                    o = outs[i] = o._alias()
                elif o._base is not None and not any(isinstance(a, Tensor) and a._storage is o._storage for a in args):
                    renamed[id(o)] = i  # a saved temporary view is this output
                    o = outs[i] = Tensor._make(o._storage, o._shape, o._stride, o._offset)  # no view of a temporary
                meta.append((o._shape, o.dtype, o.device))
                if o.dtype.kind in "fc" and id(o) not in nondiff:
                    o._requires_grad = True
                    o.grad_fn = ctx
                    o._output_nr = i
            else:
                meta.append(None)
        ctx._outputs_meta = tuple(meta)
        if ctx._to_save:
            out_ids = {id(o): i for i, o in enumerate(outs) if isinstance(o, Tensor)} | renamed
            saved = []
            for t in ctx._to_save:
                if t is None:
                    saved.append(None)
                elif id(t) in out_ids:
                    saved.append(SavedTensor(t, True, out_ids[id(t)]))
                else:
                    saved.append(SavedTensor(t, False))
            ctx._saved = saved
            ctx._to_save = ()
        return tuple(outs) if is_tuple else outs[0]


class once_differentiable:
    def __new__(cls, fn):
        return fn


class InplaceFunction(Function):
    """Kept only as PyTorch keeps it, for backward compatibility: a Function with an `inplace` flag."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    """Kept only as PyTorch keeps it, for backward compatibility: a legacy Function whose subclasses define
    forward_extended / backward_extended on nested inputs. PyTorch 2.13's own no longer runs (calling an
    instance reaches the removed Function._do_forward), and neither does webtorch's; use Function."""

    def __call__(self, *input):
        raise AttributeError("'super' object has no attribute '_do_forward'")

    def forward_extended(self, *input):
        """User defined forward."""
        raise NotImplementedError

    def backward_extended(self, *grad_output):
        """User defined backward."""
        raise NotImplementedError
