"""torch.nn.functional's convolutions (1/2/3-D: one implementation) and im2col/col2im (unfold/fold)."""
import math

from ... import _dtype
from ...ops import indexing as _ix, linalg as _la
from ...ops._common import composite_node, dispatching
from ._util import _batchify, _iota, _ntuple, _pair, _shape_str
from .padding import _pad_constant

int64 = _dtype.int64
# a graph node named as PyTorch's for a layer computed by other ops (its gradient is theirs)
_node = composite_node

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "unfold", "fold",
           "conv_tbc"]


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
    n_out, Cg, k = weight.shape[0], weight.shape[1], tuple(weight.shape[2:])
    if C != Cg * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {_shape_str(weight.shape)}, expected "
                           f"input{_shape_str(orig_shape)} to have {Cg * groups} channels, but got {C} channels "
                           "instead")
    if n_out % groups:
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
        y = _la.matmul(weight.reshape(n_out, Cg * K), cols.reshape(N, Cg * K, L))
    else:
        y = _la.matmul(weight.reshape(groups, n_out // groups, Cg * K), cols.reshape(N, groups, Cg * K, L))
    y = y.reshape((N, n_out) + out)
    if bias is not None:
        y = y + bias.reshape((1, n_out) + (1,) * len(out))
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
    n_out, K, L = Og * groups, math.prod(k), math.prod(sp)
    outs = [(n - 1) * s - 2 * p + d * (kk - 1) + op + 1
            for n, s, p, d, kk, op in zip(sp, stride, padding, dilation, k, output_padding)]
    w = weight.reshape(groups, Cin // groups, Og * K).transpose(1, 2)  # (g, Og*K, Cin/g)
    cols = _la.matmul(w, x.reshape(N, groups, Cin // groups, L))  # (N, g, Og*K, L)
    img = _col2im(cols.reshape(N, n_out, K, L), [o + 2 * p for o, p in zip(outs, padding)], k, dilation, stride, sp)
    for i, p in enumerate(padding):
        if p:
            img = img.narrow(2 + i, p, outs[i])
    if bias is not None:
        img = img + bias.reshape((1, n_out) + (1,) * len(sp))
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


def conv_tbc(input, weight, bias, pad=0):
    """A 1-D convolution of a (time, batch, in_channels) input with a (kernel width, in_channels, out_channels)
    weight, `pad` steps padded at both ends of time (cropped when negative): conv1d in time-batch-channel layout."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.shape[0] != weight.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if pad < 0:
        input, pad = input[-pad:input.shape[0] + pad], 0
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)


dispatching(globals(), __all__)
