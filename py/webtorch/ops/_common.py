"""Shared helpers for op definitions: promotion, dim handling, in-place and out= plumbing."""
import functools
import inspect

from .. import _dtype
from . import _prims
from .._tensor import Tensor, _wrap_dim
from ..autograd import grad_mode
from ..autograd.derivatives import DERIVATIVES
from ..autograd.function import Function
from ..autograd.graph import run_backward

F32 = _dtype.float32


def is_tensor(x):
    return isinstance(x, Tensor)


def check_tensor(op, x, name="input", pos=1):
    """PyTorch's TypeError where an op takes only a Tensor (a Python number included)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be Tensor, not {type(x).__name__}")


def wrap_dim(dim, ndim):
    return _wrap_dim(dim, ndim)


def norm_dims(dim, ndim):
    """dim argument (None, int, or sequence) -> sorted tuple of distinct non-negative dims."""
    if dim is None:
        return tuple(range(ndim))
    if ndim == 0:  # a 0-d tensor has no dim to reduce: dim 0 / -1 are accepted and mean "none"
        for d in (dim if isinstance(dim, (list, tuple)) else (dim,)):
            wrap_dim(d, 0)
        return ()
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return tuple(range(ndim))
        ds = [wrap_dim(d, ndim) for d in dim]
        if len(set(ds)) != len(ds):
            raise RuntimeError(f"dim {ds[0]} appears multiple times in the list of dims")
        return tuple(sorted(ds))
    return (wrap_dim(dim, ndim),)


def float_of(dt):
    """The floating dtype ops like exp/div produce for dt."""
    return dt if dt.is_floating_point else _dtype.get_default_dtype()


def sum_to(g, shape):
    """Reduce a broadcast gradient back to `shape`."""
    if tuple(g.shape) == tuple(shape):
        return g
    return g.sum_to_size(shape)


def to_dtype(t, dt):
    return t if t.dtype is dt else t.to(dt)


_ATTRIBUTES = {"_shape": lambda t: t._shape, "_device": lambda t: t.device}  # `<input>_shape`, `<input>_device`


def formula_node(node, kernel, names, scalar_edges=()):
    """The graph node (a Function) `node` computing `kernel(*args)`, its arguments named `names`;
    backward is the node's entry in `autograd/derivatives.py` (a formula per differentiable input,
    given what it names: arguments, `y` the result, `<argument>_shape` / `<argument>_device`). A
    tensor is saved only when the formula of an input that needs a gradient reads it (as PyTorch
    saves). Each gradient is summed back to its input's shape and cast to its dtype (broadcasting,
    mixed dtypes). `scalar_edges`: positions where a Python number still shows in next_functions
    (`Function._scalar_edges`)."""
    entry = DERIVATIVES[node]
    plan = tuple((names.index(n), f, f.__code__.co_varnames[1:f.__code__.co_argcount])
                 for n, f in (entry.items() if isinstance(entry, dict) else ((names[0], entry),)))
    needed = {p for _, _, ps in plan for p in ps}
    # what backward reads: (name, argument position or None for y, the inputs whose formula reads it)
    kept = tuple((n, i, tuple(j for j, _, ps in plan if n in ps))
                 for n, i in [(n, i) for i, n in enumerate(names) if n in needed] + [("y", None)] if n in needed)
    grads = tuple(i for i, _, _ in plan)
    attrs = tuple((n + a, i, get) for i, n in enumerate(names) for a, get in _ATTRIBUTES.items() if n + a in needed)

    class FormulaNode(Function):
        _node_name = node
        _scalar_edges = scalar_edges

        @staticmethod
        def forward(ctx, *args):
            y = kernel(*args)
            need = ctx.needs_input_grad
            tensors, consts, geom = [], [], []
            for _, i, readers in kept:  # Tensors are saved (version-checked), anything else kept as is
                v = y if i is None else args[i]
                is_t = isinstance(v, Tensor)
                tensors.append(v if is_t and any(need[j] for j in readers) else None)
                consts.append(None if is_t else v)
            for i in grads:
                v = args[i]
                geom.append((v._shape, v._storage.dtype) if isinstance(v, Tensor) else None)
            ctx.save_for_backward(*tensors)
            ctx.consts, ctx.geom = consts, geom
            if attrs:
                ctx.attrs = {n: get(args[i]) for n, i, get in attrs}
            return y

        @staticmethod
        def backward(ctx, g):
            kw = {n: c if t is None else t for (n, _, _), t, c in zip(kept, ctx.saved_tensors, ctx.consts)}
            if attrs:
                kw.update(ctx.attrs)
            res = [None] * len(names)
            for (i, f, ps), geom in zip(plan, ctx.geom):
                if ctx.needs_input_grad[i]:
                    res[i] = to_dtype(sum_to(f(g, *[kw[p] for p in ps]), geom[0]), geom[1])
            return tuple(res)

    FormulaNode.kernel = staticmethod(kernel)  # the forward without a graph
    FormulaNode.__name__ = FormulaNode.__qualname__ = node[:node.index("Backward")]
    FormulaNode.saves_input = names[0] in needed  # an in-place form must keep a copy of its input
    return FormulaNode


def node_alias(base, node):
    """The graph node (Function) `base` under another of PyTorch's node names (`Transpose` is a
    `Permute` shown as TransposeBackward0)."""
    return type(node[:node.index("Backward")], (base,), {"__module__": base.__module__, "_node_name": node})


_KIND_ORDER = {"b": 0, "i": 1, "f": 2}


def can_cast(src, dst):
    return src is dst or _KIND_ORDER[src.kind] <= _KIND_ORDER[dst.kind]


def name_of(dt):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
            "bool": "Bool", "uint8": "Byte", "int16": "Short", "int8": "Char", "bfloat16": "BFloat16"}[dt.name]


INT_RANGE = {"uint8": (0, 255), "int8": (-128, 127), "int16": (-32768, 32767),
             "int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1)}
_CPP_INT = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t"}


def check_fill_value(value, dtype):
    """PyTorch's checked conversion of a Python number written into an integer tensor (fill_, full,
    masked_fill, index_fill): NaN, inf and values outside the dtype's range raise."""
    if dtype.name in INT_RANGE and isinstance(value, (int, float)) and not isinstance(value, bool):
        lo, hi = INT_RANGE[dtype.name]
        if not lo <= value <= hi:  # a NaN too
            raise RuntimeError(f"value cannot be converted to type {_CPP_INT[dtype.name]} without overflow")


def check_inplace_dtype(result_dtype, self):
    if result_dtype is not self._storage.dtype and not can_cast(result_dtype, self._storage.dtype):
        raise RuntimeError(f"result type {name_of(result_dtype)} can't be cast to the desired output type "
                           f"{name_of(self.dtype)}")


def recording(*args):
    if not grad_mode._state["enabled"]:
        return False
    for a in args:
        if isinstance(a, Tensor) and a._requires_grad:
            return True
    return False


def check_leaf_inplace(self):
    if self._requires_grad and grad_mode._state["enabled"] and self.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


class CopySlices(Function):
    """The graph node of an in-place write through a view of a tensor that needs grad."""
    _node_name = "CopySlices"

    @staticmethod
    def forward(ctx, base, src, size, stride, offset):
        ctx.geom = (size, stride, offset, tuple(base.shape), base.stride(), base.storage_offset())
        region = base.as_strided(size, stride, offset)
        _prims.copy_into(region, src)
        return base

    @staticmethod
    def backward(ctx, g):
        # lay g out in a buffer with the base's geometry (g itself may be strided, even expanded),
        # so that the view's storage geometry addresses the written region
        size, stride, offset, bshape, bstride, boff = ctx.geom
        n = max(_extent(bshape, bstride, boff), _extent(size, stride, offset))
        flat = g.new_zeros((n,))
        flat.as_strided(bshape, bstride, boff).copy_(g)
        region = flat.as_strided(size, stride, offset)
        g_src = region.clone()
        region.zero_()
        return flat.as_strided(bshape, bstride, boff), g_src, None, None, None


def _extent(shape, stride, offset):
    """One past the largest storage position a geometry addresses."""
    if any(s == 0 for s in shape):
        return offset
    return offset + sum((s - 1) * st for s, st in zip(shape, stride)) + 1


def inplace_result(self, result):
    """Make `self` hold `result` in place (the common tail of every in-place op): write the
    values into self's memory and, when the graph is recorded, make self's history that of
    result (through CopySlices when self is a view of a tensor that requires grad)."""
    check_inplace_dtype(result.dtype, self)
    base = self._base
    if grad_mode._state["enabled"] and (result._requires_grad or self._requires_grad):
        if tuple(result.shape) != tuple(self.shape):
            result = result.expand(self.shape)
        if base is not None:
            if base.grad_fn is None and base._requires_grad:
                raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                                   "operation.")
            geom = (self.shape, self.stride(), self.storage_offset())
            out = CopySlices.apply(base, result, *geom)
            base.grad_fn, base._output_nr, base._requires_grad = out.grad_fn, 0, True
            view = base.as_strided(*geom)
            self.grad_fn, self._output_nr, self._requires_grad = view.grad_fn, 0, True
            return self
        if not result._requires_grad:  # self's old history gets zero gradient
            from .shape import Copy
            out = Copy.apply(self, result)
            self.grad_fn, self._output_nr, self._requires_grad = out.grad_fn, 0, True
            return self
        with grad_mode.no_grad():
            _prims.copy_into(self, result)
        self.grad_fn, self._output_nr, self._requires_grad = result.grad_fn, result._output_nr, True
        return self
    _prims.copy_into(self, result)
    return self


def write_out(result, out, *inputs):
    """Support for the out= argument; `inputs` may not share out's memory (PyTorch's overlap error)."""
    if out is None:
        return result
    if any(isinstance(t, Tensor) and t._storage is out._storage for t in inputs):
        raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor refer "
                           "to a single memory location. Please clone() the tensor before performing the operation.")
    if tuple(out.shape) != tuple(result.shape):
        out.resize_(result.shape)
    check_inplace_dtype(result.dtype, out)
    with grad_mode.no_grad():
        _prims.copy_into(out, result)
    return out


class Composite(Function):
    """A built-in op computed by composing other ops (`impl`, its one definition) but shown in the
    graph as a single node named as PyTorch's (ConvolutionBackward0, NativeBatchNormBackward0, ...).

    forward runs `impl` with the graph recorded on aliases of the differentiable inputs; backward
    runs that inner graph's backward. So the derivative is the composition's (no second formula to
    keep in step) and the kernels, hence the GPU dispatches, are exactly the composition's. Under
    create_graph (double backward) it replays `impl` on the real inputs, so that higher derivatives
    see them: an `impl` must therefore have no side effects (or make them happen once).

    Subclasses set `_node_name` and `impl = staticmethod(fn)`; callers use `Sub.call(*args)`."""
    impl = None

    @classmethod
    def call(cls, *args):
        if recording(*args):
            return cls.apply(*args)
        return cls.impl(*args)

    @staticmethod
    def forward(ctx, *args):
        ctx.set_materialize_grads(False)  # an unused output (batch norm's statistics) costs no zeros
        leaves, inner, no_edges = [], [], ctx._fn._no_edges
        for k, a in enumerate(args):
            if isinstance(a, Tensor) and a._requires_grad and a.dtype.is_floating_point and k not in no_edges:
                a = a._alias()
                a._requires_grad = True
                leaves.append(a)
            inner.append(a)
        with grad_mode.enable_grad():
            out = ctx._fn.impl(*inner)
        is_tuple = isinstance(out, tuple)
        outs = out if is_tuple else (out,)
        ctx._s_graph = (leaves, outs)
        ctx._s_args = args
        ctx._s_diff = tuple(isinstance(a, Tensor) and a._requires_grad and a.dtype.is_floating_point
                            and k not in no_edges for k, a in enumerate(args))
        # each output is a tensor of its own, as PyTorch's single op returns: never a view of the
        # composition's intermediates (an in-place op on it would then write the inner graph's
        # history, which this node's backward runs and frees: a "backward a second time" error)
        res = tuple(Tensor._make(o._storage, o._shape, o._stride, o._offset) if isinstance(o, Tensor) else o
                    for o in outs)
        return res if is_tuple else res[0]

    @staticmethod
    def backward(ctx, *grads):
        args, diff = ctx._s_args, ctx._s_diff
        if grad_mode.is_grad_enabled():  # create_graph: differentiate a replay on the real inputs
            inputs = [a for a, d in zip(args, diff) if d]
            out = ctx._fn.impl(*args)
            outs = out if isinstance(out, tuple) else (out,)
        else:
            inputs, outs = ctx._s_graph
        pairs = [(o, g) for o, g in zip(outs, grads)
                 if g is not None and isinstance(o, Tensor) and o._requires_grad]
        res = iter(run_backward([o for o, _ in pairs], [g for _, g in pairs], True, grad_mode.is_grad_enabled(),
                                inputs=inputs, allow_unused=True, accumulate=False) if pairs and inputs
                   else [None] * len(inputs))
        return tuple(next(res) if d else None for d in diff)


def composite_op(name, optional=(), no_edges=()):
    """Decorator: the op `fn` (composed of other ops) recorded as one Composite node `name`; its
    arguments, keywords included, are the node's inputs in signature order."""

    def deco(fn):
        sig = inspect.signature(fn)
        names = list(sig.parameters)
        kwonly = {n for n, p in sig.parameters.items() if p.kind == p.KEYWORD_ONLY}

        def impl(*a):
            return fn(*[v for n, v in zip(names, a) if n not in kwonly],
                      **{n: v for n, v in zip(names, a) if n in kwonly})
        impl.__module__ = fn.__module__
        node = composite_node(name, impl, optional, no_edges)

        @functools.wraps(fn)
        def public(*args, **kwargs):
            b = sig.bind(*args, **kwargs)
            b.apply_defaults()
            return node.call(*[b.arguments[n] for n in names])
        return public
    return deco


def composite_node(name, impl, optional=(), no_edges=()):
    """A Composite named `name` (PyTorch's node) over `impl`. `optional`: positions of optional
    Tensor arguments PyTorch lists as None when absent; `no_edges`: Tensor arguments it never
    differentiates."""
    return type(name[:name.index("Backward")], (Composite,), {
        "__module__": impl.__module__, "_node_name": name, "impl": staticmethod(impl),
        "_optional_edges": tuple(optional), "_no_edges": tuple(no_edges)})
