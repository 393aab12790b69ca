"""Reductions, scans, sorting and the softmax family."""
import builtins
import math
import struct
from collections import namedtuple

from .. import _dtype, _late
from .._geometry import numel as _numel
from .._tensor import Tensor
from ..amp import autocast_mode as _autocast
from ..overrides import torch_function
from . import _cpu_random, _creation, _prims, shape as _shape
from ._common import (
    OUT_DTYPE,
    check_tensor,
    check_wide_uint,
    composite_node,
    composite_op,
    float_of,
    formula_node,
    name_of,
    norm_dims,
    recording,
    wrap_dim,
    write_out,
    write_outs,
)
from .pointwise import logaddexp, maximum, minimum, where
from .registry import register, register_method

int64, bool_ = _dtype.int64, _dtype.bool_


def _rt(name, fields="values indices"):
    cls = namedtuple(name, fields)
    cls.__module__ = "torch.return_types"
    cls.__repr__ = lambda self: (f"torch.return_types.{name}(\n" + ",\n".join(
        f"{f}={v!r}" for f, v in zip(self._fields, self)) + ")")
    return cls


class return_types:
    max = _rt("max")
    min = _rt("min")
    sort = _rt("sort")
    topk = _rt("topk")
    kthvalue = _rt("kthvalue")
    median = _rt("median")
    nanmedian = _rt("nanmedian")
    mode = _rt("mode")
    cummax = _rt("cummax")
    cummin = _rt("cummin")
    aminmax = _rt("aminmax", "min max")
    histogram = _rt("histogram", "hist bin_edges")
    histogramdd = _rt("histogramdd", "hist bin_edges")
    frexp = _rt("frexp", "mantissa exponent")


# ---- sum / mean / prod -----------------------------------------------------------------------------
def _sum_kernel(x, dims, keepdim, dt):
    return _prims.reduce("sum", x, dims, keepdim, dt)


Sum = formula_node("SumBackward1", _sum_kernel, ("x", "dims", "keepdim", "dtype"))
SumAll = formula_node("SumBackward0", _sum_kernel, ("x", "dims", "keepdim", "dtype"))


def _sum_dtype(x, dtype):
    if dtype is not None:
        return dtype
    return int64 if x.dtype.kind not in "fc" else x.dtype


@register
@torch_function
def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    if _autocast.STATE and dtype is None and isinstance(input, Tensor):
        input = _autocast.cast_fp32(input)  # autocast: reductions run in float32
    dims = norm_dims(dim, input.dim())
    if dtype is None and out is not None:  # PyTorch sums in out's dtype
        dtype = out.dtype
    dt = _sum_dtype(input, dtype)
    x = input.to(dt) if dtype is not None and input.dtype != dtype else input
    if dt.kind in "fc" and recording(x):
        r = (SumAll if dim is None else Sum).apply(x, dims, keepdim, dt)
    else:
        r = _prims.reduce("sum", x, dims, keepdim, dt)
    return write_out(r, out)


def _nansum_kernel(x, dims, keepdim, dt):
    return _prims.reduce("sum", where(x.isnan(), 0.0, x), dims, keepdim, dt)


Nansum = formula_node("NansumBackward0", _nansum_kernel, ("x", "dims", "keepdim", "dtype"))


@register
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    if input.is_complex():
        raise RuntimeError(f"nansum on {input.device.type.upper()} does not support complex inputs")
    if not input.is_floating_point():
        return sum(input, dim, keepdim, dtype=dtype)
    x = input if dtype is None or dtype is input.dtype else input.to(dtype)
    args = (x, norm_dims(dim, x.dim()), keepdim, x.dtype)
    return Nansum.apply(*args) if recording(x) else _nansum_kernel(*args)


@register_method
def sum_to_size(self, *size):
    size = _shape._sizes(size)
    g = self
    lead = g.dim() - len(size)
    if lead < 0:
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(self.shape)}}}.")
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size) if s == 1 and g.shape[lead + i] != 1)
    for i, s in enumerate(size):
        if s != 1 and g.shape[lead + i] != s:
            raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(self.shape)}}}.")
    if dims:
        g = sum(g, dims, keepdim=True)
    if lead:
        g = g.reshape(size)
    return g


def _mean_kernel(x, dims, keepdim, n):
    # float16's sum in float32 (opmath), divided and rounded once, as PyTorch: a sum past 65504 is no inf
    ct = _dtype.float32 if x.dtype.itemsize == 2 and n != 1 else x.dtype
    s = _prims.reduce("sum", x, dims, keepdim, ct)
    return _prims.ewise("div", [s, n if n else math.nan], ct, x.dtype) if n != 1 else s


def _mean_dims(x, dims, keepdim):
    return _mean_kernel(x, dims, keepdim, _numel([x._shape[d] for d in dims]))


Mean = formula_node("MeanBackward1", _mean_dims, ("x", "dims", "keepdim"))
MeanAll = formula_node("MeanBackward0", _mean_dims, ("x", "dims", "keepdim"))


@register
@torch_function
def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    if _autocast.STATE and dtype is None and isinstance(input, Tensor):
        input = _autocast.cast_fp32(input)  # autocast: reductions run in float32
    if (dtype or input.dtype).kind not in "fc":
        raise RuntimeError(f"mean(): could not infer output dtype. {'Input' if dtype is None else 'Optional'} dtype "
                           f"must be either a floating point or complex dtype. Got: {name_of(dtype or input.dtype)}")
    if dtype is not None:
        input = input.to(dtype)
    dims = norm_dims(dim, input.dim())
    if recording(input):
        r = (MeanAll if dim is None else Mean).apply(input, dims, keepdim)
    else:
        shape = tuple(input._shape)
        r = _mean_kernel(input, dims, keepdim, _numel([shape[d] for d in dims]))
    return write_out(r, out)


@register
def nanmean(input, dim=None, keepdim=False):
    notnan = (~input.isnan()).sum(dim, keepdim)
    return nansum(input, dim, keepdim) / notnan


def _prod_all(x):
    return _prims.reduce("prod", x, tuple(range(x.dim())), False, x.dtype)


def _prod_dim(x, d, keepdim):
    return _prims.reduce("prod", x, (d,), keepdim, x.dtype)


ProdAll = formula_node("ProdBackward0", _prod_all, ("x",))
Prod = formula_node("ProdBackward1", _prod_dim, ("x", "dim", "keepdim"))


@register
@torch_function
def prod(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    dt = _sum_dtype(input, None)
    x = input if input.dtype == dt else input.to(dt)
    if dim is None:
        if dt.kind in "fc" and recording(x):
            return ProdAll.apply(x)
        return _prims.reduce("prod", x, tuple(range(x.dim())), False, dt)
    d = wrap_dim(dim, x.dim())
    if x.dim() == 0:  # the product of one value
        return prod(x)
    if dt.kind in "fc" and recording(x):
        return Prod.apply(x, d, keepdim)
    return _prims.reduce("prod", x, (d,), keepdim, dt)


# ---- max / min family ------------------------------------------------------------------------------
def _extreme(x, op, dims, keepdim):
    return _prims.reduce(op, x, dims, keepdim, x.dtype)


# amax/amin and max()/min() over all: the gradient is shared evenly between ties
Amax, Amin, MaxAll, MinAll = (formula_node(n, _extreme, ("x", "op", "dims", "keepdim"))
                              for n in ("AmaxBackward0", "AminBackward0", "MaxBackward1", "MinBackward1"))


def _zero_index(x):
    """The index tensor of a (values, indices) op on a 0-d tensor: 0."""
    return _prims.ewise("copy", [0], int64, int64, shape=(), device=x.device)


def _max_dim_kernel(x, op, d, keepdim):
    return _prims.reduce(op, x, (d,), keepdim, x.dtype), _prims.reduce("arg" + op, x, (d,), keepdim, int64)


# (values, indices) ops whose values are x's elements at the indices along dim d: max/min over a dim
# and cummax/cummin
_PICK_ARGS, _PICKED = ("x", "op", "d", "keepdim"), ("values", "indices")
MaxDim, MinDim = (formula_node(n, _max_dim_kernel, _PICK_ARGS, outputs=_PICKED)
                  for n in ("MaxBackward0", "MinBackward0"))


def _check_nonempty(input, name, dims=None):
    if dims is None:
        if input.numel() == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify "
                               "the reduction dim with the 'dim' argument.")
    else:
        for d in dims:
            if input.dim() and input.shape[d] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _make_max(op):
    rt = getattr(return_types, op)
    all_node = MaxAll if op == "max" else MinAll
    dim_node = MaxDim if op == "max" else MinDim

    def public(input, dim=None, keepdim=False, *, out=None):
        check_tensor(op, input)
        if isinstance(dim, Tensor):  # torch.max(a, b) is maximum
            return (maximum if op == "max" else minimum)(input, dim)
        check_wide_uint(f"{op}_all" if dim is None else f"{op}", input.dtype)
        if dim is None:
            _check_nonempty(input, op)
            dims = tuple(range(input.dim()))
            if recording(input) and input.dtype.is_floating_point:
                return all_node.apply(input, op, dims, False)
            return _prims.reduce(op, input, dims, False, input.dtype)
        d = wrap_dim(dim, input.dim())
        _check_nonempty(input, op, (d,))
        if input.dim() == 0:
            return rt(*write_outs((input.clone(), _zero_index(input)), out, input))
        if recording(input) and input.dtype.is_floating_point:
            v, i = dim_node.apply(input, op, d, keepdim)
        else:
            v, i = dim_node.kernel(input, op, d, keepdim)
        return rt(*write_outs((v, i), out, input))

    public.__name__ = op
    return public


max = register(_make_max("max"))
min = register(_make_max("min"))


def _make_amax(op, node):
    def public(input, dim=(), keepdim=False, *, out=None):
        check_wide_uint(f"a{op}", input.dtype)
        dims = norm_dims(dim if dim != () else None, input.dim())
        _check_nonempty(input, "a" + op, dims if input.numel() == 0 and dim not in (None, ()) else None)
        r = node.apply(input, op, dims, keepdim) if recording(input) and input.dtype.is_floating_point else \
            _prims.reduce(op, input, dims, keepdim, input.dtype)
        return write_out(r, out, exact="Expected the dtype for input and out to match, but got {r} for input's dtype "
                                       "and {o} for out's dtype.")

    public.__name__ = "a" + op
    return public


amax = register(_make_amax("max", Amax))
amin = register(_make_amax("min", Amin))


@register
def aminmax(input, *, dim=None, keepdim=False, out=None):
    return return_types.aminmax(*write_outs((amin(input, dim if dim is not None else (), keepdim),
                                             amax(input, dim if dim is not None else (), keepdim)), out, input))


def _make_arg(op):
    def public(input, dim=None, keepdim=False):
        if input.dtype is _dtype.bool_:
            raise RuntimeError(f"arg{op}(): does not support bool input")
        check_wide_uint(f"arg{op}", input.dtype)
        if dim is None:
            if input.numel() == 0:
                raise IndexError(f"arg{op}(): Expected reduction dim to be specified for input.numel() == 0.")
            x = input.reshape(-1)
            r = _prims.reduce("arg" + op, x, (0,), False, int64)
            return r.reshape((1,) * input.dim()) if keepdim else r
        d = wrap_dim(dim, input.dim())
        _check_nonempty(input, "arg" + op, (d,))
        if input.dim() == 0:
            return _zero_index(input)
        return _prims.reduce("arg" + op, input, (d,), keepdim, int64)

    public.__name__ = "arg" + op
    return public


argmax = register(_make_arg("max"))
argmin = register(_make_arg("min"))


@register
@torch_function
def all(input, dim=None, keepdim=False):
    dims = norm_dims(dim, input.dim())
    return _prims.reduce("all", input, dims, keepdim, bool_ if input.dtype is not _dtype.uint8 else _dtype.uint8)


@register
@torch_function
def any(input, dim=None, keepdim=False):
    dims = norm_dims(dim, input.dim())
    return _prims.reduce("any", input, dims, keepdim, bool_ if input.dtype is not _dtype.uint8 else _dtype.uint8)


# ---- var / std / norm / logsumexp ---------------------------------------------------------------------
def _correction(unbiased, correction):
    if correction is not None:
        return correction
    if unbiased is None:
        return 1
    return 1 if unbiased else 0


def _var_std(x, dims, c, keepdim, root):
    """var (root False) or std: two passes, on cpu in float64 as PyTorch's CPU kernel accumulates in
    double (std of [3e38, -3e38, 1e38] is 3.06e38 in float32, its variance's float32 square inf).
    Without float64 (webgpu) in float32 over x scaled by the power of two nearest max |x|, so that no
    finite square overflows or underflows (the scale clamped to float32's normal exponents). A complex x:
    PyTorch's sum of the real and the imaginary parts' variances (a real result)."""
    if x.dtype.kind == "c":
        rt = x.dtype.to_real()
        r = _prims.ewise("add", [_var_std(x.real, dims, c, keepdim, False), _var_std(x.imag, dims, c, keepdim, False)],
                         rt, rt)
        return _prims.ewise("sqrt", [r], rt, rt) if root else r
    out = x.dtype
    n = _numel([x.shape[d] for d in dims])
    dt, s = _dtype.float64, None
    if x.device.type != "cpu":
        dt = _dtype.float32
        if n:
            e = _prims.ewise("floor", [_prims.ewise("log2", [_prims.reduce("max", _prims.ewise(
                "abs", [x], dt, dt), dims, True, dt)], dt, dt)], dt, dt)
            s = _prims.ewise("exp2", [_prims.ewise("minimum", [_prims.ewise("maximum", [e, -126.0], dt, dt),
                                                                127.0], dt, dt)], dt, dt)
            x = _prims.ewise("div", [x, s], dt, dt)
            s = s if keepdim else _prims.reduce("sum", s, dims, False, dt)  # drop the size-1 dims
    m = _prims.reduce("sum", x, dims, True, dt)
    m = _prims.ewise("div", [m, n if n else math.nan], dt, dt)
    xc = _prims.ewise("sub", [x, m], dt, dt)
    sq = _prims.ewise("mul", [xc, xc], dt, dt)
    r = _prims.reduce("sum", sq, dims, keepdim, dt)
    denom = n - c
    r = _prims.ewise("div", [r, denom if denom > 0 else 0.0], dt, dt)
    if root:
        r = _prims.ewise("sqrt", [r], dt, dt)
    if s is not None:  # undo the scale: std times s, var times s twice (each step exact or rounding once)
        r = _prims.ewise("mul", [_prims.ewise("mul", [r, s], dt, dt) if not root else r, s], dt, dt)
    return _prims.ewise("copy", [r], dt, out)


def _var_kernel(x, dims, c, keepdim):
    return _var_std(x, dims, c, keepdim, False)


def _std_kernel(x, dims, c, keepdim):
    return _var_std(x, dims, c, keepdim, True)


Var = formula_node("VarBackward0", _var_kernel, ("x", "dims", "correction", "keepdim"))
Std = formula_node("StdBackward0", _std_kernel, ("x", "dims", "correction", "keepdim"))


def _var_like(F, input, dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):  # var(x, unbiased)
        unbiased, dim = dim, None
    if input.dtype.kind not in "fc":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = norm_dims(dim, input.dim())
    c = _correction(unbiased, correction)
    if recording(input):
        return F.apply(input, dims, c, keepdim)
    return F.kernel(input, dims, c, keepdim)


@register
@torch_function
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _var_like(Var, input, dim, unbiased, keepdim, correction)


@register
@torch_function
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _var_like(Std, input, dim, unbiased, keepdim, correction)


@register
@composite_op("VarMeanBackward0")
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _with_mean(var, input, dim, unbiased, keepdim, correction)


@register
@composite_op("StdMeanBackward0")
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _with_mean(std, input, dim, unbiased, keepdim, correction)


def _with_mean(stat, input, dim, unbiased, keepdim, correction):
    """(stat, mean) of var_mean / std_mean."""
    if isinstance(dim, bool):  # var_mean(x, unbiased)
        unbiased, dim = dim, None
    return stat(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)


def _norm2(x, dims, keepdim, single):
    """sqrt(sum(x * x)) in float32 for float16 (opmath), rounded once; PyTorch's |x| where each result
    reduces one element (`single`: no square to overflow or underflow)."""
    if single:
        r = _prims.ewise("abs", [x], x.dtype, x.dtype)
        return r if keepdim or not dims else r.squeeze(dims)
    ct = _dtype.opmath(x.dtype)
    sq = _prims.ewise("mul", [x, x], ct, ct)
    return _prims.ewise("sqrt", [_prims.reduce("sum", sq, dims, keepdim, ct)], ct, x.dtype)


def _vector_norm_impl(input, p, dims, keepdim, single):
    if p == 2:
        return _norm2(input, dims, keepdim, single)
    if single:
        r = (input != 0).to(input.dtype) if p == 0 else input.abs()
        return r if keepdim or not dims else r.squeeze(dims)
    if p == math.inf:
        return amax(input.abs(), dims, keepdim)
    if p == -math.inf:
        return amin(input.abs(), dims, keepdim)
    if p == 1:
        return sum(input.abs(), dims, keepdim)
    if p == 0:
        return sum((input != 0).to(input.dtype), dims, keepdim)
    x = input.to(_dtype.float32) if input.dtype.itemsize == 2 else input  # opmath: rounded once
    a = x.abs()
    zero = a == 0  # zeros (of x, and of the sum for p > 0) are kept out of the powers
    s = sum(where(zero, 0.0 if p > 0 else math.inf, where(zero, 1.0, a).pow(p)), dims, keepdim)
    if p < 0:
        return s.pow(1.0 / p).to(input.dtype)
    zero = s == 0
    return where(zero, 0.0, where(zero, 1.0, s).pow(1.0 / p)).to(input.dtype)


# torch.norm is vector_norm; its gradient is PyTorch's norm_backward (autograd/derivatives.py)
_VectorNorm = formula_node("LinalgVectorNormBackward0", _vector_norm_impl, ("x", "p", "dims", "keepdim", "single"))


@register
@torch_function
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    if p == "nuc":  # torch.functional.norm: linalg.matrix_norm's, over dim or all of input's dims
        dims = tuple(builtins.range(input.dim())) if dim is None else (dim,) if isinstance(dim, int) else dim
        return _late.linalg.matrix_norm(input, "nuc", dims, keepdim)
    if input.is_complex():  # the norm of |x|, real (its gradient through abs: PyTorch's, with x.sgn())
        return norm(input.abs(), p, dim, keepdim)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{name_of(input.dtype)}")
    dims = norm_dims(dim, input.dim())
    # PyTorch's linalg_vector_norm takes |x| where the reduced dims have size 1 (a 0-d input with a dim
    # given is not such a case there)
    single = builtins.all(input._shape[d] == 1 for d in dims) and (input.dim() > 0 or dim is None)
    p = 2 if p == "fro" else math.inf if p == "inf" else p
    if recording(input):
        return _VectorNorm.apply(input, p, dims, keepdim, single)
    return _vector_norm_impl(input, p, dims, keepdim, single)


def _logsumexp(x, dims, keepdim):
    if x.numel() == 0:
        return sum(x.exp(), dims, keepdim).log()
    m = amax(x.real if x.is_complex() else x, dims, keepdim=True)  # complex: the real parts'
    m = where(m.isinf(), 0.0, m)
    r = sum((x - m).exp(), dims, keepdim=True).log() + m
    return r if keepdim else r.squeeze(dims)


# PyTorch's logsumexp_backward: grad * (x - result).exp().conj()
Logsumexp = formula_node("LogsumexpBackward0", _logsumexp, ("x", "dims", "keepdim"))


@register
@torch_function
def logsumexp(input, dim, keepdim=False):
    if _autocast.STATE and isinstance(input, Tensor):
        input = _autocast.cast_fp32(input)
    if input.dtype.kind not in "fc":
        input = input.to(float_of(input.dtype))
    dims = norm_dims(dim, input.dim())
    return Logsumexp.apply(input, dims, keepdim) if recording(input) else _logsumexp(input, dims, keepdim)


# ---- scans ------------------------------------------------------------------------------------
def _scan(op):
    def kernel(x, d, dt):
        r = _prims.scan(op, x, d, dt)[0]
        if op == "cumsum" and dt.is_floating_point:  # PyTorch's sum starts from 0: 0 + -0.0 is 0.0
            r = _prims.ewise("add", [r, 0.0], dt, dt)
        return r
    return kernel


Cumsum = formula_node("CumsumBackward0", _scan("cumsum"), ("x", "dim", "dtype"))
Cumprod = formula_node("CumprodBackward0", _scan("cumprod"), ("x", "dim", "dtype"))


def _make_scan(op, node):
    def public(input, dim, *, dtype=None, out=None):
        d = wrap_dim(dim, input.dim())
        dt = dtype or (out.dtype if out is not None else _sum_dtype(input, None))  # in out's dtype, as PyTorch
        x = input if input.dtype == dt else input.to(dt)
        if x.dim() == 0:
            return write_out(x.clone(), out)
        if dt.kind in "fc" and recording(x):
            return write_out(node.apply(x, d, dt), out)
        return write_out(node.kernel(x, d, dt), out)

    public.__name__ = op
    return public


cumsum = register(_make_scan("cumsum", Cumsum))
cumprod = register(_make_scan("cumprod", Cumprod))


Cummax, Cummin = (formula_node(n, lambda x, op, d, keepdim: _prims.scan(op, x, d, x.dtype, with_indices=True),
                               _PICK_ARGS, outputs=_PICKED) for n in ("CummaxBackward0", "CumminBackward0"))


def _make_cum(op, node):
    rt = getattr(return_types, op)

    def public(input, dim):
        d = wrap_dim(dim, input.dim())
        if input.dim() == 0:
            return rt(input.clone(), _zero_index(input))
        if recording(input):
            return rt(*node.apply(input, op, d, True))
        return rt(*node.kernel(input, op, d, True))

    public.__name__ = op
    return public


cummax = register(_make_cum("cummax", Cummax))
cummin = register(_make_cum("cummin", Cummin))


def _logcumsumexp(input, d):
    # PyTorch's running log-add-exp, never one shift for all (logcumsumexp([-100, 100]) keeps -100), as a
    # scan: round k adds in the value k places back, so that after log2(n) rounds each holds its prefix's
    n, k, y = input.shape[d] if input.dim() else 1, 1, input + 0.0  # as log1p(0) + x: 0.0 for -0.0
    while k < n:
        y = _shape.cat((_shape.narrow(y, d, 0, k), logaddexp(_shape.narrow(y, d, k, n - k),
                                                             _shape.narrow(y, d, 0, n - k))), d)
        k *= 2
    return y


Logcumsumexp = formula_node("LogcumsumexpBackward0", _logcumsumexp, ("x", "dim"))


@register
def logcumsumexp(input, dim):
    d = wrap_dim(dim, input.dim())
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for '{name_of(input.dtype)}'")
    return Logcumsumexp.apply(input, d) if recording(input) else _logcumsumexp(input, d)


# ---- softmax family ----------------------------------------------------------------------------
def _softmax_kernel(x, d, log):
    fused = getattr(x._backend, "softmax", None)
    if fused is not None and x.dim():
        out, handled = fused(x, d, log)
        if handled:
            return out
    odt = x.dtype
    dt = _dtype.opmath(odt)  # float16: computed in float32, rounded once
    m = _prims.reduce("max", x, (d,), True, dt) if x.dim() else x
    z = _prims.ewise("sub", [x, m], dt, dt)         # a row holding inf: NaN, as in PyTorch
    e = _prims.ewise("exp", [z], dt, dt)
    s = _prims.reduce("sum", e, (d,) if x.dim() else (), True, dt)
    if log:
        return _prims.ewise("sub", [z, _prims.ewise("log", [s], dt, dt)], dt, odt)
    return _prims.ewise("div", [e, s], dt, odt)


Softmax = formula_node("SoftmaxBackward0", lambda x, dim: _softmax_kernel(x, dim, False), ("x", "dim"))
LogSoftmax = formula_node("LogSoftmaxBackward0", lambda x, dim: _softmax_kernel(x, dim, True), ("x", "dim"))


def _softmax_like(F, input, dim, dtype):
    if dtype is not None:
        input = input.to(dtype)
    elif _autocast.STATE:
        input = _autocast.cast_fp32(input)  # autocast: softmax runs in float32
    d = wrap_dim(dim, input.dim()) if dim is not None else (0 if input.dim() <= 1 else 1)
    if input.numel() == 0:  # no kernel runs: any dtype
        return input.clone()
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"softmax_lastdim_kernel_impl\" not implemented for '{name_of(input.dtype)}'")
    if recording(input):
        return F.apply(input, d)
    return F.kernel(input, d)


@register
@torch_function
def softmax(input, dim=None, dtype=None, *, _stacklevel=3):
    return _softmax_like(Softmax, input, dim, dtype)


@register
@torch_function
def log_softmax(input, dim=None, dtype=None, *, _stacklevel=3):
    return _softmax_like(LogSoftmax, input, dim, dtype)


# ---- sorting ---------------------------------------------------------------------------------
Sort = formula_node("SortBackward0", _prims.sort, ("x", "d", "descending", "stable"), outputs=_PICKED)


@register
@torch_function
def sort(input, dim=-1, descending=False, stable=False, *, out=None):
    if input.dim() == 0:
        return return_types.sort(*write_outs((input.clone(), _zero_index(input)), out))
    d = wrap_dim(dim, input.dim())
    if recording(input):
        return return_types.sort(*write_outs(Sort.apply(input, d, descending, stable), out))
    return return_types.sort(*write_outs(_prims.sort(input, d, descending, stable), out))


@register
@torch_function
def argsort(input, dim=-1, descending=False, stable=False):
    return sort(input, dim, descending, stable)[1]


@register
def msort(input):
    return sort(input, 0)[0]


def _check_not_bool(kernel, input):
    if input.dtype is _dtype.bool_:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _topk(x, k, d, largest, sorted):
    # equal values in index order on every device (PyTorch leaves the order of ties unspecified;
    # its CPU kernel's comes from std::nth_element): values always equal PyTorch's
    v, i = _prims.sort(x, d, largest, True)
    return _prims.contiguous(v.narrow(d, 0, k)), _prims.contiguous(i.narrow(d, 0, k))


_Topk = formula_node("TopkBackward0", _topk, ("x", "k", "d", "largest", "sorted"), outputs=_PICKED)


@register
@torch_function
def topk(input, k, dim=-1, largest=True, sorted=True):
    d = wrap_dim(dim, input.dim())
    if input.dtype is _dtype.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    n = input.shape[d] if input.dim() else 1
    if k < 0 or k > n:
        raise RuntimeError("selected index k out of range")
    if input.dim() == 0:
        return return_types.topk(*sort(input, d, descending=largest, stable=True))
    return return_types.topk(*(_Topk.apply if recording(input) else _topk)(input, k, d, largest, sorted))


@register
def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    d = wrap_dim(dim, input.dim())
    if out is not None:
        return return_types.kthvalue(*write_outs(kthvalue(input, k, dim, keepdim), out, input,
                                                 exact=("output values must be of same type as input", OUT_DTYPE)))
    if input.dim() == 0:  # one value along the (implicit) dim (a bool too: PyTorch's kernel is not run)
        v, i = _kthvalue(input.reshape(1), k, 0, False)
        return return_types.kthvalue(v.reshape(()), i.reshape(()))
    _check_not_bool("kthvalue_cpu", input)
    return return_types.kthvalue(*_kthvalue(input, k, d, keepdim))


def _kthvalue_kernel(x, k, d, keepdim):
    v, i = (t.narrow(d, k - 1, 1) for t in _prims.sort(x, d, False, True))
    if not keepdim:
        v, i = v.squeeze(d), i.squeeze(d)
    return _prims.contiguous(v), _prims.contiguous(i)


_Kthvalue = formula_node("KthvalueBackward0", _kthvalue_kernel, ("x", "k", "d", "keepdim"), outputs=_PICKED)


def _kthvalue(input, k, d, keepdim):
    n = input.shape[d]
    if k < 1 or k > n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return (_Kthvalue.apply if recording(input) else _kthvalue_kernel)(input, k, d, keepdim)


def _median_all(x, dims, keepdim):
    return median(x.reshape(-1), 0)[0]


MedianAll = formula_node("MedianBackward0", _median_all, ("x", "dims", "keepdim"))  # ties share the gradient


@register
def median(input, dim=None, keepdim=False):
    """PyTorch's lower median; NaN where a slice holds one (the index of its first NaN)."""
    _check_not_bool("median_cpu" if dim is None else "median_out", input)
    if dim is None:
        dims = tuple(range(input.dim()))
        return MedianAll.apply(input, dims, False) if recording(input) else _median_all(input, dims, False)
    d = wrap_dim(dim, input.dim())
    n = input.shape[d] if input.dim() else 1
    if input.dim() == 0 or not n:
        return return_types.median(*kthvalue(input, (n - 1) // 2 + 1, d, keepdim))
    return return_types.median(*(_MedianDim.apply if recording(input) else _median_dim)(input, d, keepdim))


def _median_dim(x, d, keepdim):
    n = x.shape[d]
    v, i = _prims.sort(x, d, False, True)  # NaNs last, in index order
    k = (n - 1) // 2
    if x.is_floating_point():
        nans = x.isnan().sum(d, keepdim=True)
        k = where(nans > 0, n - nans, k)
        v, i = v.gather(d, k), i.gather(d, k)
    else:
        v, i = v.narrow(d, k, 1), i.narrow(d, k, 1)
    if not keepdim:
        v, i = v.squeeze(d), i.squeeze(d)
    return _prims.contiguous(v), _prims.contiguous(i)


_MedianDim = formula_node("MedianBackward1", _median_dim, ("x", "d", "keepdim"), outputs=_PICKED)


def _nanmedian_all(x, dims, keepdim):
    return nanmedian(x.reshape(-1), 0)[0]


NanmedianAll = formula_node("NanmedianBackward0", _nanmedian_all, ("x", "dims", "keepdim"))  # ties share the gradient


def _nanmedian_dim(input, d, keepdim):
    v, i = sort(input, d, stable=True)  # NaNs last, in index order
    left = input.shape[d] - input.isnan().sum(d, keepdim=True)
    k = where(left > 0, (left - 1) // 2, 0)  # all NaN: C's (0 - 1) / 2 is 0
    v, i = v.gather(d, k), i.gather(d, k)
    return (v, i) if keepdim else (v.squeeze(d), i.squeeze(d))


_NanmedianDim = composite_node("NanmedianBackward1", _nanmedian_dim)


@register
def nanmedian(input, dim=None, keepdim=False):
    """median of the values that are not NaN (NaN where a slice holds only NaN)."""
    if not input.is_floating_point():
        r = median(input, dim, keepdim)
        return r if dim is None else return_types.nanmedian(*r)
    if dim is None:
        dims = tuple(range(input.dim()))
        return NanmedianAll.apply(input, dims, False) if recording(input) else _nanmedian_all(input, dims, False)
    d = wrap_dim(dim, input.dim())
    if input.dim() == 0 or not input.shape[d]:
        return return_types.nanmedian(*median(input, dim, keepdim))
    return return_types.nanmedian(*_NanmedianDim.call(input, d, keepdim))


def _insertion_sort(row):
    """The indices of row in the order libstdc++'s std::sort leaves them below 16 elements (an insertion
    sort comparing values with <, so a NaN stays where it meets no smaller value)."""
    a = list(range(len(row)))
    for i in range(1, len(a)):
        j = a[i]
        if row[j] < row[a[0]]:
            a[1:i + 1] = a[:i]
            a[0] = j
            continue
        k = i
        while row[j] < row[a[k - 1]]:
            a[k] = a[k - 1]
            k -= 1
        a[k] = j
    return a


def _mode_index(input, d):
    """PyTorch's CPU mode: per slice along d, sorted by value, the last index of the first longest run
    of equal values (each NaN a run of its own), as a tensor of input's shape with d of size 1."""
    x = input.detach().movedim(d, -1)
    n = x.shape[-1]
    idx = []
    for row in x.reshape(-1, n).tolist():
        order = _insertion_sort(row)
        best = run = at = 0
        for p, j in enumerate(order):
            run += 1
            if p == n - 1 or row[j] != row[order[p + 1]]:
                if run > best:
                    best, at = run, j
                run = 0
        idx.append(at)
    return x.new_tensor(idx, dtype=int64).reshape(tuple(x.shape[:-1]) + (1,)).movedim(-1, d)


def _mode(input, d, keepdim):
    x = input.reshape(1) if input.dim() == 0 else input
    i = _prims.contiguous(_mode_index(x, d))
    v = x.gather(d, i)
    if input.dim() == 0 or not keepdim:
        v, i = v.squeeze(d), i.squeeze(d)
    return _prims.contiguous(v), _prims.contiguous(i)


_Mode = formula_node("ModeBackward0", _mode, ("x", "d", "keepdim"), outputs=_PICKED)


@register
def mode(input, dim=-1, keepdim=False):
    d = wrap_dim(dim, input.dim())
    if input.dim() and not input.shape[d]:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    return return_types.mode(*(_Mode.apply if recording(input) else _mode)(input, d, keepdim))


def quantile_slices(name, input, dim):
    """(x, d): the slices quantile and nanquantile sort along (all of input, flattened, when dim is None)."""
    if input.dtype not in (_dtype.float32, _dtype.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    x = input.reshape(-1) if dim is None or input.dim() == 0 else input
    return x, 0 if dim is None else wrap_dim(dim, input.dim())


@register
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    x, d = quantile_slices("quantile", input, dim)
    v = sort(x, d)[0]
    n = v.shape[d]
    qs = [q] if not isinstance(q, (list, tuple, Tensor)) else (q.tolist() if isinstance(q, Tensor) else list(q))
    if not isinstance(qs, list):
        qs = [qs]
    outs = []
    for qq in qs:
        pos = qq * (n - 1)
        lo, hi = int(math.floor(pos)), int(math.ceil(pos))
        frac = {"linear": pos - lo, "lower": 0, "higher": 1, "midpoint": 0.5,
                "nearest": float(round(pos) == hi)}[interpolation]
        a, b = v.select(d, lo), v.select(d, hi)
        r = a if frac == 0 else b if frac == 1 else a + (b - a) * frac
        outs.append(r.unsqueeze(d) if keepdim and input.dim() else r)
    if isinstance(q, (list, tuple)) or (isinstance(q, Tensor) and q.dim() > 0):
        return _shape.stack(outs, 0)
    return outs[0]


@register
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    tensor, result_of = _creation.tensor, _creation.result_of
    vals = input.reshape(-1).tolist()
    # each NaN is unique, after the others in the order met (a set's order would be arbitrary)
    uniq = builtins.sorted({v for v in vals if v == v}) + [v for v in vals if v != v]
    out = tensor(uniq, dtype=input.dtype, device=input.device)
    if dim is None and input.dtype.is_floating_point:
        out = result_of(input, "Unique2Backward0", out)
    res = [out]
    if return_inverse:
        pos = {v: i for i, v in enumerate(uniq)}
        res.append(tensor([pos[v] for v in vals], dtype=int64, device=input.device).reshape(input.shape))
    if return_counts:
        cnt = {}
        for v in vals:
            cnt[v] = cnt.get(v, 0) + 1
        res.append(tensor([cnt[v] for v in uniq], dtype=int64, device=input.device))
    return res[0] if len(res) == 1 else tuple(res)


@register
def bincount(input, weights=None, minlength=0):
    n = builtins.max(int(input.max().item()) + 1 if input.numel() else 0, minlength)
    dt = int64 if weights is None else weights.dtype if weights.dtype is _dtype.float32 else _dtype.float64
    out = _creation.zeros(n, dtype=dt, device=input.device)
    return out.index_add(0, input, weights if weights is not None else
                         _prims.ewise("copy", [1], int64, int64, shape=input.shape, device=input.device))


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    check_tensor("multinomial", input)
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {name_of(input.dtype)}")
    if out is not None and out.dtype is not _dtype.int64:
        raise RuntimeError(f"multinomial expects Long tensor out, got: {name_of(out.dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n = input.shape[-1]
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if n > 1 << 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    bad, empty = _shape.stack([((input < 0) | ~input.isfinite()).any(), (input.sum(-1) <= 0).any()], 0).tolist()
    if bad:
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if empty:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if input.device.type == "cpu":
        return write_out(_multinomial_cpu(input.detach(), num_samples, replacement, generator), out)
    probs = input if input.dim() == 2 else input.unsqueeze(0)
    rows = probs.shape[0]
    picks = []
    p = probs.detach().to(_dtype.float32).clone()
    for _ in range(num_samples):
        c = cumsum(p / p.sum(-1, keepdim=True), -1)
        u = _creation.rand(rows, 1, device=input.device, generator=generator)
        idx = (c < u).sum(-1).clamp(max=probs.shape[1] - 1)
        picks.append(idx)
        if not replacement:
            p = p.scatter(1, idx.unsqueeze(1), 0.0)
    r = _shape.stack(picks, 1)
    return write_out(r if input.dim() == 2 else r.squeeze(0), out)


def _multinomial_cpu(input, num_samples, replacement, generator):
    """PyTorch's CPU multinomial: without replacement (or one sample) the top num_samples of
    input / q with q ~ Exponential(1) (exponential_ on the generator); with replacement a binary
    search of the cumulative distribution per double uniform."""
    if not replacement or num_samples == 1:
        q = input / _creation.empty_like(input).exponential_(1, generator=generator)
        return q.argmax(-1, keepdim=True) if num_samples == 1 else q.topk(num_samples).indices
    r = _cpu_random.multinomial_with_replacement(_cpu_random.generator(generator), input.reshape(-1, input.shape[-1]),
                                                 num_samples)
    return r if input.dim() == 2 else r.squeeze(0)


# ---- hash_tensor ------------------------------------------------------------------------------------------------
_FORMAT64 = {"float64": "d", "int64": "q", "uint64": "Q"}


def _bitcast64(x, dtype):
    """x's 64-bit elements read as `dtype` (view(dtype) where cpu memory is numpy's; pure Python repacks them)."""
    if x._storage.backend.numpy_buffers:
        return x.view(dtype)
    src, dst = _FORMAT64[x.dtype.name], _FORMAT64[dtype.name]
    values = [struct.unpack(dst, struct.pack(src, v))[0] for v in x.reshape(-1).tolist()]
    return _creation.tensor(values, dtype=dtype, device=x.device).reshape(x.shape)

@register
@torch_function
def hash_tensor(input, dim=None, *, keepdim=False, mode=0):
    """PyTorch's mode 0: the xor of the elements upcast to 64 bits (float64 / int64) and read as uint64. A uint64
    result is stored on cpu only: on webgpu it raises, as a uint64 tensor there does."""
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    if input.dtype.is_complex or input.dtype._rank < 0:
        raise NotImplementedError(f"\"xor_sum_cpu\" not implemented for '{name_of(input.dtype)}'")
    if input.device.type == "webgpu":
        raise TypeError("uint64 is not supported on webgpu; compute hash_tensor on cpu")
    if input.numel() == 0 and dim is None:
        raise RuntimeError("hash_tensor: Expected reduction dim to be specified for input.numel() == 0. Specify the "
                           "reduction dim with the 'dim' argument.")
    dims = norm_dims(dim, input.dim())
    for d in dims:
        if input.shape[d] == 0:
            raise IndexError(f"hash_tensor: Expected reduction dim {d} to have non-zero size.")
    keep = [d for d in range(input.dim()) if d not in dims]
    bits = _bitcast64(input.detach().double(), int64) if input.dtype.is_floating_point else input.detach().to(int64)
    n = _numel([input.shape[d] for d in dims])
    bits = bits.permute(keep + list(dims)).reshape([input.shape[d] for d in keep] + [n])
    while n > 1:  # xor the halves until one column is left (an odd column first folds into column 0)
        if n % 2:
            bits = _shape.cat([bits[..., :1] ^ bits[..., -1:], bits[..., 1:-1]], -1)
            n -= 1
        bits, n = bits[..., :n // 2] ^ bits[..., n // 2:], n // 2
    out = bits.reshape([1 if d in dims else input.shape[d] for d in range(input.dim())] if keepdim
                       else [input.shape[d] for d in keep])
    return _bitcast64(out, _dtype.uint64)
