"""The bridge from tensors to backend primitives (no autograd here).

Ops in `webtorch.ops` call these; these check devices, broadcast, allocate outputs and call
the backend's primitive. Everything a backend must implement is in `backends/base.py`.
"""
import math
import struct

from .. import _dtype, random as _random
from .._device import as_device, backend_for
from .._geometry import contiguous_strides, numel as _numel
from .._tensor import Storage, Tensor
from ..backends.base import EWISE_OPS, Strided
from .registry import ELEMENTWISE

bool_, int64 = _dtype.bool_, _dtype.int64


def empty(shape, dtype, device):
    shape = tuple(shape)
    n = _numel(shape)
    be = backend_for(device)
    buf = be.empty(n, dtype.name)
    return Tensor._make(Storage(buf, dtype, device, n, be), shape, contiguous_strides(shape), 0)


def resize_storage(st, n):
    """Resize the Storage record `st` to n elements in place, its first elements kept: every tensor on it sees the
    new buffer (PyTorch's storage resize)."""
    new = empty((n,), st.dtype, st.device)
    keep = min(n, st.numel)
    if keep:
        copy_into(new[:keep], Tensor._make(st, (keep,), (1,), 0))
    st.buf, st.numel = new._storage.buf, n
    st.version += 1


def from_flat(values, shape, dtype, device):
    be = backend_for(device)
    buf = be.from_flat(values, dtype.name)
    n = _numel(shape)
    return Tensor._make(Storage(buf, dtype, device, n), tuple(shape), contiguous_strides(shape), 0)


def common_device(args):
    dev = None
    for a in args:
        if isinstance(a, Tensor):
            d = a._storage.device
            if dev is None:
                dev = d
            elif d is not dev and d != dev:
                if a.dim() == 0 and d.type == "cpu":
                    continue
                if dev.type == "cpu" and _first_dim0_cpu(args, dev):
                    dev = d
                    continue
                raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two "
                                   f"devices, {dev} and {d}!")
    return dev


def _first_dim0_cpu(args, dev):
    for a in args:
        if isinstance(a, Tensor) and a._storage.device == dev:
            return a.dim() == 0
    return False


def broadcast_shapes(*shapes):
    if 0 < len(shapes) <= 2 and shapes[0] == shapes[-1]:  # the common case: nothing to broadcast
        return tuple(shapes[0])
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, d in enumerate(s):
            j = ndim - len(s) + i
            if out[j] == 1:
                out[j] = d
            elif d != 1 and d != out[j]:
                raise RuntimeError(f"The size of tensor a ({out[j]}) must match the size of tensor b ({d}) at "
                                   f"non-singleton dimension {i - len(s) + ndim}")
    return tuple(out)


def broadcast_strides(t, shape):
    nd = len(shape)
    off = nd - t.dim()
    strides = [0] * nd
    for i, (s, st) in enumerate(zip(t._shape, t._stride)):
        if s == shape[off + i]:
            strides[off + i] = st if s != 1 else 0
        elif s == 1:
            strides[off + i] = 0
        else:
            raise RuntimeError(f"The expanded size of the tensor ({shape[off + i]}) must match the existing size "
                               f"({s}) at non-singleton dimension {off + i}.  Target sizes: {list(shape)}.  "
                               f"Tensor sizes: {list(t._shape)}")
    return tuple(strides)


def bview(t, shape):
    st = t._storage
    if t._shape == shape and 1 not in shape:  # no broadcast: the tensor's own geometry
        return Strided(st.buf, tuple(shape), t._stride, t._offset, st.dtype.name)
    return Strided(st.buf, tuple(shape), broadcast_strides(t, shape), t._offset, st.dtype.name)


def alpha_product(b, alpha, cdtype, a=None):
    """(alpha * b, the dtype to add it to a in) as PyTorch's add(a, b, alpha=) kernel takes them: in float16 /
    bfloat16, alpha rounded to the dtype and a + alpha * b computed in float32, rounded once (its
    vectorized loop; its scalar loop, on a tensor's last < 32 elements, rounds the product too); in float32
    on the cpu, fused: a + alpha * b rounded once."""
    if cdtype.is_floating_point and cdtype.itemsize == 2:
        prod = ewise("mul", [b, _half(alpha, cdtype.name)], _dtype.float32, _dtype.float32)
        _round_scalar_tail(prod, a, b, cdtype)
        return prod, _dtype.float32
    if cdtype is _dtype.float32 and b._storage.device.type == "cpu":
        # PyTorch's cpu kernel is fma(b, alpha, a), rounded once; float64 holds b * alpha exactly
        alpha = struct.unpack("<f", struct.pack("<f", alpha))[0]
        return ewise("mul", [b, alpha], _dtype.float64, _dtype.float64), _dtype.float64
    return ewise("mul", [b, alpha], cdtype, cdtype), cdtype


def _round_scalar_tail(prod, a, b, cdtype):
    """PyTorch's loop over contiguous float16 / bfloat16 operands takes 32 elements a step and the last
    numel % 32 one by one, where the half-precision product alpha * b is rounded before the add: the same
    in `prod` for operands of one contiguous shape (a may also be a single element)."""
    n = prod.numel()
    tail = n % 32
    same = not isinstance(a, Tensor) or a.numel() == 1 or (a._shape == b._shape and a.is_contiguous())
    if tail and same and b.is_contiguous():
        t = prod.view(-1)[n - tail:]
        ewise_into("copy", t, [t.to(cdtype)], _dtype.float32)


def _half(v, cdtype):
    """A number rounded to float16 / bfloat16 (through float32, as c10's conversions), inf where it overflows."""
    try:
        if cdtype == "float16":
            return struct.unpack("<e", struct.pack("<e", struct.unpack("<f", struct.pack("<f", float(v)))[0]))[0]
        b = struct.unpack("<I", struct.pack("<f", float(v)))[0]
    except (OverflowError, struct.error):
        return math.inf if v > 0 else -math.inf
    if v == v:  # round to nearest even on the upper 16 bits (NaN kept)
        b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16 << 16
    return struct.unpack("<f", struct.pack("<I", b & 0xFFFFFFFF))[0]


def _operand(a, shape, dev, cdtype):
    """A tensor's broadcast view, or a number: a Python number meets a float16/bfloat16 computation as
    PyTorch's kernels take it, rounded to that dtype first (ops that keep it in float32 compute in float32)."""
    if isinstance(a, Tensor):
        d = a._storage.device
        if d is dev or d == dev:
            return bview(a, shape)
        a = a.item()  # a 0-d cpu tensor used as a scalar on another device
    if cdtype in ("float16", "bfloat16") and type(a) in (float, int):
        return _half(a, cdtype)
    return a


def _fast_path(op, args):
    """True when the args' backend computes the decomposed op with a kernel of its own (`fast_paths`);
    a decomposed op's first or second argument is a tensor."""
    t = args[0] if isinstance(args[0], Tensor) else args[1]
    return op in t._storage.backend.fast_paths


def _decomposition(op, args, cdtype, out_dtype):
    """op(args) as its reference decomposition (`ops/pointwise.py`, `ref=`), computed in cdtype."""
    d = ELEMENTWISE[op]
    if d.kind == "unary":
        x = args[0]
        r = d.ref(x if x.dtype is cdtype else ewise("copy", [x], cdtype, cdtype, shape=x._shape))
    else:
        r = d.ref(*args, cdtype)
    return r if r.dtype is out_dtype else ewise("copy", [r], out_dtype, out_dtype, shape=r._shape)


def ewise(op, args, cdtype, out_dtype, shape=None, device=None):
    """A new tensor: op applied element-wise over the broadcast of args (tensors/scalars);
    `device` places it when no arg is a tensor (default cpu). A decomposed op (not in
    `backends/base.py`'s primitives) runs as the backend's fast path or as its decomposition."""
    if op not in EWISE_OPS and not _fast_path(op, args):
        return _decomposition(op, args, cdtype, out_dtype)
    dev = common_device(args) or as_device(device)
    if shape is None:
        shape = broadcast_shapes(*[a._shape for a in args if isinstance(a, Tensor)])
    else:
        shape = tuple(shape)  # a plain tuple: Size indexes through Python
    out = empty(shape, out_dtype, dev)
    if out._storage.numel:
        out._backend.ewise(op, out._strided(), [_operand(a, shape, dev, cdtype.name) for a in args], cdtype.name)
    return out


def ewise_into(op, out, args, cdtype):
    """Write op(args) into the existing tensor `out` (an in-place op or a copy)."""
    if op not in EWISE_OPS and not _fast_path(op, [out]):
        return copy_into(out, _decomposition(op, args, cdtype, out.dtype))
    dev = out._storage.device
    for a in args:
        if isinstance(a, Tensor):
            d = a._storage.device
            if d is not dev and d != dev and not (a.dim() == 0 and d.type == "cpu"):
                raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two "
                                   f"devices, {dev} and {a.device}!")
    shape = tuple(out._shape)  # a plain tuple: Size indexes through Python
    if _numel(shape):
        out._backend.ewise(op, out._strided(), [_operand(a, shape, dev, cdtype.name) for a in args], cdtype.name)
    out._storage.version += 1
    return out


def copy_into(dst, src):
    """dst[...] = src (broadcast, dtype conversion, cross-device)."""
    if isinstance(src, Tensor) and src.device != dst.device and src.dim() > 0:
        src = to_device(src, dst.device)
    return ewise_into("copy", dst, [src], dst.dtype)


def contiguous(t):
    if t.is_contiguous():
        return t
    out = empty(t._shape, t.dtype, t.device)
    if out.numel():
        out._backend.ewise("copy", out._strided(), [t._strided()], t.dtype.name)
    return out


def reduce(op, t, dims, keepdim, out_dtype):
    """Reduce t over `dims` (normalized, sorted) with a backend reduce."""
    shape, stride = tuple(t._shape), t._stride  # a plain tuple: Size indexes through Python
    nd = len(shape)
    keep = [d for d in range(nd) if d not in dims]
    outer = tuple([shape[d] for d in keep])
    perm_shape = outer + tuple([shape[d] for d in dims])
    perm_strides = tuple([stride[d] for d in keep] + [stride[d] for d in dims])
    st = t._storage
    out = empty(outer, out_dtype, st.device)
    if out._storage.numel:
        inp = Strided(st.buf, perm_shape, perm_strides, t._offset, st.dtype.name)
        out._backend.reduce(op, out._strided(), inp)
    if keepdim:
        kshape = tuple([1 if d in dims else shape[d] for d in range(nd)])
        out = Tensor._make(out._storage, kshape, contiguous_strides(kshape), 0)
    return out


def matmul3(a, b, out_dtype):
    """[B,M,K] @ [B,K,N] -> [B,M,N]; a, b any strided 3-d tensors (batch dims broadcast)."""
    Ba, M, K = a._shape
    Bb, _, N = b._shape
    B = Ba if Bb == 1 else Bb  # broadcast: a batch of 1 takes the other's size, 0 included
    out = empty((B, M, N), out_dtype, a._storage.device)
    if out._storage.numel:
        va = Strided(a._storage.buf, (B, M, K), (a._stride[0] if Ba != 1 else 0,) + a._stride[1:],
                  a._offset, a._storage.dtype.name)
        vb = Strided(b._storage.buf, (B, K, N), (b._stride[0] if Bb != 1 else 0,) + b._stride[1:],
                  b._offset, b._storage.dtype.name)
        out._backend.matmul(out._strided(), va, vb)
    return out


def take(src, offsets):
    """out[i] = src.storage[offsets[i]] (offsets: int64 tensor of flat storage positions)."""
    out = empty(offsets._shape, src.dtype, src.device)
    if out.numel():
        out._backend.take(out._strided(), src._storage.buf, src.dtype.name, offsets._strided())
    return out


def put(dst, offsets, values, accumulate):
    """dst.storage[offsets[i]] = values[i] (or +=)."""
    if offsets.numel():
        vals = bview(values, offsets._shape) if isinstance(values, Tensor) else values
        dst._backend.put(dst._storage.buf, dst.dtype.name, offsets._strided(), vals, accumulate)
    dst._bump()


def scan(op, t, dim, out_dtype, with_indices=False):
    """Inclusive scan along dim; returns (values, indices or None)."""
    nd = t.dim()
    perm = [d for d in range(nd) if d != dim] + [dim]
    shape = tuple(t._shape[d] for d in perm)
    v = Strided(t._storage.buf, shape, tuple(t._stride[d] for d in perm), t._offset, t.dtype.name)
    out = empty(shape, out_dtype, t.device)
    idx = empty(shape, int64, t.device) if with_indices else None
    if out.numel():
        out._backend.scan(op, out._strided(), v, idx._strided() if idx is not None else None)
    inv = _inverse_perm(perm)  # results laid out as the input's dims, as PyTorch's
    return contiguous(out.permute(inv)), (contiguous(idx.permute(inv)) if idx is not None else None)


def sort(t, dim, descending, stable):
    nd = t.dim()
    perm = [d for d in range(nd) if d != dim] + [dim]
    shape = tuple(t._shape[d] for d in perm)
    v = Strided(t._storage.buf, shape, tuple(t._stride[d] for d in perm), t._offset, t.dtype.name)
    vals = empty(shape, t.dtype, t.device)
    idx = empty(shape, int64, t.device)
    if vals.numel():
        vals._backend.sort(vals._strided(), idx._strided(), v, descending, stable)
    inv = _inverse_perm(perm)
    return contiguous(vals.permute(inv)), contiguous(idx.permute(inv))


def _inverse_perm(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


def arange(n, start, step, dtype, device):
    out = empty((n,), dtype, device)
    if n:
        out._backend.arange(out._strided(), start, step)
    return out


def random(shape, kind, dtype, device, generator):
    gen = generator if generator is not None else _random.default_generator
    seed, offset = gen._next_draw()
    out = empty(shape, dtype, device)
    if out.numel():
        out._backend.random(out._strided(), kind, seed, offset)
    return out


def to_device(t, device):
    device = as_device(device)
    if t.device == device:
        return t
    src = contiguous(t)
    be = backend_for(t.device)
    try:
        import numpy  # noqa: F401
        data = be.to_numpy(src._strided()).reshape(-1)
    except ImportError:
        data = be.to_flat(src._strided())
    return from_flat(data, t._shape, t.dtype, device)


def fft(x, inverse):
    """The unnormalized discrete Fourier transform of complex x along its last dim (exp(+2 pi i jk / n) when
    inverse): the backend's `fft` primitive."""
    out = empty(x._shape, x.dtype, x.device)
    if out.numel():
        out._backend.fft(out._strided(), x._strided(), inverse)
    return out
