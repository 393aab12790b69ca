"""torch.svd_lowrank and torch.pca_lowrank: PyTorch 2.13's randomized low-rank SVD (torch/_lowrank.py, Halko et
al. 2009, algorithms 4.4 and 5.1), composed of webtorch's randn, matmul, QR and SVD, so it runs on every device,
real or complex, with gradients; on cpu the random start draws PyTorch's numbers. Dense tensors only."""
from . import _dtype
from .ops import _creation, _linalg_ops as _la, linalg as _mm

__all__ = ["svd_lowrank", "pca_lowrank"]


def _floating(A):
    """torch._linalg_utils.get_floating_dtype: A's float16/32/64 dtype, float32 for any other."""
    return A.dtype if A.dtype in (_dtype.float16, _dtype.float32, _dtype.float64) else _dtype.float32


def _approximate_basis(A, q, niter, M):
    """Q with q orthonormal columns such that Q Q^H (A - M) approximates A - M."""
    niter = 2 if niter is None else niter
    R = _creation.randn(A.shape[-1], q, dtype=A.dtype if A.is_complex() else _floating(A), device=A.device)

    def product(X, Y):  # (X - M') Y without forming X - M
        return _mm.matmul(X, Y) if M is None else _mm.matmul(X, Y) - _mm.matmul(M if X is A else M.mH, Y)

    Q = _la.qr(product(A, R)).Q
    for _ in range(niter):
        Q = _la.qr(product(A.mH, Q)).Q
        Q = _la.qr(product(A, Q)).Q
    return Q


def _svd_lowrank(A, q=6, niter=2, M=None):
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    if m < n:  # A tall
        A = A.mH
        M = None if M is None else M.mH
    Q = _approximate_basis(A, q, niter, M)
    B = _mm.matmul(Q.mH, A)
    if M is not None:
        B = B - _mm.matmul(Q.mH, M)
    U, S, Vh = _la.svd(B, full_matrices=False)
    U, V = Q.matmul(U), Vh.mH
    return (V, S, U) if m < n else (U, S, V)


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) with A - M ~ U diag(S) V^H, of rank q."""
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V) of the centered A's low-rank SVD (V's columns: the principal directions)."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter, None)
