"""torch.nn.functional: every layer's computation, written in webtorch ops (so every backend runs
it and autograd differentiates it). Signatures follow PyTorch.

Lowerings: convolution = im2col (a gather at computed offsets, whose backward is a scatter-add,
right for overlapping windows) + one batched matmul; transposed convolution = matmul + col2im
(a scatter-add); max/avg pooling = the same window gather + max(dim)/sum; adaptive pooling and
bilinear interpolation = small interpolation matrices applied by matmul.
"""
import math
import struct
import warnings

from .. import _dtype
from ..ops._creation import tensor as _tensor, zeros as _zeros, full as _full, arange as _arange, rand as _rand
from ..autograd import grad_mode
from .._tensor import _wrap_dim
from ..ops import indexing as _ix
from ..ops import shape as _shape
from ..ops import pointwise as _pw
from ..ops import reduction as _red
from ..ops import linalg as _la
from .._tensor import Tensor
from ..ops._common import (composite_node, formula_node, recording as _recording, inplace_result as _inplace_result,
                           check_leaf_inplace as _check_leaf_inplace)
from ..ops._common import name_of, check_inplace_dtype, scalar_to as _scalar_to
from ..overrides import torch_function
from .. import finfo

int64, bool_ = _dtype.int64, _dtype.bool_


# a graph node named as PyTorch's for a layer computed by other ops (its gradient is theirs)
_node = composite_node

__all__ = [
    "linear", "bilinear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "unfold", "fold", "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "adaptive_max_pool3d", "lp_pool2d",
    "batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm", "local_response_norm", "normalize",
    "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
    "embedding", "one_hot", "pad", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear",
    "pixel_shuffle", "pixel_unshuffle",
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
        else:  # circular: negative pads crop first, the rest wraps around what is left
            core = range(max(-lo, 0), n - max(-hi, 0))
            j = core[(i + min(lo, 0)) % len(core)]
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


# ---- im2col / col2im (any number of spatial dims) -------------------------------------------
def _pitches(sizes):
    """Row-major element strides of a contiguous block of `sizes`."""
    p = [1] * len(sizes)
    for i in range(len(sizes) - 2, -1, -1):
        p[i] = p[i + 1] * sizes[i + 1]
    return p


def _window_offsets(sizes, kernel, dilation, stride, out, device):
    """int64 (prod(kernel)*prod(out),) offsets into a flattened (padded) block of `sizes`:
    sum over dims of (k_i*d_i + o_i*s_i) * pitch_i, kernel positions major, output positions minor."""
    n = len(sizes)
    total = None
    for i, pitch in enumerate(_pitches(sizes)):
        ks, os_ = [1] * (2 * n), [1] * (2 * n)
        ks[i], os_[n + i] = kernel[i], out[i]
        t = (_iota(kernel[i], device) * (dilation[i] * pitch)).reshape(ks) + \
            (_iota(out[i], device) * (stride[i] * pitch)).reshape(os_)
        total = t if total is None else total + t
    return total.reshape(-1)


def _out_size(n, k, s, d, p_total):
    return (n + p_total - d * (k - 1) - 1) // s + 1


def _im2col(x, kernel, dilation, stride, out):
    """x (N, C, *sizes), already padded -> (N, C, prod(kernel), prod(out)) windows (a differentiable gather)."""
    N, C, sizes = x.shape[0], x.shape[1], tuple(x.shape[2:])
    K, L = math.prod(kernel), math.prod(out)
    x3 = x.reshape(N, C, math.prod(sizes))
    idx = _window_offsets(sizes, kernel, dilation, stride, out, x.device).reshape(1, 1, K * L)
    return _ix.take_offsets(x3, [None, None, idx], (N, C, K * L)).reshape(N, C, K, L)


def _col2im(cols, sizes, kernel, dilation, stride, out):
    """cols (N, C, prod(kernel), prod(out)) summed into a zero (N, C, *sizes) block (a differentiable scatter-add)."""
    N, C = cols.shape[0], cols.shape[1]
    K, L, V = math.prod(kernel), math.prod(out), math.prod(sizes)
    plane = _window_offsets(sizes, kernel, dilation, stride, out, cols.device).reshape(1, 1, K * L)
    base = (_iota(N * C, cols.device) * V).reshape(N, C, 1)
    z = cols.new_zeros((N * C * V,))
    return _ix.index_put_flat(z, plane + base, cols.reshape(N, C, K * L), True).reshape((N, C) + tuple(sizes))


def _pads_last_first(pads):
    """[(lo, hi) per spatial dim] -> F.pad's (last_lo, last_hi, second_last_lo, ...)."""
    return tuple(v for lo_hi in reversed(pads) for v in lo_hi)


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
    img = _col2im(x.reshape(N, CK // K, K, L), (o[0] + 2 * p[0], o[1] + 2 * p[1]), k, d, s, out)
    img = img[:, :, p[0]:p[0] + o[0], p[1]:p[1] + o[1]]
    return img.squeeze(0) if unb else img


# ---- convolution (1/2/3-D: one implementation) -----------------------------------------------
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


def _conv_impl(x, weight, bias, stride, pads, dilation, groups, name, orig_shape):
    N, C, sp = x.shape[0], x.shape[1], tuple(x.shape[2:])
    O, Cg, k = weight.shape[0], weight.shape[1], tuple(weight.shape[2:])
    if C != Cg * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {_shape_str(weight.shape)}, expected "
                           f"input{_shape_str(orig_shape)} to have {Cg * groups} channels, but got {C} channels "
                           "instead")
    if O % groups:
        raise RuntimeError("Given groups=%d, expected weight to be divisible by %d at dimension 0, but got weight of "
                           "size %s instead" % (groups, groups, _shape_str(weight.shape)))
    padded = [n + lo + hi for n, (lo, hi) in zip(sp, pads)]
    span = [d * (kk - 1) + 1 for d, kk in zip(dilation, k)]
    if any(p < s for p, s in zip(padded, span)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                           f"size: ({' x '.join(map(str, span))}). Kernel size can't be greater than actual input "
                           "size")
    if any(lo or hi for lo, hi in pads):
        x = _pad_constant(x, _pads_last_first(pads))
    out = tuple(_out_size(p, kk, s, d, 0) for p, kk, s, d in zip(padded, k, stride, dilation))
    K, L = math.prod(k), math.prod(out)
    if K == 1 and all(s == 1 for s in stride):
        cols = x.reshape(N, C, 1, L)
    else:
        cols = _im2col(x, k, dilation, stride, out)
    if groups == 1:
        y = _la.matmul(weight.reshape(O, Cg * K), cols.reshape(N, Cg * K, L))
    else:
        y = _la.matmul(weight.reshape(groups, O // groups, Cg * K), cols.reshape(N, groups, Cg * K, L))
    y = y.reshape((N, O) + out)
    if bias is not None:
        y = y + bias.reshape((1, O) + (1,) * len(out))
    return y


def _check_conv(input, weight, bias, n_sp, stride, padding, dilation):
    """PyTorch's argument errors of a convolution with n_sp spatial dims."""
    for t, what in ((weight, "weight"), (bias, "bias")):
        if t is not None and t.dtype is not input.dtype:
            raise RuntimeError(f"Input type ({input.dtype}) and {what} type ({t.dtype}) should be the same")
    if weight.dim() != n_sp + 2:
        if weight.dim() < 3:
            raise RuntimeError("weight should have at least three dimensions")
        raise RuntimeError(f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional weight "
                           f"{list(weight.shape)}, but got {input.dim()}-dimensional input of size "
                           f"{list(input.shape)} instead")
    if min(_ntuple(n_sp)(stride)) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if not isinstance(padding, str) and min(_ntuple(n_sp)(padding)) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(_ntuple(n_sp)(dilation)) <= 0:
        raise RuntimeError("dilation should be greater than zero")


_Convolution = _node("ConvolutionBackward0", _conv_impl, optional=(2,))


def _conv_batchify(input, n_sp, name):
    if input.dim() not in (n_sp + 1, n_sp + 2):
        raise RuntimeError(f"Expected {n_sp + 1}D (unbatched) or {n_sp + 2}D (batched) input to {name}, but got input "
                           f"of size: {list(input.shape)}")
    return _batchify(input, n_sp, name)


def _convnd(input, weight, bias, stride, padding, dilation, groups, n_sp, name):
    _check_conv(input, weight, bias, n_sp, stride, padding, dilation)
    x, unb = _conv_batchify(input, n_sp, name)
    tup = _ntuple(n_sp)
    s, d = tup(stride), tup(dilation)
    if isinstance(padding, str) and padding == "same" and any(v != 1 for v in s):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    pads = _conv_padding(padding, tuple(weight.shape[2:]), d, n_sp)
    y = _Convolution.call(x, weight, bias, s, pads, d, groups, name, input.shape)
    return y.squeeze(0) if unb else y


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _conv_transpose_impl(x, weight, bias, stride, padding, output_padding, groups, dilation):
    N, C, sp = x.shape[0], x.shape[1], tuple(x.shape[2:])
    Cin, Og, k = weight.shape[0], weight.shape[1], tuple(weight.shape[2:])
    if C != Cin:
        raise RuntimeError(f"Given transposed=1, weight of size {_shape_str(weight.shape)}, expected input"
                           f"{_shape_str(x.shape)} to have {Cin} channels, but got {C} channels instead")
    O, K, L = Og * groups, math.prod(k), math.prod(sp)
    outs = [(n - 1) * s - 2 * p + d * (kk - 1) + op + 1
            for n, s, p, d, kk, op in zip(sp, stride, padding, dilation, k, output_padding)]
    w = weight.reshape(groups, Cin // groups, Og * K).transpose(1, 2)  # (g, Og*K, Cin/g)
    cols = _la.matmul(w, x.reshape(N, groups, Cin // groups, L))  # (N, g, Og*K, L)
    img = _col2im(cols.reshape(N, O, K, L), [o + 2 * p for o, p in zip(outs, padding)], k, dilation, stride, sp)
    for i, p in enumerate(padding):
        if p:
            img = img.narrow(2 + i, p, outs[i])
    if bias is not None:
        img = img + bias.reshape((1, O) + (1,) * len(sp))
    return img


_ConvTranspose = _node("ConvolutionBackward0", _conv_transpose_impl, optional=(2,))


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


def _conv_transposend(input, weight, bias, stride, padding, output_padding, groups, dilation, n_sp, name):
    x, unb = _conv_batchify(input, n_sp, name)
    tup = _ntuple(n_sp)
    y = _ConvTranspose.call(x, weight, bias, tup(stride), tup(padding), tup(output_padding), groups, tup(dilation))
    return y.squeeze(0) if unb else y


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups, dilation, 1,
                             "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups, dilation, 2,
                             "conv_transpose2d")


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups, dilation, 3,
                             "conv_transpose3d")


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


# ---- normalization ---------------------------------------------------------------------------
def _bshape(t, ndim):
    return t.reshape((1, -1) + (1,) * (ndim - 2))


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-5):
    nd = input.dim()
    if training:
        n = math.prod(input.shape[:1] + input.shape[2:])
        if n == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
    if nd < 2:  # no channel dim: PyTorch's dim 1 lookup fails, unless there is nothing to normalize
        if input.numel() == 0:
            return input.clone()
        _wrap_dim(1, nd)
    if not training and (running_mean is None or running_var is None):
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
    if n == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    if tuple(input.shape[input.dim() - n:]) != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*, {', '.join(str(s) for s in normalized_shape)}], but got input of size"
                           f"{input.shape}")
    return _LayerNorm.call(input, normalized_shape, weight, bias, eps)


def _layer_norm_impl(input, normalized_shape, weight, bias, eps):
    dims = list(range(-len(normalized_shape), 0))
    x = input.float() if input.dtype.itemsize == 2 else input  # float16: PyTorch's kernels compute in float32
    mean = x.mean(dims, keepdim=True)
    var = x.var(dims, unbiased=False, keepdim=True)
    y = (x - mean) * (var + eps).rsqrt()
    if weight is not None:
        y = y * weight
    y = y + (0.0 if bias is None else bias)  # PyTorch's kernel adds a missing bias as 0: no -0.0
    return y if y.dtype is input.dtype else y.to(input.dtype)


_LayerNorm = _node("NativeLayerNormBackward0", _layer_norm_impl, optional=(2, 3))


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    C = input.shape[1]
    if C % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {input.shape} and num_groups={num_groups}")
    return _GroupNorm.call(input, weight, bias, num_groups, eps)


def _group_norm_impl(input, weight, bias, num_groups, eps):
    x = input.reshape(input.shape[0], num_groups, input.numel() // max(input.shape[0] * num_groups, 1))
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
    if n == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    if tuple(input.shape[input.dim() - n:]) != normalized_shape or input.dim() < n:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, normalized_shape))}], but got input of size{input.shape}")
    if eps is None:
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
    return _pw.div(input, denom, out=out)


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
    if p == 1.0:
        return input * 0.0
    alpha_p = -1.7580993408473766
    keep = (_rand(input.shape, dtype=input.dtype, device=input.device) >= p).to(input.dtype)
    a = ((1 - p) * (1 + p * alpha_p ** 2)) ** -0.5
    b = -a * alpha_p * p
    return (input * keep + alpha_p * (1 - keep)) * a + b


feature_alpha_dropout = alpha_dropout


# ---- sparse ----------------------------------------------------------------------------------
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
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
def _f32(x):
    """x rounded to float32 (PyTorch computes nearest-neighbour source indices in float)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _interp_sizes(input, size, scale_factor, recompute_scale_factor, mode):
    """(output sizes, per-dim scale factors passed to the kernel or None), as F.interpolate computes them."""
    n_sp = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    sfs = None
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != n_sp:
                raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input "
                                 f"with spatial dimensions of {list(input.shape[2:])} and output size of {size}. "
                                 "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                                 "(o1, o2, ...,oK) format.")
            if not all(isinstance(v, int) for v in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                                f"Tuple[int, int, int], but got size with types {[type(v) for v in size]}")
            out = [int(v) for v in size]
        else:
            out = [int(size)] * n_sp
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != n_sp:
                raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got "
                                 f"input with spatial dimensions of {list(input.shape[2:])} and scale_factor of shape "
                                 f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 "scale_factor in (s1, s2, ...,sK) format.")
            sfs = [float(f) for f in scale_factor]
        else:
            sfs = [float(scale_factor)] * n_sp
        out = [int(n * f) for n, f in zip(input.shape[2:], sfs)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute_scale_factor or mode == "area":
        sfs = None
    return out, sfs or [None] * n_sp


def _src_scale(n_in, n_out, sf, align_corners):
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / sf if sf is not None and sf > 0 else n_in / n_out


def _cubic1(x, A=-0.75):
    return ((A + 2) * x - (A + 3)) * x * x + 1


def _cubic2(x, A=-0.75):
    return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A


def _interp_matrix(n_in, n_out, sf, align_corners, cubic, dtype, device):
    """(n_out, n_in) weights of PyTorch's linear or cubic-convolution (A = -0.75) interpolation along one
    dim; taps past the border read the border element."""
    scale = _src_scale(n_in, n_out, sf, align_corners)
    rows = []
    for i in range(n_out):
        src = i * scale if align_corners else scale * (i + 0.5) - 0.5
        if not cubic:
            src = max(src, 0.0)
        i0 = min(int(math.floor(src)), n_in - 1)
        t = min(max(src - i0, 0.0), 1.0)
        if cubic:
            taps = ((i0 - 1, _cubic2(t + 1)), (i0, _cubic1(t)), (i0 + 1, _cubic1(1 - t)), (i0 + 2, _cubic2(2 - t)))
        else:
            taps = ((i0, 1.0 - t), (i0 + 1, t))
        row = [0.0] * n_in
        for j, w in taps:
            row[min(max(j, 0), n_in - 1)] += w
        rows.append(row)
    return _tensor(rows, dtype=dtype, device=device)


_INTERP_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                             "bicubic | trilinear")
    n_sp = input.dim() - 2
    out_sizes, sfs = _interp_sizes(input, size, scale_factor, recompute_scale_factor, mode)
    if antialias:
        if not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
            raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                             "4-D tensor as input")
        raise NotImplementedError(f"webtorch: interpolate(mode='{mode}', antialias=True) is not implemented")
    if mode == "lanczos" and input.dim() == 4:
        raise ValueError("Lanczos mode does not support align_corners=True" if align_corners else
                         "Lanczos mode requires antialias=True")
    want = _INTERP_DIMS.get(mode)
    if n_sp not in (1, 2, 3) or (mode == "bicubic" and n_sp != 2) or (
            want is None and mode not in ("nearest", "nearest-exact", "area")):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for "
                                  "the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
                                  f"nearest-exact (got {mode})")
    if want is not None and want != n_sp:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {want + 2}D input")
    in_sizes = list(input.shape[2:])
    x = input
    if mode in ("nearest", "nearest-exact"):
        off = 0.5 if mode == "nearest-exact" else 0.0
        for i, (n_in, n_out) in enumerate(zip(in_sizes, out_sizes)):
            if mode == "nearest" and n_in == n_out:
                continue  # as PyTorch: same size copies, whatever the scale factor
            scale = _f32(1.0 / sfs[i] if sfs[i] is not None and sfs[i] > 0 else n_in / n_out)
            src = [min(int(math.floor(_f32((j + off) * scale))), n_in - 1) for j in range(n_out)]
            x = _gather_dim(x, 2 + i, _idx(src, x.device))
        return x
    if mode == "area":
        return _adaptive_avg_pool(input, out_sizes, n_sp)
    for i in range(n_sp):
        A = _interp_matrix(in_sizes[i], out_sizes[i], sfs[i], bool(align_corners), mode == "bicubic", x.dtype,
                           x.device)
        x = _apply_along(x, A, 2 + i)
    return x


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


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


_FUTURE = {}


def _causal_future(L, S, like):
    """the (L, S) bool mask of the keys after each query (True = masked), kept per device (and
    backend) of `like`: a causal model asks for the same one in every layer and step"""
    key = (L, S, str(like.device))
    m = _FUTURE.get(key)
    if m is None or m._backend is not like._backend:
        if len(_FUTURE) >= 8:
            _FUTURE.clear()
        m = _FUTURE[key] = _shape.tril(_full((L, S), True, dtype=bool_, device=like.device)).logical_not()
    return m


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    L, S, E = query.size(-2), key.size(-2), query.size(-1)
    scale_factor = 1.0 / math.sqrt(E) if scale is None else scale
    if enable_gqa and query.dim() >= 3 and key.size(-3) != query.size(-3):
        rep = query.size(-3) // key.size(-3)
        key = key.repeat_interleave(rep, dim=-3)
        value = value.repeat_interleave(rep, dim=-3)
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")
        # built before the product: on webgpu scale and mask then run in its store (lazy.py)
        future = _causal_future(L, S, query)
    attn = _la.matmul(query, key.transpose(-2, -1)) * scale_factor
    if is_causal:
        attn = attn.masked_fill(future, -math.inf)
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
    if mask.dtype is not bool_ and not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      "instead.", stacklevel=2)
    if mask.dtype is bool_:
        return _neg_inf_mask(mask, target_type)
    return mask


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """PyTorch's checks of the inputs' ranks; True when the input is batched."""
    nd = query.dim()
    if nd not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {nd}-D query tensor")
    kind = "batched (3-D)" if nd == 3 else "unbatched (2-D)"
    if key.dim() != nd or value.dim() != nd:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be {nd}-D but found {key.dim()}-D "
                             f"and {value.dim()}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.dim() != nd - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or {nd - 1}-D but found "
                             f"{key_padding_mask.dim()}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                                 f"{attn_mask.dim()}-D tensor instead")
        expected = (num_heads, query.shape[0], key.shape[0])
        if nd == 2 and attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
    return nd == 3


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
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask",
                                       query.dtype)
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
    if use_separate_proj_weight and tuple(key.shape[:2]) != tuple(value.shape[:2]):
        raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's {value.shape[:2]}")
    if not use_separate_proj_weight and tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
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
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got {key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
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


def _activation(name, fn, inplace_name=None, kernel=None):
    """`call(input, *params, inplace=False)`: the element-wise `fn(x, *params)` recorded as one node
    `name` named as PyTorch's (`inplace_name` for the in-place form, where PyTorch numbers it apart),
    whose formula is in `autograd/derivatives.py` — the same kind of node as the element-wise ops'
    (`ops/pointwise.py`, `elementwise_node`); written into input when inplace. kernel: PyTorch's CPU
    kernel, named in its error for integer and bool input (None: integers are taken)."""
    params = fn.__code__.co_varnames[1:fn.__code__.co_argcount]
    out_of_place = _pw.elementwise_node(name, fn, params)
    in_place = _pw.elementwise_node(inplace_name, fn, params) if inplace_name else out_of_place

    def call(input, *params, inplace=False):
        if kernel is not None and not input.dtype.is_floating_point:
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{name_of(input.dtype)}'")
        F = in_place if inplace else out_of_place
        return _act(input, inplace, lambda x: F.apply(x, x.dtype, *params) if _recording(x) else
                    _pw._unary_kernel(None, fn, x, x.dtype, x.dtype, params))
    return call


_threshold = _activation("ThresholdBackward0", lambda x, threshold, value: _pw.where(x > threshold, x, value))


def threshold(input, threshold, value, inplace=False):
    if input.dtype is _dtype.bool_:
        raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool'")
    return _threshold(input, _scalar_to(threshold, input.dtype), _scalar_to(value, input.dtype), inplace=inplace)


def threshold_(input, threshold, value):
    return _threshold(input, threshold, value, inplace=True)


_hardtanh = _activation("HardtanhBackward0", lambda x, min_val, max_val: x.clamp(min_val, max_val))


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.dtype is _dtype.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if input.dtype is _dtype.uint8 and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    # the bounds in input's dtype (truncated for integers, as PyTorch's): relu6 of ints stays ints
    return _hardtanh(input, _scalar_to(min_val, input.dtype), _scalar_to(max_val, input.dtype), inplace=inplace)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, True)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


_leaky_relu = _activation("LeakyReluBackward0", lambda x, negative_slope: _pw.where(x > 0, x, x * negative_slope),
                          inplace_name="LeakyReluBackward1", kernel="leaky_relu_cpu")


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _leaky_relu(input, negative_slope, inplace=inplace)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, True)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)


def _gelu_fn(x, approximate, half):
    if approximate == "tanh":
        inner = (x + 0.044715 * x * x * x) * _SQRT_2_OVER_PI
        return 0.5 * x * (1.0 + inner.tanh())
    h = 0.5 * x  # PyTorch's kernels: h * erf + h (+0.0 at -0.0 and where erf is -1); float16's h * (1 + erf)
    return h * ((x * _INV_SQRT_2).erf() + 1.0) if half else h * (x * _INV_SQRT_2).erf() + h


_gelu = _activation("GeluBackward0", _gelu_fn, kernel="GeluKernelImpl")


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _gelu(input, approximate, input.dtype.itemsize == 2 and input.dtype.is_floating_point)


_silu = _activation("SiluBackward0", lambda x: x * x.sigmoid(), kernel="silu_cpu")


def silu(input, inplace=False):
    return _silu(input, inplace=inplace)


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


_hardswish = _activation("HardswishBackward0", lambda x: x * (x + 3.0).clamp(0.0, 6.0) / 6.0,
                         kernel="hardswish_cpu")


def hardswish(input, inplace=False):
    return _hardswish(input, inplace=inplace)


_hardsigmoid = _activation("HardsigmoidBackward0", lambda x: (x + 3.0).clamp(0.0, 6.0) / 6.0,
                           kernel="hardsigmoid_cpu")


def hardsigmoid(input, inplace=False):
    return _hardsigmoid(input, inplace=inplace)


# x <= 0 takes expm1(x) * alpha (-0.0 stays -0.0); the gradients are formulas (autograd/derivatives.py)
_elu = _activation("EluBackward0", lambda x, alpha, scale: _pw.where(x > 0, x, x.expm1() * alpha) * scale
                   if scale != 1 else _pw.where(x > 0, x, x.expm1() * alpha), inplace_name="EluBackward1",
                   kernel="elu_cpu")


def elu(input, alpha=1.0, inplace=False):
    return _elu(input, alpha, 1.0, inplace=inplace)


def elu_(input, alpha=1.0):
    return elu(input, alpha, True)


_celu = _activation("CeluBackward0", lambda x, alpha: _pw.where(x > 0, x, (x / alpha).expm1() * alpha),
                    inplace_name="CeluBackward1", kernel="elu_cpu")


def celu(input, alpha=1.0, inplace=False):
    return _celu(input, alpha, inplace=inplace)


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def selu(input, inplace=False):
    return _elu(input, _SELU_ALPHA, _SELU_SCALE, inplace=inplace)


def _softplus_fn(x, beta, threshold):
    bx = x * beta
    soft = bx.clamp_max(threshold).exp().log1p() / beta
    return _pw.where(bx > threshold, x, soft)


_softplus = _activation("SoftplusBackward0", _softplus_fn, kernel="softplus_cpu")


def softplus(input, beta=1.0, threshold=20.0):
    return _softplus(input, beta, threshold)


_mish = _activation("MishBackward0", lambda x: x * _softplus_fn(x, 1.0, 20.0).tanh(), kernel="mish_cpu")


def mish(input, inplace=False):
    return _mish(input, inplace=inplace)


def softsign(input):
    return input / (1 + input.abs())


# log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|))
_logsigmoid = _activation("LogSigmoidBackward0", lambda x: x.clamp_max(0.0) - (-x.abs()).exp().log1p(),
                          kernel="log_sigmoid_cpu")


def logsigmoid(input):
    return _logsigmoid(input)


def tanhshrink(input):
    return input - input.tanh()


# PyTorch's kernel: x * 0 inside [-lambd, lambd] (-0.0 stays, NaN passes)
_softshrink = _activation("SoftshrinkBackward0", lambda x, lambd: _pw.where(
    x > lambd, x - lambd, _pw.where(x < -lambd, x + lambd, x * 0)), kernel="softshrink_check")


def softshrink(input, lambd=0.5):
    if lambd < 0:
        raise RuntimeError(f"lambda must be in range [0, +inf) for input dtype {input.dtype}, but found {lambd}")
    return _softshrink(input, lambd)


_hardshrink = _activation("HardshrinkBackward0", lambda x, lambd: _pw.where((x >= -lambd) & (x <= lambd), 0.0, x),
                          kernel="hardshrink_cpu")


def hardshrink(input, lambd=0.5):
    return _hardshrink(input, lambd)


def glu(input, dim=-1):
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def prelu(input, weight):
    if input.dim() == 0 and weight.numel() != 1:
        raise RuntimeError("Not allow zero-dim input tensor.")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    w = weight.reshape(()) if weight.numel() == 1 else weight
    if weight.numel() != 1 and input.dim() >= 2:
        w = weight.reshape((1, -1) + (1,) * (input.dim() - 2))
    return _pw.where(input > 0, input, input * w)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
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


def _loss_diff(input, target, kernel):
    """input - target in their promoted dtype (PyTorch's mse/smooth_l1/huber kernels take a bool operand,
    but not a promoted dtype that is not floating: `kernel` names the kernel in its error)."""
    dt = _dtype.promote_types(input.dtype, target.dtype)  # broadcast first: a 0-d operand promotes as any
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for '{name_of(dt)}'")
    return input.to(dt) - target.to(dt)


def _mse_loss_impl(input, target, reduction):
    d = _loss_diff(input, target, "mse")
    return _reduce(d * d, reduction)


_MseLoss = _node("MseLossBackward0", _mse_loss_impl)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_sizes(input, target)
    a, b = _shape.broadcast_tensors(input, target)  # PyTorch's: a 0-d operand promotes as any
    loss = (a - b).abs()
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
    return _SmoothL1Loss.apply(input, target, reduction, beta)


def _smooth_l1_loss_impl(input, target, reduction, beta):
    d = _loss_diff(input, target, "smooth_l1").abs()
    dn = _pw.where(d >= beta, 0.0, d)  # squared only where taken (or NaN): an infinite d's gradient is not 0 * inf
    return _reduce(_pw.where(d < beta, 0.5 * dn * dn / beta, d - 0.5 * beta), reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    _check_sizes(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    check_inplace_dtype(_dtype.promote_types(input.dtype, target.dtype), input)  # PyTorch's result is like input
    r = _HuberLoss.call(input, target, reduction, delta, weight)
    return r if r.dtype is input.dtype else r.to(input.dtype)


def _huber_loss_impl(input, target, reduction, delta, weight):
    d = _loss_diff(input, target, "huber").abs()
    dn = _pw.where(d >= delta, 0.0, d)  # as smooth_l1_loss's
    loss = _pw.where(d < delta, 0.5 * dn * dn, delta * (d - 0.5 * delta))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


_SmoothL1Loss = formula_node("SmoothL1LossBackward0", _smooth_l1_loss_impl, ("input", "target", "reduction", "beta"))
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
    return _BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight, reduction)


def _binary_cross_entropy_with_logits_impl(input, target, weight, pos_weight, reduction):
    # softplus(-x) = -logsigmoid(x), stably max(-x, 0) + log1p(exp(-|x|)); the gradient is PyTorch's
    # formula (autograd/derivatives.py)
    sp = -logsigmoid(input)
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
_BinaryCrossEntropyWithLogits = formula_node("BinaryCrossEntropyWithLogitsBackward0",
                                             _binary_cross_entropy_with_logits_impl,
                                             ("input", "target", "weight", "pos_weight", "reduction"))
_BinaryCrossEntropyWithLogits._no_edges = (2, 3)


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
    dt = _dtype.promote_types(x1.dtype, x2.dtype)
    if not dt.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {name_of(dt)}")
    x1, x2 = _shape.broadcast_tensors(*(x if x.is_floating_point() else x.to(dt) for x in (x1, x2)))
    return ((x1 / _norm_at_least(x1, dim, eps)) * (x2 / _norm_at_least(x2, dim, eps))).sum(dim)


def _norm_at_least(x, dim, eps):
    """x's 2-norm along dim, at least eps, as PyTorch's cosine_similarity clamps it: in place without
    grad, so the gradient is the unclamped norm's."""
    n = _red.norm(x, 2, dim, keepdim=True)
    d = n.detach()
    return _pw.where(d < eps, (n - d) + eps, n)


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
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
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
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):  # one variance per row: homoscedastic
            var = var.unsqueeze(-1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1):
            raise ValueError("var is of incorrect size")
    var = var.clamp_min(eps) if not var.requires_grad else var.clamp(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not valid")
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
    for name in __all__:
        globals()[name] = torch_function(globals()[name])


_dispatching()
