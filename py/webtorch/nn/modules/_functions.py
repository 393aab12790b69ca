"""Autograd Functions behind nn modules, as PyTorch's torch/nn/modules/_functions.py: CrossMapLRN2d (Lua
Torch's cross-channel LRN, kept by PyTorch with its own forward and backward).

Its forward sums the squares of a window of channels c - pre_pad + 1 .. c + pre_pad - 1 with
pre_pad = (size - 1) // 2 + 1, by a running sum that never drops channel 0 (PyTorch's numbers include it in
every window); its backward is PyTorch's formula over the window c - s .. c + size - 1 - s,
s = size - (size - 1) // 2, which is not that forward's exact gradient: both are kept as PyTorch has them.
Each window is a (C, C) 0/1 matrix applied along the channels by one matmul."""
from ...autograd.function import Function
from ...ops import linalg as _la
from ...ops._creation import tensor as _tensor


def _forward_windows(C, size):
    pre_pad = int((size - 1) / 2 + 1)
    rows, window = [], set(range(min(pre_pad, C)))
    for c in range(C):
        if c:
            if c < C - pre_pad + 1:
                window.add(c + pre_pad - 1)
            if c > pre_pad:
                window.discard(c - pre_pad)
        rows.append([1.0 if j in window else 0.0 for j in range(C)])
    return rows


def _backward_windows(C, size):
    s = int(size - (size - 1) / 2)
    return [[1.0 if c - s <= j <= c + size - 1 - s else 0.0 for j in range(C)] for c in range(C)]


def _over_channels(windows, x):
    """windows (C, C) applied along x's dim 1."""
    A = _tensor(windows, dtype=x.dtype, device=x.device)
    return _la.matmul(A, x.movedim(1, -2)).movedim(-2, 1)


class CrossMapLRN2d(Function):
    @staticmethod
    def forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        ctx.size, ctx.alpha, ctx.beta = size, alpha, beta
        scale = _over_channels(_forward_windows(input.shape[1], size), input * input) * (alpha / size) + k
        output = scale.pow(-beta) * input
        ctx.save_for_backward(input, output, scale)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output, scale = ctx.saved_tensors
        ratio = _over_channels(_backward_windows(input.shape[1], ctx.size), grad_output * output / scale)
        grad = scale.pow(-ctx.beta) * grad_output - input * ratio * (2 * ctx.alpha * ctx.beta / ctx.size)
        return grad, None, None, None, None
