"""torch.nn.functional.ctc_loss: the connectionist temporal classification loss (Graves et al. 2006).

The forward (alpha) and backward (beta) recursions run in log space over time, each step a few
element-wise ops over every sample and every extended-target position at once (on the tensors'
device). The node's gradient is PyTorch's (`ctc_loss_backward_cpu_template`):
`exp(lp) - exp(log(sum alpha*beta over the positions of class c) + nll - lp)`, which, as PyTorch's,
assumes log_probs is a log_softmax's output (the softmax's part of the gradient is in it)."""
import math

from ... import _dtype
from ...autograd import grad_mode
from ...autograd.function import Function
from ...ops import pointwise as _pw, shape as _sh
from ...ops._common import dispatching
from ...ops._creation import full as _full, full_like as _full_like, tensor as _tensor
from ._util import _iota

__all__ = ["ctc_loss"]

_NEG_INF = float("-inf")


def _lse(*xs):
    """log(sum(exp)) of same-shaped tensors, -inf where all are -inf (never NaN)."""
    m = xs[0]
    for x in xs[1:]:
        m = _pw.maximum(m, x)
    m = _pw.where(m == _NEG_INF, 0.0, m)
    s = None
    for x in xs:
        e = (x - m).exp()
        s = e if s is None else s + e
    return _log_plus(s, m)


def _log_plus(s, m):
    """log(s) + m, -inf where s is 0 (never NaN)."""
    return _pw.where(s > 0, _pw.where(s > 0, s, 1.0).log() + m, _NEG_INF)


def _max_or_zero(x):
    m = x.amax(-1, keepdim=True)
    return _pw.where(m == _NEG_INF, 0.0, m)


def _shift(x, k, fill=_NEG_INF):
    """x moved k positions along the last dim (right for k > 0, left for k < 0), filled with `fill`."""
    pad = _full(x.shape[:-1] + (abs(k),), fill, dtype=x.dtype, device=x.device)
    return _sh.cat([pad, x[..., :-k]], -1) if k > 0 else _sh.cat([x[..., -k:], pad], -1)


def _lengths(v):
    return [int(n) for n in (v.tolist() if hasattr(v, "tolist") else v)]


def _padded_targets(targets, target_lengths, device):
    """(N, max length) targets from the padded (N, S) or the concatenated 1-D form."""
    width = max(target_lengths, default=0)
    if targets.dim() == 2:
        return targets[:, :width]
    rows, pos = [], 0
    for n in target_lengths:
        rows.append([pos + j if j < n else 0 for j in range(width)])
        pos += n
    idx = _tensor(rows, dtype=_dtype.int64, device=device).reshape(len(target_lengths), width)
    return targets[idx] if targets.numel() else idx


class _CtcLoss(Function):
    _node_name = "CtcLossBackward0"

    @staticmethod
    def forward(ctx, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
        T, N, C = log_probs.shape
        ins, outs = _lengths(input_lengths), _lengths(target_lengths)
        tgt = _padded_targets(targets, outs, log_probs.device).to(_dtype.int64).clamp(0, C - 1)
        S = 2 * tgt.shape[1] + 1
        ext = _sh.stack([_full_like(tgt, blank), tgt], -1).reshape(N, S - 1)
        ext = _sh.cat([ext, _full((N, 1), blank, dtype=_dtype.int64, device=ext.device)], 1)
        pos = _iota(S, ext.device).unsqueeze(0)
        L = _tensor(outs, dtype=_dtype.int64, device=ext.device).unsqueeze(1)
        valid = pos < 2 * L + 1
        skip = (pos >= 2) & (ext != blank) & (ext != _shift(ext, 2, blank))
        lpe = log_probs.detach().gather(2, ext.unsqueeze(0).expand(T, N, S))  # (T, N, S)
        live = [(t < _tensor(ins, dtype=_dtype.int64, device=ext.device)).unsqueeze(1) for t in range(T)]
        alphas = [_pw.where(valid & (pos < 2), lpe[0], _NEG_INF)]
        for t in range(1, T):
            a = alphas[-1]
            new = _lse(a, _shift(a, 1), _pw.where(skip, _shift(a, 2), _NEG_INF)) + lpe[t]
            alphas.append(_pw.where(live[t], _pw.where(valid, new, _NEG_INF), a))  # frozen past its length
        end = (pos == 2 * L) | (pos == 2 * L - 1)
        last = _pw.where(end, alphas[-1], _NEG_INF)
        m = _max_or_zero(last)
        nll = -_log_plus((last - m).exp().sum(-1, keepdim=True), m).reshape(N)
        ctx.save_for_backward(log_probs, nll)
        ctx.state = (alphas, lpe, ext, valid, skip, end, live, ins, zero_infinity)
        return nll

    @staticmethod
    def backward(ctx, grad):
        log_probs, nll = ctx.saved_tensors
        alphas, lpe, ext, valid, skip, end, live, ins, zero_infinity = ctx.state
        T, N, C = log_probs.shape
        S = ext.shape[1]
        with grad_mode.no_grad():
            end_t = _tensor([n - 1 for n in ins], dtype=_dtype.int64, device=ext.device).unsqueeze(1)
            skip_next = _shift(skip.to(_dtype.int64), -2, 0) == 1
            betas = [None] * T
            b = _full((N, S), _NEG_INF, dtype=lpe.dtype, device=lpe.device)
            for t in range(T - 1, -1, -1):
                step = _lse(b, _shift(b, -1), _pw.where(skip_next, _shift(b, -2), _NEG_INF)) + lpe[t]
                start = _pw.where(end, lpe[t], _NEG_INF)
                b = _pw.where(end_t == t, start, _pw.where((t < end_t) & valid, step, _NEG_INF))
                betas[t] = b
            ab = _sh.stack(alphas, 0) + _sh.stack(betas, 0)  # (T, N, S)
            m = _max_or_zero(ab)
            onehot = ((ext.unsqueeze(-1) == _iota(C, ext.device)) & valid.unsqueeze(-1)).to(lpe.dtype)
            summed = (ab - m).exp().transpose(0, 1).bmm(onehot).transpose(0, 1)  # (T, N, C)
            lcab = _log_plus(summed, m)
            lp = log_probs.detach()
            g = (lp.exp() - (lcab + nll.reshape(1, N, 1) - lp).exp()) * grad.reshape(1, N, 1)
            alive = _sh.stack(live, 0)  # (T, N, 1)
            if zero_infinity:
                alive = alive & (nll != math.inf).reshape(1, N, 1)
            g = _pw.where(alive, g, 0.0)
        return g, None, None, None, None, None


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs, targets = log_probs.unsqueeze(1), targets.unsqueeze(0)
        input_lengths, target_lengths = [int(input_lengths)], [int(target_lengths)]
    nll = _CtcLoss.apply(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity)
    if zero_infinity:
        nll = _pw.where(nll == math.inf, 0.0, nll)
    if reduction == "mean":
        lengths = target_lengths if hasattr(target_lengths, "tolist") else _tensor(_lengths(target_lengths))
        return (nll / lengths.to(nll.device).clamp(min=1).to(nll.dtype)).mean()
    if reduction == "sum":
        return nll.sum()
    return nll[0] if unbatched else nll


dispatching(globals(), __all__)
