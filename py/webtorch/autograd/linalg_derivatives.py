"""The derivative rows of torch.linalg's primitives (`ops/_linalg_factor.py`), as PyTorch's
derivatives.yaml and FunctionsManual.cpp write them, real and complex (the conjugate Wirtinger convention:
.mH, conj; eigh's and svd's checks that a loss does not depend on the eigenvectors' or singular vectors'
phases). Part of
`DERIVATIVES`; like it, written with Tensor methods only (`Tensor._solve_triangular`,
`Tensor._lu_permutation` and `Tensor._solve_host` are bound for it)."""
import math

from .grad_mode import is_grad_enabled


def _tri(A, B, upper, left=True, unit=False):
    return A._solve_triangular(A, B, upper, left, unit)


def _eye(t, n):
    r = t._arange(n, device=t.device)
    return (r.unsqueeze(-1) == r).to(t.dtype)


def _diag(v):
    return v.unsqueeze(-1) * _eye(v, v.shape[-1])


def _lu(grads, LU, pivots):
    """linalg_lu_backward of A = P L U (L: m x k unit lower, U: k x n upper), from LU's gradient:
    with M = tril(L^T gL, -1) + triu(gU U^T) (and the extra blocks of a wide or tall A),
    gA = P L^{-T} M U^{-T}."""
    g = grads[0]
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    eye = _eye(LU, k)
    L = LU[..., :, :k].tril(-1) + (eye if m == k else eye._cat([eye, LU.new_zeros((m - k, k))], -2))
    U = LU[..., :k, :].triu()
    gL, gU = g[..., :, :k].tril(-1), g[..., :k, :].triu()
    if m == n:
        M = (L.mH @ gL).tril(-1) + (gU @ U.mH).triu()
        gA = _tri(U.mH, _tri(L.mH, M, True, True, True), False, False)
    elif m < n:  # A = P L [U1 U2]
        U1, U2, gU1, gU2 = U[..., :k], U[..., k:], gU[..., :k], gU[..., k:]
        M = (L.mH @ gL - gU2 @ U2.mH).tril(-1) + (gU1 @ U1.mH).triu()
        gA = _tri(L.mH, g._cat([_tri(U1.mH, M, False, False), gU2], -1), True, True, True)
    else:  # A = P [L1; L2] U
        L1, L2, gL1, gL2 = L[..., :k, :], L[..., k:, :], gL[..., :k, :], gL[..., k:, :]
        M = (L1.mH @ gL1).tril(-1) + (gU @ U.mH - L2.mH @ gL2).triu()
        gA = _tri(U.mH, g._cat([_tri(L1.mH, M, True, True, True), gL2], -2), False, False)
    return LU._lu_permutation(pivots, m, LU.dtype) @ gA


def _prod_others(S):
    """prod_safe_zeros_backward: the product of the other entries of each row's last dim (no division)."""
    one = S[..., :1] * 0 + 1
    left = S._cat([one, S[..., :-1]], -1).cumprod(-1)
    return left * S._cat([one, S[..., 1:].flip(-1)], -1).cumprod(-1).flip(-1)


def _det(grads, A, det, LU, pivots):
    """PyTorch's linalg_det_backward: g det A^{-T}, solved against A = P L U with g det I on the right, zero
    for a matrix whose LU has a zero pivot (det exactly 0: LAPACK's triangular solve leaves that zero
    right-hand side as it is). Under create_graph, differentiable in A: the inverse, and where |det| < 100 eps
    (PyTorch's mask) the SVD's det U det V prod-of-the-others(S) (the cofactors, also of a singular A)."""
    g, n = grads[0], LU.shape[-1]
    d = (g * det.conj()).unsqueeze(-1).unsqueeze(-1)
    if not is_grad_enabled():
        X = _tri(LU.mH, d * _eye(LU, n), False)   # U^T Y = d I
        X = LU._lu_permutation(pivots, n, LU.dtype) @ _tri(LU.mH, X, True, True, True)   # L^T Z = Y, then P Z
        return X.where(~(det == 0).unsqueeze(-1).unsqueeze(-1), 0.0)
    eps = 2.0 ** -23 if A.dtype.itemsize == (8 if A.is_complex() else 4) else 2.0 ** -52
    singular = (det.abs() < 100 * eps).unsqueeze(-1).unsqueeze(-1)
    X = d * A.where(~singular, _eye(A, n)).inverse().mH
    if not singular.any():   # as PyTorch's masked_fmap, the singular formula only where needed
        return X
    return X.where(~singular, g.unsqueeze(-1).unsqueeze(-1) * _conj_cofactors(A))


def _conj_cofactors(A):
    """conj(det A A^-T), the cofactors' conjugates, of a (nearly) singular A: the value the SVD's det U det V^H
    prod-of-the-others(S) (PyTorch's); the derivative that of the mean of conj(det M) M^-H over the n matrices
    M = A + r w^k I, w = e^{2 pi i / n}, r = 2 |A|_F (the cofactors of A + zI are a polynomial of degree n - 1 in
    z: its mean over a circle is its value at the centre). Each M is well conditioned (its smallest singular value
    >= r - |A|_2 >= |A|_F), where the SVD's derivative divides by A's zero singular value: for a complex A that
    phase term is rounding noise over zero."""
    n = A.shape[-1]
    U, S, V = A.detach().svd()
    value = (U * ((U.det().conj() * V.det()).unsqueeze(-1) * _prod_others(S)).unsqueeze(-2)) @ V.mH
    Ac = A * (1 + 0j)
    r = 2 * A.detach().abs().square().sum((-2, -1)).sqrt()
    r = r.where(r > 0, 1.0).unsqueeze(-1).unsqueeze(-1).unsqueeze(-1)
    w = Ac.new_tensor([complex(math.cos(2 * math.pi * k / n), math.sin(2 * math.pi * k / n)) for k in range(n)])
    M = Ac.unsqueeze(-3) + (r * w.unsqueeze(-1).unsqueeze(-1)) * _eye(Ac, n)
    K = (M.det().conj().unsqueeze(-1).unsqueeze(-1) * M.inverse().mH).mean(-3)
    K = K if A.is_complex() else K.real
    return value + (K - K.detach())


def _cholesky(grads, L, upper):
    gL = grads[0]
    if upper:
        L, gL = L.mH, gL.mH
    gA = (L.mH @ gL).tril()
    gA = 0.5 * (gA + gA.tril(-1).mH)
    return _tri(L, _tri(L.mH, gA, True), False, False)


def _trisolve_A(g, A, X, upper, left, unitriangular):
    gB = _tri(A.mH, g, not upper, left, unitriangular)
    gA = -(gB @ X.mH) if left else -(X.mH @ gB)
    return gA.triu(int(unitriangular)) if upper else gA.tril(-int(unitriangular))


def _qr(grads, Q, R, mode):
    gQ, gR = grads
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
                           "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    if m < n:  # A = Q [R1 R2]: R2 = Q^T A2 adds A2 gR2^T to Q's gradient
        A2 = Q @ R[..., m:]
        gA1 = _qr_square((gQ + A2 @ gR[..., m:].mH, gR[..., :m]), Q, R[..., :m])
        return gA1._cat([gA1, Q @ gR[..., m:]], -1)
    return _qr_square(grads, Q, R)


def _qr_square(grads, Q, R):
    gQ, gR = grads
    X = (gR @ R.mH - Q.mH @ gQ).triu()
    S = X + X.mH
    S = S - 0.5 * _diag(S.diagonal(0, -2, -1))  # the diagonal: re X (X's alone for a real one)
    return _tri(R.mH, Q @ S + gQ, False, False)


def _eigh(grads, L, V):
    gL, gV = grads
    E = L.unsqueeze(-2) - L.unsqueeze(-1)
    n = L.shape[-1]
    eye = _eye(L, n)
    VhgV = V.mH @ gV
    if V.is_complex() and (VhgV.diagonal(0, -2, -1).imag.abs() > 1e-2).any():  # allclose(imag, 0, 1e-2, 1e-2)
        raise RuntimeError("linalg_eigh_backward: The eigenvectors in the complex case are specified up to "
                           "multiplication by e^{i phi}. The specified loss function depends on this quantity, so "
                           "it is ill-defined.")
    inner = 0.5 * (VhgV - VhgV.mH) / (E + eye) * (1 - eye) + _diag(gL)  # projected onto skew matrices
    return V @ inner @ V.mH


def _eig(grads, L, V):
    """linalg_eig_backward: gA = V^{-H} (diag(gL) + (V^H gV - V^H V diag(re(V^H gV))) / conj(E)) V^H,
    E_ij = L_j - L_i off the diagonal (its real part for a real A: the cast to A's dtype)."""
    gL, gV = grads
    eye = _eye(L, L.shape[-1])
    Vh = V.mH
    VhgV = Vh @ gV
    if (VhgV.diagonal(0, -2, -1).imag.abs() > 1e-2).any():  # PyTorch's allclose(imag, 0, 1e-2, 1e-2)
        raise RuntimeError("linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                           "multiplication by e^{i phi}. The specified loss function depends on this quantity, so "
                           "it is ill-defined.")
    VhgV = VhgV - Vh @ (V * VhgV.diagonal(0, -2, -1).real.unsqueeze(-2))
    Lc = L.conj()
    M = VhgV / (Lc.unsqueeze(-2) - Lc.unsqueeze(-1) + eye) * (1 - eye) + _diag(gL)
    return V._solve_host(Vh, M @ Vh)


def _svd(grads, U, S, Vh, full_matrices):
    gU, gS, gVh = grads
    m, n = U.shape[-2], Vh.shape[-1]
    k = S.shape[-1]
    if full_matrices:
        U, gU, Vh, gVh = U[..., :k], gU[..., :k], Vh[..., :k, :], gVh[..., :k, :]
    V, gV = Vh.mH, gVh.mH
    UhgU, VhgV = U.mH @ gU, V.mH @ gV
    UhgU, VhgV = UhgU - UhgU.mH, VhgV - VhgV.mH   # skew, as PyTorch's (its diagonal kept: zero but for rounding)
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + _eye(S, k)
    ret = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E + _diag(gS)
    if U.is_complex():  # the phases: im diag(U^H gU) = -im diag(V^H gV), and diag(U^H gU) / (2 S) on the diagonal
        dU = UhgU.diagonal(0, -2, -1)
        imU, imV = dU.imag, VhgV.diagonal(0, -2, -1).imag
        if ((imU + imV).abs() > 1e-2 + 1e-2 * imV.abs()).any():  # allclose(imU, -imV, 1e-2, 1e-2)
            raise RuntimeError("svd_backward: The singular vectors in the complex case are specified up to "
                               "multiplication by e^{i phi}. The specified loss function depends on this phase term, "
                               "making it ill-defined.")
        ret = ret + _diag(dU / (2 * S))
    if m > n:
        gUSinv = gU / S.unsqueeze(-2)
        return (U @ ret + gUSinv - U @ (U.mH @ gUSinv)) @ Vh
    if m < n:
        SinvgVh = gVh / S.unsqueeze(-1)
        return U @ (ret @ Vh + SinvgVh - (SinvgVh @ V) @ Vh)
    return U @ ret @ Vh


def _cholesky_inverse(g, x, upper, y):
    common = y @ (g + g.mH) @ y
    return -(x @ common) if upper else -(common @ x)


def _cholesky_solve_L(g, x, input2, upper, y):
    common = _cholesky_solve(g, input2, upper) @ y.mH
    common = common + common.mH
    return -(input2 @ common) if upper else -(common @ input2)


def _cholesky_solve(b, L, upper):
    L = L.mH if upper else L
    return _tri(L.mH, _tri(L, b, False), True)


def _pinv(g, A, y):
    """PyTorch's pinv_backward (the SVD's would divide by equal singular values)."""
    pinvAh, gh = y.mH, g.mH
    if A.shape[-2] <= A.shape[-1]:
        K = gh @ y
        KpinvAh = K @ pinvAh
        return -(y @ K).mH + KpinvAh - (A @ y) @ KpinvAh + (pinvAh @ y) @ (gh - K @ A)
    K = y @ gh
    pinvAhK = pinvAh @ K
    return -(K @ y).mH + (gh - A @ K) @ y @ pinvAh + pinvAhK - pinvAhK @ y @ A


# the rows above right for complex inputs too (ops/_common.py's COMPLEX_ROWS)
LINALG_COMPLEX_ROWS = frozenset(
    "CholeskySolveBackward0 LinalgPinvBackward0 CholeskyInverseBackward0 LinalgLuFactorExBackward0 LinalgDetBackward0 "
    "LinalgCholeskyExBackward0 LinalgSolveTriangularBackward0 LinalgQrBackward0 LinalgEighBackward0 "
    "LinalgSvdBackward0".split())

LINALG_DERIVATIVES = {
    "CholeskySolveBackward0": {"x": lambda g, input2, upper: _cholesky_solve(g, input2, upper),
                               "input2": _cholesky_solve_L},
    "LinalgPinvBackward0": _pinv,
    "CholeskyInverseBackward0": _cholesky_inverse,
    "LinalgLuFactorExBackward0": _lu,
    "LinalgDetBackward0": _det,
    "LinalgCholeskyExBackward0": _cholesky,
    "LinalgSolveTriangularBackward0": {
        "A": _trisolve_A,
        "B": lambda g, A, upper, left, unitriangular: _tri(A.mH, g, not upper, left, unitriangular)},
    "LinalgQrBackward0": _qr,
    "LinalgEighBackward0": _eigh,
    "LinalgEigBackward0": _eig,
    "LinalgSvdBackward0": _svd,
}
