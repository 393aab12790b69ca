"""The machinery of element-wise ops: `unary(...)` and `binary(...)` declare one (its function, method,
in-place forms and out=, dtype rule, PyTorch's checks and errors, graph node); whatever is particular to an
op is a parameter of its declaration (ops/pointwise.py), never a name tested in here. `declare(record)`
declares a primitive from its record's `decl` (backends/elementwise.py), at import for every record and
at run time for a record `elementwise.define` adds. How to add an op: docs/adding_an_op.md.
"""
from .. import _dtype
from .._tensor import Tensor
from ..autograd.derivatives import DERIVATIVES
from ..backends import elementwise
from . import _hotpath, _prims
from ._common import (
    OUT_DTYPE_SAME,
    check_inplace_dtype,
    check_leaf_inplace,
    check_tensor,
    check_wide_uint,
    composite_node,
    float_of,
    formula_node,
    inplace_result,
    name_of,
    recording,
    write_out,
)
from .registry import ELEMENTWISE, FUNCTIONS, METHODS, Decl, register, routed

bool_ = _dtype.bool_


def _bind_params(op, params, args, kwargs):
    """The values of an op's own parameters (`params`: name -> default) from a call's arguments."""
    if len(args) > len(params):
        raise TypeError(f"{op}() takes at most {len(params) + 1} positional arguments but {len(args) + 1} "
                        f"were given")
    vals = dict(params)
    vals.update(zip(params, args, strict=False))
    for k, v in kwargs.items():
        if k not in params:
            raise TypeError(f"{op}() got an unexpected keyword argument '{k}'")
        vals[k] = v
    return tuple(vals.values())


def _unary_kernel(op, ref, x, cdt, odt, pvals):
    """The decomposed op(x) computed in cdt, out in odt: the backend's own kernel where it has one
    (`Backend.fast_paths`), else the reference decomposition, float16/bfloat16 computed in float32 and
    rounded once, as PyTorch's kernels compute (opmath: sinc(f16 -1.0) is -0.0, not pi's rounding)."""
    if op in x._storage.backend.fast_paths:
        return _prims.ewise(op, [x], cdt, odt, shape=x._shape)
    if cdt.kind == "f" and cdt.itemsize == 2:
        cdt = _dtype.float32
    r = ref(x if x.dtype is cdt else x.to(cdt), *pvals)
    return r if r.dtype is odt else r.to(odt)


def elementwise_node(node, ref, params=(), op=None):
    """The graph node (a Function) `node` of the element-wise `ref(x, *params)` (op: the backend
    primitive instead, ref None): apply(x, out dtype, *param values); backward is the node's formula
    in `autograd/derivatives.py`, or, without one, the decomposition's derivative (a Composite node).
    nn.functional's activations are nodes of this kind."""
    if node not in DERIVATIVES:  # composite: differentiate the decomposition
        fn = composite_node(node, lambda x, dt, *pvals: ref(x if x.dtype is dt else x.to(dt), *pvals))
        fn.saves_input = True  # its inner graph may hold the input
        return fn
    if ref is None:
        def kernel(x, dt):  # a complex input keeps its dtype for computing (abs: a real result)
            return _prims.ewise(op, [x], x.dtype if x.dtype.kind == "c" else dt, dt, shape=x._shape)
    else:
        def kernel(x, dt, *pvals):
            return _unary_kernel(op, ref, x, dt, dt, pvals)
    return formula_node(node, kernel, ("x", "dtype", *params))


def _unary_dtype(rule, x, op):
    if rule in ("same", "real"):
        check_wide_uint(op, x.dtype)  # uint16/32/64 take floating unary ops only
    if rule == "same":
        return x.dtype
    if rule == "real":  # abs: a complex input's parts' dtype
        return x.dtype.to_real()
    if rule == "float":
        return float_of(x.dtype)
    return bool_


def _check_real_inplace(op, dt, self):
    if dt is not self.dtype and self.dtype.is_complex:  # abs_ of a complex tensor: its result is real
        raise RuntimeError(f"In-place {op} is not supported for complex tensors.")


# PyTorch's CPU kernels for uint16/uint32/uint64 (c10's "barebones" unsigned types): these binary ops only (the
# others raise its NotImplementedError, under its kernel's name); unary ops only through a floating result
_WIDE_UINT_BINARY = ("mul", "div", "true_divide", "eq", "ne", "bitwise_and", "bitwise_or", "bitwise_xor")


def _not_implemented(op, dtype):
    """PyTorch's error for a dtype an op's kernel does not take (frac of an integer, erfcx of float16, ...)."""
    return NotImplementedError(f"\"{op.removeprefix('special_')}_cpu\" not implemented for '{name_of(dtype)}'")


def unary(op, rule, node=None, *, ref=None, params=None, inplace=True, ints=True, floats=True, half=True,
          refuse_bool=None, casts_out=False, exported=True):
    """Declare the element-wise op `op(input, *params, out=None)`, its method and, when `inplace`,
    its in-place form `op_` (a function and a method; `inplace="method"`: a method only). rule: 'same' keeps
    the dtype, 'float' makes integers the default float, 'bool' gives bool. node: PyTorch's node name, whose
    formula is in autograd/derivatives.py (None: not differentiable).
    ref: a reference decomposition `ref(x, *params)` (None: the backend primitive `op`). params: the
    op's own parameters, name -> default. ints / floats / half: integer and bool / floating / float16 and
    bfloat16 inputs are taken (False: PyTorch's "not implemented" error); refuse_bool: (exception type,
    message) a bool input raises. casts_out: a 'bool' op's out= may be of any dtype (logical_not).
    exported=False: neither webtorch.<op> nor a method (a torch.special function)."""
    params = params or {}
    defaults = tuple(params.values())
    fn = elementwise_node(node, ref, params, op) if node is not None else None
    ELEMENTWISE[op] = Decl("unary", rule, node, ref)
    # dtype-keeping ops and bool-valued tests (but casts_out's) take no other out= dtype
    exact = OUT_DTYPE_SAME if rule in ("same", "real") else \
        f"{op} does not support non-boolean outputs." if rule == "bool" and not casts_out else None

    checks = bool(refuse_bool) or not (ints and floats and half)  # no call per op where none applies

    def check(x):
        if x.dtype is bool_ and refuse_bool:
            raise refuse_bool[0](refuse_bool[1])
        fp = x.dtype.is_floating_point
        if not (ints or fp) or not floats and fp or not half and fp and x.dtype.itemsize == 2:
            raise _not_implemented(op, x.dtype)

    def public(input, *args, out=None, **kwargs):
        check_tensor(op, input)
        if checks:
            check(input)
        pvals = _bind_params(op, params, args, kwargs) if args or kwargs else defaults
        dt = _unary_dtype(rule, input, op)
        if fn is not None and recording(input):
            r = fn.apply(input, dt, *pvals)
        elif ref is None:  # bool-valued tests (isnan, isinf, ...) and abs look at the input in its own dtype
            r = _prims.ewise(op, [input], input.dtype if rule in ("bool", "real") else dt, dt, shape=input._shape)
        else:
            r = _unary_kernel(op, ref, input, input.dtype if rule == "bool" else dt, dt, pvals)
        if out is None:
            return r
        return write_out(r, out, input, full_overlap_ok=True, exact=exact)

    def in_place(self, *args, **kwargs):
        pvals = _bind_params(op + "_", params, args, kwargs) if args or kwargs else defaults
        check_leaf_inplace(self)
        if checks:
            check(self)
        dt = _unary_dtype(rule, self, op)
        _check_real_inplace(op, dt, self)
        check_inplace_dtype(dt, self)
        if fn is not None and recording(self):
            src = self.clone() if fn.saves_input else self
            return inplace_result(self, fn.apply(src, dt, *pvals))
        if ref is not None and op not in self._storage.backend.fast_paths:
            return _prims.copy_into(self, ref(self, *pvals))
        return _prims.ewise_into(op, self, [self], dt if dt.kind == "f" else self.dtype)

    public.__name__ = op
    in_place.__name__ = op + "_"
    public._fast = _hotpath.unary(op, ref is None, fn and (lambda x, dt: fn.apply(x, dt, *defaults)), half) \
        if floats and rule != "bool" else None
    if not exported:
        return routed(public)
    if inplace:
        register(in_place, function=inplace is True)
    return register(public)


# ---- binary ops. Rules: 'arith' result_type; 'div' integers become float; 'cmp' bool out computed in
# result_type; 'logical' bool out; 'int' integer only; 'float' floating only; 'same' one dtype


def _binary_dtypes(op, rule, a, b, opmath_scalar=False):
    """(compute dtype, out dtype) for a binary op, with PyTorch's errors. opmath_scalar: (`binary`)."""
    if rule == "same":  # both operands Tensors of one dtype
        if a.dtype is not b.dtype:
            raise RuntimeError(f"{op} is not yet implemented for tensors with different dtypes.")
        return a.dtype, a.dtype
    rt = _dtype.result_type(a, b)
    if rt._rank < 0 and op not in _WIDE_UINT_BINARY:
        check_wide_uint(op, rt)
    if rule == "div":
        rt = float_of(rt)
    if rule in ("arith", "div"):
        if opmath_scalar and rt.itemsize == 2 and rt.kind == "f" and isinstance(b, (int, float)) and \
                not isinstance(b, bool):
            return _dtype.float32, rt
        return rt, rt
    if rule == "cmp":
        if rt.kind == "c" and op not in ("eq", "ne"):  # complex numbers have no order
            raise NotImplementedError(f"\"{op}_cpu\" not implemented for '{name_of(rt)}'")
        return rt, bool_
    if rule == "logical":
        return rt, bool_
    if (rule == "int") == rt.is_floating_point:  # 'int': integers only; 'float': floating only
        raise NotImplementedError(f"\"{op}_cpu\" not implemented for '{name_of(rt)}'")
    return rt, rt


def _binary_function(op, node, scalar_node, scalar_self_node):
    def kernel(a, b, cdt, odt):  # the primitive, or the backend's fast path or the decomposition
        return _prims.ewise(op, [a, b], cdt, odt)
    fn = formula_node(node, kernel, ("a", "b", "cdt", "odt"), scalar_edges=(0, 1))
    if scalar_node:  # PyTorch's overload with a Python number: its own node, one edge
        fn.scalar = formula_node(scalar_node, kernel, ("a", "b", "cdt", "odt"), scalar_edges=(0,))
    if scalar_self_node:  # and its overload with a Python number self
        fn.scalar_self = formula_node(scalar_self_node, kernel, ("a", "b", "cdt", "odt"), scalar_edges=(1,))
    return fn


def _binary_node(fn, input, other):
    if not isinstance(input, Tensor) and hasattr(fn, "scalar_self"):
        return fn.scalar_self
    return fn.scalar if not isinstance(other, Tensor) and hasattr(fn, "scalar") else fn


_OPERAND = (Tensor, bool, int, float, complex)


def _check_operands(op, input, other):
    for x, pos in ((input, 1), (other, 2)):
        if not isinstance(x, _OPERAND):
            name = "input" if pos == 1 else "other"
            raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be Tensor, not {type(x).__name__}")


def _check_inplace_shape(self, other):
    """An in-place op's other operand must broadcast to self's shape."""
    if isinstance(other, Tensor) and other._shape != self._shape:
        shape = _prims.broadcast_shapes(self._shape, other._shape)
        if shape != tuple(self._shape):
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                               f"{list(shape)}")


def binary(op, rule, node=None, *, ref=None, scalar_node=None, scalar_self=False, scalar_self_node=None,
           tensor_other=False, names=(), inplace=True, int_div=False, opmath_scalar=False, exported=True):
    """Declare the element-wise op `op(input, other, out=None)`, its method and in-place method.
    rule: the dtype rule above. node: PyTorch's node name, whose formulas are in
    autograd/derivatives.py (None: not differentiable); scalar_node: the node of PyTorch's overload
    with a Python number `other`. ref: a reference decomposition `ref(input, other, compute dtype)`
    (None: the backend primitive `op`). scalar_self: the input may be a Python number (torch.remainder(2, t));
    scalar_self_node: the node of PyTorch's overload with a Python number input, if its own. tensor_other: `other`
    must be a Tensor (torch.maximum(t, 2) is a TypeError). names: public names (default: op).
    inplace: declare the in-place method `op_` (PyTorch has no maximum_, fmin_, ...). int_div: an integer
    division (PyTorch's errors for bool operands and a zero divisor). opmath_scalar (mul, div, floor_divide):
    PyTorch's CPU kernels of these keep a Python number second operand in float32 where the tensor is
    float16/bfloat16 (original_scalar_value<opmath_t>): f16 * 70000.0 is computed in float32 (-0.549 ->
    -38432), not with 70000 rounded to float16 first (inf). The other ops round the number to the
    tensor's dtype first (remainder(f16 1.0, 0.1) is 2.44e-4, with 0.1 as float16 0.09998).
    exported=False: neither webtorch.<op> nor a method (a torch.special function)."""
    fn = _binary_function(op, node, scalar_node, scalar_self_node) if node is not None else None
    ELEMENTWISE[op] = Decl("binary", rule, node, ref)

    def public(input, other, *, out=None):
        if not (isinstance(input, _OPERAND) and isinstance(other, _OPERAND)):
            _check_operands(op, input, other)
        if not scalar_self:
            check_tensor(op, input)
        if tensor_other:
            check_tensor(op, other, "other", 2)
        cdt, odt = _binary_dtypes(op, rule, input, other, opmath_scalar)
        if int_div and cdt.kind != "f":
            _check_int_div(op, other, cdt)
        if fn is not None and odt.kind in "fc" and recording(input, other):
            r = _binary_node(fn, input, other).apply(input, other, cdt, odt)
        else:
            if not isinstance(input, Tensor) and not isinstance(other, Tensor):
                raise TypeError(f"{op}(): at least one argument must be a Tensor")
            r = _prims.ewise(op, [input, other], cdt, odt)
        return r if out is None else write_out(r, out, input, other, full_overlap_ok=True)

    def in_place(self, other):
        check_leaf_inplace(self)
        cdt, odt = _binary_dtypes(op, rule, self, other, opmath_scalar)
        check_inplace_dtype(odt, self)
        _check_inplace_shape(self, other)
        if fn is not None and recording(self, other):
            src = self.clone() if fn.saves_input else self
            return inplace_result(self, _binary_node(fn, self, other).apply(src, other, cdt, odt))
        if int_div and cdt.kind != "f":
            _check_int_div(op, other, cdt)
        return _prims.ewise_into(op, self, [self, other], cdt)

    public.__name__ = op
    in_place.__name__ = op + "_"
    record = fn and (lambda a, b, dt: _binary_node(fn, a, b).apply(a, b, dt, dt))
    public._fast = _hotpath.binary(op, ref is None, record, not tensor_other) if rule in ("arith", "div") else None
    if not exported:
        return routed(public)
    if inplace:
        register(in_place, *[n + "_" for n in names or (op,)], function=False)
    return register(public, *names)


def _check_int_div(op, other, cdt):
    """PyTorch's errors of integer floor_divide, remainder, fmod, div: bool operands, a zero divisor."""
    if cdt is bool_:
        raise NotImplementedError(f"\"{'div_floor' if op == 'floor_divide' else op}_cpu\" not implemented for 'Bool'")
    if isinstance(other, Tensor):
        if other.device.type == "cpu" and (other == 0).any().item():
            raise RuntimeError("ZeroDivisionError")
    elif other == 0:
        raise RuntimeError("ZeroDivisionError")


# ---- declarations from the records -------------------------------------------------------------------
_DIFFERENTIABLE_RULES = ("same", "float", "arith", "div")


def declare(rec):
    """Declare record rec's op from its `decl` ({'rule', 'node', flags}): the node defaults to PyTorch's name
    for a differentiable rule (`log1p` -> `Log1PBackward0`), none for the others ('bool', 'cmp', 'int', ...).
    Returns (public name, the public function)."""
    d = dict(rec.decl)
    rule = d.pop("rule")
    default = "".join(w.title() for w in rec.name.split("_")) + "Backward0" if rule in _DIFFERENTIABLE_RULES else None
    node = d.pop("node", default)
    if rec.arity == 1:
        d.setdefault("inplace", rule != "bool")
        return rec.name, unary(rec.name, rule, node, **d)
    return (d.get("names") or (rec.name,))[0], binary(rec.name, rule, node, **d)


def declare_records():
    """{public name: function} of every record with a `decl`."""
    return dict(declare(r) for r in elementwise.RECORDS.values() if r.decl is not None)


@elementwise.subscribe
def _follow(rec, defined):
    """A record defined (or removed) at run time: its function and methods join (or leave) the registry."""
    if rec.decl is None:
        return
    names = [n for n in (rec.decl.get("names") or (rec.name,)) for n in (n, n + "_")]
    if defined:
        declare(rec)
    for n in names:
        if not defined:
            FUNCTIONS.pop(n, None)
            METHODS.pop(n, None)
        if n in METHODS:
            setattr(Tensor, n, METHODS[n])
        elif hasattr(Tensor, n):
            delattr(Tensor, n)
    if not defined:
        del ELEMENTWISE[rec.name]
