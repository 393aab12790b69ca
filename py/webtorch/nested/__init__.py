"""torch.nested: a batch of tensors whose first dim varies (layout torch.strided or torch.jagged).

A nested tensor here is a Tensor subclass holding its components (`unbind()`), kept as ordinary webtorch tensors:
each op it supports runs on the components, so every device runs it and autograd differentiates it. Supported, with
the jagged layout's semantics (PyTorch's strided layout refuses some of them): element-wise ops with a nested,
scalar or broadcast dense operand, activations, softmax, layer_norm, dropout, linear / matmul on the last dim,
scaled_dot_product_attention, sum / mean / amax / amin (over the last dims, the ragged dim, or all), transpose,
clone / detach / to / type conversions, indexing the batch, `to_padded_tensor`, and the jagged `values()`,
`offsets()`, `lengths()`. Any other op raises NotImplementedError naming it.
"""
import itertools

from .. import _dtype
from .._device import device as _device
from .._layout import jagged, strided
from .._tensor import Size, Tensor
from ..nn.functional import pad as _pad
from ..ops import registry
from ..ops._creation import tensor as _tensor
from ..ops.shape import cat, stack

__all__ = ["to_padded_tensor", "as_nested_tensor", "nested_tensor", "nested_tensor_from_jagged", "narrow",
           "masked_select"]

_ids = itertools.count(1)


class _NestedInt(int):
    """The size of the ragged dim (PyTorch's nested int `j<n>`): its own value is the longest component's."""

    def __new__(cls, longest, n):
        self = int.__new__(cls, longest)
        self.n = n
        return self

    def __repr__(self):
        return f"j{self.n}"

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, _NestedInt) and other.n == self.n

    __hash__ = int.__hash__


def _unsupported(name):
    return NotImplementedError(f"webtorch: '{name}' is not supported for nested tensors (torch.nested); "
                               "call .unbind() or torch.nested.to_padded_tensor() first")


class NestedTensor(Tensor):
    """A nested tensor (see the module docstring); build one with torch.nested.nested_tensor & co."""
    is_nested = True

    @classmethod
    def _new(cls, components, layout=strided, like=None, offsets=None, dtype=None, device=None):
        t = object.__new__(cls)
        t._nt, t._nt_layout = list(components), layout
        t._nt_id = like._nt_id if like is not None else (next(_ids) if layout is jagged else 0)  # j<n>: per jagged
        t._nt_offsets = offsets  # a jagged tensor's (offsets, lengths) over its values, when it was built from them
        first = t._nt[0] if t._nt else None
        t._nt_dtype = first.dtype if first is not None else (dtype or _dtype.get_default_dtype())
        t._nt_device = first.device if first is not None else device
        return t

    def _like(self, components):
        """A nested tensor of the same layout and ragged structure with these components."""
        return NestedTensor._new(components, self._nt_layout, like=self)

    @property
    def _storage(self):
        raise _unsupported("this operation")

    # ---- metadata ------------------------------------------------------------------------
    @property
    def layout(self):
        return self._nt_layout

    @property
    def dtype(self):
        return self._nt_dtype

    @property
    def device(self):
        return self._nt_device if self._nt_device is not None else _device("cpu")

    def dim(self):
        return self._nt[0].dim() + 1 if self._nt else 1

    ndim = property(dim)

    def numel(self):
        return sum(c.numel() for c in self._nt)

    def __len__(self):
        return self.shape[0]

    def _sizes(self):
        """Each dim's size: an int where all components agree, None where they differ (the ragged dims)."""
        dims = zip(*(c.shape for c in self._nt))
        return [len(self._nt)] + [d[0] if len(set(d)) == 1 else None for d in dims]

    def size(self, dim=None):
        sizes = self._sizes()
        if dim is not None:
            d = dim + len(sizes) if dim < 0 else dim
            if sizes[d] is None and self._nt_layout is strided:
                raise RuntimeError(f"Given dimension {d} is irregular and does not have a size.")
            return sizes[d] if sizes[d] is not None else self._ragged(d)
        if self._nt_layout is strided:
            raise RuntimeError("Internal error: NestedTensorImpl doesn't support sizes. Please file an issue.")
        return Size(s if s is not None else self._ragged(d) for d, s in enumerate(sizes))

    def _ragged(self, d):
        return _NestedInt(max(c.shape[d - 1] for c in self._nt), self._nt_id)

    @property
    def shape(self):
        return self.size()

    def stride(self, dim=None):
        raise RuntimeError("Internal error: NestedTensorImpl doesn't support strides. Please file an issue.")

    def is_contiguous(self, memory_format=None):
        return self._nt_offsets is None or self._nt_offsets[1] is None

    # ---- jagged views ------------------------------------------------------------------------
    def values(self):
        return cat([c.reshape((-1,) + tuple(c.shape[1:])) for c in self._nt]) if self._nt else self._nt

    def offsets(self):
        if self._nt_offsets is not None:
            return self._nt_offsets[0]
        lengths = [0] + [c.shape[0] for c in self._nt]
        return _tensor(list(itertools.accumulate(lengths)), device=self.device)

    def lengths(self):
        return None if self._nt_offsets is None else self._nt_offsets[1]

    # ---- autograd (carried by the components) ------------------------------------------------
    @property
    def requires_grad(self):
        return any(c.requires_grad for c in self._nt)

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        for c in self._nt:
            c.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self):
        return next((c.grad_fn for c in self._nt if c.grad_fn is not None), None)

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def grad(self):
        grads = [c.grad for c in self._nt]
        return None if any(g is None for g in grads) else self._like(grads)

    def detach(self):
        return self._like([c.detach() for c in self._nt])

    def unbind(self, dim=0):
        if dim != 0:
            raise RuntimeError("unbind(): only supported for NestedTensor on dim=0")
        return tuple(self._nt)

    def __iter__(self):
        return iter(self._nt)

    def __repr__(self, *, tensor_contents=None):
        grad = f"grad_fn=<{type(self.grad_fn).__name__}>" if self.grad_fn is not None else (
            "requires_grad=True" if self.requires_grad else "")
        if self._nt_layout is jagged:
            size = "(" + ", ".join(map(repr, self.size())) + ")"
            grad = grad.replace(">", f" object at {hex(id(self.grad_fn))}>") if self.grad_fn is not None else grad
            grad = grad + ", " if grad else ""
            return f"NestedTensor(size={size}, offsets={self.offsets()!r}, {grad}contiguous={self.is_contiguous()})"
        body = ",\n".join("  " + repr(c).replace("\n", "\n  ") for c in self._nt)
        return "nested_tensor([\n" + body + "\n]" + (", " + grad if grad else "") + ")"

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", str(func))
        kwargs = kwargs or {}
        if name in _OPS:
            return _OPS[name](func, *args, **kwargs)
        if name in _MAPPED or name.rstrip("_") in _MAPPED:
            return _map(func, name, args, kwargs)
        raise _unsupported(name)


# ---- the ops ----------------------------------------------------------------------------------
def _first_nested(args):
    return next(a for a in args if isinstance(a, NestedTensor))


def _component_dim(d, ndim, name):
    """A nested tensor's dim as its components' dim (the batch dim 0 has none)."""
    d = d + ndim if d < 0 else d
    if d == 0:
        raise RuntimeError(f"{name}(): not supported for NestedTensor on dim=0")
    return d - 1


def _piece(a, i, nt):
    """Argument a, for component i of nt: a nested tensor's component, a dense tensor of nt's rank its row i."""
    if isinstance(a, NestedTensor):
        if len(a._nt) != len(nt._nt):
            raise RuntimeError(f"nested tensors of {len(nt._nt)} and {len(a._nt)} components do not match")
        return a._nt[i]
    if isinstance(a, Tensor) and a.dim() == nt.dim() and a.dim() > 1:
        return a[i if a.shape[0] != 1 else 0]
    if isinstance(a, (list, tuple)) and any(isinstance(x, NestedTensor) for x in a):
        return type(a)(_piece(x, i, nt) for x in a)
    return a


_DIM_ARGS = {"softmax": (1,), "log_softmax": (1,), "transpose": (1, 2), "swapaxes": (1, 2), "swapdims": (1, 2),
             "unsqueeze": (1,), "squeeze": (1,), "flip": (), "cumsum": (1,), "argmax": (1,), "argmin": (1,)}


def _map(func, name, args, kwargs):
    """func run on each component: nested arguments by component, dims shifted past the batch dim."""
    nt = _first_nested(args)
    args, kwargs = list(args), dict(kwargs)
    base = name.rstrip("_")
    for pos in _DIM_ARGS.get(base, ()):
        if pos < len(args) and isinstance(args[pos], int):
            args[pos] = _component_dim(args[pos], nt.dim(), base)
    if isinstance(kwargs.get("dim"), int):
        kwargs["dim"] = _component_dim(kwargs["dim"], nt.dim(), base)
    outs = [func(*(_piece(a, i, nt) for a in args), **{k: _piece(v, i, nt) for k, v in kwargs.items()})
            for i in range(len(nt._nt))]
    if name.endswith("_") and not name.endswith("__") and isinstance(args[0], NestedTensor):
        return args[0]  # in place: the components were updated
    return nt._like(outs)


def _reduce(func, input, dim=None, keepdim=False, *, dtype=None, **kwargs):
    name = func.__name__
    extra = dict(kwargs, **({} if dtype is None else {"dtype": dtype}))
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == input.dim()):
        return func(cat([c.reshape(-1) for c in input._nt]), **extra)
    dims = sorted({d + input.dim() if d < 0 else d for d in (dim if isinstance(dim, (list, tuple)) else [dim])})
    if 0 in dims:
        raise RuntimeError(f"{name}(): reducing along the batch dimension but not the ragged dimension is not "
                           "supported for nested tensors")
    if 1 in dims:  # over the ragged dim: one dense row per component
        rows = [func(c, [d - 1 for d in dims], keepdim=keepdim, **extra) for c in input._nt]
        return stack(rows)
    return input._like([func(c, [d - 1 for d in dims], keepdim=keepdim, **extra) for c in input._nt])


def _getitem(func, input, index):
    if isinstance(index, tuple) and index:
        head, rest = index[0], index[1:]
        picked = _getitem(func, input, head)
        if isinstance(picked, NestedTensor):
            return picked._like([c[rest] for c in picked._nt]) if rest else picked
        return picked[rest] if rest else picked
    if isinstance(index, int):
        return input._nt[index]
    if isinstance(index, slice):
        return NestedTensor._new(input._nt[index], input._nt_layout, like=input)
    raise _unsupported("__getitem__ with this index")


def _linear(func, input, weight, bias=None):
    return input._like([func(c, weight, bias) for c in input._nt])


def _matmul(func, input, other):
    if not isinstance(input, NestedTensor) or (isinstance(other, Tensor) and other.dim() > 2
                                               and not isinstance(other, NestedTensor)):
        raise _unsupported("matmul with a dense left operand or a batched dense right operand")
    return _map(func, "matmul", (input, other), {})


def _size(func, input, dim=None):
    return input.size(dim)


def _padded(func, input, padding, output_size=None):
    return to_padded_tensor(input, padding, output_size)


_OPS = {"getitem": _getitem, "__getitem__": _getitem, "linear": _linear, "matmul": _matmul, "size": _size,
        "to_padded_tensor": _padded, "unbind": lambda f, x, dim=0: x.unbind(dim),
        "values": lambda f, x: x.values(), "dim": lambda f, x: x.dim(), "numel": lambda f, x: x.numel(),
        **{n: _reduce for n in ("sum", "mean", "amax", "amin", "prod", "nansum", "logsumexp")}}
_MAPPED = ({n for n, d in registry.ELEMENTWISE.items()}
           | set("add sub mul div divide multiply subtract negative absolute clip true_divide pow rsub where clamp "
                 "clamp_min clamp_max masked_fill lerp addcmul addcdiv "
                 "relu gelu silu mish elu selu celu leaky_relu hardtanh hardswish hardsigmoid softplus glu dropout "
                 "alpha_dropout softmax log_softmax layer_norm rms_norm scaled_dot_product_attention clone detach "
                 "contiguous to cpu cuda webgpu float double half bfloat16 int long bool type type_as zero fill "
                 "copy transpose swapaxes swapdims unsqueeze squeeze neg abs square nan_to_num cumsum argmax argmin "
                 "isclose".split()))


# ---- construction ---------------------------------------------------------------------------
def _check_components(ts, layout):
    if not ts:
        return
    ndims = [t.dim() for t in ts]
    bad = next((i for i, n in enumerate(ndims) if n != ndims[0]), None)
    if bad is not None:
        raise RuntimeError(f"All Tensors given to nested_tensor must have the same dimension. Found dimension "
                           f"{ndims[bad]} for Tensor at index {bad} and dimension {ndims[0]} for Tensor at index 0.")
    if layout is jagged and any(t.shape[1:] != ts[0].shape[1:] for t in ts):
        raise RuntimeError("webtorch: a jagged nested tensor's components may differ only in their first dim")


def nested_tensor(tensor_list, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """A nested tensor of copies of tensor_list's tensors (or nested lists of numbers), a leaf."""
    layout = strided if layout is None else layout
    ts = [t.detach().clone() if isinstance(t, Tensor) else _tensor(t) for t in tensor_list]
    ts = [t.to(device=device if device is not None else t.device, dtype=dtype or t.dtype) for t in ts]
    _check_components(ts, layout)
    return NestedTensor._new([t.requires_grad_(requires_grad) for t in ts], layout, dtype=dtype, device=device)


def as_nested_tensor(ts, dtype=None, device=None, layout=None):
    """A nested tensor of ts (a tensor's rows, or a list of tensors), keeping autograd history."""
    layout = strided if layout is None else layout
    if isinstance(ts, NestedTensor):
        if layout is not ts.layout:
            raise RuntimeError("as_nested_tensor(): converting between nested layouts is not supported")
        return ts._like([t.to(device=device or t.device, dtype=dtype or t.dtype) for t in ts._nt])
    if isinstance(ts, Tensor) and ts.dim() < 2 and layout is jagged:
        raise RuntimeError("as_nested_tensor(): Expected tensor argument to have dim() > 1")
    if not isinstance(ts, (Tensor, list, tuple)):
        raise TypeError("as_nested_tensor(): Expected first argument to be a tensor or a list / tuple of tensors ")
    comps = [t.to(device=device or t.device, dtype=dtype or t.dtype) for t in (ts.unbind(0) if isinstance(ts, Tensor)
                                                                                else ts)]
    _check_components(comps, layout)
    return NestedTensor._new(comps, layout, dtype=dtype, device=device)


def nested_tensor_from_jagged(values, offsets=None, lengths=None, jagged_dim=None, min_seqlen=None, max_seqlen=None):
    """A jagged nested tensor viewing values: component i is values[offsets[i]:offsets[i] + lengths[i]]."""
    if jagged_dim not in (None, 1):
        raise _unsupported(f"nested_tensor_from_jagged with jagged_dim={jagged_dim}")
    if offsets is None:
        if lengths is None:
            raise RuntimeError("nested_tensor_from_jagged(): At least one of offsets or lengths is required.")
        offsets = _tensor([0] + list(itertools.accumulate(lengths.tolist())), device=values.device)
        lengths = None
    starts = offsets.tolist()
    sizes = lengths.tolist() if lengths is not None else [b - a for a, b in zip(starts, starts[1:])]
    comps = [values.narrow(0, s, n) for s, n in zip(starts, sizes)]
    return NestedTensor._new(comps, jagged, offsets=(offsets, lengths), dtype=values.dtype, device=values.device)


def narrow(tensor, dim, start, length, layout=strided):
    """A nested tensor of tensor's rows, each narrowed along dim (start / length: ints or one per row)."""
    if layout is strided:
        if dim != 0:
            raise RuntimeError(f"narrow(): only dim=0 supported for nested tensors, but got: {dim}")
        if isinstance(start, Tensor) or isinstance(length, Tensor):
            raise RuntimeError("start and length must be integers for the strided layout NT impl")
        return as_nested_tensor(tensor.narrow(0, start, length).unbind(0))
    if dim != 1:
        raise RuntimeError("jagged layout only supports dim=1")
    n = tensor.shape[0]
    starts = start.tolist() if isinstance(start, Tensor) else [start] * n
    lengths = length.tolist() if isinstance(length, Tensor) else [length] * n
    comps = [tensor[i].narrow(0, s, k) for i, (s, k) in enumerate(zip(starts, lengths))]
    row = tensor.shape[1]
    offs = _tensor([i * row + s for i, s in enumerate(starts)] + [n * row], device=tensor.device)
    return NestedTensor._new(comps, jagged, offsets=(offs, _tensor(lengths, device=tensor.device)))


def masked_select(tensor, mask):
    """A jagged nested tensor of each row's elements where mask (tensor's shape) is True."""
    if not isinstance(tensor, Tensor) or not isinstance(mask, Tensor) or mask.shape != tensor.shape:
        raise RuntimeError("Mask dimensions need to match tensor dimensions for nested masked_select")
    rows = [t.masked_select(m) for t, m in zip(tensor.reshape(tensor.shape[0], -1).unbind(0),
                                                mask.reshape(mask.shape[0], -1).unbind(0))]
    return NestedTensor._new(rows, jagged)


def to_padded_tensor(input, padding, output_size=None, out=None):
    """A dense tensor (batch, max sizes...) holding the components, padded with `padding`."""
    if not isinstance(input, NestedTensor):
        raise RuntimeError("to_padded_tensor(): expected a nested tensor")
    sizes = [max(s) for s in zip(*(c.shape for c in input._nt))]
    if output_size is not None:
        if len(output_size) != input.dim() or any(o < s for o, s in zip(output_size[1:], sizes)):
            raise RuntimeError("Value in output_size is less than NestedTensor padded size. Truncation is not "
                               "supported.")
        sizes = list(output_size[1:])
    rows = [_pad(c, [p for d in reversed(range(c.dim())) for p in (0, sizes[d] - c.shape[d])], value=padding)
            for c in input._nt]
    result = stack(rows)
    if output_size is not None and output_size[0] > len(rows):
        result = _pad(result, [0, 0] * (result.dim() - 1) + [0, output_size[0] - len(rows)], value=padding)
    return result if out is None else out.copy_(result)
