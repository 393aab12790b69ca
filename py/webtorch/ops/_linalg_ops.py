"""torch.linalg and the top-level linear-algebra functions (torch.det, torch.svd, ...), composed of
the primitives of `ops/_linalg_factor.py` (LU, Cholesky, triangular solve, QR, eigh, SVD), so that
their gradients are the compositions'. Real and complex dtypes; float64 and complex128 on cpu only (webgpu
has neither)."""
import math

from .. import _dtype
from ..overrides import torch_function
from . import _creation, _linalg_factor as F, shape as _shape
from ._common import formula_node, name_of, recording, write_out, write_outs
from ._prims import broadcast_shapes as _broadcast_shapes
from .reduction import norm as _vector_norm
from .registry import register

rt = F.return_types
_EPS = {"float32": 2.0 ** -23, "float64": 2.0 ** -52}
LinAlgError = F.LinAlgError
_SINGULAR_SOLVE = "torch.linalg.solve: The solver failed because the input matrix is singular."
_SINGULAR_INV = ("linalg.inv: The diagonal element {info} is zero, the inversion could not be completed because "
                 "the input matrix is singular.")
_NOT_PD = ("linalg.cholesky: The factorization could not be completed because the input is not positive-definite "
           "(the leading minor of order {info} is not positive-definite).")


def _eye(n, like):
    return _creation.eye(n, dtype=like.dtype, device=like.device)


def _tied(t, A):
    """t as a result of A in the graph (zero gradient), as PyTorch's results that do not depend on it."""
    return t + A.reshape(-1)[:0].sum()


# ---- LU: factor, unpack, solve ------------------------------------------------------------------

@torch_function
def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    LU, piv, info = F.lu_factor_ex(A, pivot)
    if check_errors:
        F.raise_info(info, "torch.linalg.lu_factor_ex: U[{info},{info}] is zero.")
    return rt.linalg_lu_factor_ex(*write_outs((LU, piv, info), out))


@torch_function
def lu_factor(A, *, pivot=True, out=None):
    F.check_float("torch.linalg.lu_factor", A)
    LU, piv, info = F.lu_factor_ex(A, pivot)
    F.raise_info(info, "torch.linalg.lu_factor: U[{info},{info}] is zero and using it on lu_solve would result in "
                       "a division by zero. If you still want to perform the factorization, consider calling "
                       "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return rt.linalg_lu_factor(*write_outs((LU, piv), out))


def _unpack(LU, pivots, unpack_data=True, unpack_pivots=True):
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    P = F.permutation(pivots, m, LU.dtype) if unpack_pivots else LU.new_zeros((0,))
    if not unpack_data:
        return P, LU.new_zeros((0,)), LU.new_zeros((0,))
    L = LU[..., :, :k].tril(-1) + _creation.eye(m, k, dtype=LU.dtype, device=LU.device)
    return P, L, LU[..., :k, :].triu()


@register(method=False)
@torch_function
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    F.check_float("torch.lu_unpack", LU_data, "LU_data")
    return rt.lu_unpack(*write_outs(_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots), out))


@torch_function
def lu(A, *, pivot=True, out=None):
    F.check_float("linalg.lu", A)
    LU, piv, _ = F.lu_factor_ex(A, pivot)
    return rt.linalg_lu(*write_outs(_unpack(LU, piv), out))


def _lu_solve(LU, pivots, B, left, adjoint):
    if not left:  # X A = B  <=>  A^H X^H = B^H
        return _lu_solve(LU, pivots, B.mH, True, not adjoint).mH
    _, L, U = _unpack(LU, pivots, unpack_pivots=False)
    perm = F.row_order(pivots, LU.shape[-2])
    batch = _broadcast_shapes(tuple(perm.shape[:-1]), tuple(B.shape[:-2]))
    B = B.expand(batch + tuple(B.shape[-2:]))
    if adjoint:  # A^H = U^H L^H P^T: X = P Y, row perm[i] of X is row i of Y
        Y = F.solve_triangular(L.mH, F.solve_triangular(U.mH, B, upper=False), upper=True, unitriangular=True)
        return Y.gather(-2, _rows(perm.argsort(-1), batch, B.shape[-1]))
    Y = F.solve_triangular(L, B.gather(-2, _rows(perm, batch, B.shape[-1])), upper=False, unitriangular=True)
    return F.solve_triangular(U, Y, upper=True)


def _rows(perm, batch, k):
    """Row indices perm [*b, m] as gather's index over [*batch, m, k]."""
    return perm.expand(batch + tuple(perm.shape[-1:])).unsqueeze(-1).expand(batch + (perm.shape[-1], k))


@torch_function
def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    F.check_square("linalg.lu_solve", LU, "LU")
    return write_out(_lu_solve(LU, pivots, B, left, adjoint), out)


# ---- solve, inv, det --------------------------------------------------------------------------

def _vector_rhs(A, B):
    return B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


@torch_function
def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    F.check_square("linalg.solve", A)
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{name_of(A.dtype)} and B of type {name_of(B.dtype)} instead")
    vector = left and _vector_rhs(A, B)
    Bm = B.unsqueeze(-1) if vector else B
    n = A.shape[-1]
    if Bm.shape[-2 if left else -1] != n:
        r, c = (Bm.shape[-2], Bm.shape[-1]) if left else (Bm.shape[-1], Bm.shape[-2])
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {r}x{c})")
    batch = _broadcast_shapes(tuple(A.shape[:-2]), tuple(Bm.shape[:-2]))
    LU, piv, info = F.lu_factor_ex(A.expand(batch + (n, n)))
    X = _lu_solve(LU, piv, Bm.expand(batch + tuple(Bm.shape[-2:])), left, False)
    if check_errors:
        F.raise_info(info, _SINGULAR_SOLVE)
    return rt.linalg_solve_ex(*write_outs((X.squeeze(-1) if vector else X, info), out))


@torch_function
def solve(A, B, *, left=True, out=None):
    X, info = solve_ex(A, B, left=left)
    F.raise_info(info, _SINGULAR_SOLVE)
    return write_out(X, out)


@torch_function
def inv_ex(A, *, check_errors=False, out=None):
    F.check_square("linalg.inv", A)
    LU, piv, info = F.lu_factor_ex(A)
    X = _lu_solve(LU, piv, _eye(A.shape[-1], A).expand(tuple(A.shape)), True, False)
    if check_errors:
        F.raise_info(info, _SINGULAR_INV)
    return rt.linalg_inv_ex(*write_outs((X, info), out))


@torch_function
def inv(A, *, out=None):
    X, info = inv_ex(A)
    F.raise_info(info, _SINGULAR_INV)
    return write_out(X, out)


def _lu_sign(piv, like):
    """(-1)^(number of row swaps) of LAPACK pivots, in like's dtype."""
    k = piv.shape[-1]
    swaps = (piv != _creation.arange(1, k + 1, dtype=piv.dtype, device=piv.device)).sum(-1)
    return 1.0 - 2.0 * (swaps % 2).to(like.dtype)


def _det_kernel(A):
    LU, piv, _ = F.lu_factor_ex(A)
    return LU.diagonal(0, -2, -1).prod(-1) * _lu_sign(piv, A), LU, piv


Det = formula_node("LinalgDetBackward0", _det_kernel, ("A",), outputs=("det", "LU", "pivots"))


@torch_function
def det(A, *, out=None):
    F.check_square("linalg.det", A)
    return write_out((Det.apply(A) if recording(A) else _det_kernel(A))[0], out)


@torch_function
def slogdet(A, *, out=None):
    F.check_square("linalg.slogdet", A)
    LU, piv, _ = F.lu_factor_ex(A)
    d = LU.diagonal(0, -2, -1)
    if A.is_complex():  # det / |det|, differentiable (PyTorch's slogdet_backward takes the sign's gradient)
        sign = d.sgn().prod(-1) * _lu_sign(piv, A)
    else:
        sign = _tied(d.detach().sign().prod(-1) * _lu_sign(piv, A), A)
    return rt.linalg_slogdet(*write_outs((sign, d.abs().log().sum(-1)), out))


# ---- Cholesky, triangular solve ---------------------------------------------------------------

@torch_function
def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    F.check_square("linalg.cholesky", A)
    L, info = F.cholesky_ex(A, upper)
    if check_errors:
        F.raise_info(info, _NOT_PD)
    return rt.linalg_cholesky_ex(*write_outs((L, info), out))


@torch_function
def cholesky(A, *, upper=False, out=None):
    L, info = cholesky_ex(A, upper=upper)
    F.raise_info(info, _NOT_PD)
    return write_out(L, out)


@torch_function
def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    F.check_square("linalg.solve_triangular", A)
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve_triangular: Expected A and B to have the same dtype, but found A of type "
                           f"{name_of(A.dtype)} and B of type {name_of(B.dtype)} instead")
    if B.dim() < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")
    n = A.shape[-1]
    if B.shape[-2 if left else -1] != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    return write_out(F.solve_triangular(A, B, upper, left, unitriangular), out)


# ---- QR, eigh, SVD and what they give -----------------------------------------------------------

@torch_function
def qr(A, mode="reduced", *, out=None):
    F.check_float("linalg.qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           "or 'complete'")
    return rt.linalg_qr(*write_outs(F.qr(A, mode), out))


def _check_eigh(op, A, UPLO):
    if A.dtype.kind not in "fc":
        raise NotImplementedError(f"\"{op}_cpu\" not implemented for '{name_of(A.dtype)}'")
    F.check_square("linalg.eigh", A)
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO in ("U", "u")


@torch_function
def eigh(A, UPLO="L", *, out=None):
    return rt.linalg_eigh(*write_outs(F.eigh(A, _check_eigh("linalg_eigh", A, UPLO)), out))


@torch_function
def eigvalsh(A, UPLO="L", *, out=None):
    return write_out(F.eigh(A, _check_eigh("linalg_eigh", A, UPLO))[0], out)


def _check_eig(op, A):
    """PyTorch's checks of eig's input, in its order: a floating or complex dtype, square matrices, not half."""
    A.dtype.to_complex()  # an integer or bool A: PyTorch's "Unknown Complex ScalarType"
    if A.dim() < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")
    if A.dtype.to_real().itemsize == 2:
        raise NotImplementedError(f"\"linalg_eig_out_cpu\" not implemented for '{name_of(A.dtype)}'")
    return A


@torch_function
def eig(A, *, out=None):
    return rt.linalg_eig(*write_outs(F.eig(_check_eig("linalg.eig", A)), out))


@torch_function
def eigvals(A, *, out=None):
    return write_out(F.eig(_check_eig("linalg.eigvals", A))[0], out)


@torch_function
def svd(A, full_matrices=True, *, driver=None, out=None):
    F.check_float("linalg.svd", A)
    return rt.linalg_svd(*write_outs(F.svd(A, full_matrices), out))


@torch_function
def svdvals(A, *, driver=None, out=None):
    F.check_float("linalg.svdvals", A)
    return write_out(F.svd(A, False)[1], out)


def _tolerance(S, A, atol, rtol):
    """max(atol, rtol * largest singular value), PyTorch's default rtol eps * max(m, n) when neither given."""
    if rtol is None:
        rtol = _EPS[A.dtype.to_real().name] * max(A.shape[-2], A.shape[-1]) if atol is None or \
            (not hasattr(atol, "dim") and atol <= 0) else 0.0
    smax = S.amax(-1, keepdim=True) if S.shape[-1] else S.new_zeros(tuple(S.shape[:-1]) + (1,))
    tol = smax * rtol
    if atol is not None:
        tol = tol.maximum(atol if hasattr(atol, "dim") else tol.new_full((), atol))
    return tol


@torch_function
def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    F.check_float("linalg.pinv", A)
    rtol = rcond if rcond is not None else rtol
    if recording(A):
        return write_out(Pinv.apply(A, atol, rtol, hermitian), out)
    return write_out(_pinv_kernel(A, atol, rtol, hermitian), out)


def _pinv_kernel(A, atol, rtol, hermitian):
    if hermitian:
        L, V = F.eigh(A)
        keep = L.abs() > _tolerance(L.abs(), A, atol, rtol)
        return (V * L.reciprocal().where(keep, 0.0).unsqueeze(-2)) @ V.mH
    U, S, Vh = F.svd(A, False)
    keep = S > _tolerance(S, A, atol, rtol)
    return (Vh.mH * S.reciprocal().where(keep, 0.0).unsqueeze(-2)) @ U.mH


Pinv = formula_node("LinalgPinvBackward0", _pinv_kernel, ("A", "atol", "rtol", "hermitian"))


@torch_function
def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    F.check_float("linalg.matrix_rank", A)
    atol = tol if tol is not None else atol
    S = F.eigh(A)[0].abs() if hermitian else F.svd(A, False)[1]
    return write_out((S > _tolerance(S, A, atol, rtol)).sum(-1), out)


@torch_function
def lstsq(A, B, rcond=None, *, driver=None):
    F.check_float("torch.linalg.lstsq", A, "input")
    vector = B.dim() == A.dim() - 1
    Bm = B.unsqueeze(-1) if vector else B
    m, n = A.shape[-2], A.shape[-1]
    eps = {"float64": 2.0 ** -52, "float16": 2.0 ** -10}.get(A.dtype.to_real().name, 2.0 ** -23)
    rtol = rcond if rcond is not None and rcond >= 0 else eps * max(m, n)
    rank = matrix_rank(A.detach(), rtol=rtol) if driver != "gels" else A.new_zeros((0,), dtype=_dtype.int64)
    if driver != "gels" and A.numel() and not bool((rank == min(m, n)).all()):
        X = pinv(A, rtol=rtol) @ Bm  # rank-deficient: the minimum-norm solution, as gelsy/gelsd/gelss give
    elif m >= n:
        Q, R = F.qr(A)
        X = F.solve_triangular(R, Q.mH @ Bm, True)
    else:
        Q, R = F.qr(A.mH)
        X = Q @ F.solve_triangular(R.mH, Bm, False)
    real = A.dtype.to_real()
    S = F.svd(A.detach(), False)[1] if driver in ("gelsd", "gelss") else A.new_zeros((0,), dtype=real)
    residuals = ((A @ X - Bm).abs() ** 2).sum(-2) if driver in ("gels", "gelsd", "gelss") and m > n else \
        _tied(X.new_zeros((0,), dtype=real), X.real)
    return rt.linalg_lstsq(X.squeeze(-1) if vector else X, residuals.squeeze(-1) if vector else residuals, rank, S)


# ---- LDL (Bunch-Kaufman, LAPACK's sytrf: no derivative in PyTorch) ---------------------------------

@torch_function
def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    F.check_square("torch.linalg.ldl_factor_ex", A)
    if A.numel() == 0:
        res = (A.detach().clone(), A.new_zeros(tuple(A.shape[:-1]), dtype=_dtype.int32),
               A.new_zeros(tuple(A.shape[:-2]), dtype=_dtype.int32))
    else:
        res = F.host("ldl", [A.detach()], hermitian and A.is_complex())
    if check_errors:
        F.raise_info(res[2], "torch.linalg.ldl_factor_ex: Unknown error code: {info}.")
    return rt.linalg_ldl_factor_ex(*write_outs(res, out))


@torch_function
def ldl_factor(A, *, hermitian=False, out=None):
    F.check_square("torch.linalg.ldl_factor", A)
    LD, piv, info = ldl_factor_ex(A, hermitian=hermitian)
    F.raise_info(info, "torch.linalg.ldl_factor: Unknown error code: {info}.")
    return rt.linalg_ldl_factor(*write_outs((LD, piv), out))


@torch_function
def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    F.check_square("torch.linalg.ldl_solve", LD, "LD")
    if B.dim() < 2:
        raise RuntimeError("torch.linalg.ldl_solve: Expected B to have at least 2 dimensions, but it has "
                           f"{B.dim()} dimensions instead")
    batch = _broadcast_shapes(tuple(LD.shape[:-2]), tuple(B.shape[:-2]), tuple(pivots.shape[:-1]))
    n = LD.shape[-1]
    if B.numel() == 0 or n == 0 or 0 in batch:
        return write_out(B.expand(batch + tuple(B.shape[-2:])).clone(), out)
    X = F.host("ldl_solve", [LD.detach().expand(batch + (n, n)), pivots.unsqueeze(-2).expand(batch + (1, n)),
                             B.detach().expand(batch + tuple(B.shape[-2:]))], hermitian and LD.is_complex())[0]
    return write_out(X, out)


# ---- norms, condition number --------------------------------------------------------------------

@torch_function
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    return write_out(_vector_norm(x, ord, dim, keepdim, dtype=dtype), out)


def _to_last(A, dim):
    d0, d1 = (d % A.dim() for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    return A.movedim((d0, d1), (-2, -1)), (d0, d1)


def _keep(r, dims, keepdim):
    return r.unsqueeze(min(dims)).unsqueeze(max(dims)) if keepdim else r


@torch_function
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    F.check_float("linalg.matrix_norm", A)
    if dtype is not None:
        A = A.to(dtype)
    dim = tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dim)}")
    if ord == "fro":
        return write_out(_vector_norm(A, 2, dim, keepdim), out)
    if ord in (1, -1, math.inf, -math.inf):
        sum_dim, red_dim = (dim[0], dim[1]) if abs(ord) == 1 else (dim[1], dim[0])
        s = A.abs().sum(sum_dim, keepdim=True)
        r = s.amax(red_dim, keepdim=True) if ord > 0 else s.amin(red_dim, keepdim=True)
        return write_out(r if keepdim else r.squeeze(dim), out)
    if ord not in ("nuc", 2, -2):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    M, dims = _to_last(A, dim)
    S = F.svd(M, False)[1]
    r = S.sum(-1) if ord == "nuc" else S.amax(-1) if ord == 2 else S.amin(-1)
    return write_out(_keep(r, dims, keepdim), out)


@torch_function
def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) == 2 or (dim is None and ord is not None and A.dim() == 2):
        return matrix_norm(A, "fro" if ord is None else ord, (-2, -1) if dim is None else dim, keepdim, dtype=dtype,
                           out=out)
    if ord is not None and dim is None and A.dim() != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                           f"{A.dim()}D.")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype, out=out)


@torch_function
def cond(A, p=None, *, out=None):
    F.check_float("linalg.cond", A)
    if p in (None, 2, -2):
        S = F.svd(A, False)[1]
        r = S[..., 0] / S[..., -1] if p != -2 else S[..., -1] / S[..., 0]
        return write_out(r, out)
    F.check_square("linalg.cond", A)
    X, info = inv_ex(A)
    r = matrix_norm(A, p) * matrix_norm(X, p)
    return write_out(r.where(info == 0, math.inf), out)


# ---- products, powers, exponential --------------------------------------------------------------

@torch_function
def matrix_power(A, n, *, out=None):
    F.check_square("linalg.matrix_power", A)
    if n == 0:
        return write_out(_tied(_eye(A.shape[-1], A).expand(tuple(A.shape)), A), out)
    if n < 0:
        A, n = inv(A), -n
    if n == 1:
        return write_out(A.clone(), out)
    result, z = None, A
    while n:
        if n & 1:
            result = z if result is None else result @ z
        n >>= 1
        if n:
            z = z @ z
    return write_out(result, out)


def _exp_taylor(A):
    """exp(A) by scaling and squaring of an 18-term Taylor polynomial (Horner), PyTorch's approach."""
    n1 = A.abs().sum(-2).amax(-1).amax().item() if A.numel() else 0.0
    s = max(0, math.ceil(math.log2(n1))) if n1 > 0.5 else 0
    X = A / 2 ** s
    eye = _eye(A.shape[-1], A)
    E = eye + X / 18
    for k in range(17, 0, -1):
        E = eye + (X @ E) / k
    for _ in range(s):
        E = E @ E
    return E


@torch_function
def matrix_exp(A):
    F.check_square("linalg.matrix_exp", A)
    return _exp_taylor(A)


@torch_function
def multi_dot(tensors, *, out=None):
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for i, t in enumerate(tensors):
        if t.dim() not in ((1, 2) if i in (0, len(tensors) - 1) else (2,)):
            which = "first" if i == 0 else "last" if i == len(tensors) - 1 else None
            raise RuntimeError(f"multi_dot(): the {which} tensor must be 1D or 2D but got {t.dim()}D" if which else
                               f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
    first, last = tensors[0].dim() == 1, tensors[-1].dim() == 1
    ms = [tensors[0].unsqueeze(0) if first else tensors[0]] + list(tensors[1:-1]) + \
        [tensors[-1].unsqueeze(-1) if last else tensors[-1]]
    r = ms[0]
    for m in ms[1:]:
        r = r @ m
    if first:
        r = r.squeeze(0)
    if last:
        r = r.squeeze(-1)
    return write_out(r, out)


@torch_function
def vecdot(x, y, *, dim=-1, out=None):
    return write_out((x.conj() * y).sum(dim), out)


@torch_function
def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return A.diagonal(offset, dim1, dim2)


@torch_function
def vander(x, N=None):
    x = x.reshape(1) if x.dim() == 0 else x
    N = x.shape[-1] if N is None else N
    if N <= 1:
        return x.new_ones(tuple(x.shape) + (max(N, 0),)) if N >= 0 else None
    cols = _shape.cat([x.new_ones(tuple(x.shape) + (1,)), x.unsqueeze(-1).expand(tuple(x.shape) + (N - 1,))], -1)
    return cols.cumprod(-1)


@torch_function
def tensorinv(A, ind=2, *, out=None):
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    n = math.prod(rows)
    if n != math.prod(cols):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {math.prod(cols)} != {n}")
    return write_out(inv(A.reshape(n, n)).reshape(cols + rows), out)


@torch_function
def tensorsolve(A, B, dims=None, *, out=None):
    if dims is not None:
        nd = A.dim()
        dims = [d % nd for d in dims]
        A = A.permute([d for d in range(nd) if d not in dims] + dims)
    rest = tuple(A.shape[B.dim():])
    n = B.numel()
    return write_out(solve(A.reshape(n, -1), B.reshape(n)).reshape(rest), out)


@torch_function
def householder_product(A, tau, *, out=None):
    F.check_float("torch.linalg.householder_product", A, "input")
    m, n, k = A.shape[-2], A.shape[-1], tau.shape[-1]
    if n > m:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if k > n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    Q = _tied(_creation.eye(m, n, dtype=A.dtype, device=A.device).expand(tuple(A.shape)), A)
    rows = _creation.arange(m, device=A.device)
    for i in range(k - 1, -1, -1):
        v = A[..., :, i].where(rows > i, (rows == i).to(A.dtype)).unsqueeze(-1)
        Q = Q - tau[..., i, None, None] * (v @ (v.mH @ Q))
    return write_out(Q, out)


# ---- the top-level and Tensor forms (torch.det, x.inverse(), torch.svd, ...) --------------------

register(det, "det")
register(slogdet, "slogdet")
register(matrix_power, "matrix_power")
register(matrix_exp, "matrix_exp")


@register
@torch_function
def logdet(input):
    sign, logabsdet = slogdet(input)
    if input.is_complex():  # PyTorch's: log(sign) + log|det|
        return sign.log() + logabsdet
    return logabsdet.where(sign >= 0, math.nan)


@register
@torch_function
def inverse(input, *, out=None):
    return inv(input, out=out)


@register
@torch_function
def pinverse(input, rcond=1e-15):
    return pinv(input, rtol=rcond)


def _svd_legacy(input, some=True, compute_uv=True, *, out=None):
    F.check_float("linalg.svd", input)
    U, S, Vh = F.svd(input, not some)
    if not compute_uv:
        U, Vh = U.new_zeros(tuple(U.shape)), Vh.new_zeros(tuple(Vh.shape))
    return rt.svd(*write_outs((U, S, Vh.mH), out))


def _qr_legacy(input, some=True, *, out=None):
    return rt.qr(*qr(input, "reduced" if some else "complete", out=out))


def _cholesky_legacy(input, upper=False, *, out=None):
    return cholesky(input, upper=upper, out=out)


def _lu_solve_legacy(input, LU_data, LU_pivots, *, out=None):
    return lu_solve(LU_data, LU_pivots, input, out=out)


def _lu_legacy(A, pivot=True, get_infos=False, out=None):
    LU, piv, info = lu_factor_ex(A, pivot=pivot)
    return (LU, piv, info) if get_infos else (LU, piv)


for _fn, _name in ((_svd_legacy, "svd"), (_qr_legacy, "qr"), (_cholesky_legacy, "cholesky"),
                   (_lu_solve_legacy, "lu_solve"), (_lu_legacy, "lu"), (householder_product, "orgqr")):
    register(torch_function(_fn), _name)


def _cholesky_solve_kernel(x, input2, upper):
    L = input2.mH if upper else input2
    batch = _broadcast_shapes(tuple(x.shape[:-2]), tuple(L.shape[:-2]))
    L = L.expand(batch + tuple(L.shape[-2:]))
    return F.solve_triangular(L.mH, F.solve_triangular(L, x.expand(batch + tuple(x.shape[-2:])), False), True)


CholeskySolve = formula_node("CholeskySolveBackward0", _cholesky_solve_kernel, ("x", "input2", "upper"))


@register
@torch_function
def cholesky_solve(input, input2, upper=False, *, out=None):
    y = CholeskySolve.apply(input, input2, upper) if recording(input, input2) else \
        _cholesky_solve_kernel(input, input2, upper)
    return write_out(y, out)


def _cholesky_inverse_kernel(x, upper):
    return cholesky_solve(_eye(x.shape[-1], x).expand(tuple(x.shape)), x, upper)


CholeskyInverse = formula_node("CholeskyInverseBackward0", _cholesky_inverse_kernel, ("x", "upper"))


@register
@torch_function
def cholesky_inverse(input, upper=False, *, out=None):
    F.check_square("cholesky_inverse", input, "input")
    y = CholeskyInverse.apply(input, upper) if recording(input) else _cholesky_inverse_kernel(input, upper)
    return write_out(y, out)


@register
@torch_function
def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    M = A.mT if transpose else A
    X = F.solve_triangular(M, input, upper != transpose, True, unitriangular)
    return rt.triangular_solve(*write_outs((X, A.clone()), out))


@register
@torch_function
def geqrf(input, *, out=None):
    F.check_float("torch.geqrf", input)
    return rt.geqrf(*write_outs(F.geqrf(input), out))


@register
@torch_function
def ormqr(input, input2, input3, left=True, transpose=False, *, out=None):
    if input.dim() < 2:
        raise RuntimeError("torch.ormqr: input must have at least 2 dimensions.")
    if input3.dim() < 2:
        raise RuntimeError("torch.ormqr: other must have at least 2 dimensions.")
    for t, nm in ((input2, "tau"), (input3, "other")):
        if t.dtype is not input.dtype:
            raise RuntimeError(f"torch.ormqr: Expected input and {nm} to have the same dtype, but input has dtype"
                               f"{name_of(input.dtype)} and {nm} has dtype {name_of(t.dtype)}")
    mn = input3.shape[-2 if left else -1]
    if input2.shape[-1] != min(mn, input.shape[-1]):
        raise RuntimeError("torch.ormqr: tau.shape[-1] must be equal to min(other.shape[-2], input.shape[-1])")
    Q = householder_product(_pad_columns(input[..., :mn, :input2.shape[-1]]), input2)
    Q = Q.mH if transpose else Q
    return write_out(Q @ input3 if left else input3 @ Q, out)


def _pad_columns(A):
    """A's reflectors as a square matrix (columns past A's are unused: Q is m x m)."""
    m, n = A.shape[-2], A.shape[-1]
    return A if m == n else _shape.cat([A, A.new_zeros(tuple(A.shape[:-2]) + (m, m - n))], -1)


@register(method=False)
@torch_function
def chain_matmul(*matrices, out=None):
    if len(matrices) == 1:
        return write_out(matrices[0].clone(), out)
    return multi_dot(matrices, out=out)


# removed in PyTorch 1.9 but still named there: calling one raises PyTorch's message
_REMOVED_PREFIX = "This function was deprecated since version 1.9 and is now removed. "
_REMOVED = {
    "lstsq": "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has "
             "reversed arguments and does not return the QR decomposition in the returned tuple (although it "
             "returns other information about the problem).\n\nTo get the QR decomposition consider using "
             "`torch.linalg.qr`.\n\nThe returned solution in `torch.lstsq` stored the residuals of the "
             "solution in the last m - n columns of the returned value whenever m > n. In torch.linalg.lstsq, "
             "the residuals are in the field 'residuals' of the returned named tuple.\n\nThe unpacking of the "
             "solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\nshould be replaced with:\nX = "
             "torch.linalg.lstsq(A, B).solution",
    "symeig": "The default behavior has changed from using the upper triangular portion of the matrix by "
              "default to using the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) should be "
              "replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = "
              "torch.symeig(A, eigenvectors=True) should be replaced with:\nL, V = torch.linalg.eigh(A, "
              "UPLO='U' if upper else 'L')",
    "eig": "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real "
           "tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\nL_complex = "
           "torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) should be replaced "
           "with:\nL_complex, V_complex = torch.linalg.eig(A)",
    "solve": "`torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its "
             "arguments reversed and does not return the LU factorization.\n\nTo get the LU factorization see "
             "`torch.lu`, which can be used with `torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, "
             "A).solution should be replaced with:\nX = torch.linalg.solve(A, B)",
}


def _removed(name, message):
    def removed(*args, **kwargs):
        raise RuntimeError(_REMOVED_PREFIX + message)
    removed.__name__ = removed.__qualname__ = name
    return removed


for _name, _message in _REMOVED.items():
    register(_removed(_name, _message), _name)


__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "det", "diagonal", "eig", "eigh", "eigvals",
           "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex", "ldl_solve", "lstsq",
           "lu", "lu_factor", "lu_factor_ex",
           "lu_solve", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv",
           "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve",
           "vander", "vecdot", "vector_norm"]
