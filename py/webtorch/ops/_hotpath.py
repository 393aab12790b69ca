"""The hot path of element-wise ops: `x + y`, `x * 2`, `x.exp()` on plain tensors in a few calls.

An element-wise declaration (`ops/_elementwise.py`, `ops/pointwise.py`) hands its routed public function
(`overrides.torch_function`) a `fast(args)` made here, which that wrapper tries first when a call has no
keyword arguments. It takes the case where the general path would do nothing but checks: exact `Tensor`
operands (no subclass, so no `__torch_function__`, vmap or fx proxy) of one floating dtype, device and
shape, or a tensor and a Python float/int; no fx tracer and no forward-AD level open. Without a graph to
record it calls the backend's `ewise_new` with the operands the general path gives `ewise`
(`ops/_prims.py`), so values, dtypes, kernels and webgpu's lazy fusion are the same; with one (an operand
requires grad, none is a view) it calls the op's graph node as the general path does. Anything else returns
None and takes the general path, which owns every check and error message.

`WEBTORCH_HOTPATH=0` (or `set_enabled(False)`) turns it off: tests/test_hotpath.py compares the two.
"""
import os

from .. import _late, overrides
from .._geometry import contiguous_strides, numel
from .._tensor import Storage, Tensor
from ..autograd import grad_mode
from ..backends.base import Strided

_on = [os.environ.get("WEBTORCH_HOTPATH", "1") != "0"]
_grad = grad_mode._state
_tracing = overrides._tracing
_SCALAR_MAX = 1 << 53  # a Python int past this takes the general path (its range checks)
_SHAPES = {}  # a tensor's shape -> _geometry(shape)
_strided = tuple.__new__  # Strided(*fields) without the namedtuple's Python-level __new__


def set_enabled(on):
    """Turn the hot path on or off (the general path computes the same values)."""
    _on[0] = bool(on)


def _geometry(size):
    """(size as a plain tuple, its contiguous strides, its numel, whether a dim is 1): what an op of this shape
    needs of it, remembered (for up to 1024 shapes at a time)."""
    if len(_SHAPES) >= 1024:
        _SHAPES.clear()
    shape = tuple(size)
    g = _SHAPES[shape] = (shape, contiguous_strides(shape), numel(shape), 1 in shape)
    return g


def _zeroed(g, stride):
    """stride with a size-1 dim's stride 0 (geometry g), as `_prims.bview` gives a view."""
    return tuple([0 if n == 1 else s for n, s in zip(g[0], stride)])


def _compute(op, st, a, b=None):
    """A new contiguous tensor of a's shape, device and dtype (st its storage): the backend's ewise(op, inputs)
    of a and b (None for a unary op, a Python number, or a Tensor of a's shape and dtype), each tensor read
    through its own Strided as `_prims.bview` gives it."""
    g = _SHAPES.get(a._shape) or _geometry(a._shape)
    shape, name = g[0], st.dtype.name
    inputs = [_strided(Strided, (st.buf, shape, _zeroed(g, a._stride) if g[3] else a._stride, a._offset, name))]
    if type(b) is Tensor:
        inputs.append(_strided(Strided, (b._storage.buf, shape, _zeroed(g, b._stride) if g[3] else b._stride,
                                         b._offset, name)))
    elif b is not None:
        inputs.append(b)
    be = st.backend
    return Tensor._make(Storage(be.ewise_new(op, shape, inputs, name), st.dtype, st.device, g[2], be), a._shape,
                        g[1], 0)


def _taken(a, op, primitive):
    """a's storage when a call whose first operand is `a` may take the hot path (on, a plain floating
    tensor, a kernel for op, no tracer, no forward-AD level), else None."""
    if _on[0] and type(a) is Tensor and _tracing[0] is None and _late.forward_ad is None:
        st = a._storage
        if st.dtype.kind == "f" and (primitive or op in st.backend.fast_paths):
            return st
    return None


def binary(op, primitive, record=None, scalars=True):
    """fast(args) of the binary op `op` whose result keeps its operands' one floating dtype (dtype rules
    'arith', 'div'), computed by the backend's kernel `op` (`primitive` False: its fast path, if it has
    one). record(a, b, dtype): the op with its graph node (None: not differentiable), called as the general
    path would when an operand requires grad (views take the general path). scalars=False: a Python number
    operand takes the general path (its TypeError)."""
    def fast(args):
        if len(args) != 2:
            return None
        a, b = args
        sa = _taken(a, op, primitive)
        if sa is None:
            return None
        grad = record is not None and _grad["enabled"]
        tb = type(b)
        if tb is Tensor:
            sb = b._storage
            if sb.dtype is not sa.dtype or sb.device is not sa.device or b._shape != a._shape:
                return None
            if grad and (a._requires_grad or b._requires_grad or a._base is not None or b._base is not None):
                return record(a, b, sa.dtype) if a._base is None and b._base is None else None
        elif scalars and (tb is float or tb is int and -_SCALAR_MAX <= b <= _SCALAR_MAX) and sa.dtype.itemsize > 2:
            if grad and (a._requires_grad or a._base is not None):  # (float16/bfloat16 round the number first)
                return record(a, b, sa.dtype) if a._base is None else None
        else:
            return None
        return _compute(op, sa, a, b)
    return fast


def unary(op, primitive, record=None, half=True):
    """fast(args) of the unary op `op` whose floating result keeps its input's dtype, computed by the
    backend's kernel `op`: a primitive, or (`primitive` False) a decomposed op the backend has a fast path
    for. record(a, dtype): as `binary`'s. half=False: float16/bfloat16 inputs take the general path (its error)."""
    def fast(args):
        if len(args) != 1:
            return None
        a = args[0]
        st = _taken(a, op, primitive)
        if st is None or not half and st.dtype.itemsize == 2:
            return None
        if record is not None and _grad["enabled"] and (a._requires_grad or a._base is not None):
            return record(a, st.dtype) if a._base is None else None
        return _compute(op, st, a)
    return fast
