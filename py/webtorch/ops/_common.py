"""Shared helpers for op definitions: promotion, dim handling, in-place and out= plumbing."""
import functools
import inspect
import math
import warnings

from .. import _dtype
from .._geometry import contiguous_strides
from .._tensor import _NO_GRAD_VIEW_HINT, Tensor, _wrap_dim
from ..autograd import grad_mode
from ..autograd.derivatives import BF16_OPMATH_ROWS, COMPLEX_ROWS, DERIVATIVES, OPMATH_ROWS
from ..autograd.function import Function
from ..autograd.graph import run_backward
from ..overrides import torch_function
from . import _prims

F32 = _dtype.float32


def dispatching(namespace, names):
    """nn.functional's functions honour __torch_function__, as PyTorch's do (which is also where fx
    records them): each wrapped once, in its module's namespace, so that calls between them dispatch
    too. Their module is torch.nn.functional's, as PyTorch's (fx names them by it)."""
    for name in names:
        fn = namespace[name]
        if not hasattr(fn, "_impl"):
            fn.__module__ = "webtorch.nn.functional"
            namespace[name] = torch_function(fn)


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
    if isinstance(dim, (list, tuple)) and len(dim) == 0:
        return tuple(range(ndim))
    if ndim > 64:  # PyTorch's reductions hold the dims given in a 64-bit mask
        raise RuntimeError("only tensors with up to 64 dims are supported")
    if isinstance(dim, (list, tuple)):
        ds = [wrap_dim(d, ndim) for d in dim]
        if len(set(ds)) != len(ds):
            raise RuntimeError(f"dim {ds[0]} appears multiple times in the list of dims")
        return tuple(sorted(ds))
    return (wrap_dim(dim, ndim),)


# PyTorch's checked conversion of a Python number to a dtype (c10::checked_convert): the C type
# it names and the range an integer or a float value must lie in
_C_TYPES = {"int64": ("int64_t", -2 ** 63, 2 ** 63 - 1), "int32": ("int", -2 ** 31, 2 ** 31 - 1),
            "int16": ("int16_t", -2 ** 15, 2 ** 15 - 1), "int8": ("int8_t", -128, 127), "uint8": ("uint8_t", 0, 255),
            "float16": ("c10::Half", -65504.0, 65504.0), "bfloat16": ("c10::BFloat16", -3.3895e38, 3.3895e38)}


def scalar_to(v, dt):
    """A Python number parameter of an op (alpha, beta, value, min_val, ...) as PyTorch converts it to
    the op's dtype: truncated toward zero for an integer dtype (addmm(ints, alpha=1.5) scales by 1),
    PyTorch's error where it does not fit the dtype (70000 for float16; NaN for integers)."""
    if dt is _dtype.bool_ or isinstance(v, bool) or dt.name not in _C_TYPES:
        return v
    name, lo, hi = _C_TYPES[dt.name]
    if isinstance(v, int) and dt.name == "uint8":
        lo = -hi  # an integer wraps into uint8 from -255 on
    if not (lo <= v <= hi or dt.kind == "f" and not math.isfinite(v)):
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")
    return v if dt.kind == "f" else int(v)


def float_of(dt):
    """The floating dtype ops like exp/div produce for dt."""
    return dt if dt.kind in "fc" else _dtype.get_default_dtype()


def sum_to(g, shape):
    """Reduce a broadcast gradient back to `shape`."""
    if tuple(g.shape) == tuple(shape):
        return g
    return g.sum_to_size(shape)


def to_dtype(t, dt):
    if t.dtype is dt:
        return t
    if t.dtype.kind == "c" and dt.kind != "c":  # a real input's gradient: the real part (PyTorch's, no warning)
        t = t.real
    return t if t.dtype is dt else t.to(dt)


# `<input>_shape`, `<input>_stride`, `<input>_offset`, `<input>_device`
_ATTRIBUTES = {"_shape": lambda t: t._shape, "_stride": lambda t: t._stride, "_offset": lambda t: t._offset,
               "_device": lambda t: t.device}


def _position(names, key):
    """The argument position(s) of a formula's input(s): an int for one input; a slice for a tuple
    of consecutive inputs or the variadic last one (`*tensors`), whose formula returns a tuple."""
    if isinstance(key, tuple):
        first = names.index(key[0])
        return slice(first, first + len(key))
    return slice(names.index("*" + key), None) if "*" + key in names else names.index(key)


def _attribute(get, variadic):
    return (lambda ts: tuple([get(t) for t in ts])) if variadic else get


def _opmath(v):
    """A float16 / bfloat16 tensor in float32 (an OPMATH_ROWS formula's operands), anything else as is."""
    return v.to(_dtype.float32) if isinstance(v, Tensor) and v.dtype.kind == "f" and v.dtype.itemsize == 2 else v


def formula_node(node, kernel, names, scalar_edges=(), outputs=("y",)):
    """The graph node (a Function) `node` computing `kernel(*args)`, its arguments named `names`
    (the last may be variadic: `*tensors`, the rest of the arguments) and its results `outputs`;
    backward is the node's entry in `autograd/derivatives.py`: a formula per differentiable input
    (or per tuple of inputs, returning a tuple), given what it names: arguments, results,
    `<argument>_shape` / `_stride` / `_offset` / `_device`, and first the gradient of the first
    result (`g`) or of each (`grads`). A tensor is saved only when the formula of an input that needs
    a gradient reads it (as PyTorch saves). Each gradient is summed back to its input's shape and
    cast to its dtype (broadcasting, mixed dtypes). `scalar_edges`: positions where a Python number
    still shows in next_functions (`Function._scalar_edges`). PyTorch shows ops without a derivative
    as one node, NotImplemented: `NotImplemented(op)` names the entry of such an op."""
    entry = DERIVATIVES[node]
    plain = tuple(n.lstrip("*") for n in names)
    plan = tuple((_position(names, k), f, f.__code__.co_varnames[1:f.__code__.co_argcount],
                  f.__code__.co_varnames[0] == "grads")
                 for k, f in (entry.items() if isinstance(entry, dict) else ((plain[0], entry),)))
    needed = {p for _, _, ps, _ in plan for p in ps}

    def readers(n):
        return tuple(i for i, _, ps, _ in plan if n in ps)
    # what backward reads: (name, argument position or None, result position, the inputs whose formula reads it)
    kept = tuple([(n, _position(names, n), None, readers(n)) for n in plain if n in needed] +
                 [(n, None, k, readers(n)) for k, n in enumerate(outputs) if n in needed])
    several = len(outputs) > 1
    real_only = node not in COMPLEX_ROWS
    opmath = node in OPMATH_ROWS
    bf16_opmath = node in BF16_OPMATH_ROWS
    grads = tuple(i for i, _, _, _ in plan)
    attrs = tuple((n + a, _position(names, n), _attribute(get, "*" + n in names))
                  for n in plain for a, get in _ATTRIBUTES.items() if n + a in needed)

    class FormulaNode(Function):
        _node_name = node.split("(")[0]
        _scalar_edges = scalar_edges

        @staticmethod
        def forward(ctx, *args):
            if real_only:
                _refuse_complex(node, args)
            y = kernel(*args)
            need, outs = ctx.needs_input_grad, y if several else (y,)
            tensors, consts, geom = [], [], []
            for _, i, k, reads in kept:  # Tensors are saved (version-checked), anything else kept as is
                v = outs[k] if i is None else args[i]
                is_t = isinstance(v, Tensor)
                tensors.append(v if is_t and any([need[j] if j.__class__ is int else any(need[j]) for j in reads])
                               else None)
                consts.append(None if is_t else v)
            for i in grads:
                v = args[i]
                geom.append((v._shape, v._storage.dtype) if isinstance(v, Tensor) else _geometry(v))
            ctx.save_for_backward(*tensors)
            ctx.consts, ctx.geom = consts, geom
            if attrs:
                ctx.attrs = {n: get(args[i]) for n, i, get in attrs}
            return y

        @staticmethod
        def backward(ctx, *gs):
            kw = {n: c if t is None else t for (n, _, _, _), t, c in zip(kept, ctx.saved_tensors, ctx.consts)}
            if opmath or bf16_opmath and getattr(gs[0], "dtype", None) is _dtype.bfloat16:
                gs, kw = tuple(_opmath(g) for g in gs), {n: _opmath(v) for n, v in kw.items()}
            if attrs:
                kw.update(ctx.attrs)
            need = ctx.needs_input_grad
            res = [None] * len(need)
            for (i, f, ps, every), geom in zip(plan, ctx.geom):
                if need[i] if i.__class__ is int else any(need[i]):
                    r = f(gs if every else gs[0], *[kw[p] for p in ps])
                    if isinstance(i, slice):  # one gradient per input of the tuple
                        for j, rj, gj in zip(range(len(need))[i], r, geom):
                            res[j] = _cast(rj, gj) if need[j] else None
                    else:
                        res[i] = _cast(r, geom)
            return tuple(res)

    FormulaNode.kernel = staticmethod(kernel)  # the forward without a graph
    FormulaNode.__name__ = FormulaNode.__qualname__ = node.split("Backward")[0].split("(")[0]
    FormulaNode.saves_input = plain[0] in needed  # an in-place form must keep a copy of its input
    return FormulaNode


def _refuse_complex(node, args):
    """A node whose formula is not written for complex inputs (not in COMPLEX_ROWS) raises rather than record a
    wrong gradient."""
    for a in args:
        for t in a if isinstance(a, tuple) else (a,):
            if isinstance(t, Tensor) and t._storage.dtype.kind == "c":
                raise NotImplementedError(f"the derivative of {node.split('Backward')[0]} for complex inputs is not "
                                          "implemented in webtorch yet")


def _geometry(v):
    """(shape, dtype) of a differentiable input (a tuple of them for several), None for a non-Tensor."""
    if isinstance(v, tuple):
        return tuple([_geometry(t) for t in v])
    return (v._shape, v._storage.dtype) if isinstance(v, Tensor) else None


def _cast(g, geom):
    """A gradient summed back to its input's shape and cast to its dtype (None: no gradient)."""
    return None if g is None else to_dtype(sum_to(g, geom[0]), geom[1])


_KIND_ORDER = {"b": 0, "i": 1, "f": 2, "c": 3}


def can_cast(src, dst):
    return src is dst or _KIND_ORDER[src.kind] <= _KIND_ORDER[dst.kind]


def name_of(dt):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
            "bool": "Bool", "uint8": "Byte", "int16": "Short", "int8": "Char", "bfloat16": "BFloat16",
            "complex32": "ComplexHalf", "complex64": "ComplexFloat", "complex128": "ComplexDouble", "uint16": "UInt16",
            "uint32": "UInt32", "uint64": "UInt64"}[dt.name]


# PyTorch's kernel names in its errors for uint16/uint32/uint64 (c10's "barebones" unsigned types: only copies,
# views, mul, div, eq/ne, bitwise and/or/xor, sum/prod, sort and floating unary ops take them)
_WIDE_UINT_KERNEL = {"add": "add_stub", "sub": "add_stub", "rsub": "add_stub", "floor_divide": "div_floor_cpu",
                     "bitwise_left_shift": "lshift_cpu", "bitwise_right_shift": "rshift_cpu", "pow": "pow",
                     "max_all": "max_all", "min_all": "min_all", "amax": "max_values_cpu", "amin": "min_values_cpu"}


def check_wide_uint(op, dtype):
    if dtype._rank < 0 and dtype.kind == "i":  # uint16, uint32, uint64
        raise NotImplementedError(f"\"{_WIDE_UINT_KERNEL.get(op, op + '_cpu')}\" not implemented for "
                                  f"'{name_of(dtype)}'")


# dtype -> (C++ name, integer bits or floating max)
_FILL_TYPES = {"float32": ("float", 3.4028234663852886e38), "float64": ("double", math.inf),
               "float16": ("c10::Half", 65504.0), "bfloat16": ("c10::BFloat16", 3.3895313892515355e38),
               "int64": ("int64_t", 63), "int32": ("int", 31), "int16": ("int16_t", 15), "int8": ("int8_t", 7),
               "uint8": ("uint8_t", 8), "uint16": ("uint16_t", 16), "uint32": ("uint32_t", 32),
               "uint64": ("uint64_t", 64)}


def fill_value(value, dtype, numel=None):
    """A Python number written into a tensor of `dtype` (fill_, full, masked_fill), with PyTorch's check:
    a RuntimeError where the dtype cannot hold it (a complex with an imaginary part into a real dtype, a
    finite float past the float dtype's range, an integer or NaN/inf out of an integer dtype's; negative
    values wrap into uint8, anything goes into bool). PyTorch's fill_ / full skip the range check of
    float16/bfloat16 filling one element (`numel` 1): inf there."""
    if dtype.name == "bool":
        return bool(value)
    if isinstance(value, bool) or dtype.kind == "c":
        return value
    if isinstance(value, int) and not -(1 << 63) <= value < 1 << 64:
        raise OverflowError("int too big to convert")
    name, limit = _FILL_TYPES[dtype.name]
    overflow = RuntimeError(f"value cannot be converted to type {name} without overflow")
    if isinstance(value, complex):
        if value.imag != 0:
            raise overflow
        value = value.real
    if isinstance(limit, float):
        bad = math.isfinite(value) and abs(value) > limit and not (numel == 1 and dtype.itemsize == 2)
    else:  # uint8 takes integers -255..255 (negative ones wrap) and floats 0..255 (uint16-64 alike), the signed
        top = (1 << limit) - 1  # types their range
        lo, hi = ((-top if isinstance(value, int) else 0), top) if dtype.name.startswith("uint") else \
            (-(1 << limit), (1 << limit) - 1)
        bad = (isinstance(value, float) and not math.isfinite(value)) or not lo <= value <= hi
    if bad:
        raise overflow
    return value


INT_RANGE = {"uint8": (0, 255), "int8": (-128, 127), "int16": (-32768, 32767),
             "int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1), "uint16": (0, (1 << 16) - 1),
             "uint32": (0, (1 << 32) - 1), "uint64": (0, (1 << 64) - 1)}


def check_inplace_dtype(result_dtype, self):
    if result_dtype is not self._storage.dtype and not can_cast(result_dtype, self._storage.dtype):
        raise RuntimeError(f"result type {name_of(result_dtype)} can't be cast to the desired output type "
                           f"{name_of(self.dtype)}")


def recording(*args):
    if not grad_mode._state["enabled"]:
        return False
    for a in args:
        if isinstance(a, Tensor) and (a._requires_grad or a._base is not None and a.requires_grad):
            return True
    return False


def check_internal_overlap(t):
    """PyTorch's assert_no_internal_overlap: no two of the written-to elements may be one (an expanded tensor)."""
    if not _dense(t._shape, t._stride) and any(st == 0 and n > 1 for n, st in zip(t._shape, t._stride)):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a single "
                           "memory location." + _CLONE)


def check_leaf_inplace(self, *, overlap_ok=False):
    """The start of every in-place op: PyTorch's error on a leaf that requires grad, and on a
    written-to tensor whose elements overlap (`overlap_ok`: the fills zero_, fill_, masked_fill_,
    index_put_, which PyTorch allows, and the in-place view ops). A view of a tensor with history
    takes its history from its base (as_strided) before the op reads it: as PyTorch's CopySlices,
    the gradient of the view's old values goes into the base's at the view's place, never back
    through the view's own ops (an as_strided past its input's elements drops it)."""
    if not overlap_ok:
        check_internal_overlap(self)
    if grad_mode._state["enabled"] and getattr(self, "_no_grad_view", False) and self._base._requires_grad:
        fn = self.grad_fn  # a view (made with grad on) of one made in no_grad mode
        what = "A view was created" if fn is None else \
            f"Output {self._output_nr} of {fn.name().split('Backward')[0]} is a view of a view which was created"
        raise RuntimeError(f"{what} in no_grad mode and is being modified inplace with grad mode enabled. "
                           f"{_NO_GRAD_VIEW_HINT}")
    if getattr(self, "_multi_view", False) and grad_mode._state["enabled"] and self.grad_fn is not None:
        raise RuntimeError(f"Output {self._output_nr} of {self.grad_fn.name().split('Backward')[0]} is a view and is "
                           "being modified inplace. This view is the output of a function that returns multiple views. "
                           "Such functions do not allow the output views to be modified inplace. You should replace "
                           "the inplace operation by an out-of-place one.")
    if self._requires_grad and grad_mode._state["enabled"]:
        if self.grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        base = self._base
        if base is not None and base.grad_fn is not None and getattr(self, "_diff_view", False):
            self._regenerate_view_fn()


def _copy_kernel(dst, src):
    _prims.copy_into(dst, src)
    return dst


def _copy_slices_kernel(base, src, size, stride, offset, fill):
    _prims.copy_into(base.as_strided(size, stride, offset), src)
    return base


def _reads(result, view_fn):
    """Whether result's history reaches view_fn (the written view's own node): the in-place op read
    the view's old values. Only nodes made since view_fn can lie between them."""
    if view_fn is None or result.grad_fn is None:
        return False
    todo, seen = [result.grad_fn], set()
    while todo:
        fn = todo.pop()
        if fn is view_fn:
            return True
        if id(fn) in seen or fn._seq < view_fn._seq:
            continue
        seen.add(id(fn))
        todo.extend(e[0] for e in fn._edges if e is not None and e[0] is not None)
    return False


Copy = formula_node("CopyBackwards", _copy_kernel, ("dst", "src"))
# the graph node of an in-place write through a view of a tensor that needs grad
CopySlices = formula_node("CopySlices", _copy_slices_kernel, ("base", "src", "size", "stride", "offset", "fill"))


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
            # the region's gradient is the one the op gives the view's old values (PyTorch's CopySlices
            # writes it there): it comes back through the view and adds to the fill, -0.0 keeping its sign
            fill = -0.0 if _reads(result, self.grad_fn) else 0.0
            out = CopySlices.apply(base, result, *geom, fill)
            base.grad_fn, base._output_nr, base._requires_grad = out.grad_fn, 0, True
            view = base.as_strided(*geom)
            self.grad_fn, self._output_nr, self._requires_grad = view.grad_fn, 0, True
            return self
        if not result._requires_grad:  # self's old history gets zero gradient
            out = Copy.apply(self, result)
            self.grad_fn, self._output_nr, self._requires_grad = out.grad_fn, 0, True
            return self
        with grad_mode.no_grad():
            _prims.copy_into(self, result)
        self.grad_fn, self._output_nr, self._requires_grad = result.grad_fn, result._output_nr, True
        return self
    _prims.copy_into(self, result)
    return self


def type_meta_name(dt):
    """A dtype as PyTorch's structured-kernel messages name it ("float", "long int")."""
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool"}[dt.name]


OUT_DTYPE = "Expected out tensor to have dtype {rm}, but got {om} instead"  # structured kernels' message
OUT_DTYPE_SAME = "Found dtype {o} but expected {r}"  # TensorIterator ops that keep their input's dtype
_CLONE = " Please clone() the tensor before performing the operation."
RESIZED = ("An output with one or more elements was resized since it had shape {out_shape}, which does not match the "
           "required output shape {shape}. This behavior is deprecated, and in a future PyTorch release outputs will "
           "not be resized "
           "unless they have zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
           "elements with t.resize_(0).")


def _dense(shape, stride):
    """No two elements share memory and they fill one block (PyTorch's is_non_overlapping_and_dense)."""
    expected = 1
    for st, n in sorted((st, n) for n, st in zip(shape, stride) if n != 1):
        if st != expected:
            return False
        expected *= n
    return True


def _block(t, shape=None):
    """(storage, first, end, strides) of the memory block t's elements fill, None when they fill none
    (no elements, or not dense); `shape`: after t.resize_(shape), contiguous from its offset."""
    if shape is not None:
        n = math.prod(shape)
        return (t._storage, t._offset, t._offset + n, contiguous_strides(shape)) if n else None
    if t.numel() == 0 or not _dense(t._shape, t._stride):
        return None
    return t._storage, t._offset, t._offset + t.numel(), tuple(t._stride)


def overlap(a, b):
    """PyTorch's get_overlap_status of two _blocks: "full" (the same elements), "partial" (some elements
    shared) or None (none shared, or not decidable cheaply: a tensor that is not dense)."""
    if a is None or b is None or a[0] is not b[0]:
        return None
    if a[1:3] == b[1:3]:
        return "full" if a[3] == b[3] else "partial"
    return "partial" if a[1] < b[2] and b[1] < a[2] else None


def write_out(result, out, *inputs, exact=None, full_overlap_ok=False, resized=RESIZED):
    """The out= argument, under PyTorch's rules: out is on result's device; out's dtype is one
    result's casts to, or result's itself when `exact` (the op's message for a mismatch, formatted
    with r/o: the dtypes as in "Float", rm/om: as in "float"); out is resized to result's shape,
    with the warning `resized` (PyTorch's deprecation; None: none, as factories) when it held
    elements. No two elements of out may share memory (an expanded out), nor may out once resized
    share memory with `inputs` (element-wise ops: `full_overlap_ok`, all of an input's elements may)."""
    if out is None:
        return result
    if not isinstance(out, Tensor):
        raise TypeError(f"argument 'out' must be Tensor, not {type(out).__name__}")
    if out.device != result.device:
        raise RuntimeError(f"Expected out tensor to have device {result.device}, but got {out.device} instead")
    if exact is not None and out.dtype is not result.dtype:
        raise RuntimeError(exact.format(r=name_of(result.dtype), o=name_of(out.dtype), rm=type_meta_name(result.dtype),
                                        om=type_meta_name(out.dtype)))
    check_inplace_dtype(result.dtype, out)
    check_internal_overlap(out)
    resize = tuple(out.shape) != tuple(result.shape)
    block = _block(out, tuple(result.shape) if resize else None)
    for t in inputs:  # out itself as an input: after the resize, the same elements
        lap = "full" if t is out else overlap(block, _block(t)) if isinstance(t, Tensor) else None
        if lap == "partial" or (lap == "full" and not full_overlap_ok):
            raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor "
                               "refer to a single memory location." + _CLONE)
    if resize:
        if out.numel() and resized:
            warnings.warn(resized.format(out_shape=list(out.shape), shape=list(result.shape), out_numel=out.numel(),
                                         numel=result.numel()), UserWarning, stacklevel=3)
        out.resize_(result.shape)
    with grad_mode.no_grad():
        _prims.copy_into(out, result)
    return out


def write_outs(results, out, *inputs, exact=(OUT_DTYPE, OUT_DTYPE)):
    """out= of an op with several results (PyTorch's (values, indices) and the like): one out tensor
    each, of the result's dtype (`exact`: the messages), sharing no memory with `inputs`."""
    if out is None:
        return results
    if not isinstance(out, (tuple, list)) or len(out) != len(results):
        raise TypeError(f"argument 'out' must be tuple of {len(results)} Tensors, not {type(out).__name__}")
    return tuple(write_out(r, o, *inputs, exact=e) for r, o, e in zip(results, out, exact))


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
            if isinstance(a, Tensor) and a._requires_grad and a.dtype.kind in "fc" and k not in no_edges:
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
        ctx._s_diff = tuple(isinstance(a, Tensor) and a._requires_grad and a.dtype.kind in "fc"
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
