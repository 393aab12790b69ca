"""The matmul family and einsum: everything lowers to one batched-matmul primitive."""
from .. import _dtype
from .._geometry import contiguous_strides, numel as _numel
from .._tensor import Tensor
from ..amp import autocast_mode as _autocast
from ..overrides import torch_function
from . import _prims, shape as _shape
from ._common import OUT_DTYPE, composite_op, formula_node, recording, scalar_to, wrap_dim, write_out
from .indexing import index_put_flat
from .registry import register


def _as3d(t, batch):
    """View t ([*batch_t, R, C]) as [B, R, C] without copying when the strides allow."""
    R, C = t.shape[-2], t.shape[-1]
    if t.dim() == 2:
        return t
    nb = _numel(batch)
    tb = tuple(t.shape[:-2])
    if tb != tuple(batch):
        t = t.expand(tuple(batch) + (R, C))
    st = _shape._view_strides(t._shape, t._stride, (nb, R, C))
    if st is None:
        t = _prims.contiguous(t)
        st = (R * C, C, 1)
    return Tensor._make(t._storage, (nb, R, C), st, t._offset)


def _matmul_kernel(a, b):
    """Forward for a.dim() >= 2 and b.dim() >= 2."""
    ash, bsh = tuple(a._shape), tuple(b._shape)  # plain tuples: Size indexes through Python
    M, K = ash[-2:]
    N = bsh[-1]
    dt = a.dtype
    if K == 1 and len(bsh) == 2 and N > 1 and _numel(ash[:-1]) > 1 and dt in (_dtype.float32, _dtype.float64):
        # PyTorch's CPU gemm writes each product of an inner size 1 as it is (-0.0 stays -0.0); every other
        # inner size, one row or column (gemv), batched and half-precision products start the sum from +0
        return _prims.ewise("mul", [a, b], dt, dt)
    if len(bsh) == 2 and len(ash) > 2:
        # fold a's batch into rows: one big matrix product against the shared weight
        batch = ash[:-2]
        a2 = _as3d(a, batch)
        a2 = Tensor._make(a2._storage, (1, a2.shape[0] * M, K), (0, a2._stride[1], a2._stride[2]), a2._offset) \
            if a2._stride[0] == M * a2._stride[1] else _prims.contiguous(a2).reshape(1, -1, K)
        out = _prims.matmul3(a2, _lift(b), dt)
        return Tensor._make(out._storage, batch + (M, N), contiguous_strides(batch + (M, N)), 0)
    batch = _prims.broadcast_shapes(ash[:-2], bsh[:-2])
    a3 = _lift(a) if len(ash) == 2 else _as3d(a, batch)
    b3 = _lift(b) if len(bsh) == 2 else _as3d(b, batch)
    out = _prims.matmul3(a3, b3, dt)
    shape = tuple(batch) + (M, N)
    return Tensor._make(out._storage, shape, contiguous_strides(shape), 0)


# [..., M, K] @ [..., K, N] with broadcast batch dims (both operands at least 2-d)
Matmul = formula_node("BmmBackward0", _matmul_kernel, ("a", "b"))
Mm = formula_node("MmBackward0", _matmul_kernel, ("a", "b"))


def _lift(t):
    if len(t._shape) == 3:
        return t
    return Tensor._make(t._storage, (1,) + tuple(t._shape), (0,) + t._stride, t._offset)


def _check_mm(a, b, name):
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        for x, nm in ((a, "input"), (b, "other")):
            if not isinstance(x, Tensor):
                raise TypeError(f"{name}(): argument '{nm}' must be Tensor, not {type(x).__name__}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_tn(a.dtype)} != {_tn(b.dtype)}")
    if a.dtype is _dtype.bool_:
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    _prims.common_device([a, b])


def _tn(dt):
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
            "int32": "int", "bool": "bool", "uint8": "unsigned char"}.get(dt.name, dt.name)


@register
@torch_function
def matmul(input, other, *, out=None):
    a, b = _mm_operands(input, other, "matmul")
    da, db = a.dim(), b.dim()
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if da == 1 and db == 1:
        return dot(a, b, out=out)
    if da == 2 and db == 1:
        return mv(a, b, out=out)
    if da == 1:
        r = matmul(a.unsqueeze(0), b)
        if da == 1 and db == 2 and recording(r):  # PyTorch squeezes in place here: SqueezeBackward4
            r = _shape._view_apply(_shape.SqueezeDimInplace, r, r.shape[1:], r.stride()[1:])
            return write_out(r, out, exact=OUT_DTYPE)
        return write_out(r.squeeze(-2), out, exact=OUT_DTYPE)
    if db == 1 and da >= 3 and recording(a, b) and _foldable(a, b):
        # as PyTorch: fold a's batch into rows, one mv, and an unsafe view back
        r = mv(a.reshape(_numel(a.shape[:-1]), a.shape[-1]), b)
        return write_out(_unsafe_view(r, tuple(a.shape[:-1])), out, exact=OUT_DTYPE)
    if db == 1:
        r = matmul(a, b.unsqueeze(-1))
        return write_out(r.squeeze(-1), out, exact=OUT_DTYPE)
    if a.shape[-1] != b.shape[-2]:
        if da == 2 and db == 2:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
                               f"{b.shape[0]}x{b.shape[1]})")
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b.shape[0] if db > 2 else 1}, {a.shape[-1]}] but got: "
                           f"[{b.shape[0] if db > 2 else 1}, {b.shape[-2]}].")
    F = Mm if da == 2 and db == 2 else Matmul
    if recording(a, b):
        if da >= 3 and db == 2 and _foldable(a, b):
            # as PyTorch (nn.Linear on a batch of sequences): a's batch folded into rows, one mm
            # (MmBackward0: a 2-d weight gradient, no batched product to reduce), an unsafe view back
            r = Mm.apply(a.reshape(_numel(a.shape[:-1]), a.shape[-1]), b)
            return write_out(_unsafe_view(r, tuple(a.shape[:-1]) + (b.shape[-1],)), out, exact=OUT_DTYPE)
        return write_out(F.apply(a, b), out, exact=OUT_DTYPE)
    return write_out(_matmul_kernel(a, b), out, exact=OUT_DTYPE)


def _foldable(a, b):
    """PyTorch's should_fold for a (>= 3-d) @ b (1-d or 2-d): when b needs a gradient, or when
    a's batch folds into rows without a copy."""
    return b._requires_grad or \
        _shape._view_strides(a._shape, a._stride, (_numel(a.shape[:-1]), a.shape[-1])) is not None


def _unsafe_view(t, shape):
    return _shape._view_apply(_shape.UnsafeView, t, shape, contiguous_strides(shape))


def _mm_operands(input, mat2, name, rank=None, errors=()):
    """input and mat2 as `name` multiplies them: cast under autocast to its low precision, checked
    (PyTorch's errors; `errors`: each operand's when it is not `rank`-D)."""
    if _autocast.STATE and isinstance(input, Tensor) and isinstance(mat2, Tensor):
        input, mat2 = _autocast.cast_lower(input, mat2)
    _check_mm(input, mat2, name)
    for t, err in zip((input, mat2), errors):
        if t.dim() != rank:
            raise RuntimeError(err)
    return input, mat2


@register
@torch_function
def mm(input, mat2, *, out=None):
    input, mat2 = _mm_operands(input, mat2, "mm", 2, ("self must be a matrix", "mat2 must be a matrix"))
    return matmul(input, mat2, out=out)


@register
@torch_function
def bmm(input, mat2, *, out=None):
    input, mat2 = _mm_operands(input, mat2, "bmm", 3, ("batch1 must be a 3D tensor", "batch2 must be a 3D tensor"))
    if input.shape[0] != mat2.shape[0]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{input.shape[0]}, "
                           f"{input.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    return matmul(input, mat2, out=out)


def _mv_kernel(a, v):
    return _matmul_kernel(a, v.unsqueeze(-1)).squeeze(-1)


def _dot_kernel(a, b):
    return _matmul_kernel(a.unsqueeze(0), b.unsqueeze(-1)).reshape(())


Mv = formula_node("MvBackward0", _mv_kernel, ("a", "b"))
Dot = formula_node("DotBackward0", _dot_kernel, ("a", "b"))


# mv's and dot's operand checks: (input dims, other dims), sizes agree, PyTorch's three messages (the
# last for an out= of another dtype)
_PRODUCT_CHECKS = {
    "mv": ((2, 1), lambda a, b: a.shape[1] == b.shape[0],
           "vector + matrix @ vector expected, got 1, {ad}, {bd}",
           "size mismatch, got input ({a0}), mat ({a0}x{a1}), vec ({b0})",
           "addmv input tensors must have the same dtype, but got {o}, {r}, and {r}"),
    "dot": ((1, 1), lambda a, b: a.shape[0] == b.shape[0],
            "1D tensors expected, but got {ad}D and {bd}D tensors",
            "inconsistent tensor size, expected tensor [{a0}] and src [{b0}] to have the same number of elements, "
            "but got {a0} and {b0} elements respectively",
            "result dtype {o} does not match input dtype {r}"),
}


def _product(node, name, a, b, out):
    """The product a (x) b of the formula node `node` after `name`'s checks, recorded when it needs a graph,
    into `out`."""
    _check_mm(a, b, name)
    dims, agree, dims_msg, size_msg, out_msg = _PRODUCT_CHECKS[name]
    if (a.dim(), b.dim()) != dims:
        raise RuntimeError(dims_msg.format(ad=a.dim(), bd=b.dim()))
    if not agree(a, b):
        raise RuntimeError(size_msg.format(a0=a.shape[0], a1=a.shape[-1], b0=b.shape[0]))
    return write_out(node.apply(a, b) if recording(a, b) else node.kernel(a, b), out, exact=out_msg)


@register
@torch_function
def mv(input, vec, *, out=None):
    return _product(Mv, "mv", input, vec, out)


@register
@torch_function
def dot(input, tensor, *, out=None):
    return _product(Dot, "dot", input, tensor, out)


inner_1d = dot


@register
@torch_function
def vdot(input, other, *, out=None):
    """dot(conj(input), other)."""
    return dot(input.conj() if isinstance(input, Tensor) else input, other, out=out)


@register
@torch_function
def outer(input, vec2):
    return input.unsqueeze(-1) * vec2.unsqueeze(0)


ger = outer
register(outer, "ger")


@register
def inner(input, other):
    if input.dim() == 0 or other.dim() == 0:
        return input * other
    return tensordot(input, other, ([-1], [-1]))


def _addmm_kernel(input, mat1, mat2, beta, alpha):
    """float16 / bfloat16: the product, scaling and bias in float32, rounded once (PyTorch's CPU gemm epilogue)."""
    low = mat1.dtype if mat1.dtype.kind == "f" and mat1.dtype.itemsize == 2 and input.dtype is mat1.dtype else None
    if low is not None:
        input, mat1, mat2 = input.float(), mat1.float(), mat2.float()
    r = _matmul_kernel(mat1, mat2)
    if alpha != 1:
        r = r * alpha
    r = r + (input if beta == 1 else input * beta) if beta != 0 else r
    return r if low is None else r.to(low)


# beta * input + alpha * (mat1 @ mat2): nn.Linear's node on 2-d input
Addmm = formula_node("AddmmBackward0", _addmm_kernel, ("input", "mat1", "mat2", "beta", "alpha"))


@register
@torch_function
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    if _autocast.STATE and isinstance(input, Tensor) and isinstance(mat1, Tensor) and isinstance(mat2, Tensor):
        mat1, mat2, input = _autocast.cast_lower(mat1, mat2, input)  # autocast: low precision
    _check_mm(mat1, mat2, "addmm")
    if mat1.dim() != 2:
        raise RuntimeError("mat1 must be a matrix, got " + str(mat1.dim()) + "-D tensor")
    if mat2.dim() != 2:
        raise RuntimeError("mat2 must be a matrix, got " + str(mat2.dim()) + "-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    beta, alpha = scalar_to(beta, mat1.dtype), scalar_to(alpha, mat1.dtype)
    if mat1.dtype.kind in "fc" and recording(input, mat1, mat2):
        return write_out(Addmm.apply(input, mat1, mat2, beta, alpha), out, exact=OUT_DTYPE)
    return write_out(_addmm_kernel(input, mat1, mat2, beta, alpha), out, exact=OUT_DTYPE)


def _add_scaled(input, product, a, b, beta, alpha):
    """beta * input + alpha * product(a, b), the scalars in a's dtype; input unread where beta is 0 (PyTorch's rule).
    float16 / bfloat16: computed in float32, rounded once (as `_addmm_kernel`)."""
    beta, alpha = scalar_to(beta, a.dtype), scalar_to(alpha, a.dtype)
    low = a.dtype if a.dtype.kind == "f" and a.dtype.itemsize == 2 and input.dtype is a.dtype else None
    if low is not None:
        input, a, b = input.float(), a.float(), b.float()
    r = product(a, b) * alpha
    r = r + input * beta if beta != 0 else r
    return r if low is None else r.to(low)


@register
@composite_op("AddmvBackward0")
def addmv(input, mat, vec, *, beta=1, alpha=1):
    return _add_scaled(input, mv, mat, vec, beta, alpha)


@register
@composite_op("BaddbmmBackward0")
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    return _add_scaled(input, bmm, batch1, batch2, beta, alpha)


@register
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    if batch1.dtype.kind == "f" and batch1.dtype.itemsize == 2 and batch1.dim() == 3 and batch1.shape[0]:
        # float16 / bfloat16 as PyTorch's CPU kernel: one addmm per batch, each rounded to the dtype
        r = addmm(input, batch1[0], batch2[0], beta=beta, alpha=alpha)
        for i in range(1, batch1.shape[0]):
            r = addmm(r, batch1[i], batch2[i], alpha=alpha)
        return r
    return _add_scaled(input, lambda a, b: bmm(a, b).sum(0), batch1, batch2, beta, alpha)


@register
def tensordot(a, b, dims=2):
    if isinstance(dims, int):
        da = list(range(a.dim() - dims, a.dim()))
        db = list(range(dims))
    else:
        da, db = [list(d) if isinstance(d, (list, tuple)) else [d] for d in dims]
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
        da = [d % a.dim() for d in da]
        db = [d % b.dim() for d in db]
    for x, y in zip(da, db):  # a contracted dim of size 1 broadcasts against the other's
        sa, sb = a.shape[x], b.shape[y]
        if sa != sb and 1 not in (sa, sb):
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sa} in dim {x} and "
                               f"second has size {sb} in dim {y}")
        if sa == 1 and sb != 1:
            a = a.expand(tuple(sb if k == x else s for k, s in enumerate(a.shape)))
        elif sb == 1 and sa != 1:
            b = b.expand(tuple(sa if k == y else s for k, s in enumerate(b.shape)))
    fa = [d for d in range(a.dim()) if d not in da]
    fb = [d for d in range(b.dim()) if d not in db]
    K = _numel([a.shape[d] for d in da])
    am = a.permute(fa + da).reshape(_numel([a.shape[d] for d in fa]), K)
    bm = b.permute(db + fb).reshape(K, _numel([b.shape[d] for d in fb]))
    return matmul(am, bm).reshape([a.shape[d] for d in fa] + [b.shape[d] for d in fb])


@register
@composite_op("TraceBackward0")
def trace(input):
    if input.dim() != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim " + str(input.dim()))
    return input.diagonal().sum()


@register
def diag(input, diagonal=0):
    if input.dim() == 1:
        m = input.shape[0]
        n = m + abs(diagonal)
        start = diagonal if diagonal >= 0 else -diagonal * n
        lin = _prims.arange(m, start, n + 1, _dtype.int64, input.device)
        z = input.new_zeros((n * n,))
        return index_put_flat(z, lin, input, False).reshape(n, n)
    if input.dim() != 2:
        raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + str(input.dim()) + "D")
    return input.diagonal(diagonal).clone()


@register
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    nd = input.dim() + 1
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = input.shape[-1] + abs(offset)
    out = _shape.stack([diag(v, offset) for v in input.reshape(-1, input.shape[-1])]).reshape(
        tuple(input.shape[:-1]) + (n, n))
    return _shape.movedim(out, (-2, -1), (d1, d2))


@register
@composite_op("LinalgCrossBackward0")
def cross(input, other, dim=None):
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if dim is None:
        dim = next((i for i, s in enumerate(input.shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    d = wrap_dim(dim, input.dim())
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} and "
                           f"{other.shape[d]}")
    input, other = _shape.broadcast_tensors(input, other)
    a0, a1, a2 = input.unbind(d)
    b0, b1, b2 = other.unbind(d)
    return _shape.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], d)


# ---- einsum -------------------------------------------------------------------------------------
def _parse_einsum(eq, operands):
    eq = eq.replace(" ", "")
    if "->" in eq:
        lhs, out = eq.split("->")
    else:
        lhs, out = eq, None
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError("einsum(): more operands were provided than specified in the equation"
                         if len(operands) > len(terms) else
                         "einsum(): fewer operands were provided than specified in the equation")
    # expand ellipses into fresh capital-free symbols
    ell_syms = "".join(chr(0x100 + i) for i in range(16))
    max_ell = 0
    parsed = []
    for t, op in zip(terms, operands):
        if "..." in t:
            n_ell = op.dim() - (len(t) - 3)
            max_ell = max(max_ell, n_ell)
            t = t.replace("...", ell_syms[16 - n_ell:16] if n_ell else "")
        if len(t) != op.dim():
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(t)}) does not match the "
                               f"number of dimensions ({op.dim()}) for operand {len(parsed)}"
                               + ("" if "..." in eq else " and no ellipsis was given"))
        parsed.append(t)
    if out is None:
        counts = {}
        for t in parsed:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = ell_syms[16 - max_ell:16] + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell_syms))
    else:
        out = out.replace("...", ell_syms[16 - max_ell:16] if max_ell else "")
    return parsed, out


def _einsum_single(t, x, keep):
    """Take diagonals of repeated labels and sum labels not in keep. Returns (labels, tensor)."""
    while True:
        dup = next((c for c in t if t.count(c) > 1), None)
        if dup is None:
            break
        i = t.index(dup)
        j = t.index(dup, i + 1)
        x = x.diagonal(0, i, j)
        t = t[:i] + t[i + 1:j] + t[j + 1:] + dup
    drop = [i for i, c in enumerate(t) if c not in keep]
    if drop:
        x = x.sum(drop)
        t = "".join(c for i, c in enumerate(t) if i not in drop)
    return t, x


def _einsum_pair(ta, a, tb, b, keep):
    batch = [c for c in ta if c in tb and c in keep]
    contract = [c for c in ta if c in tb and c not in keep]
    left = [c for c in ta if c not in tb]
    right = [c for c in tb if c not in ta]
    size = {}
    for c, s in list(zip(ta, a.shape)) + list(zip(tb, b.shape)):
        if size.get(c, 1) == 1:
            size[c] = s
    ap = a.permute([ta.index(c) for c in batch + left + contract])
    bp = b.permute([tb.index(c) for c in batch + contract + right])
    # broadcast batch dims of size 1
    bshape = [size[c] for c in batch]
    ap = ap.expand(bshape + list(ap.shape[len(batch):]))
    bp = bp.expand(bshape + list(bp.shape[len(batch):]))
    B, L, K, R = _numel(bshape), _numel([size[c] for c in left]), _numel([size[c] for c in contract]), \
        _numel([size[c] for c in right])
    r = bmm(ap.reshape(B, L, K), bp.reshape(B, K, R))
    return "".join(batch + left + right), r.reshape(bshape + [size[c] for c in left] + [size[c] for c in right])


@register(method=False)
@torch_function
def einsum(equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    terms, out = _parse_einsum(equation, operands)
    items = list(zip(terms, operands))
    # labels needed later: output labels and labels of operands not yet folded
    t0, x0 = items[0]
    rest_labels = set("".join(t for t, _ in items[1:])) | set(out)
    t0, x0 = _einsum_single(t0, x0, rest_labels)
    for i in range(1, len(items)):
        t1, x1 = items[i]
        later = set("".join(t for t, _ in items[i + 1:])) | set(out)
        t1, x1 = _einsum_single(t1, x1, later | set(t0))
        t0, x0 = _einsum_pair(t0, x0, t1, x1, later)
    t0, x0 = _einsum_single(t0, x0, set(out))
    if t0 != out:
        x0 = x0.permute([t0.index(c) for c in out])
    return x0
