"""The few factorizations the multivariate distributions need (MultivariateNormal, LowRankMultivariateNormal,
Wishart, the positive_definite constraint, the KL pairs of normals), written in webtorch ops one column or row at a
time: batched, differentiable through autograd, on every device. torch.linalg's own kernels (issue #24) replace
them where they exist; the results are the same factorizations (Cholesky, triangular solves)."""
from collections import namedtuple

import webtorch as torch

_CholeskyEx = namedtuple("linalg_cholesky_ex", "L info")
_Slogdet = namedtuple("linalg_slogdet", "sign logabsdet")


def _factor(A):
    """(L, pivots): the lower Cholesky factor of A, column by column, and each column's pivot before its sqrt. A is
    read as (A + A^T) / 2, so the gradient is symmetric, as PyTorch's cholesky_backward makes it."""
    A = (A + A.mT) / 2
    n = A.shape[-1]
    rows = torch.arange(n, device=A.device)
    cols, pivots = [], []
    for j in range(n):
        v = A[..., :, j]
        if j:
            Lp = torch.stack(cols, -1)
            v = v - (Lp @ Lp[..., j, :].unsqueeze(-1)).squeeze(-1)
        pivots.append(v[..., j])
        cols.append(torch.where(rows >= j, v / v[..., j:j + 1].sqrt(), 0.0))
    return torch.stack(cols, -1), torch.stack(pivots, -1)


def _square(A, name):
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")


def cholesky_ex(A, *, upper=False, check_errors=False):
    _square(A, "linalg.cholesky")
    L, pivots = _factor(A)
    bad = ~(pivots > 0)
    first = torch.where(bad, torch.arange(1, A.shape[-1] + 1, device=A.device), A.shape[-1] + 1).amin(-1)
    info = torch.where(bad.any(-1), first, 0).to(torch.int32)
    return _CholeskyEx(L.mT if upper else L, info)


def cholesky(A, *, upper=False):
    L, info = cholesky_ex(A, upper=upper)
    if bool((info > 0).any()):
        order = int(info.max())
        raise RuntimeError(f"linalg.cholesky: The factorization could not be completed because the input is not "
                           f"positive-definite (the leading minor of order {order} is not positive-definite).")
    return L


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """X with A @ X = B (left) or X @ A = B, A triangular: forward or back substitution, one row at a time."""
    if not left:
        return solve_triangular(A.mT, B.mT, upper=not upper, unitriangular=unitriangular).mT
    batch = torch.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    A = A.expand(batch + A.shape[-2:])
    B = B.expand(batch + B.shape[-2:])
    n = A.shape[-1]
    order = range(n - 1, -1, -1) if upper else range(n)
    x = [None] * n
    done = []
    for i in order:
        r = B[..., i, :]
        if done:
            coef = A[..., i, done]
            r = r - (coef.unsqueeze(-2) @ torch.stack([x[k] for k in done], -2)).squeeze(-2)
        x[i] = r if unitriangular else r / A[..., i, i:i + 1]
        done.append(i)
    return torch.stack(x, -2)


def cholesky_solve(B, L, upper=False):
    """X with (L L^T) X = B for the lower factor L (U^T U for upper=True)."""
    if upper:
        L = L.mT
    return solve_triangular(L.mT, solve_triangular(L, B, upper=False), upper=True)


def cholesky_inverse(L, upper=False):
    n = L.shape[-1]
    return cholesky_solve(torch.eye(n, dtype=L.dtype, device=L.device).expand(L.shape), L, upper=upper)


def slogdet_pd(A):
    """slogdet of a positive-definite A (Wishart's support) from its Cholesky factor: sign 1."""
    logdet = 2 * cholesky(A).diagonal(dim1=-2, dim2=-1).log().sum(-1)
    return _Slogdet(torch.ones_like(logdet), logdet)
