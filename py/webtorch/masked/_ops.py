"""torch.masked's operations (PyTorch's torch/masked/_ops.py, strided layout): the masked-out elements of the
input are replaced by the operation's identity (0 for sum, -inf for amax, softmax and logsumexp, NaN for median,
...) and the plain op runs; mean, var and std divide by the count of the elements kept. Composed of webtorch ops,
so every device runs them."""
import math

from .. import _dtype, linalg as _linalg
from ..ops import pointwise as P, reduction as R
from ..ops._creation import ones
from ..ops.views import broadcast_to

_SMALL_INTS = ("uint8", "bool", "int8", "int16", "int32")


def _canonical_dim(dim, ndim):
    """dim as a sorted tuple of non-negative dims (None or (): all), with PyTorch's errors."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    n = max(ndim, 1)
    dims = []
    for d in (dim,) if isinstance(dim, int) else dim:
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= n or d < -n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
        dims.append(d % n)
    return tuple(sorted(dims))


def _input_mask(input, mask):
    """The mask as a bool tensor of the input's shape."""
    if mask.shape != input.shape:
        if mask.ndim > input.ndim:
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality higher than of the "
                             "input)")
        mask = broadcast_to(mask.clone(), input.shape)
    return mask if mask.dtype is _dtype.bool_ else mask.to(_dtype.bool_)


def _identity(op, input, ord=None):
    """The value a masked-out element takes for `op` (PyTorch's _reduction_identity)."""
    dt = input.dtype
    bits = 8 * dt.itemsize
    low, high = (-math.inf, math.inf) if dt.is_floating_point else \
        (0, (1 << bits) - 1) if dt.name == "uint8" else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    return {"sum": 0, "prod": 1, "amax": low, "amin": high, "logsumexp": low, "median": math.nan,
            "norm": math.inf if ord == -math.inf else 0}[op]


def _combine(op, input, mask, ord=None):
    """input where mask, op's identity elsewhere; input itself without a mask (a MaskedTensor: its own)."""
    if getattr(input, "_is_masked_tensor", False):
        if mask is not None:
            raise ValueError("_combine_input_and_mask expects mask to be unspecified for MaskedTensor input")
        input, mask = input.get_data(), input.get_mask()
    if mask is None:
        return input
    return P.where(_input_mask(input, mask), input, _identity(op, input, ord))


def _sum_dtype(input, dtype):
    if dtype is None:
        return _dtype.int64 if input.dtype.name in _SMALL_INTS else input.dtype
    return dtype


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = _sum_dtype(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    return _combine("sum", input, mask).sum(dims, keepdim=bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = _sum_dtype(input, dtype)
    r = _combine("prod", input, mask)
    for d in reversed(_canonical_dim(dim, input.ndim)):
        r = r.prod(dim=d, keepdim=bool(keepdim))
    return r.to(dtype)


def cumsum(input, dim, *, dtype=None, mask=None):
    dtype = dtype or input.dtype
    return _combine("sum", input, mask).cumsum(_canonical_dim(dim, input.ndim)[0], dtype=dtype).to(dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    dtype = dtype or input.dtype
    return _combine("prod", input, mask).cumprod(_canonical_dim(dim, input.ndim)[0], dtype=dtype).to(dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    return _combine("amax", input, mask).amax(_canonical_dim(dim, input.ndim), bool(keepdim)).to(dtype or input.dtype)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    return _combine("amin", input, mask).amin(_canonical_dim(dim, input.ndim), bool(keepdim)).to(dtype or input.dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    return _combine("amax", input, mask).argmax(dim, bool(keepdim)).to(dtype or input.dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    return _combine("amin", input, mask).argmin(dim, bool(keepdim)).to(dtype or input.dtype)


def _count(input, dim, keepdim, mask):
    m = ones(input.shape, dtype=_dtype.int64, device=input.device) if mask is None else _input_mask(input, mask)
    return m.sum(dim=_canonical_dim(dim, input.ndim), keepdim=bool(keepdim))


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    source = "Optional" if dtype is not None else "Input"
    dtype = dtype or input.dtype
    if dtype.kind not in "fc":
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either a floating point or "
                         f"complex dtype. Got: {dtype}")
    return sum(input, dim, keepdim=keepdim, dtype=dtype, mask=mask) / _count(input, dim, keepdim, mask)


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    dtype = dtype or input.dtype
    d = _canonical_dim(dim, input.ndim)[0]
    is_float = input.dtype.is_floating_point
    x = input if is_float else input.to(_dtype.float32)
    out = _combine("median", x, mask).nanmedian(d, keepdim).values
    if is_float:
        return out
    if out.isnan().any().item():
        raise ValueError("masked median expects no fully masked out rows if dtype is not floating point")
    return out.to(dtype)


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    return _combine("logsumexp", input, mask).logsumexp(_canonical_dim(dim, input.ndim), keepdim=keepdim).to(
        dtype or input.dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    return P.logaddexp(_combine("amax", input, input_mask), _combine("amax", other, other_mask)).to(
        dtype or input.dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    return _linalg.vector_norm(_combine("norm", input, mask, ord), ord, _canonical_dim(dim, input.ndim),
                               bool(keepdim), dtype=dtype)


def _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt):
    if unbiased is not None and correction is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    c = float(correction) if correction is not None else (1.0 if unbiased is None or unbiased else 0.0)
    if dtype is None:
        dtype = input.dtype if input.dtype.kind in "fc" else _dtype.float32
    cdt = dtype if dtype.kind in "fc" else _dtype.float32
    count = _count(input, dim, True, mask)
    x = input - sum(input, dim, keepdim=True, dtype=dtype, mask=mask) / count
    total = sum(x * x.conj(), dim, keepdim=keepdim, dtype=cdt, mask=mask)  # complex: PyTorch's complex result
    if not keepdim:
        count = count.reshape(total.shape)
    if c != 0:
        rdt = cdt.to_real()
        count = P.maximum(count.to(rdt) - c, count.new_zeros((), dtype=rdt))
    out = (total / count).to(dtype)
    return out.sqrt() if take_sqrt else out


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


def softmax(input, dim, *, dtype=None, mask=None):
    return R.softmax(_combine("amax", input, mask), _canonical_dim(dim, input.ndim)[0], dtype=dtype)


def log_softmax(input, dim, *, dtype=None, mask=None):
    return R.log_softmax(_combine("amax", input, mask), _canonical_dim(dim, input.ndim)[0], dtype=dtype)


def softmin(input, dim, *, dtype=None, mask=None):
    return R.softmax(-_combine("amin", input, mask), _canonical_dim(dim, input.ndim)[0], dtype=dtype)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return _combine("sum", input, mask) / P.maximum(nrm, nrm.new_full((), eps))


__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp", "logsumexp", "mean",
           "median", "norm", "normalize", "prod", "softmax", "softmin", "std", "sum", "var"]
