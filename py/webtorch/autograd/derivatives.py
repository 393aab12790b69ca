"""Every explicit derivative formula, keyed by PyTorch's autograd node name (the role of PyTorch's
tools/autograd/derivatives.yaml). An op without an entry is composite: its derivative is that of
the ops it is computed by (`ops/_common.py`, `Composite`). These are the two derivative styles of
built-in ops: a row here, or a decomposition.

An entry is the formula of the node's one differentiable input, or {input name: formula} for a
node with several; a key may be a tuple of consecutive inputs (CopySlices' base and source) or a
variadic one (cat's `tensors`), whose formula returns one gradient each. A formula `f(g, ...)`
maps the gradient of the node's (first) result to that input's (`f(grads, ...)`: takes those of
all its results: unbind, split); its parameter names say what the node saves and hands it: the
inputs by name (`x` a unary op's, `a` and `b` a binary op's, `condition`, `exponent`, ...), `y`
the result (or the results by the node's names: `indices`), `<input>_shape` / `_stride` /
`_offset` / `_device` an input's geometry / device (kept without the input; a tuple of them for
a variadic input), and the op's own parameters by name (`eps`, `alpha`, ...). A tensor is saved
only when the gradient of an input that needs one reads it, as PyTorch saves. The node
(`ops/_common.py`, `formula_node`) sums the gradient back to the input's shape and dtype.
Formulas use Tensor methods only (this module imports no op; `Tensor._cat` / `_stack` /
`_arange` / `_index_put_flat` / `_take_flat` are bound for it), so they run on every backend
and differentiate again (gradgradcheck).
"""
import math

from .. import _dtype, _late
from .grad_mode import is_grad_enabled
from .linalg_derivatives import LINALG_COMPLEX_ROWS, LINALG_DERIVATIVES

LN2, LN10 = math.log(2.0), math.log(10.0)
SQRT_PI = math.sqrt(math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _c(v):
    """The conjugate of a tensor or number (itself when real): the complex rows' factor, as PyTorch's conjugate
    Wirtinger convention makes the gradient of a real loss grad * conj(d output / d input)."""
    return v.conj() if hasattr(v, "conj") else v.conjugate()


def where(condition, a, b):
    """torch.where(condition, a, b), through Tensor's method (a or b may be a Python number)."""
    return b.where(~condition, a) if isinstance(a, (int, float)) else a.where(condition, b)


def _zeros(g):
    """The gradient of a piecewise-constant op: exact zeros (g * 0 would be -0.0 or NaN)."""
    return g.new_zeros(g.shape)


def _logit(g, x, eps):
    d = g / (x * (1 - x))
    if eps is None:  # PyTorch: NaN outside [0, 1], zero outside [eps, 1 - eps]
        return where((x < 0) | (x > 1), math.nan, d)
    return where((x < eps) | (x > 1 - eps), 0.0, d)


def _sinc(g, x):
    # PyTorch's sinc_backward: (cos(pi x) pi x - sin(pi x)) / (pi x^2), 0 at 0 (the decomposition's
    # where() would send the unselected branch's 0/0 there: NaN)
    px = x * math.pi
    return where(x == 0, 0.0, g * (px.cos() * px - px.sin()) / (px * x))


def _gelu(g, x, approximate):
    if approximate == "tanh":
        x2 = x * x
        t = ((x + 0.044715 * x2 * x) * _SQRT_2_OVER_PI).tanh()
        return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * ((1.0 + 0.134145 * x2) * _SQRT_2_OVER_PI))
    # Phi(x) + x phi(x), with phi(x) = exp(-u^2) / sqrt(2 pi), u = x / sqrt(2)
    u = x * _INV_SQRT_2
    return g * ((u.erf() * 0.5 + 0.5) + (x * _INV_SQRT_2PI) / (u * u).exp())


def _silu(g, x):
    s = x.sigmoid()
    return g * (s * (1.0 + x * (1.0 - s)))


def _mish(g, x):
    t = where(x > 20.0, x, x.clamp_max(20.0).exp().log1p()).tanh()  # tanh(softplus(x))
    return g * (t + x * (1.0 - t * t) * x.sigmoid())


def _leaky_relu(g, x, negative_slope):
    return where(x > 0, g, g * negative_slope)


def _elu(g, x, alpha, scale):  # PyTorch's elu_backward: the x <= 0 branch, else (NaN included) g * scale
    return where(x <= 0, g * (x.clamp_max(0.0).exp() * (alpha * scale)), g * scale)


def _celu(g, x, alpha):
    return where(x <= 0, g * (x.clamp_max(0.0) / alpha).exp(), g)


def _pow_scalar_base(g, x, base, y):
    # PyTorch's pow_backward_exponent: 0 ** x has no gradient where x >= 0, y * log(0) elsewhere
    return g * where(x >= 0, 0.0, y * -math.inf) if base == 0 else g * y * math.log(base)


def _clamp(g, x, min, max):  # noqa: A002 (PyTorch's parameter names)
    mask = None
    if min is not None:
        mask = x >= min
    if max is not None:
        mask = (x <= max) if mask is None else mask & (x <= max)
    return where(mask, g, 0.0)


def _not_implemented(op):
    def formula(g):
        raise RuntimeError(f"derivative for aten::{op} is not implemented")
    return formula


def _no_derivative(op):  # PyTorch's named node whose backward raises
    def formula(g):
        raise NotImplementedError(f"the derivative for '{op}' is not implemented.")
    return formula


def unreduce(g, shape, dims, keepdim):
    """A reduction's gradient broadcast back over the reduced dims (of an input of `shape`)."""
    if not keepdim:
        for d in dims:
            g = g.unsqueeze(d)
    return g.expand(shape)


def _count(shape, dims):
    """How many elements a reduction over `dims` of a tensor of `shape` takes in each result."""
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def _mean(g, x_shape, dims, keepdim):
    n = _count(x_shape, dims)
    return unreduce(g / n if n else g * math.nan, x_shape, dims, keepdim)


def _extreme(g, x, y, dims, keepdim):
    """amax/amin's: the gradient shared evenly between the elements equal to the result (PyTorch's
    scale_grad_by_count: a NaN result matches none, so its gradient is NaN)."""
    mask = x == unreduce(y, x.shape, dims, keepdim)
    count = unreduce(mask.sum(dims, keepdim=keepdim), x.shape, dims, keepdim)
    return unreduce(g, x.shape, dims, keepdim) / count * mask


def _extreme_all(g, x, y):
    """max()/min()'s over all elements (PyTorch's evenly_distribute_backward): the gradient shared
    between the ties (the NaNs where the result is NaN), exact zeros elsewhere."""
    mask = (x == y) | (x.isnan() & y.isnan())
    return where(mask, g / mask.sum(), 0.0)


def _exclusive_cumprod(x, d):
    """The product of the elements before each one along d (1 for the first): exact with zeros."""
    n = x.shape[d]
    first = (x.new_ones(n).cumsum(0) == 1).reshape((n,) + (1,) * (x.dim() - d - 1))
    return where(first, 1.0, x.roll(1, d)).cumprod(d)


def _prod(g, x, y, dim, keepdim):
    # PyTorch's prod_backward: g y / x where the input holds no zero (NaN at an inf, as PyTorch's), else
    # the product of all the other elements (exclusive cumprods from both ends: exact with zeros)
    if not x.shape[dim]:
        return g.new_zeros(x.shape)
    if not keepdim:
        g, y = g.unsqueeze(dim), y.unsqueeze(dim)
    others = g * _c(_exclusive_cumprod(x, dim) * _exclusive_cumprod(x.flip(dim), dim).flip(dim))
    return where((x == 0).any(), others, g * _c(y / x))


def _prod_all(g, x, y):
    if x.dim() == 0:
        return g
    r = _prod(g, x.reshape(-1), y, 0, False).reshape(x.shape)
    # PyTorch's: exact zeros where two elements or more are 0 (unless the gradient is differentiated)
    return r if is_grad_enabled() else where((x == 0).sum() > 1, 0.0, r)


def _centered(x, dims):
    return x - x.mean(dims, keepdim=True)


def _var(g, x, dims, correction, keepdim):
    denom = _count(x.shape, dims) - correction
    return unreduce(g, x.shape, dims, keepdim) * _centered(x, dims) * (2.0 / denom if denom > 0 else math.inf)


def _std(g, x, y, dims, correction, keepdim):
    # PyTorch's std_backward: var's with g / (2 y), zero where y is 0
    return _var(where(y == 0, 0.0, g / (y * 2)), x, dims, correction, keepdim)


def _rcumsum(t, d):
    """Sums from the end along d: cumsum's transpose."""
    return t.flip(d).cumsum(d).flip(d)


def _cumprod(g, x, y, dim):
    # exact with zeros: before the first zero of a slice dy/dx_i = y_j / x_i; at the first zero,
    # the products with that one factor left out (cumprod with it set to 1); after it, 0
    if x.numel() <= 1 or x.shape[dim] == 1:  # PyTorch's: g itself (no y / x: inf / inf)
        return g
    zero = x == 0
    count = zero.to(x.dtype).cumsum(dim)
    before, first = count == 0, zero & (count == 1)
    at_first = _rcumsum(g * _c(where(first, 1.0, x).cumprod(dim)), dim)
    # before it, the products up to the first zero only (a later inf * 0 is NaN, not a term)
    return where(before, _rcumsum(where(before, g * _c(y), 0.0), dim) / _c(where(before, x, 1.0)),
                 where(first, at_first, 0.0))


def _norm(g, x, p, y, dims, keepdim):
    """PyTorch's norm_backward: the p-norm's (sub)gradient, op by op in x's dtype; none for p = 0."""
    if p == 0:
        return None
    g, y = unreduce(g, x.shape, dims, keepdim), unreduce(y, x.shape, dims, keepdim)
    if p == 1:
        return x.sgn() * g
    if p == 2:
        return g * where(y == 0, 0.0, x / y)
    if math.isinf(p):  # amax/amin of |x|, NaN-respecting: shared among the ties
        a = x.abs()
        mask = (a == y) | a.isnan()
        return x.sgn() * ((g / unreduce(mask.sum(dims, keepdim=True), x.shape, dims, True)) * mask)
    if p < 1:
        return x.sgn() * where(x == 0, 0.0, x.abs().pow(p - 1)) * g * y.pow(1 - p)
    scaled = x.sgn() * x.abs().pow(p - 1) if p < 2 else x * x.abs().pow(p - 2)
    return scaled * where(y == 0, 0.0, g / y.pow(p - 1))


def _softmax(log):
    def formula(g, y, dim):
        # a backend's fused row kernel (webgpu) when the gradient itself is not differentiated and both are plain
        # tensors (not a vmap's batch of gradients, whose memory only the batching rules read)
        fused = getattr(y._backend, "softmax_backward", None)
        if fused is not None and type(g) is type(y) is _late.Tensor and \
                not (is_grad_enabled() and (g.requires_grad or y.requires_grad)):
            out, handled = fused(g, y, dim, log)
            if handled:
                return out
        if log:
            return g - y.exp() * _row_sum(g, dim)
        return y * (g - _row_sum(g * y, dim))  # PyTorch's (and the webgpu kernel's) order: -0.0 where y is 0
    return formula


def _row_sum(p, dim):
    """The row sums of PyTorch's (log_)softmax backward kernels: along the last dim they start from
    the first element (a row of -0.0 sums to -0.0), along another dim from +0.0 (as sum)."""
    s = p.sum(dim, keepdim=True)
    if dim % max(p.dim(), 1) != max(p.dim(), 1) - 1:
        return s
    return where(p.reciprocal().amax(dim, keepdim=True) == -math.inf, -0.0, s)  # 1/-0.0 is the only -inf


def _atan2(g, a, b, sign):
    """d atan2(a, b) / da (sign 1: g b / r2) or / db (sign -1: -g a / r2); 1 / r2 taken as 0 where
    it overflows, as PyTorch's atan2_backward."""
    r = (a * a + b * b).reciprocal()
    r = where(r.isinf(), 0.0, r)
    return g * b * r if sign == 1 else g * -a * r


def _scaled(g, k):
    return g if k == 1 else g * k


def _alpha(sign):
    """add/sub/rsub's formula for the input scaled by `sign * alpha`."""
    def formula(g, alpha):
        k = sign * alpha
        return g if k == 1 else -g if k == -1 else g * k
    return formula


def _put_back(g, x_shape, logical):
    """A take's gradient: g accumulated into zeros of the input's shape at the positions (in its
    contiguous layout) the take read; the forward already checked them."""
    flat = g.new_zeros((math.prod(x_shape),))
    if type(g) is not _late.Tensor:   # a vmap's batch of gradients (jacrev): through the batching rules
        return flat.scatter_add(0, logical.reshape(-1), g.reshape(-1)).reshape(x_shape)
    return flat._index_put_flat(logical, g, True).reshape(x_shape)


def _permuted_back(g, x_shape, logical):
    """flip's and roll's: each element of g written back where it came from (PyTorch's flip / roll of g:
    a -0.0 keeps its sign, where adding into zeros gives 0.0)."""
    flat = g.new_zeros((math.prod(x_shape),))
    if type(g) is not _late.Tensor:   # a vmap's batch of gradients: through the batching rules
        return flat.scatter(0, logical.reshape(-1), g.reshape(-1)).reshape(x_shape)
    return flat._index_put_flat(logical, g, False).reshape(x_shape)


def _zero_at(g, idx):
    """g with zeros at the logical positions idx (an overwriting index_put's gradient of its input)."""
    if type(g) is not _late.Tensor:   # a vmap's batch of gradients: through the batching rules
        return g.reshape(-1).scatter(0, idx.reshape(-1), 0.0).reshape(g.shape)
    return g._index_put_flat(idx, 0.0, False)


def _take_back(g, idx):
    """g at the logical positions idx (an index_put's gradient of its values)."""
    if type(g) is not _late.Tensor:
        return g.reshape(-1).gather(0, idx.reshape(-1)).reshape(idx.shape)
    return g._take_flat(idx)


# ---- views, copies and joins (ops/views.py, ops/shape.py) -----------------------------------------
def _permute(g, dims):
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return g.permute(inv)


def _slice(g, x_shape, geom, params):
    """A view picking distinct elements (slice, narrow, select, diagonal; its geometry `geom(shape,
    stride, offset, *params)` of the input's): the view replayed on zeros of the input's shape, g
    written there (PyTorch's slice/select/diagonal_backward): the input's own strides (an expanded
    input's zeros) never enter it."""
    z = g.new_zeros(x_shape)
    z.as_strided(*geom(z._shape, z._stride, 0, *params)).copy_(g)
    return z


def _extent(shape, stride, offset):
    """One past the largest storage position a geometry addresses."""
    if any(s == 0 for s in shape):
        return offset
    return offset + sum((s - 1) * st for s, st in zip(shape, stride)) + 1


def _spread(shape, stride):
    """The dims of a geometry that span more than one element."""
    keep = [d for d, n in enumerate(shape) if n != 1]
    return tuple(shape[d] for d in keep), tuple(stride[d] for d in keep)


def _may_share(shape, stride):
    """Whether two elements of a geometry (no dim of size 1 or 0) may share memory (PyTorch's
    _maybe_overlapping_memory): sorted by stride, each dim must step past all the smaller ones."""
    reach = 0
    for n, st in sorted(zip(shape, stride), key=lambda p: p[1]):
        if st <= reach:
            return True
        reach += st * (n - 1)
    return False


def _as_strided(g, x_shape, x_stride, x_offset, shape, stride, offset):
    """PyTorch's as_strided_backward: the gradient of input (x_shape, x_stride, x_offset) from that of
    its view (shape, stride, offset), both in storage terms: g is added into zeros over the storage
    the two address (index_add where the view's elements share memory, so that every one counts),
    then read with the input's geometry, divided where the input's own elements share memory (an
    expanded input: the expand's backward adds the shares up)."""
    if 0 in shape or 0 in x_shape:
        return g.new_zeros(x_shape)
    summed = tuple(d for d, (n, st) in enumerate(zip(shape, stride)) if n > 1 and st == 0)
    if summed:  # dims of stride 0 address one element: their gradients add up
        g = g.sum(summed, keepdim=True)
        shape = g.shape
    shape, stride = _spread(shape, stride)
    g = g.reshape(shape)
    ishape, istride = _spread(x_shape, x_stride)
    start = min(x_offset, offset)
    n = max(_extent(ishape, istride, x_offset - start), _extent(shape, stride, offset - start))
    out_shared, in_shared = _may_share(shape, stride), _may_share(ishape, istride)
    pos = g._arange(n, dtype=_dtype.int64, device=g.device) if out_shared or in_shared else None  # storage positions
    buf = g.new_zeros((n,))
    if out_shared:
        buf = buf.index_add(0, pos.as_strided(shape, stride, offset - start).reshape(-1), g.reshape(-1))
    else:
        buf.as_strided(shape, stride, offset - start).copy_(g)
    if in_shared:
        at = pos.as_strided(ishape, istride, x_offset - start).reshape(-1)
        buf = buf / buf.new_zeros((n,)).index_add(0, at, buf.new_ones((1,)).expand(at.shape))
    return buf.as_strided(x_shape, x_stride, x_offset - start)


def _unfold(g, x_shape, d, size, step):
    """Tensor.unfold's: windows may overlap, so every window's gradient is added back into its
    positions (index_add)."""
    if not x_shape:
        return g.reshape(())
    nwin = g.shape[d]
    pos = g.new_tensor([w * step + j for w in range(nwin) for j in range(size)], dtype=_dtype.int64)
    rows = g.movedim(-1, d + 1).reshape(x_shape[:d] + (nwin * size,) + x_shape[d + 1:])
    return g.new_zeros(x_shape).index_add(d, pos, rows)


def _copy_slices(g, base_shape, base_stride, base_offset, size, stride, offset, fill):
    """An in-place write through a view (PyTorch's CopySlices): g laid out in a buffer with the base's
    geometry (g itself may be strided, even expanded), so that the view's storage geometry addresses
    the written region: the base's gradient is g with the region set to `fill` (-0.0 where the
    view's old values get their gradient back through the view, which adds to it), the written
    values' the region's."""
    n = max(_extent(base_shape, base_stride, base_offset), _extent(size, stride, offset))
    flat = g.new_zeros((n,))
    flat.as_strided(base_shape, base_stride, base_offset).copy_(g)
    region = flat.as_strided(size, stride, offset)
    g_src = region.clone()
    region.fill_(fill)
    return flat.as_strided(base_shape, base_stride, base_offset), g_src


def _cat(g, dim, tensors_shape):
    """cat's: the slice of g each input filled (an empty 1-D input: none)."""
    grads, start = [], 0
    for shape in tensors_shape:
        n = shape[dim] if shape else 0
        grads.append(g.narrow(dim, start, n))
        start += n
    return grads


def _picked(g, x_shape, d, keepdim, indices, add):
    """PyTorch's value_selecting_reduction_backward: each gradient written where its index points
    along d (`add`: summed where several results picked one element)."""
    if not keepdim:
        g, indices = g.unsqueeze(d), indices.unsqueeze(d)
    z = g.new_zeros(x_shape)
    return z.scatter_add(d, indices, g) if add else z.scatter(d, indices, g)


def _pick_along(g, x_shape, d, keepdim, indices):  # max/min/kthvalue/median/mode over a dim
    return _picked(g, x_shape, d, keepdim, indices, False)


def _pick_along_all(g, x_shape, d, keepdim, indices):  # cummax/cummin
    return _picked(g, x_shape, d, keepdim, indices, True)


def _view(g, x_shape):
    return g.reshape(x_shape)


# a @ b's: b's first, so that a's may join the activation's store (webgpu)
_MATMUL = {"b": lambda g, a: _c(a.mT).matmul(g), "a": lambda g, b: g.matmul(_c(b.mT))}


_LOWEST = {"float16": -65504.0, "bfloat16": -3.3895313892515355e38, "float32": -3.4028234663852886e38,
           "float64": -1.7976931348623157e308}


def _logcumsumexp(g, x, y, dim):
    """PyTorch's (TensorFlow's): the positive and the negative parts of g each summed in log space by a
    reversed logcumsumexp, so that no exp overflows."""
    if g.dim() == 0 or g.numel() == 0:
        return g
    log_g, low = g.abs().log(), _LOWEST[g.dtype.name]

    def part(log_part):
        return ((log_part - y).flip(dim).logcumsumexp(dim).flip(dim) + x).exp()
    return part(where(g > 0, log_g, low)) - part(where(g < 0, log_g, low))


def _loss_scale(r, weight, reduction, n):
    """A loss's elementwise gradient r times the weight, divided by the count n for a mean."""
    if weight is not None:
        r = r * weight
    return r / n if reduction == "mean" else r


def _log_sigmoid(x):
    return -((-x).clamp(min=0) + (-x.abs()).exp().log1p())


def _bce_with_logits(g, input, target, weight, pos_weight, reduction):
    """PyTorch's: (sigmoid(x) - target) * g (a zero g keeps the sign), with pos_weight
    ((pos_weight * target + 1 - target) * sigmoid(x) - pos_weight * target) * g."""
    if pos_weight is None:
        return _loss_scale((input.sigmoid() - target) * g, weight, reduction, input.numel())
    t = pos_weight * target
    return _loss_scale(((t + 1 - target) * input.sigmoid() - t) * g, weight, reduction, input.numel())


def _mse(g, input, target, reduction):
    """PyTorch's mse_loss_backward, norm * (input - target) * g rounded once (target's: the same with
    input and target swapped, so both are -0.0 where they are equal and g is negative)."""
    dt = g.dtype
    if dt.itemsize < 4:
        g = g.to(_dtype.float32)
    x = input.to(g.dtype) - target.to(g.dtype)
    return ((2.0 / x.numel() if reduction == "mean" else 2.0) * x * g).to(dt)


def _smooth_l1(g, input, target, reduction, beta):
    """PyTorch's smooth_l1_loss_backward (target's: the same with input and target swapped)."""
    x = input.to(g.dtype) - target.to(g.dtype)
    norm = 1.0 / x.numel() if reduction == "mean" else 1.0
    return where(x <= -beta, -norm * g, where(x >= beta, norm * g, norm * x * g / beta))


def _huber(g, input, target, reduction, delta):
    """PyTorch's huber_loss_backward (target's: the same with input and target swapped)."""
    x = input.to(g.dtype) - target.to(g.dtype)
    norm = 1.0 / x.numel() if reduction == "mean" else 1.0
    return where(x < -delta, -norm * g * delta, where(x > delta, norm * g * delta, norm * x * g))


def _bce_with_logits_target(g, input, target, weight, pos_weight, reduction):
    if pos_weight is None:
        return _loss_scale(-input * g, weight, reduction, input.numel())
    return _loss_scale((_log_sigmoid(-input) - _log_sigmoid(input) * pos_weight) * g, weight, reduction, input.numel())


DERIVATIVES = {
    # ---- unary element-wise ops (ops/pointwise.py) --------------------------------------------
    "NegBackward0": lambda g: -g,
    "NanToNumBackward0": {"input": lambda g, input: g * input.isfinite()},
    "AbsBackward0": lambda g, x: g * (x.sgn() if x.is_complex() else x.sign()),
    "SignBackward0": _zeros,
    "SgnBackward0": _zeros,  # a real sgn's (a complex one is a composite)
    "ExpBackward0": lambda g, y: g * _c(y),
    "Exp2Backward0": lambda g, y: g * y * LN2,
    "Expm1Backward0": lambda g, y: g * _c(y + 1),
    "LogBackward0": lambda g, x: g / _c(x),
    "Log2Backward0": lambda g, x: g / (x * LN2),
    "Log10Backward0": lambda g, x: g / (x * LN10),
    "Log1PBackward0": lambda g, x: g / _c(x + 1),
    "SqrtBackward0": lambda g, y: g / _c(2 * y),
    "RsqrtBackward0": lambda g, y: g * y.pow(3) * -0.5,
    "ReciprocalBackward0": lambda g, y: -g * _c(y * y),
    "SinBackward0": lambda g, x: g * _c(x.cos()),
    "CosBackward0": lambda g, x: -g * _c(x.sin()),
    "TanBackward0": lambda g, y: g * _c(y * y + 1),
    "AsinBackward0": lambda g, x: g / _c((1 - x * x).sqrt()),
    "AcosBackward0": lambda g, x: -g / _c((1 - x * x).sqrt()),
    "AtanBackward0": lambda g, x: g / _c(x * x + 1),
    "SinhBackward0": lambda g, x: g * _c(x.cosh()),
    "CoshBackward0": lambda g, x: g * _c(x.sinh()),
    "TanhBackward0": lambda g, y: g * _c(1 - y * y),
    "AsinhBackward0": lambda g, x: g / _c((x * x + 1).sqrt()),
    # complex: sqrt(x + 1) sqrt(x - 1), not sqrt(x^2 - 1) (another branch), as PyTorch
    "AcoshBackward0": lambda g, x: g / _c((x + 1).sqrt() * (x - 1).sqrt() if x.is_complex() else (x * x - 1).sqrt()),
    "AtanhBackward0": lambda g, x: g / _c(1 - x * x),
    "SigmoidBackward0": lambda g, y: g * _c(1 - y) * _c(y),  # PyTorch's order, each product rounded in float16
    "LogitBackward0": _logit,
    "SincBackward0": _sinc,
    "ErfBackward0": lambda g, x: g * (2 / SQRT_PI) * (-x * x).exp(),
    "ErfcBackward0": lambda g, x: g * (-2 / SQRT_PI) * (-x * x).exp(),
    "ErfinvBackward0": lambda g, x: g * (SQRT_PI / 2) * x.erfinv().square().exp(),  # PyTorch saves x, not y
    "SpecialErfcxBackward0": lambda g, x, y: g * (2 * x * y - 2 / SQRT_PI),
    "LgammaBackward0": lambda g, x: g * x.digamma(),
    "DigammaBackward0": lambda g, x: g * x.polygamma(1),
    "PolygammaBackward0": lambda g, x, n: g * x.polygamma(n + 1),
    # Hurwitz's zeta(a, b): d/db = -a zeta(a + 1, b); none in a (PyTorch's not_implemented("zeta"))
    "SpecialZetaBackward0": {"a": _no_derivative("zeta"), "b": lambda g, a, b: g * -a * g._special_zeta(a + 1.0, b)},
    "SpecialZetaBackward1": {"b": lambda g, a, b: g * -a * g._special_zeta(a + 1.0, b)},
    "SpecialZetaBackward2": {"a": _no_derivative("zeta")},
    "SpecialEntrBackward0": lambda g, x: g * -(1 + x.log()),
    "SpecialLogNdtrBackward0": lambda g, x, y: g / math.sqrt(2 * math.pi) * (-(y + x * x / 2)).exp(),
    "SpecialNdtriBackward0": lambda g, y: g * math.sqrt(2 * math.pi) * (y * y / 2).exp(),
    "SpecialXlog1PyBackward0": {"a": lambda g, a, b: g * (a != 0).to(b.dtype).xlogy((b + 1)),
                                "b": lambda g, a, b: g * a / (b + 1)},
    "SpecialXlog1PyBackward1": {"b": lambda g, a, b: g * a / (b + 1)},
    "SpecialXlog1PyBackward2": {"a": lambda g, b: g * math.log1p(b)},
    # the regularized incomplete gamma functions: d/dx P(a, x) = x^(a-1) e^-x / Gamma(a); none in a (PyTorch's)
    "IgammaBackward0": {"a": _no_derivative("igamma: input"),
                        "b": lambda g, a, b: g * ((a - 1) * b.log() - b - a.lgamma()).exp()},
    "IgammacBackward0": {"a": _no_derivative("igammac: input"),
                         "b": lambda g, a, b: -g * ((a - 1) * b.log() - b - a.lgamma()).exp()},
    "FloorBackward0": _zeros,
    "CeilBackward0": _zeros,
    "RoundBackward0": _zeros,
    "TruncBackward0": _zeros,
    "ReluBackward0": lambda g, y: where(y <= 0, 0.0, g),
    # ---- binary element-wise ops (ops/pointwise.py) -------------------------------------------
    "AddBackward0": {"a": lambda g: g, "b": _alpha(1)},
    "SubBackward0": {"a": lambda g: g, "b": _alpha(-1)},
    "RsubBackward0": {"a": _alpha(-1), "b": lambda g: g},
    "RsubBackward1": {"a": _alpha(-1)},
    "MulBackward0": {"a": lambda g, b: g * _c(b), "b": lambda g, a: g * _c(a)},
    "DivBackward0": {"a": lambda g, b: g / _c(b), "b": lambda g, a, b: -g * _c(a / b / b)},  # b * b would overflow
    "DivBackward2": {"a": _zeros, "b": _zeros},   # div with a rounding mode
    "RemainderBackward0": {"a": lambda g: g},
    "RemainderBackward1": {"a": lambda g: g, "b": lambda g, a, b: -g * a.div(b, rounding_mode="floor")},
    "FmodBackward0": {"a": lambda g: g},
    "FmodBackward1": {"a": lambda g: g, "b": lambda g, a, b: -g * a.div(b, rounding_mode="trunc")},
    # PyTorch's: halved at ties, exact zeros where the other operand wins (a NaN operand: both get g)
    "MaximumBackward0": {"a": lambda g, a, b: where(a < b, 0.0, where(a == b, g / 2, g)),
                         "b": lambda g, a, b: where(a > b, 0.0, where(a == b, g / 2, g))},
    "MinimumBackward0": {"a": lambda g, a, b: where(a > b, 0.0, where(a == b, g / 2, g)),
                         "b": lambda g, a, b: where(a < b, 0.0, where(a == b, g / 2, g))},
    "FmaxBackward0": {"a": lambda g, a, b: where((a >= b) | b.isnan(), g, 0.0),
                      "b": lambda g, a, b: where((a >= b) | b.isnan(), 0.0, g)},
    "FminBackward0": {"a": lambda g, a, b: where((a <= b) | b.isnan(), g, 0.0),
                      "b": lambda g, a, b: where((a <= b) | b.isnan(), 0.0, g)},
    "Atan2Backward0": {"a": lambda g, a, b: _atan2(g, a, b, 1), "b": lambda g, a, b: _atan2(g, a, b, -1)},
    "NextafterBackward0": {"a": lambda g, a, b: where(a != b, g, 0.0), "b": _zeros},
    "HypotBackward0": {"a": lambda g, a, y: g * a / y, "b": lambda g, b, y: g * b / y},
    "LogaddexpBackward0": {"a": lambda g, a, b: g / (1 + (b - a).exp()), "b": lambda g, a, b: g / (1 + (a - b).exp())},
    # PyTorch's: g log(b) (xlogy), 0 where a is 0 and b <= 0; g a / b
    "XlogyBackward0": {"a": lambda g, a, b: where((a == 0) & (b <= 0), 0.0, g.xlogy(b)),
                       "b": lambda g, a, b: g * a / b},
    "XlogyBackward1": {"b": lambda g, a, b: g * a / b},
    "XlogyBackward2": {"a": lambda g, a, b: where(a == 0, 0.0, g.xlogy(b)) if b <= 0 else g.xlogy(b)},
    "Logaddexp2Backward0": {"a": lambda g, a, b: g / (1 + (b - a).exp2()),
                            "b": lambda g, a, b: g / (1 + (a - b).exp2())},
    # copysign's gradient is g times y / a (+-1), times 0 where a is 0 (PyTorch's); none for the sign's source
    "CopysignBackward0": {"a": lambda g, a, y: g * where(a == 0, 0.0, y / a), "b": _zeros},
    "CopysignBackward1": {"a": lambda g, a, y: g * where(a == 0, 0.0, y / a)},
    # PyTorch's grad * pow(2, other): an integer power for an integer other (2 ** -1 is 0)
    "LdexpBackward0": {"a": lambda g, b: g * (2 ** b), "b": lambda g, y: g * y * LN2},
    # PyTorch's "NotImplemented" nodes: the output requires grad, backward raises (the key names the op)
    **{f"NotImplemented({op})": {"a": _not_implemented(op), "b": _not_implemented(op)}
       for op in ("floor_divide", "heaviside")},
    "NotImplemented(remainder)": {"b": _not_implemented("remainder")},
    "NotImplemented(bernoulli)": _not_implemented("bernoulli"),
    "Unique2Backward0": _no_derivative("_unique2"),
    # random draws (bernoulli, in-place fills): the result does not depend on the input's values
    **{n: _zeros for n in ("BernoulliBackward0", "BernoulliBackward1", "BernoulliBackward2", "UniformBackward0",
                           "NormalBackward0", "ExponentialBackward0", "RandomBackward0", "RandomBackward1",
                           "RandomBackward2", "CauchyBackward0", "LogNormalBackward0", "GeometricBackward0",
                           "PoissonBackward0")},
    # torch.distributions' samplers (ops/samplers.py): Gamma's reparameterized gradient, as PyTorch's
    "StandardGammaBackward0": lambda g, x, y: g * x._standard_gamma_grad(y),
    "NotImplemented(_sample_dirichlet)": _not_implemented("_sample_dirichlet"),
    "BinomialBackward0": {"count": _zeros, "prob": _zeros},
    "NormalBackward1": {"mean": _zeros},
    "NormalBackward2": {"std": _zeros},
    "NormalBackward3": {"mean": _zeros, "std": _zeros},
    # PyTorch's order: g * (exponent * x ** (exponent - 1)) (g * exponent first may overflow, 3e38 * 2 may not)
    "PowBackward0": lambda g, x, exponent: _zeros(g) if exponent == 0 else g * _c(exponent * x.pow(exponent - 1)),
    "PowBackward1": {"a": lambda g, a, b: where(b == 0, 0.0, g * (b * a.pow(b - 1))),
                     "b": lambda g, a, b, y: g * where((a == 0) & (b >= 0), 0.0, y * a.log())},
    "PowBackward2": {"x": _pow_scalar_base},
    # PyTorch's rows (value / tensor2 is a tensor of value divided, not a reciprocal times value)
    # PyTorch's rows: grad * (1 - weight) for input (a differentiated decomposition gave g - g * w: 0.0 for -0.0)
    "LerpBackward0": {"input": lambda g, weight: g * _c(1 - weight), "end": lambda g, weight: g * _c(weight)},
    "LerpBackward1": {"input": lambda g, weight: g * _c(1 - weight), "end": lambda g, weight: g * _c(weight),
                      "weight": lambda g, input, end: g * _c(end - input)},
    "AddcmulBackward0": {"input": lambda g: g, "tensor1": lambda g, tensor2, value: g * (tensor2 * value),
                         "tensor2": lambda g, tensor1, value: g * (tensor1 * value)},
    "AddcdivBackward0": {"input": lambda g: g,
                         "tensor1": lambda g, tensor2, value: g * (tensor2.new_full(tensor2.shape, value) / tensor2),
                         "tensor2": lambda g, tensor1, tensor2, value: -g * (value * tensor1 / (tensor2 * tensor2))},
    "WhereBackward0": {"a": lambda g, condition: where(condition, g, 0.0),
                       "b": lambda g, condition: where(condition, 0.0, g)},
    "ClampBackward1": _clamp,
    # ---- reductions (ops/reduction.py) ------------------------------------------------------------
    "SumBackward0": lambda g, x_shape, dims, keepdim: unreduce(g, x_shape, dims, keepdim),
    "SumBackward1": lambda g, x_shape, dims, keepdim: unreduce(g, x_shape, dims, keepdim),
    "NansumBackward0": lambda g, x, dims, keepdim: unreduce(g, x.shape, dims, keepdim) * ~x.isnan(),
    "MeanBackward0": _mean,
    "MeanBackward1": _mean,
    "ProdBackward0": _prod_all,
    "ProdBackward1": _prod,
    "AmaxBackward0": _extreme,
    "AminBackward0": _extreme,
    "MaxBackward1": _extreme_all,
    "MinBackward1": _extreme_all,
    "MedianBackward0": _extreme_all,  # PyTorch's evenly_distribute_backward, as max()'s
    **{n: _pick_along for n in ("MaxBackward0", "MinBackward0", "KthvalueBackward0", "MedianBackward1",
                                "ModeBackward0")},
    **{n: _pick_along_all for n in ("CummaxBackward0", "CumminBackward0")},
    "TopkBackward0": lambda g, x_shape, d, indices: _pick_along(g, x_shape, d, True, indices),
    "MaskedSelectBackward0": {"input": lambda g, input_shape, mask: (  # zeros of the broadcast shape
        g.new_zeros(input_shape) + g.new_zeros(mask.shape)).masked_scatter(mask, g)},
    "SortBackward0": lambda g, x_shape, d, indices: g.new_zeros(x_shape).scatter(d, indices, g),
    "NanmedianBackward0": _extreme_all,
    "VarBackward0": _var,
    "StdBackward0": _std,
    "LinalgVectorNormBackward0": _norm,
    "CumsumBackward0": lambda g, dim: _rcumsum(g, dim),
    "CumprodBackward0": _cumprod,
    "LogcumsumexpBackward0": _logcumsumexp,
    "LogsumexpBackward0": lambda g, x, y, dims, keepdim: unreduce(g, x.shape, dims, keepdim) * _c(
        (x - unreduce(y, x.shape, dims, keepdim)).exp()),
    "SoftmaxBackward0": _softmax(False),
    "LogSoftmaxBackward0": _softmax(True),
    # ---- matrix products (ops/linalg.py) ----------------------------------------------------------
    "BmmBackward0": _MATMUL,
    "MmBackward0": _MATMUL,
    "MvBackward0": {"a": lambda g, b: g.outer(_c(b)), "b": lambda g, a: _c(a.t()).mv(g)},
    "DotBackward0": {"a": lambda g, b: g * _c(b), "b": lambda g, a: g * _c(a)},
    "AddmmBackward0": {"input": lambda g, beta: _scaled(g, _c(beta)),
                       "mat2": lambda g, mat1, alpha: mat1.mH.matmul(_scaled(g, _c(alpha))),
                       "mat1": lambda g, mat2, alpha: _scaled(g, _c(alpha)).matmul(mat2.mH)},
    "CloneBackward0": lambda g: g,
    # ---- complex tensors (ops/complex_ops.py) ---------------------------------------------------------
    "ViewAsRealBackward0": lambda g: g.contiguous()._view_as_complex(),
    "ViewAsComplexBackward0": lambda g: g._view_as_real(),
    "ConjBackward0": lambda g: g.conj(),
    "ConjPhysicalBackward0": lambda g: g.conj(),
    "ComplexBackward0": {"real": lambda g: g.real, "imag": lambda g: g.imag},
    "FftC2CBackward0": lambda g, inverse: g._fft_c2c(not inverse),  # the conjugate transpose (webtorch/fft.py)
    # ---- views, copies and joins (ops/views.py, ops/shape.py, ops/_common.py) -----------------------
    **{n: _view for n in ("ViewBackward0", "UnsafeViewBackward0", "SqueezeBackward0", "SqueezeBackward1",
                          "SqueezeBackward2", "SqueezeBackward4", "UnsqueezeBackward0")},
    **{n: _permute for n in ("PermuteBackward0", "TransposeBackward0", "TBackward0")},
    "ExpandBackward0": lambda g: g,  # the node sums g back to the input's shape
    **{n: _slice for n in ("SliceBackward0", "SelectBackward0", "DiagonalBackward0")},
    "AsStridedBackward0": _as_strided,
    "UnfoldBackward0": _unfold,
    "UnbindBackward0": lambda grads, d: grads[0]._stack(grads, d),
    "SplitBackward0": lambda grads, d: grads[0]._cat(grads, d),
    "SplitWithSizesBackward0": lambda grads, d: grads[0]._cat(grads, d),
    "CatBackward0": {"tensors": _cat},
    "StackBackward0": {"tensors": lambda g, dim, tensors_shape: [g.select(dim, i) for i in range(len(tensors_shape))]},
    # dst: PyTorch's zeros_like(g) (g * 0 is -0.0 or NaN)
    "CopyBackwards": {"dst": lambda g: g.new_zeros(g.shape),
                      "src": lambda g, src_shape, src_device: (g if g.shape == src_shape else g.sum_to_size(src_shape))
                      .to(src_device)},
    "CopySlices": {("base", "src"): _copy_slices},
    # ---- indexing (ops/indexing.py): a take at storage offsets, a put at flat positions ---------
    "IndexBackward0": _put_back,
    "GatherBackward0": _put_back,
    "FlipBackward0": _permuted_back,
    "RollBackward0": _permuted_back,
    "TakeBackward0": _put_back,
    "IndexSelectBackward0": _put_back,
    "IndexPutBackward0": {"x": lambda g, idx, accumulate: g if accumulate else _zero_at(g, idx),
                          "v": _take_back},
    # ---- conversions (ops/_creation.py): the node casts g back to the input's dtype ---------------
    "ToCopyBackward0": lambda g, x_device: g.to(x_device),
    # ---- activations (ops/activation.py); PyTorch numbers some in-place forms apart ---------
    "ThresholdBackward0": lambda g, x, threshold, value: where(x > threshold, g, 0.0),
    # no gradient at the bounds themselves (x <= min_val or x >= max_val), as PyTorch
    "HardtanhBackward0": lambda g, x, min_val, max_val: where((x <= min_val) | (x >= max_val), 0.0, g),
    "LeakyReluBackward0": _leaky_relu,
    "LeakyReluBackward1": _leaky_relu,
    "GeluBackward0": _gelu,
    "SiluBackward0": _silu,
    "HardswishBackward0": lambda g, x: where(x <= -3.0, 0.0, where(x < 3.0, g * (x / 3.0 + 0.5), g)),
    "HardsigmoidBackward0": lambda g, x: where((x > -3.0) & (x < 3.0), g / 6.0, 0.0),
    "EluBackward0": _elu,
    "EluBackward1": _elu,
    "CeluBackward0": _celu,
    "CeluBackward1": _celu,
    "SoftplusBackward0": lambda g, x, beta, threshold: where(x * beta > threshold, g, g * (x * beta).sigmoid()),
    "MishBackward0": _mish,
    # zero inside [-lambd, lambd]; NaN passes g
    "SoftshrinkBackward0": lambda g, x, lambd: where((x >= -lambd) & (x <= lambd), 0.0, g),
    "HardshrinkBackward0": lambda g, x, lambd: where((x >= -lambd) & (x <= lambd), 0.0, g),
    "LogSigmoidBackward0": lambda g, x: g * (-x).sigmoid(),  # d/dx log(sigmoid(x)) = sigmoid(-x)
    # ---- losses (nn/functional.py) ------------------------------------------------------------
    "BinaryCrossEntropyWithLogitsBackward0": {"input": _bce_with_logits, "target": _bce_with_logits_target},
    "SmoothL1LossBackward0": {"input": _smooth_l1,
                              "target": lambda g, input, target, reduction, beta: _smooth_l1(g, target, input,
                                                                                               reduction, beta)},
    "MseLossBackward0": {"input": _mse,
                         "target": lambda g, input, target, reduction: _mse(g, target, input, reduction)},
    "HuberLossBackward0": {"input": _huber,
                           "target": lambda g, input, target, reduction, delta: _huber(g, target, input, reduction,
                                                                                         delta)},
    "NativeDropoutBackward0": lambda g, mask, scale: g * (mask.type_as(g) * scale),  # native_dropout_backward
    # ---- pooling's backward (torch.ops.aten) ----------------------------------------------------------
    # max_pool_double_backward: the gradient read back at the indices the forward put it to; self: zeros
    "MaxPool2DWithIndicesBackwardBackward0": {
        "grad_output": lambda g, indices: g.flatten(-2).gather(-1, indices.flatten(-2)).reshape(indices.shape),
        "x": lambda g, x_shape: g.new_zeros(x_shape)},
}
DERIVATIVES.update(LINALG_DERIVATIVES)  # torch.linalg's primitives (linalg_derivatives.py)

# the rows right for complex inputs too (PyTorch's conjugate Wirtinger convention: linear maps with real
# coefficients, and the rows with `_c`); a node of any other row refuses a complex input (`formula_node`)
COMPLEX_ROWS = frozenset(
    "NegBackward0 AbsBackward0 ExpBackward0 AddBackward0 SubBackward0 RsubBackward0 RsubBackward1 MulBackward0 "
    "DivBackward0 BmmBackward0 MmBackward0 CloneBackward0 ViewAsRealBackward0 ViewAsComplexBackward0 ConjBackward0 "
    "ConjPhysicalBackward0 ComplexBackward0 ViewBackward0 UnsafeViewBackward0 SqueezeBackward0 SqueezeBackward1 "
    "SqueezeBackward2 SqueezeBackward4 UnsqueezeBackward0 PermuteBackward0 TransposeBackward0 TBackward0 "
    "ExpandBackward0 SliceBackward0 SelectBackward0 DiagonalBackward0 AsStridedBackward0 UnfoldBackward0 "
    "UnbindBackward0 SplitBackward0 SplitWithSizesBackward0 CatBackward0 StackBackward0 CopyBackwards CopySlices "
    "IndexBackward0 GatherBackward0 FlipBackward0 RollBackward0 TakeBackward0 IndexSelectBackward0 "
    "SumBackward0 SumBackward1 MeanBackward0 MeanBackward1 CumsumBackward0 ToCopyBackward0 WhereBackward0 "
    "LogBackward0 SqrtBackward0 ReciprocalBackward0 SinBackward0 CosBackward0 TanBackward0 SinhBackward0 "
    "CoshBackward0 TanhBackward0 SigmoidBackward0 FftC2CBackward0 PowBackward0 LinalgEigBackward0 Expm1Backward0 "
    "Log1PBackward0 AsinBackward0 AcosBackward0 AtanBackward0 AsinhBackward0 AcoshBackward0 AtanhBackward0 "
    "ProdBackward0 ProdBackward1 MvBackward0 DotBackward0 VarBackward0 StdBackward0 LerpBackward0 "
    "LerpBackward1 CumprodBackward0 IndexPutBackward0 AddmmBackward0 LogsumexpBackward0".split()) | LINALG_COMPLEX_ROWS

# the rows PyTorch computes with a backward kernel of their own, which takes float16 / bfloat16 in float32
# and rounds once (opmath): formula_node evaluates these rows in float32 for such dtypes
OPMATH_ROWS = frozenset(
    "SoftmaxBackward0 LogSoftmaxBackward0 GeluBackward0 SiluBackward0 MishBackward0 EluBackward0 CeluBackward0 "
    "HardswishBackward0 HardsigmoidBackward0 SoftplusBackward0 LogSigmoidBackward0 TanhBackward0".split())
# the rows whose backward kernel takes bfloat16 in float32 (rounded once) but float16 in float16, step by step
BF16_OPMATH_ROWS = frozenset(["SigmoidBackward0"])
