"""torch.nn.functional's padding."""
from ...ops import shape as _shape
from ...ops._common import dispatching
from ...ops._creation import full as _full
from ._util import _gather_dim, _idx

__all__ = ["pad"]


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


dispatching(globals(), __all__)
