"""torch.nn.functional: every layer's computation, written in webtorch ops (so every backend runs
it and autograd differentiates it). Signatures follow PyTorch.

Lowerings: convolution = im2col (a gather at computed offsets, whose backward is a scatter-add,
right for overlapping windows) + one batched matmul; transposed convolution = matmul + col2im
(a scatter-add); max/avg pooling = the same window gather + max(dim)/sum; adaptive pooling and
bilinear interpolation = small interpolation matrices applied by matmul.
"""
import math
import warnings

from .. import _dtype
from .._creation import tensor as _tensor, zeros as _zeros, full as _full, arange as _arange, rand as _rand
from ..autograd import grad_mode
from ..ops import indexing as _ix
from ..ops import shape as _shape
from ..ops import pointwise as _pw
from ..ops import reduction as _red
from ..ops import linalg as _la
from ..autograd.function import Function
from ..ops._common import (composite_node, recording as _recording, inplace_result as _inplace_result,
                           check_leaf_inplace as _check_leaf_inplace)

int64, bool_ = _dtype.int64, _dtype.bool_


# a graph node named as PyTorch's for a layer computed by other ops (its gradient is theirs)
_node = composite_node

__all__ = [
    "linear", "bilinear", "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "unfold", "fold",
    "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "lp_pool2d",
    "batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm", "local_response_norm", "normalize",
    "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
    "embedding", "one_hot", "pad", "interpolate", "upsample", "pixel_shuffle", "pixel_unshuffle",
    "scaled_dot_product_attention", "multi_head_attention_forward",
    "relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "gelu", "silu", "sigmoid", "tanh", "softmax",
    "log_softmax", "softmin", "elu", "elu_", "selu", "celu", "hardswish", "hardsigmoid", "hardtanh",
    "hardtanh_", "mish", "softplus", "softsign", "logsigmoid", "tanhshrink", "softshrink", "hardshrink", "glu",
    "prelu", "threshold", "threshold_", "rrelu", "gumbel_softmax",
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "soft_margin_loss", "margin_ranking_loss",
    "hinge_embedding_loss", "cosine_embedding_loss", "poisson_nll_loss", "gaussian_nll_loss",
    "triplet_margin_loss", "multilabel_soft_margin_loss", "cosine_similarity", "pairwise_distance", "pdist",
]


# ---- helpers ---------------------------------------------------------------------------------
def _ntuple(n, name="value"):
    def parse(x):
        if isinstance(x, (list, tuple)):
            if len(x) == 1 and n > 1:
                return tuple(x) * n
            return tuple(int(v) for v in x)
        return (int(x),) * n
    return parse


_single, _pair, _triple = _ntuple(1), _ntuple(2), _ntuple(3)


def _iota(n, device):
    return _arange(n, dtype=int64, device=device)


def _idx(values, device):
    return _tensor(list(values), dtype=int64, device=device)


def _gather_dim(x, d, idx):
    """x.index_select(d, idx) for indices known to be in range (no host round trip)."""
    nd = x.dim()
    coords = [None] * nd
    coords[d] = idx.reshape((idx.numel(),) + (1,) * (nd - d - 1))
    shape = list(x.shape)
    shape[d] = idx.numel()
    return _ix.take_offsets(x, coords, tuple(shape), node=_ix.IndexSelect)


def _batchify(input, spatial, name):
    """(input with a batch dim, whether it was unbatched)."""
    if input.dim() == spatial + 1:
        return input.unsqueeze(0), True
    if input.dim() != spatial + 2:
        raise RuntimeError(f"{name}: Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input, but got "
                           f"input of size: {list(input.shape)}")
    return input, False


def _shape_str(s):
    return "[" + ", ".join(str(v) for v in s) + "]"


# ---- padding ---------------------------------------------------------------------------------
def _pad_constant(x, pads, value=0.0):
    """pads = (last_lo, last_hi, second_last_lo, ...) as in F.pad; negative values crop."""
    nd = x.dim()
    for i in range(len(pads) // 2):
        d = nd - 1 - i
        lo, hi = pads[2 * i], pads[2 * i + 1]
        if lo < 0:
            x = x.narrow(d, -lo, x.shape[d] + lo)
            lo = 0
        if hi < 0:
            x = x.narrow(d, 0, x.shape[d] + hi)
            hi = 0
        if lo == 0 and hi == 0:
            continue
        parts = []
        if lo:
            s = list(x.shape)
            s[d] = lo
            parts.append(_full(s, value, dtype=x.dtype, device=x.device))
        parts.append(x)
        if hi:
            s = list(x.shape)
            s[d] = hi
            parts.append(_full(s, value, dtype=x.dtype, device=x.device))
        x = _shape.cat(parts, d)
    return x


def _pad_index(n, lo, hi, mode):
    out = []
    for i in range(-lo, n + hi):
        if mode == "reflect":
            j = i
            period = 2 * (n - 1) if n > 1 else 1
            j = abs(j) % period if period else 0
            j = period - j if j >= n else j
        elif mode == "replicate":
            j = min(max(i, 0), n - 1)
        else:  # circular
            j = i % n
        out.append(j)
    return out


def pad(input, pad, mode="constant", value=None):
    if len(pad) % 2 != 0:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.dim()}")
    pad = tuple(int(p) for p in pad)
    if mode == "constant":
        return _pad_constant(input, pad, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument.")
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    x = input
    nd = x.dim()
    for i in range(len(pad) // 2):
        d = nd - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = x.shape[d]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({lo}, {hi}) at dimension {d} of input {list(input.shape)}")
        if mode == "circular" and (lo > n or hi > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if lo == 0 and hi == 0:
            continue
        x = _gather_dim(x, d, _idx(_pad_index(n, lo, hi, mode), x.device))
    return x


# ---- linear ----------------------------------------------------------------------------------
def linear(input, weight, bias=None):
    # as PyTorch: addmm for a matrix; a contiguous batch is viewed as a matrix around one addmm
    # (ViewBackward0 / AddmmBackward0 / ViewBackward0); else matmul (which folds a batch into rows)
    if bias is not None and input.dim() == 2:
        return _la.addmm(bias, input, weight.t())
    if bias is not None and bias.dim() == 1 and input.is_contiguous():
        out = _la.addmm(bias, input.view(-1, input.shape[-1]), weight.t())
        return out.view(tuple(input.shape[:-1]) + (weight.shape[0],))
    out = _la.matmul(input, weight.t())
    return out + bias if bias is not None else out


def bilinear(input1, input2, weight, bias=None):
    # y_k = x1 W_k x2^T + b_k
    out = _la.einsum("...i,kij,...j->...k", input1, weight, input2)
    return out + bias if bias is not None else out


# ---- im2col / col2im ------------------------------------------------------------------------
def _window_offsets(Wp, kernel, dilation, stride, out, device):
    """int64 (kh*kw*oh*ow,) offsets into a (Hp*Wp) plane: (ky*dh + oy*sh) * Wp + kx*dw + ox*sw."""
    (kh, kw), (dh, dw), (sh, sw), (oh, ow) = kernel, dilation, stride, out
    ky = (_iota(kh, device) * (dh * Wp)).reshape(kh, 1, 1, 1)
    kx = (_iota(kw, device) * dw).reshape(1, kw, 1, 1)
    oy = (_iota(oh, device) * (sh * Wp)).reshape(1, 1, oh, 1)
    ox = (_iota(ow, device) * sw).reshape(1, 1, 1, ow)
    return (((ky + kx) + oy) + ox).reshape(-1)


def _out_size(n, k, s, d, p_total):
    return (n + p_total - d * (k - 1) - 1) // s + 1


def _im2col(x, kernel, dilation, stride, out):
    """x (N, C, Hp, Wp), already padded -> (N, C, kh*kw, oh*ow) windows (a differentiable gather)."""
    N, C, Hp, Wp = x.shape
    K, L = kernel[0] * kernel[1], out[0] * out[1]
    x3 = x.reshape(N, C, Hp * Wp)
    idx = _window_offsets(Wp, kernel, dilation, stride, out, x.device).reshape(1, 1, K * L)
    return _ix.take_offsets(x3, [None, None, idx], (N, C, K * L)).reshape(N, C, K, L)


def _col2im(cols, Hp, Wp, kernel, dilation, stride, out):
    """cols (N, C, kh*kw, oh*ow) summed into a zero (N, C, Hp, Wp) image (a differentiable scatter-add)."""
    N, C = cols.shape[0], cols.shape[1]
    K, L = kernel[0] * kernel[1], out[0] * out[1]
    plane = _window_offsets(Wp, kernel, dilation, stride, out, cols.device).reshape(1, 1, K * L)
    base = (_iota(N * C, cols.device) * (Hp * Wp)).reshape(N, C, 1)
    lin = plane + base
    z = cols.new_zeros((N * C * Hp * Wp,))
    return _ix.index_put_flat(z, lin, cols.reshape(N, C, K * L), True).reshape(N, C, Hp, Wp)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    x, unb = _batchify(input, 2, "unfold") if input.dim() == 3 else (input, False)
    if x.dim() != 4:
        raise RuntimeError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.dim()}D)")
    k, d, p, s = _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    N, C, H, W = x.shape
    x = _pad_constant(x, (p[1], p[1], p[0], p[0]))
    out = (_out_size(H, k[0], s[0], d[0], 2 * p[0]), _out_size(W, k[1], s[1], d[1], 2 * p[1]))
    cols = _im2col(x, k, d, s, out).reshape(N, C * k[0] * k[1], out[0] * out[1])
    return cols.squeeze(0) if unb else cols


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    unb = input.dim() == 2
    x = input.unsqueeze(0) if unb else input
    o, k, d, p, s = _pair(output_size), _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    N, CK, L = x.shape
    K = k[0] * k[1]
    if CK % K:
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={CK} and kernel_size={k}")
    out = (_out_size(o[0], k[0], s[0], d[0], 2 * p[0]), _out_size(o[1], k[1], s[1], d[1], 2 * p[1]))
    if out[0] * out[1] != L:
        raise RuntimeError(f"Given output_size={o}, kernel_size={k}, dilation={d}, padding={p}, stride={s}, "
                           f"expected size of input's dimension 2 to match the calculated number of sliding blocks "
                           f"{out[0]} * {out[1]} = {out[0] * out[1]}, but got input.size(2)={L}.")
    img = _col2im(x.reshape(N, CK // K, K, L), o[0] + 2 * p[0], o[1] + 2 * p[1], k, d, s, out)
    img = img[:, :, p[0]:p[0] + o[0], p[1]:p[1] + o[1]]
    return img.squeeze(0) if unb else img


# ---- convolution -----------------------------------------------------------------------------
def _conv_padding(padding, k, d, n_sp):
    """(per-dim (lo, hi)) for an int/tuple/'same'/'valid' padding."""
    if isinstance(padding, str):
        if padding == "valid":
            return [(0, 0)] * n_sp
        if padding == "same":
            out = []
            for kk, dd in zip(k, d):
                total = dd * (kk - 1)
                out.append((total // 2, total - total // 2))
            return out
        raise ValueError(f"Invalid padding string '{padding}'")
    p = _ntuple(n_sp)(padding)
    return [(v, v) for v in p]


def _conv2d_impl(x, weight, bias, stride, pads, dilation, groups, name, orig_shape):
    N, C, H, W = x.shape
    O, Cg, kh, kw = weight.shape
    if C != Cg * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {_shape_str(weight.shape)}, expected "
                           f"input{_shape_str(orig_shape)} to have {Cg * groups} channels, but got {C} channels "
                           "instead")
    if O % groups:
        raise RuntimeError("Given groups=%d, expected weight to be divisible by %d at dimension 0, but got weight of "
                           "size %s instead" % (groups, groups, _shape_str(weight.shape)))
    (pt, pb), (pl, pr) = pads
    Hp, Wp = H + pt + pb, W + pl + pr
    if Hp < dilation[0] * (kh - 1) + 1 or Wp < dilation[1] * (kw - 1) + 1:
        raise RuntimeError(f"Calculated padded input size per channel: ({Hp} x {Wp}). Kernel size: "
                           f"({dilation[0] * (kh - 1) + 1} x {dilation[1] * (kw - 1) + 1}). Kernel size can't be "
                           "greater than actual input size")
    if pt or pb or pl or pr:
        x = _pad_constant(x, (pl, pr, pt, pb))
    out = (_out_size(Hp, kh, stride[0], dilation[0], 0), _out_size(Wp, kw, stride[1], dilation[1], 0))
    L = out[0] * out[1]
    if kh == 1 and kw == 1 and stride == (1, 1):
        cols = x.reshape(N, C, 1, L)
    else:
        cols = _im2col(x, (kh, kw), dilation, stride, out)
    K = kh * kw
    if groups == 1:
        y = _la.matmul(weight.reshape(O, Cg * K), cols.reshape(N, Cg * K, L))
    else:
        y = _la.matmul(weight.reshape(groups, O // groups, Cg * K), cols.reshape(N, groups, Cg * K, L))
    y = y.reshape(N, O, out[0], out[1])
    if bias is not None:
        y = y + bias.reshape(1, O, 1, 1)
    return y


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    x, unb = _batchify(input, 2, "conv2d")
    k = tuple(weight.shape[2:])
    d = _pair(dilation)
    if isinstance(padding, str) and padding == "same" and _pair(stride) != (1, 1):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    pads = _conv_padding(padding, k, d, 2)
    y = _Convolution.call(x, weight, bias, _pair(stride), pads, d, groups, "conv2d", input.shape)
    return y.squeeze(0) if unb else y


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    x, unb = _batchify(input, 1, "conv1d")
    k = tuple(weight.shape[2:])
    d = _single(dilation)
    if isinstance(padding, str) and padding == "same" and _single(stride) != (1,):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    pads = [(0, 0)] + _conv_padding(padding, k, d, 1)
    y = _Convolution1d.call(x, weight, bias, (1,) + _single(stride), pads, (1,) + d, groups, "conv1d", input.shape)
    return y.squeeze(0) if unb else y


def _conv1d_impl(x, weight, bias, *args):
    return _conv2d_impl(x.unsqueeze(2), weight.unsqueeze(2), bias, *args).squeeze(2)


_Convolution = _node("ConvolutionBackward0", _conv2d_impl, optional=(2,))
_Convolution1d = _node("ConvolutionBackward0", _conv1d_impl, optional=(2,))


def _conv_transpose2d_impl(x, weight, bias, stride, padding, output_padding, groups, dilation, output_size=None):
    N, C, H, W = x.shape
    Cin, Og, kh, kw = weight.shape
    if C != Cin:
        raise RuntimeError(f"Given transposed=1, weight of size {_shape_str(weight.shape)}, expected input"
                           f"{_shape_str(x.shape)} to have {Cin} channels, but got {C} channels instead")
    O = Og * groups
    K, L = kh * kw, H * W
    Hout = (H - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kh - 1) + output_padding[0] + 1
    Wout = (W - 1) * stride[1] - 2 * padding[1] + dilation[1] * (kw - 1) + output_padding[1] + 1
    Hp, Wp = Hout + 2 * padding[0], Wout + 2 * padding[1]
    w = weight.reshape(groups, Cin // groups, Og * K).transpose(1, 2)  # (g, Og*K, Cin/g)
    cols = _la.matmul(w, x.reshape(N, groups, Cin // groups, L))  # (N, g, Og*K, L)
    img = _col2im(cols.reshape(N, O, K, L), Hp, Wp, (kh, kw), dilation, stride, (H, W))
    if padding[0] or padding[1]:
        img = img[:, :, padding[0]:padding[0] + Hout, padding[1]:padding[1] + Wout]
    if bias is not None:
        img = img + bias.reshape(1, O, 1, 1)
    return img


def _output_padding(input_size, output_size, stride, padding, kernel, dilation, n_sp):
    if output_size is None:
        return (0,) * n_sp
    output_size = list(output_size)[-n_sp:]
    res = []
    for d in range(n_sp):
        min_size = (input_size[d] - 1) * stride[d] - 2 * padding[d] + dilation[d] * (kernel[d] - 1) + 1
        max_size = min_size + stride[d] - 1
        if not (min_size <= output_size[d] <= max_size):
            raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {min_size} to "
                             f"{max_size} (for an input of {list(input_size)})")
        res.append(output_size[d] - min_size)
    return tuple(res)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    x, unb = _batchify(input, 2, "conv_transpose2d")
    y = _ConvTranspose.call(x, weight, bias, _pair(stride), _pair(padding), _pair(output_padding), groups,
                            _pair(dilation))
    return y.squeeze(0) if unb else y


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    x, unb = _batchify(input, 1, "conv_transpose1d")
    y = _ConvTranspose1d.call(x, weight, bias, (1,) + _single(stride), (0,) + _single(padding),
                              (0,) + _single(output_padding), groups, (1,) + _single(dilation))
    return y.squeeze(0) if unb else y


def _conv_transpose1d_impl(x, weight, bias, *args):
    return _conv_transpose2d_impl(x.unsqueeze(2), weight.unsqueeze(2), bias, *args).squeeze(2)


_ConvTranspose = _node("ConvolutionBackward0", _conv_transpose2d_impl, optional=(2,))
_ConvTranspose1d = _node("ConvolutionBackward0", _conv_transpose1d_impl, optional=(2,))


# ---- pooling ---------------------------------------------------------------------------------
def _pool_out(n, k, s, p, d, ceil_mode):
    num = n + 2 * p - d * (k - 1) - 1
    if ceil_mode:
        o = -(-num // s) + 1
        if (o - 1) * s >= n + p:
            o -= 1
    else:
        o = num // s + 1
    return o


def _pool_setup(input, kernel_size, stride, padding, dilation, ceil_mode, name):
    x, unb = _batchify(input, 2, name)
    k = _pair(kernel_size)
    s = _pair(stride) if stride not in (None, [], ()) else k
    p, d = _pair(padding), _pair(dilation)
    for i in range(2):
        if p[i] > k[i] // 2:
            raise RuntimeError(f"{name}: pad should be at most half of effective kernel size, but got pad={p[i]}, "
                               f"kernel_size={k[i]} and dilation={d[i]}" if name.startswith("max") else
                               "pad should be at most half of kernel size, but got pad=%d and kernel_size=%d"
                               % (p[i], k[i]))
    N, C, H, W = x.shape
    out = (_pool_out(H, k[0], s[0], p[0], d[0], ceil_mode), _pool_out(W, k[1], s[1], p[1], d[1], ceil_mode))
    if out[0] <= 0 or out[1] <= 0:
        raise RuntimeError(f"Given input size: ({C}x{H}x{W}). Calculated output size: ({C}x{out[0]}x{out[1]}). "
                           "Output size is too small")
    # extra padding at the end for ceil_mode windows that run past the input
    extra = [max(0, (out[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 - ((H, W)[i] + 2 * p[i])) for i in range(2)]
    return x, unb, k, s, p, d, out, extra


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    setup = _pool_setup(input, kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d")
    return _MaxPool2d.call(input, setup[2:], return_indices)


def _max_pool2d_impl(input, setup, return_indices):
    x, unb = _batchify(input, 2, "max_pool2d")
    k, s, p, d, out, extra = setup
    N, C, H, W = x.shape
    if p[0] or p[1] or extra[0] or extra[1]:
        x = _pad_constant(x, (p[1], p[1] + extra[1], p[0], p[0] + extra[0]), -math.inf)
    win = _im2col(x, k, d, s, out)  # (N, C, K, L)
    vals, arg = _red.max(win, 2)
    vals = vals.reshape(N, C, out[0], out[1])
    if not return_indices:
        return vals.squeeze(0) if unb else vals
    dev = input.device
    ky = _pw.floor_divide(arg, k[1]) * d[0]
    kx = _pw.remainder(arg, k[1]) * d[1]
    oy = (_iota(out[0], dev) * s[0] - p[0]).reshape(out[0], 1).expand(out[0], out[1]).reshape(-1)
    ox = (_iota(out[1], dev) * s[1] - p[1]).reshape(1, out[1]).expand(out[0], out[1]).reshape(-1)
    ind = ((oy + ky) * W + ox + kx).reshape(N, C, out[0], out[1])
    if unb:
        return vals.squeeze(0), ind.squeeze(0)
    return vals, ind


_MaxPool2d = _node("MaxPool2DWithIndicesBackward0", _max_pool2d_impl)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
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


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    setup = _pool_setup(input, kernel_size, stride, padding, 1, ceil_mode, "avg_pool2d")
    return _AvgPool2d.call(input, setup[2:], count_include_pad, divisor_override)


def _avg_pool2d_impl(input, setup, count_include_pad, divisor_override):
    x, unb = _batchify(input, 2, "avg_pool2d")
    k, s, p, d, out, extra = setup
    N, C, H, W = x.shape
    if p[0] or p[1] or extra[0] or extra[1]:
        x = _pad_constant(x, (p[1], p[1] + extra[1], p[0], p[0] + extra[0]), 0.0)
    win = _im2col(x, k, (1, 1), s, out)
    total = win.sum(2).reshape(N, C, out[0], out[1])
    if divisor_override:
        y = total / divisor_override
    else:
        dh = _avg_divisor(H, k[0], s[0], p[0], out[0], count_include_pad)
        dw = _avg_divisor(W, k[1], s[1], p[1], out[1], count_include_pad)
        if len(set(dh)) == 1 and len(set(dw)) == 1:
            y = total / (dh[0] * dw[0])
        else:
            div = _tensor([[a * b for b in dw] for a in dh], dtype=total.dtype, device=total.device)
            y = total / div
    return y.squeeze(0) if unb else y


_AvgPool2d = _node("AvgPool2DBackward0", _avg_pool2d_impl)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
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


def _adaptive_bounds(n, o):
    return [((i * n) // o, -(-((i + 1) * n) // o)) for i in range(o)]


def _adaptive_matrix(n, o, dtype, device):
    rows = []
    for s, e in _adaptive_bounds(n, o):
        rows.append([1.0 / (e - s) if s <= j < e else 0.0 for j in range(n)])
    return _tensor(rows, dtype=dtype, device=device)


def _adaptive_sizes(output_size, shape, n_sp):
    o = list(_ntuple(n_sp)(output_size) if not isinstance(output_size, (list, tuple)) else output_size)
    if len(o) == 1 and n_sp > 1:
        o = o * n_sp
    return [shape[-n_sp + i] if o[i] is None else int(o[i]) for i in range(n_sp)]


def adaptive_avg_pool2d(input, output_size):
    if input.dim() not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(input.shape)}")
    H, W = input.shape[-2], input.shape[-1]
    oh, ow = _adaptive_sizes(output_size, input.shape, 2)
    if oh == 1 and ow == 1:
        return input.mean((-2, -1), keepdim=True)
    if H % oh == 0 and W % ow == 0:
        lead = tuple(input.shape[:-2])
        x = input.reshape(lead + (oh, H // oh, ow, W // ow))
        return x.mean((-3, -1))
    x = input
    if oh != H:
        x = _la.matmul(_adaptive_matrix(H, oh, input.dtype, input.device), x)
    if ow != W:
        x = _la.matmul(x, _adaptive_matrix(W, ow, input.dtype, input.device).t())
    return x


def adaptive_avg_pool1d(input, output_size):
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1,) + _single(output_size)).squeeze(-2)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    x, unb = _batchify(input, 2, "adaptive_max_pool2d")
    N, C, H, W = x.shape
    oh, ow = _adaptive_sizes(output_size, x.shape, 2)
    bh, bw = _adaptive_bounds(H, oh), _adaptive_bounds(W, ow)
    kh, kw = max(e - s for s, e in bh), max(e - s for s, e in bw)
    ih = [min(s + j, e - 1) for s, e in bh for j in range(kh)]
    iw = [min(s + j, e - 1) for s, e in bw for j in range(kw)]
    g = _gather_dim(_gather_dim(x, 2, _idx(ih, x.device)), 3, _idx(iw, x.device))
    g = g.reshape(N, C, oh, kh, ow, kw).permute(0, 1, 2, 4, 3, 5).reshape(N, C, oh, ow, kh * kw)
    vals, arg = _red.max(g, -1)
    if not return_indices:
        return vals.squeeze(0) if unb else vals
    rows = _idx(ih, x.device).reshape(oh, kh)
    cols = _idx(iw, x.device).reshape(ow, kw)
    ry = rows.reshape(oh, 1, kh, 1).expand(oh, ow, kh, kw).reshape(oh, ow, kh * kw)
    rx = cols.reshape(1, ow, 1, kw).expand(oh, ow, kh, kw).reshape(oh, ow, kh * kw)
    flat = (ry * W + rx).expand(N, C, oh, ow, kh * kw)
    ind = flat.gather(4, arg.unsqueeze(-1)).squeeze(-1)
    return (vals.squeeze(0), ind.squeeze(0)) if unb else (vals, ind)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    r = adaptive_max_pool2d(input.unsqueeze(-2), (1,) + _single(output_size), return_indices)
    if return_indices:
        return r[0].squeeze(-2), r[1].squeeze(-2)
    return r.squeeze(-2)


# ---- normalization ---------------------------------------------------------------------------
def _bshape(t, ndim):
    return t.reshape((1, -1) + (1,) * (ndim - 2))


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-5):
    nd = input.dim()
    if nd < 2:
        raise ValueError(f"expected 2D or 3D input (got {nd}D input)")
    C = input.shape[1]
    if training:
        n = input.numel() // C
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
    elif running_mean is None or running_var is None:
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    update = None
    if training and (running_mean is not None or running_var is not None):
        update = _RunningStatsUpdate(running_mean, running_var, momentum, n)
    return _BatchNorm.call(input, weight, bias, running_mean, running_var, training, eps, update)


class _RunningStatsUpdate:
    """Folds a batch's statistics into the running ones, once: batch norm's only side effect (a
    replay of the node for double backward calls it again and nothing happens). It runs as soon as
    the statistics exist, before the normalization, which lets the webgpu backend fuse more."""

    def __init__(self, running_mean, running_var, momentum, n):
        self.args = (running_mean, running_var, momentum, n)

    def __call__(self, mean, var):
        if self.args is None:
            return
        running_mean, running_var, momentum, n = self.args
        self.args = None
        with grad_mode.no_grad():
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_(mean.detach() * momentum)
            if running_var is not None:
                running_var.mul_(1 - momentum).add_(var.detach() * (momentum * n / (n - 1)))


def _batch_norm_impl(input, weight, bias, running_mean, running_var, training, eps, update):
    nd = input.dim()
    if training:
        dims = [0] + list(range(2, nd))
        mean = input.mean(dims)
        var = input.var(dims, unbiased=False)
        if update is not None:
            update(mean, var)
    else:
        mean, var = running_mean, running_var
    y = (input - _bshape(mean, nd)) * _bshape((var + eps).rsqrt(), nd)
    if weight is not None:
        y = y * _bshape(weight, nd)
    if bias is not None:
        y = y + _bshape(bias, nd)
    return y


# the running statistics are inputs PyTorch's node does not differentiate
_BatchNorm = _node("NativeBatchNormBackward0", _batch_norm_impl, optional=(1, 2), no_edges=(3, 4))


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    nd = input.dim()
    N, C = input.shape[0], input.shape[1]
    if use_input_stats:
        dims = list(range(2, nd))
        mean = input.mean(dims, keepdim=True)
        var = input.var(dims, unbiased=False, keepdim=True)
        if running_mean is not None:
            n = input[0, 0].numel()
            with grad_mode.no_grad():
                running_mean.mul_(1 - momentum).add_(mean.detach().reshape(N, C).mean(0) * momentum)
                running_var.mul_(1 - momentum).add_(var.detach().reshape(N, C).mean(0) * (momentum * n / (n - 1)))
        y = (input - mean) * (var + eps).rsqrt()
    else:
        y = (input - _bshape(running_mean, nd)) * _bshape((running_var + eps).rsqrt(), nd)
    if weight is not None:
        y = y * _bshape(weight, nd)
    if bias is not None:
        y = y + _bshape(bias, nd)
    return y


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    normalized_shape = tuple(normalized_shape) if isinstance(normalized_shape, (list, tuple)) \
        else (int(normalized_shape),)
    n = len(normalized_shape)
    if tuple(input.shape[input.dim() - n:]) != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*, {', '.join(str(s) for s in normalized_shape)}], but got input of size"
                           f"{input.shape}")
    return _LayerNorm.call(input, normalized_shape, weight, bias, eps)


def _layer_norm_impl(input, normalized_shape, weight, bias, eps):
    dims = list(range(-len(normalized_shape), 0))
    mean = input.mean(dims, keepdim=True)
    var = input.var(dims, unbiased=False, keepdim=True)
    y = (input - mean) * (var + eps).rsqrt()
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


_LayerNorm = _node("NativeLayerNormBackward0", _layer_norm_impl, optional=(2, 3))


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    C = input.shape[1]
    if C % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {input.shape} and num_groups={num_groups}")
    return _GroupNorm.call(input, weight, bias, num_groups, eps)


def _group_norm_impl(input, weight, bias, num_groups, eps):
    x = input.reshape(input.shape[0], num_groups, -1)
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    y = ((x - mean) * (var + eps).rsqrt()).reshape(input.shape)
    nd = input.dim()
    if weight is not None:
        y = y * _bshape(weight, nd)
    if bias is not None:
        y = y + _bshape(bias, nd)
    return y


_GroupNorm = _node("NativeGroupNormBackward0", _group_norm_impl, optional=(1, 2))


def rms_norm(input, normalized_shape, weight=None, eps=None):
    normalized_shape = tuple(normalized_shape) if isinstance(normalized_shape, (list, tuple)) \
        else (int(normalized_shape),)
    n = len(normalized_shape)
    if eps is None:
        from .. import finfo
        eps = finfo(input.dtype).eps
    dims = list(range(-n, 0))
    y = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    return y * weight if weight is not None else y


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    nd = input.dim()
    div = (input * input).unsqueeze(1)
    if nd == 3:
        div = _pad_constant(div, (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.shape
        div = div.reshape(sizes[0], 1, sizes[1], sizes[2], -1)
        div = _pad_constant(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        N, _, Cp, H, R = div.shape
        div = avg_pool2d(div.reshape(N, Cp, H * R).unsqueeze(1), (size, 1), stride=1).squeeze(1)
        div = div.reshape(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    denom = _red.norm(input, p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input / denom


# ---- dropout ---------------------------------------------------------------------------------
def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _apply_mask(input, mask, inplace):
    if inplace:
        return input.mul_(mask)
    return input * mask


def dropout(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input.mul_(0.0) if inplace else input * 0.0
    keep = _rand(input.shape, dtype=input.dtype if input.dtype.is_floating_point else None, device=input.device)
    mask = (keep >= p).to(input.dtype) * (1.0 / (1.0 - p))
    return _apply_mask(input, mask, inplace)


def _feature_dropout(input, p, training, inplace, batched_dims):
    _check_p(p)
    if not training or p == 0.0:
        return input
    nd = input.dim()
    lead = input.shape[:nd - batched_dims]
    shape = tuple(lead) + (1,) * batched_dims
    if p == 1.0:
        return input.mul_(0.0) if inplace else input * 0.0
    keep = _rand(shape, dtype=input.dtype, device=input.device)
    mask = (keep >= p).to(input.dtype) * (1.0 / (1.0 - p))
    return _apply_mask(input, mask, inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 1)


def dropout2d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 2)


def dropout3d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 3)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    if not training or p == 0.0:
        return input
    alpha_p = -1.7580993408473766
    keep = (_rand(input.shape, dtype=input.dtype, device=input.device) >= p).to(input.dtype)
    a = ((1 - p) * (1 + p * alpha_p ** 2)) ** -0.5
    b = -a * alpha_p * p
    return (input * keep + alpha_p * (1 - keep)) * a + b


feature_alpha_dropout = alpha_dropout


# ---- sparse ----------------------------------------------------------------------------------
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    if input.dtype.is_floating_point:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {input.type()} instead (while checking arguments for embedding)")
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings"
            padding_idx = weight.size(0) + padding_idx
    if max_norm is not None:
        _embedding_renorm(weight, input.reshape(-1), max_norm, norm_type)
    return _Embedding.call(weight, input, padding_idx)


def _embedding_impl(weight, input, padding_idx):
    out = _ix.index_select(weight, 0, input.reshape(-1)).reshape(tuple(input.shape) + (weight.shape[1],))
    if padding_idx is not None and out.requires_grad:
        keep = (input != padding_idx).unsqueeze(-1)
        out = _pw.where(keep, out, out.detach())
    return out


_Embedding = _node("EmbeddingBackward0", _embedding_impl)


def _embedding_renorm(weight, idx, max_norm, norm_type):
    with grad_mode.no_grad():
        rows = _red.unique(idx)
        sel = _ix.index_select(weight, 0, rows)
        norms = _red.norm(sel, norm_type, 1, keepdim=True)
        scale = _pw.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        w = weight.detach()
        w.copy_(_ix.index_copy(w, 0, rows, sel * scale))


def one_hot(tensor, num_classes=-1):
    if tensor.dtype is not int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        num_classes = int(tensor.max().item()) + 1 if tensor.numel() else 0
    return (tensor.unsqueeze(-1) == _iota(num_classes, tensor.device)).to(int64)


# ---- resampling ------------------------------------------------------------------------------
def _interp_scales(in_sizes, size, scale_factor, recompute_scale_factor, n_sp):
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        out = list(_ntuple(n_sp)(size))
        if len(out) != n_sp:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input with "
                             f"spatial dimensions of {list(in_sizes)} and output size of {size}. Please provide "
                             "input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
                             "format.")
        return out, [None] * n_sp
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    sf = list(scale_factor) if isinstance(scale_factor, (list, tuple)) else [float(scale_factor)] * n_sp
    out = [int(math.floor(float(n) * float(f))) for n, f in zip(in_sizes, sf)]
    return out, ([None] * n_sp if recompute_scale_factor else [float(f) for f in sf])


def _src_scale(n_in, n_out, sf, align_corners):
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / sf if sf is not None and sf > 0 else n_in / n_out


def _linear_matrix(n_in, n_out, sf, align_corners, dtype, device):
    scale = _src_scale(n_in, n_out, sf, align_corners)
    rows = []
    for i in range(n_out):
        if align_corners:
            src = i * scale
        else:
            src = max(scale * (i + 0.5) - 0.5, 0.0)
        i0 = min(int(math.floor(src)), n_in - 1)
        i1 = min(i0 + 1, n_in - 1)
        l1 = src - i0
        row = [0.0] * n_in
        row[i0] += 1.0 - l1
        row[i1] += l1
        rows.append(row)
    return _tensor(rows, dtype=dtype, device=device)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    n_sp = input.dim() - 2
    if n_sp < 1:
        raise ValueError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the "
                         f"modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact (got "
                         f"{mode})")
    if mode in ("nearest", "area", "nearest-exact") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                         "bicubic | trilinear")
    if antialias:
        raise NotImplementedError("webtorch: interpolate(antialias=True) is not implemented")
    in_sizes = list(input.shape[2:])
    out_sizes, sfs = _interp_scales(in_sizes, size, scale_factor, recompute_scale_factor, n_sp)
    x = input
    if mode in ("nearest", "nearest-exact"):
        for i in range(n_sp):
            n_in, n_out = in_sizes[i], out_sizes[i]
            if n_in == n_out and sfs[i] in (None, 1.0):
                continue
            scale = 1.0 / sfs[i] if sfs[i] is not None else n_in / n_out
            off = 0.5 if mode == "nearest-exact" else 0.0
            src = [min(int(math.floor((j + off) * scale)), n_in - 1) for j in range(n_out)]
            x = _gather_dim(x, 2 + i, _idx(src, x.device))
        return x
    if mode == "area":
        return {1: adaptive_avg_pool1d, 2: adaptive_avg_pool2d}[n_sp](input, out_sizes)
    want = {"linear": 1, "bilinear": 2, "trilinear": 3}.get(mode)
    if want is None:
        raise NotImplementedError(f"webtorch: interpolate mode '{mode}' is not implemented")
    if want != n_sp:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {want + 2}D input")
    ac = bool(align_corners)
    for i in range(n_sp):
        A = _linear_matrix(in_sizes[i], out_sizes[i], sfs[i], ac, x.dtype, x.device)
        d = 2 + i
        x = _la.matmul(A, x.movedim(d, -2)).movedim(-2, d)
    return x


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    return interpolate(input, size, scale_factor, mode, align_corners)


def pixel_shuffle(input, upscale_factor):
    r = upscale_factor
    *lead, C, H, W = input.shape
    x = input.reshape(tuple(lead) + (C // (r * r), r, r, H, W))
    n = len(lead)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(tuple(lead) + (C // (r * r), H * r, W * r))


def pixel_unshuffle(input, downscale_factor):
    r = downscale_factor
    *lead, C, H, W = input.shape
    n = len(lead)
    x = input.reshape(tuple(lead) + (C, H // r, r, W // r, r))
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(tuple(lead) + (C * r * r, H // r, W // r))


# ---- attention -------------------------------------------------------------------------------
def _neg_inf_mask(mask, dtype):
    """A bool mask (True = masked out) as an additive float mask."""
    return _zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(mask, -math.inf)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    L, S, E = query.size(-2), key.size(-2), query.size(-1)
    scale_factor = 1.0 / math.sqrt(E) if scale is None else scale
    if enable_gqa and query.dim() >= 3 and key.size(-3) != query.size(-3):
        rep = query.size(-3) // key.size(-3)
        key = key.repeat_interleave(rep, dim=-3)
        value = value.repeat_interleave(rep, dim=-3)
    attn = _la.matmul(query, key.transpose(-2, -1)) * scale_factor
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")
        causal = _shape.tril(_full((L, S), True, dtype=bool_, device=query.device))
        attn = attn.masked_fill(causal.logical_not(), -math.inf)
    if attn_mask is not None:
        if attn_mask.dtype is bool_:
            attn = attn.masked_fill(attn_mask.logical_not(), -math.inf)
        else:
            attn = attn + attn_mask
        # PyTorch's safe softmax: a fully masked row attends to nothing (zeros, not NaN)
        dead = (attn == -math.inf).all(-1, keepdim=True)
        attn = _red.softmax(_pw.where(dead, 0.0, attn), -1)
        attn = _pw.where(dead, 0.0, attn)
    else:
        attn = _red.softmax(attn, -1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return _la.matmul(attn, value)


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    if mask is None:
        return None
    if mask.dtype is bool_:
        return _neg_inf_mask(mask, target_type)
    if not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    return mask


def _in_projection_packed(q, k, v, w, b=None):
    E = q.size(-1)
    if k is v:
        if q is k:
            proj = linear(q, w, b)
            proj = proj.unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([E, E * 2])
        b_q, b_kv = (None, None) if b is None else b.split([E, E * 2])
        q_proj = linear(q, w_q, b_q)
        kv_proj = linear(k, w_kv, b_kv)
        kv_proj = kv_proj.unflatten(-1, (2, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return q_proj, kv_proj[0], kv_proj[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    is_batched = query.dim() == 3
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", None, "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype)
        if key_padding_mask is not None:
            is_causal = False
    assert embed_dim == embed_dim_to_check, \
        f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
    head_dim = embed_dim // num_heads
    assert head_dim * num_heads == embed_dim, f"embed_dim {embed_dim} not divisible by num_heads {num_heads}"
    if not use_separate_proj_weight:
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = linear(query, q_proj_weight, b_q), linear(key, k_proj_weight, b_k), linear(value, v_proj_weight, b_v)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    if bias_k is not None and bias_v is not None:
        k = _shape.cat([k, bias_k.repeat(1, bsz, 1)])
        v = _shape.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = (k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_k is None else static_k)
    v = (v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_v is None else static_v)
    if add_zero_attn:
        zshape = (bsz * num_heads, 1, head_dim)
        k = _shape.cat([k, _zeros(zshape, dtype=k.dtype, device=k.device)], 1)
        v = _shape.cat([v, _zeros(zshape, dtype=v.dtype, device=v.device)], 1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.size(1)
    if key_padding_mask is not None:
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1) \
            .reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    if need_weights:
        B, Nt, E = q.shape
        q_scaled = q * math.sqrt(1.0 / float(E))
        if attn_mask is not None:
            w = _la.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            w = _la.bmm(q_scaled, k.transpose(-2, -1))
        w = _red.softmax(w, -1)
        if dropout_p > 0.0:
            w = dropout(w, p=dropout_p)
        out = _la.bmm(w, v)
        out = out.transpose(0, 1).contiguous().reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, out.size(1))
        w = w.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            w = w.mean(1)
        if not is_batched:
            out, w = out.squeeze(1), w.squeeze(0)
        return out, w
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal and attn_mask is None)
    out = out.permute(2, 0, 1, 3).contiguous().reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, out.size(1))
    if not is_batched:
        out = out.squeeze(1)
    return out, None


# ---- activations -----------------------------------------------------------------------------
def _act(input, inplace, fn):
    """fn(input), written into input when inplace (computed from a copy when the graph is recorded, so
    that the values fn's backward saved are not the ones being overwritten)."""
    if not inplace:
        return fn(input)
    if input.requires_grad and grad_mode.is_grad_enabled():
        _check_leaf_inplace(input)
        return _inplace_result(input, fn(input.clone()))  # input's history becomes fn's node
    return input.copy_(fn(input))


def relu(input, inplace=False):
    return input.relu_() if inplace else input.relu()


def relu_(input):
    return input.relu_()


class _Activation(Function):
    """An activation as one graph node named as PyTorch's (GeluBackward0, ...): forward runs `fn`
    (composed of pointwise ops), backward its derivative `grad(g, x, *params)`, written once in
    webtorch ops (so it runs on every backend and differentiates again)."""

    @staticmethod
    def forward(ctx, x, *params):
        ctx.save_for_backward(x)
        ctx.params = params
        return ctx._fn.fn(x, *params)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return (ctx._fn.grad(g, x, *ctx.params),) + (None,) * len(ctx.params)


def _activation(name, fn, grad, inplace_name=None):
    """`call(input, *params, inplace=False)`: fn recorded as one node `name` (`inplace_name` for the
    in-place form, where PyTorch numbers it apart), written into input when inplace."""
    def node(nm):
        return type(nm[:nm.index("Backward")], (_Activation,), {
            "__module__": __name__, "_node_name": nm, "fn": staticmethod(fn), "grad": staticmethod(grad)})
    out_of_place = node(name)
    in_place = node(inplace_name) if inplace_name else out_of_place

    def call(input, *params, inplace=False):
        F = in_place if inplace else out_of_place
        return _act(input, inplace, lambda x: F.apply(x, *params) if _recording(x) else fn(x, *params))
    return call


_threshold = _activation("ThresholdBackward0", lambda x, th, v: _pw.where(x > th, x, v),
                         lambda g, x, th, v: _pw.where(x > th, g, 0.0))


def threshold(input, threshold, value, inplace=False):
    return _threshold(input, threshold, value, inplace=inplace)


def threshold_(input, threshold, value):
    return _threshold(input, threshold, value, inplace=True)


# PyTorch passes no gradient at the bounds themselves (x <= min_val or x >= max_val)
_hardtanh = _activation("HardtanhBackward0", lambda x, lo, hi: x.clamp(lo, hi),
                        lambda g, x, lo, hi: _pw.where((x > lo) & (x < hi), g, 0.0))


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _hardtanh(input, min_val, max_val, inplace=inplace)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, True)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


_leaky_relu = _activation("LeakyReluBackward0", lambda x, a: _pw.where(x > 0, x, x * a),
                          lambda g, x, a: _pw.where(x > 0, g, g * a), inplace_name="LeakyReluBackward1")


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _leaky_relu(input, negative_slope, inplace=inplace)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, True)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _gelu_fn(x, approximate):
    if approximate == "tanh":
        inner = (x + 0.044715 * x * x * x) * _SQRT_2_OVER_PI
        return 0.5 * x * (1.0 + inner.tanh())
    return 0.5 * x * (1.0 + (x * _INV_SQRT_2).erf())


def _gelu_grad(g, x, approximate):
    if approximate == "tanh":
        x2 = x * x
        t = ((x + 0.044715 * x2 * x) * _SQRT_2_OVER_PI).tanh()
        return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * ((1.0 + 0.134145 * x2) * _SQRT_2_OVER_PI))
    # Phi(x) + x phi(x), with phi(x) = exp(-u^2) / sqrt(2 pi), u = x / sqrt(2)
    u = x * _INV_SQRT_2
    return g * ((u.erf() * 0.5 + 0.5) + (x * _INV_SQRT_2PI) / (u * u).exp())


_gelu = _activation("GeluBackward0", _gelu_fn, _gelu_grad)


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh.")
    return _gelu(input, approximate)


def _silu_grad(g, x):
    s = x.sigmoid()
    return g * (s * (1.0 + x * (1.0 - s)))


_silu = _activation("SiluBackward0", lambda x: x * x.sigmoid(), _silu_grad)


def silu(input, inplace=False):
    return _silu(input, inplace=inplace)


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


_hardswish = _activation("HardswishBackward0", lambda x: x * (x + 3.0).clamp(0.0, 6.0) / 6.0,
                         lambda g, x: _pw.where(x < -3.0, 0.0, _pw.where(x <= 3.0, g * (x / 3.0 + 0.5), g)))


def hardswish(input, inplace=False):
    return _hardswish(input, inplace=inplace)


_hardsigmoid = _activation("HardsigmoidBackward0", lambda x: (x + 3.0).clamp(0.0, 6.0) / 6.0,
                           lambda g, x: _pw.where((x > -3.0) & (x < 3.0), g / 6.0, 0.0))


def hardsigmoid(input, inplace=False):
    return _hardsigmoid(input, inplace=inplace)


_elu = _activation("EluBackward0", lambda x, a, s: _pw.where(x > 0, x, x.clamp_max(0.0).expm1() * a) * s
                   if s != 1 else _pw.where(x > 0, x, x.clamp_max(0.0).expm1() * a),
                   lambda g, x, a, s: _pw.where(x > 0, g * s, g * (x.clamp_max(0.0).exp() * (a * s))),
                   inplace_name="EluBackward1")


def elu(input, alpha=1.0, inplace=False):
    return _elu(input, alpha, 1.0, inplace=inplace)


def elu_(input, alpha=1.0):
    return elu(input, alpha, True)


_celu = _activation("CeluBackward0", lambda x, a: _pw.where(x > 0, x, (x.clamp_max(0.0) / a).expm1() * a),
                    lambda g, x, a: _pw.where(x > 0, g, g * (x.clamp_max(0.0) / a).exp()),
                    inplace_name="CeluBackward1")


def celu(input, alpha=1.0, inplace=False):
    return _celu(input, alpha, inplace=inplace)


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def selu(input, inplace=False):
    return _elu(input, _SELU_ALPHA, _SELU_SCALE, inplace=inplace)


def _softplus_fn(x, beta, threshold):
    bx = x * beta
    soft = bx.clamp_max(threshold).exp().log1p() / beta
    return _pw.where(bx > threshold, x, soft)


def _softplus_grad(g, x, beta, threshold):
    bx = x * beta
    return _pw.where(bx > threshold, g, g * bx.sigmoid())


_softplus = _activation("SoftplusBackward0", _softplus_fn, _softplus_grad)


def softplus(input, beta=1.0, threshold=20.0):
    return _softplus(input, beta, threshold)


def _mish_grad(g, x):
    t = _softplus_fn(x, 1.0, 20.0).tanh()
    return g * (t + x * (1.0 - t * t) * x.sigmoid())


_mish = _activation("MishBackward0", lambda x: x * _softplus_fn(x, 1.0, 20.0).tanh(), _mish_grad)


def mish(input, inplace=False):
    return _mish(input, inplace=inplace)


def softsign(input):
    return input / (1 + input.abs())


# log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)); its derivative is sigmoid(-x)
_logsigmoid = _activation("LogSigmoidBackward0", lambda x: x.clamp_max(0.0) - (-x.abs()).exp().log1p(),
                          lambda g, x: g * (-x).sigmoid())


def logsigmoid(input):
    return _logsigmoid(input)


def tanhshrink(input):
    return input - input.tanh()


def softshrink(input, lambd=0.5):
    return _pw.where(input > lambd, input - lambd, _pw.where(input < -lambd, input + lambd, input * 0))


def hardshrink(input, lambd=0.5):
    return _pw.where((input > lambd) | (input < -lambd), input, input * 0)


def glu(input, dim=-1):
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def prelu(input, weight):
    w = weight
    if weight.numel() != 1 and input.dim() >= 2:
        w = weight.reshape((1, -1) + (1,) * (input.dim() - 2))
    return _pw.where(input > 0, input, input * w)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    if training:
        a = _rand(input.shape, dtype=input.dtype, device=input.device) * (upper - lower) + lower
        return _act(input, inplace, lambda x: _pw.where(x >= 0, x, x * a))
    return leaky_relu(input, (lower + upper) / 2, inplace)


def _get_softmax_dim(name, ndim):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                  "as an argument.", stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim())
    return _red.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim())
    return _red.log_softmax(input, dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim())
    return _red.softmax(-input, dim, dtype=dtype)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    u = _rand(logits.shape, dtype=logits.dtype, device=logits.device)
    gumbels = -(-(u.clamp_min(1e-20)).log()).log()
    y_soft = _red.softmax((logits + gumbels) / tau, dim)
    if hard:
        index = y_soft.argmax(dim, keepdim=True)
        y_hard = _zeros(logits.shape, dtype=logits.dtype, device=logits.device).scatter(dim, index, 1.0)
        return y_hard - y_soft.detach() + y_soft
    return y_soft


# ---- losses ----------------------------------------------------------------------------------
def _legacy_reduction(size_average, reduce, reduction):
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    if reduce:
        return "sum"
    return "none"


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_sizes(input, target, name=None):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=3)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_sizes(input, target)
    if weight is not None:
        d = input - target
        return _reduce(d * d * weight, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _MseLoss.call(input, target, reduction)


def _mse_loss_impl(input, target, reduction):
    d = input - target
    return _reduce(d * d, reduction)


_MseLoss = _node("MseLossBackward0", _mse_loss_impl)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_sizes(input, target)
    loss = (input - target).abs()
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_sizes(input, target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:  # l1_loss, as in PyTorch
        return _reduce((input - target).abs(), reduction)
    return _SmoothL1Loss.call(input, target, reduction, beta)


def _smooth_l1_loss_impl(input, target, reduction, beta):
    d = (input - target).abs()
    return _reduce(_pw.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    _check_sizes(input, target)
    return _HuberLoss.call(input, target, reduction, delta, weight)


def _huber_loss_impl(input, target, reduction, delta, weight):
    d = (input - target).abs()
    loss = _pw.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


_SmoothL1Loss = _node("SmoothL1LossBackward0", _smooth_l1_loss_impl)
_HuberLoss = _node("HuberLossBackward0", _huber_loss_impl, no_edges=(4,))


def _class_dim(input):
    return 0 if input.dim() == 1 else 1


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if input.dim() == 1:
        if target.dim() != 0:
            raise ValueError(f"Expected input batch_size ({1}) to match target batch_size ({target.shape[0]}).")
    elif input.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0]}).")
    if target.dtype.is_floating_point:
        raise RuntimeError(f"expected scalar type Long but found {_tname(target.dtype)}")
    C = input.shape[0 if input.dim() == 1 else 1]
    if weight is not None and weight.numel() != C:
        raise RuntimeError(f"weight tensor should be defined either for all {C} classes or no classes but got weight "
                           f"tensor of shape: {list(weight.shape)}")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    node = _NllLoss2d if input.dim() == 4 else _NllLoss
    return node.call(input, target, weight, ignore_index, reduction)


def _nll_loss_impl(input, target, weight, ignore_index, reduction):
    squeeze = input.dim() == 1
    if squeeze:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    valid = target != ignore_index
    t = _pw.where(valid, target, 0)
    # PyTorch's error for an out-of-range target (on webgpu raised at the next sync point)
    with _ix.range_error(lambda bad: IndexError(f"Target {bad} is out of bounds.")):
        picked = input.gather(1, t.unsqueeze(1)).squeeze(1)
    if weight is not None:
        w = _ix.index_select(weight, 0, t.reshape(-1)).reshape(t.shape) * valid
    else:
        w = valid.to(input.dtype)
    loss = -picked * w
    if squeeze:
        loss, w = loss.squeeze(0), w.squeeze(0)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / w.sum()


# the target and the class weights are not differentiated
_NllLoss = _node("NllLossBackward0", _nll_loss_impl, no_edges=(1, 2))
_NllLoss2d = _node("NllLoss2DBackward0", _nll_loss_impl, no_edges=(1, 2))


def _tname(dt):
    from ..ops._common import name_of
    return name_of(dt)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    cd = _class_dim(input)
    C = input.shape[cd]
    logp = log_softmax(input, cd)
    if target.dtype.is_floating_point:  # class probabilities
        if tuple(target.shape) != tuple(input.shape):
            raise RuntimeError(f"Expected target size {list(input.shape)}, got {list(target.shape)}")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / C
        prod = logp * target
        if weight is not None:
            prod = prod * weight.reshape((-1,) + (1,) * (input.dim() - cd - 1))
        loss = -prod.sum(cd)
        if reduction == "mean":
            return loss.sum() / (input.numel() // C) if input.numel() else loss.sum() * math.nan
        return _reduce(loss, reduction)
    nll = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    if label_smoothing <= 0:
        return nll
    valid = target != ignore_index
    if weight is not None:
        smooth = -(logp * weight.reshape((-1,) + (1,) * (input.dim() - cd - 1))).sum(cd)
    else:
        smooth = -logp.sum(cd)
    smooth = smooth * valid
    if reduction == "mean":
        if weight is not None:
            t = _pw.where(valid, target, 0)
            denom = (_ix.index_select(weight, 0, t.reshape(-1)).reshape(t.shape) * valid).sum()
        else:
            denom = valid.sum()
        ret = smooth.sum() / denom
    elif reduction == "sum":
        ret = smooth.sum()
    else:
        ret = smooth
    return (1 - label_smoothing) * nll + ret * (label_smoothing / C)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) "
                         "is deprecated. Please ensure they have the same size.")
    return _BinaryCrossEntropy.call(input, target, weight, reduction)


def _binary_cross_entropy_impl(input, target, weight, reduction):
    loss = -(target * input.log().clamp_min(-100.0) + (1 - target) * (1 - input).log().clamp_min(-100.0))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    return _BinaryCrossEntropyWithLogits.call(input, target, weight, pos_weight, reduction)


def _binary_cross_entropy_with_logits_impl(input, target, weight, pos_weight, reduction):
    # softplus(-x) computed stably: max(-x, 0) + log1p(exp(-|x|))
    sp = (-input).clamp_min(0.0) + (-input.abs()).exp().log1p()
    if pos_weight is not None:
        log_weight = (pos_weight - 1) * target + 1
        loss = (1 - target) * input + log_weight * sp
    else:
        loss = (1 - target) * input + sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


# class / positive weights are not differentiated
_BinaryCrossEntropy = _node("BinaryCrossEntropyBackward0", _binary_cross_entropy_impl, no_edges=(2,))
_BinaryCrossEntropyWithLogits = _node("BinaryCrossEntropyWithLogitsBackward0", _binary_cross_entropy_with_logits_impl,
                                      no_edges=(2, 3))


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      stacklevel=2)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _pw.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.size(0) if input.dim() else loss.sum()
    return _reduce(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _reduce((-target * input).exp().log1p(), reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0.0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    margin_clamp = (margin - input).clamp_min(0.0)
    out_margin = _pw.where(target != 1, margin_clamp, margin_clamp * 0)
    out_self = _pw.where(target != -1, input, input * 0)
    return _reduce(out_margin + out_self, reduction)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    w12 = (x1 * x2).sum(dim)
    n1 = (x1 * x1).sum(dim)
    n2 = (x2 * x2).sum(dim)
    return w12 / (n1 * n2).clamp_min(eps * eps).sqrt()


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    cos = cosine_similarity(input1, input2, dim=-1, eps=1e-12 ** 0.5)
    pos = 1 - cos
    neg = (cos - margin).clamp_min(0.0)
    loss = _pw.where(target == 1, pos, _pw.where(target == -1, neg, cos * 0))
    return _reduce(loss, reduction)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return _red.norm(x1 - x2 + eps, p, -1, keepdim=keepdim)


def pdist(input, p=2):
    n = input.shape[0]
    i, j = [], []
    for a in range(n):
        for b in range(a + 1, n):
            i.append(a)
            j.append(b)
    d = _gather_dim(input, 0, _idx(i, input.device)) - _gather_dim(input, 0, _idx(j, input.device))
    return _red.norm(d, p, -1)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _pw.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp_min(0.0), reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        approx = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + _pw.where(target > 1, approx, approx * 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if var.dim() == input.dim() - 1 or (var.shape[-1] == 1 and input.shape[-1] != 1 and var.dim() == input.dim()):
        if var.dim() == input.dim() - 1:
            var = var.unsqueeze(-1)
    var = var.clamp_min(eps) if not var.requires_grad else var.clamp(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(-1) / input.size(-1)
    return _reduce(loss, reduction)


# every function here honours __torch_function__, as PyTorch's do (which is also where fx records them)
def _dispatching():
    from ..overrides import torch_function
    for name in __all__:
        globals()[name] = torch_function(globals()[name])


_dispatching()
