"""torch.nn.functional's pooling (2/3-D: one implementation; 1-D as PyTorch, through 2-D)."""
import math

from ...ops import linalg as _la, pointwise as _pw, reduction as _red
from ...ops._common import composite_node, dispatching
from ...ops._creation import tensor as _tensor
from ...ops.activation import relu
from ._util import _batchify, _gather_dim, _idx, _iota, _ntuple, _pair, _single
from .conv import _im2col, _pads_last_first, _pitches
from .padding import _pad_constant

# a graph node named as PyTorch's for a layer computed by other ops (its gradient is theirs)
_node = composite_node

__all__ = [
    "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
    "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "adaptive_max_pool3d", "lp_pool2d", "lp_pool1d", "lp_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
    "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices",
]


# ---- pooling (2/3-D: one implementation; 1-D as PyTorch, through 2-D) ------------------------
def _pool_out(n, k, s, p, d, ceil_mode):
    num = n + 2 * p - d * (k - 1) - 1
    if ceil_mode:
        o = -(-num // s) + 1
        if (o - 1) * s >= n + p:
            o -= 1
    else:
        o = num // s + 1
    return o


def _pool_setup(input, kernel_size, stride, padding, dilation, ceil_mode, name, n_sp=2):
    if input.dim() not in (n_sp + 1, n_sp + 2):
        raise RuntimeError(f"non-empty {n_sp + 1}D or {n_sp + 2}D (batch mode) tensor expected for input")
    if 0 in input.shape[-n_sp - 1:]:  # only a batch dim may be empty
        if n_sp == 2:
            raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
                               f"but got:{list(input.shape)}")
        where = "max_pool3d_with_indices_out_cpu_template" if name == "max_pool3d" else name
        raise RuntimeError(f"{where}(): Expected input's non-batch dimensions to have positive length, but input "
                           f"has a shape of {list(input.shape)} and non-batch dimension 0 has length zero!")
    x, unb = _batchify(input, n_sp, name)
    tup = _ntuple(n_sp)
    k = tup(kernel_size)
    s = tup(stride) if stride not in (None, [], ()) else k
    p, d = tup(padding), tup(dilation)
    names = {2: ("kH kW", "dH dW", "dilationH dilationW"),
             3: ("kT kH kW", "dT dH dW", "dilationT dilationH dilationW")}[n_sp]
    for what, v, nm in zip(("kernel_size", "stride", "dilation"), (k, s, d), names):
        if min(v) <= 0:
            got = " ".join(f"{n}: {x}" for n, x in zip(nm.split(), v))
            raise RuntimeError(f"{name}(): {what} must be greater than zero, but got {got}")
    if min(p) < 0:
        raise RuntimeError(f"{name}(): pad must be non-negative, but got pad: {min(p)}")
    for i in range(n_sp):
        if p[i] > k[i] // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p[i]}, "
                               f"kernel_size={k[i]} and dilation={d[i]}")
    C, sp = x.shape[1], tuple(x.shape[2:])
    if name == "avg_pool3d" and any(n < kk for n, kk in zip(sp, k)):
        raise RuntimeError(f"input image (T: {sp[0]} H: {sp[1]} W: {sp[2]}) smaller than kernel size "
                           f"(kT: {k[0]} kH: {k[1]} kW: {k[2]})")
    out = tuple(_pool_out(sp[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(n_sp))
    if any(o <= 0 for o in out):
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, (C,) + sp))}). Calculated output size: "
                           f"({'x'.join(map(str, (C,) + out))}). Output size is too small")
    # extra padding at the end for ceil_mode windows that run past the input
    extra = tuple(max(0, (out[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 - (sp[i] + 2 * p[i])) for i in range(n_sp))
    return x, unb, k, s, p, d, out, extra


def _pool_windows(input, setup, fill, name):
    """(batched input, unbatched?, (N, C, K, L) padded windows) for a pooling setup."""
    k, s, p, d, out, extra = setup
    x, unb = _batchify(input, len(k), name)
    pads = [(lo, lo + e) for lo, e in zip(p, extra)]
    if any(lo or hi for lo, hi in pads):
        x = _pad_constant(x, _pads_last_first(pads), fill)
    return x, unb, _im2col(x, k, d, s, out)


def _max_pool_impl(input, setup, return_indices):
    k, s, p, d, out, _ = setup
    x, unb, win = _pool_windows(input, setup, -math.inf, "max_pool")
    N, C = x.shape[0], x.shape[1]
    vals, arg = _red.max(win, 2)
    vals = vals.reshape((N, C) + out)
    if not return_indices:
        return vals.squeeze(0) if unb else vals
    # the flat index into the unpadded input plane: sum over dims of (o_i*s_i - p_i + k_i*d_i) * pitch_i
    sp = tuple(input.shape[-len(k):])
    ind, kstride = None, math.prod(k)
    for i, pitch in enumerate(_pitches(sp)):
        kstride //= k[i]
        shp = [1] * len(out)
        shp[i] = out[i]
        o = (_iota(out[i], x.device) * s[i] - p[i]).reshape(shp).expand(out).reshape(-1)
        kk = _pw.remainder(_pw.floor_divide(arg, kstride), k[i]) * d[i]
        term = (o + kk) * pitch
        ind = term if ind is None else ind + term
    ind = ind.reshape((N, C) + out)
    if unb:
        return vals.squeeze(0), ind.squeeze(0)
    return vals, ind


_MaxPool2d = _node("MaxPool2DWithIndicesBackward0", _max_pool_impl)
_MaxPool3d = _node("MaxPool3DWithIndicesBackward0", _max_pool_impl)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    setup = _pool_setup(input, kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d")
    return _MaxPool2d.call(input, setup[2:], return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    setup = _pool_setup(input, kernel_size, stride, padding, dilation, ceil_mode, "max_pool3d", 3)
    return _MaxPool3d.call(input, setup[2:], return_indices)


def _check_1d_input(input, name):
    if input.dim() not in (2, 3) or 0 in input.shape[input.dim() - 2:]:  # only a batch dim may be empty
        raise RuntimeError(f"{name}() Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got: {list(input.shape)}")


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    _check_1d_input(input, "max_pool1d")
    unb = input.dim() == 2
    x = input.unsqueeze(0) if unb else input
    r = max_pool2d(x.unsqueeze(2), (1,) + _single(kernel_size),
                   (1,) + (_single(stride) if stride not in (None, [], ()) else _single(kernel_size)),
                   (0,) + _single(padding), (1,) + _single(dilation), ceil_mode, return_indices)
    if return_indices:
        v, i = r
        v, i = v.squeeze(2), i.squeeze(2)
        return (v.squeeze(0), i.squeeze(0)) if unb else (v, i)
    r = r.squeeze(2)
    return r.squeeze(0) if unb else r


def _avg_divisor(n, k, s, p, o, count_include_pad):
    out = []
    for i in range(o):
        start = i * s - p
        end = min(start + k, n + p)
        size = end - start
        start, end = max(start, 0), min(end, n)
        out.append(size if count_include_pad else end - start)
    return out


def _avg_pool_impl(input, setup, count_include_pad, divisor_override):
    k, s, p, d, out, _ = setup
    x, unb, win = _pool_windows(input, setup, 0.0, "avg_pool")
    total = win.sum(2).reshape((x.shape[0], x.shape[1]) + out)
    if divisor_override:
        y = total / divisor_override
    else:
        sp = tuple(input.shape[-len(k):])
        divs = [_avg_divisor(sp[i], k[i], s[i], p[i], out[i], count_include_pad) for i in range(len(k))]
        if all(len(set(dv)) == 1 for dv in divs):
            y = total / math.prod(dv[0] for dv in divs)
        else:  # the outer product of the per-dim window sizes
            div = None
            for i, dv in enumerate(divs):
                shp = [1] * len(out)
                shp[i] = out[i]
                t = _tensor(dv, dtype=total.dtype, device=total.device).reshape(shp)
                div = t if div is None else div * t
            y = total / div
    return y.squeeze(0) if unb else y


_AvgPool2d = _node("AvgPool2DBackward0", _avg_pool_impl)
_AvgPool3d = _node("AvgPool3DBackward0", _avg_pool_impl)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("avg_pool2d(): divisor must be not zero")
    setup = _pool_setup(input, kernel_size, stride, padding, 1, ceil_mode, "avg_pool2d")
    return _AvgPool2d.call(input, setup[2:], count_include_pad, divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    setup = _pool_setup(input, kernel_size, stride, padding, 1, ceil_mode, "avg_pool3d", 3)
    return _AvgPool3d.call(input, setup[2:], count_include_pad, divisor_override)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    _check_1d_input(input, "avg_pool1d")
    unb = input.dim() == 2
    x = input.unsqueeze(0) if unb else input
    y = avg_pool2d(x.unsqueeze(2), (1,) + _single(kernel_size),
                   (1,) + (_single(stride) if stride not in (None, [], ()) else _single(kernel_size)),
                   (0,) + _single(padding), ceil_mode, count_include_pad).squeeze(2)
    return y.squeeze(0) if unb else y


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    kw, kh = _pair(kernel_size)
    if stride is not None:
        out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool2d(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return (out.sign() * relu(out.abs())).mul(kw * kh).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    if stride is not None:
        out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool1d(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return (out.sign() * relu(out.abs())).mul(kernel_size).pow(1.0 / norm_type)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    kd, kw, kh = _ntuple(3)(kernel_size)
    if stride is not None:
        out = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool3d(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return (out.sign() * relu(out.abs())).mul(kd * kw * kh).pow(1.0 / norm_type)


def _adaptive_bounds(n, o):
    return [((i * n) // o, -(-((i + 1) * n) // o)) for i in range(o)]


def _adaptive_matrix(n, o, dtype, device):
    rows = []
    for s, e in _adaptive_bounds(n, o):
        rows.append([1.0 / (e - s) if s <= j < e else 0.0 for j in range(n)])
    return _tensor(rows, dtype=dtype, device=device)


def _adaptive_sizes(output_size, shape, n_sp, negative="elements of output_size must be greater than or equal to 0"):
    if isinstance(output_size, (list, tuple)) and len(shape) <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    o = list(_ntuple(n_sp)(output_size) if not isinstance(output_size, (list, tuple)) else output_size)
    if len(o) == 1 and n_sp > 1:
        o = o * n_sp
    if len(o) != n_sp:
        raise RuntimeError(f"output_size must be {n_sp}")
    if any(v is not None and v < 0 for v in o):
        raise RuntimeError(negative)
    return [shape[-n_sp + i] if o[i] is None else int(o[i]) for i in range(n_sp)]


def _apply_along(x, A, d):
    """A (m, n) applied to dim d of x (size n -> m) by one matmul."""
    if d == x.dim() - 1:
        return _la.matmul(x, A.t())
    return _la.matmul(A, x.movedim(d, -2)).movedim(-2, d)


def _adaptive_avg_pool(input, output_size, n_sp):
    o = _adaptive_sizes(output_size, input.shape, n_sp)
    if input.dim() not in (n_sp + 1, n_sp + 2):
        raise RuntimeError(f"adaptive_avg_pool{n_sp}d(): Expected {n_sp + 1}D or {n_sp + 2}D tensor, but got "
                           f"{list(input.shape)}")
    sp = tuple(input.shape[-n_sp:])
    dims = tuple(range(-n_sp, 0))
    if all(v == 1 for v in o):
        return input.mean(dims, keepdim=True)
    if all(n % v == 0 for n, v in zip(sp, o)):
        lead = tuple(input.shape[:-n_sp])
        x = input.reshape(lead + tuple(v for n, oo in zip(sp, o) for v in (oo, n // oo)))
        return x.mean(tuple(-1 - 2 * i for i in range(n_sp)))
    x = input
    for i in range(n_sp):
        if o[i] != sp[i]:
            x = _apply_along(x, _adaptive_matrix(sp[i], o[i], input.dtype, input.device), input.dim() - n_sp + i)
    return x


def _one_int(output_size):
    if isinstance(output_size, (list, tuple)) and len(output_size) != 1:
        raise RuntimeError("adaptive_pool1d: 'output_size' should contain one int")
    return _single(output_size)


def adaptive_avg_pool1d(input, output_size):
    _one_int(output_size)
    return _adaptive_avg_pool(input, output_size, 1)


def adaptive_avg_pool2d(input, output_size):
    return _adaptive_avg_pool(input, output_size, 2)


def adaptive_avg_pool3d(input, output_size):
    return _adaptive_avg_pool(input, output_size, 3)


def _adaptive_max_pool(input, output_size, return_indices, n_sp):
    o = _adaptive_sizes(output_size, input.shape, n_sp, "Trying to create tensor with negative dimension")
    if input.dim() not in (n_sp + 1, n_sp + 2):
        raise RuntimeError(f"adaptive_max_pool{n_sp}d(): Expected {n_sp + 1}D or {n_sp + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    x, unb = _batchify(input, n_sp, f"adaptive_max_pool{n_sp}d")
    N, C, sp = x.shape[0], x.shape[1], tuple(x.shape[2:])
    rows, ks = [], []
    for i in range(n_sp):
        b = _adaptive_bounds(sp[i], o[i])
        k = max(e - s for s, e in b)
        ks.append(k)
        rows.append(_idx([min(s + j, e - 1) for s, e in b for j in range(k)], x.device))
        x = _gather_dim(x, 2 + i, rows[i])
    # (N, C, o0*k0, o1*k1, ...) -> (N, C, o0, o1, ..., k0*k1*...)
    x = x.reshape((N, C) + tuple(v for oo, k in zip(o, ks) for v in (oo, k)))
    x = x.permute((0, 1) + tuple(2 + 2 * i for i in range(n_sp)) + tuple(3 + 2 * i for i in range(n_sp)))
    K = math.prod(ks)
    vals, arg = _red.max(x.reshape((N, C) + tuple(o) + (K,)), -1)
    if not return_indices:
        return vals.squeeze(0) if unb else vals
    flat = None
    for i, pitch in enumerate(_pitches(sp)):
        shp = [1] * (2 * n_sp)
        shp[i], shp[n_sp + i] = o[i], ks[i]
        t = (rows[i] * pitch).reshape(shp)
        flat = t if flat is None else flat + t
    flat = flat.reshape(tuple(o) + (K,)).expand((N, C) + tuple(o) + (K,))
    ind = flat.gather(-1, arg.unsqueeze(-1)).squeeze(-1)
    return (vals.squeeze(0), ind.squeeze(0)) if unb else (vals, ind)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    _one_int(output_size)
    return _adaptive_max_pool(input, output_size, return_indices, 1)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    return _adaptive_max_pool(input, output_size, return_indices, 2)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    return _adaptive_max_pool(input, output_size, return_indices, 3)



def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool1d(input, output_size, return_indices=True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool2d(input, output_size, return_indices=True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool3d(input, output_size, return_indices=True)


dispatching(globals(), __all__)
