"""torch.lobpcg: PyTorch 2.13's LOBPCG (torch/_lobpcg.py: the "basic" and "ortho" methods, the tracker, the
custom backward for a symmetric A), composed of webtorch's linalg, so it runs on every device (the loop's
convergence tests read a few numbers back to the host each step, as PyTorch's)."""
from . import _dtype
from .autograd.function import Function
from .ops import _creation, _linalg_ops as _la, linalg as _mm
from .ops.pointwise import where
from .random import Generator

__all__ = ["lobpcg"]


# ---- torch/_linalg_utils.py's helpers ----------------------------------------------------------

def _matmul(A, B):
    return B if A is None else _mm.matmul(A, B)


def _qform(A, S):
    """S^T A S."""
    return _mm.matmul(S.mT, _matmul(A, S))


def _symeig(A, largest=False):
    E, Z = _la.eigh(A, UPLO="U")
    return (E.flip(-1), Z.flip(-1)) if largest else (E, Z)


# ---- backward: the gradient of k eigenpairs of a symmetric A ------------------------------------

def _symeig_backward_complete_eigenspace(D_grad, U_grad, A, D, U):
    F = D.unsqueeze(-2) - D.unsqueeze(-1)
    F.diagonal(dim1=-2, dim2=-1).fill_(float("inf"))
    F.pow_(-1)
    Ut = U.mT.contiguous()
    return U @ ((D_grad.diag_embed() + (Ut @ U_grad) * F) @ Ut)


def _polynomial_coefficients_given_roots(roots):
    """(a_0, ..., a_n == 1) of prod (x - r_i), by Horner's rule on copies (so that autograd sees each step)."""
    order = roots.shape[-1]
    coeffs = roots.new_zeros(tuple(roots.shape[:-1]) + (order + 2,))
    coeffs[..., 0] = 1
    coeffs[..., -1] = 1
    for i in range(1, order + 1):
        new = coeffs.clone() if roots.requires_grad else coeffs
        out = new.narrow(-1, order - i, i + 1)
        out -= roots.narrow(-1, i - 1, 1) * coeffs.narrow(-1, order - i + 1, i + 1)
        coeffs = new
    return coeffs.narrow(-1, 1, order + 1)


def _vector_polynomial_value(poly, x):
    res = x.new_ones(1).expand(x.shape).clone()
    for k in range(poly.size(-1) - 2, -1, -1):
        res = poly[..., k].unsqueeze(-1).addcmul(x, res)
    return res


def _matrix_polynomial_value(poly, x):
    m = x.size(-1)
    res = _creation.eye(m, m, dtype=x.dtype, device=x.device).view(*([1] * (x.dim() - 2)), m, m).clone()
    for k in range(poly.size(-1) - 2, -1, -1):
        res = x.matmul(res)
        res.diagonal(dim1=-2, dim2=-1).add_(poly[..., k].unsqueeze(-1))
    return res


def _symeig_backward_partial_eigenspace(D_grad, U_grad, A, D, U, largest):
    Ut = U.mT.contiguous()
    proj_U_ortho = -U.matmul(Ut)
    proj_U_ortho.diagonal(dim1=-2, dim2=-1).add_(1)
    gen = Generator(A.device)  # a fixed generator, as PyTorch's, for determinism
    U_ortho = proj_U_ortho.matmul(_creation.randn((*A.shape[:-1], A.size(-1) - D.size(-1)), dtype=A.dtype,
                                                  device=A.device, generator=gen))
    U_ortho_t = U_ortho.mT.contiguous()
    chr_poly_D = _polynomial_coefficients_given_roots(D)
    # the Sylvester equation U_ortho^T A U_ortho dX - dX D = -U_ortho^T A U solved explicitly (Hu and Cheng 2006)
    U_grad_projected = U_grad
    series_acc = U_grad_projected.new_zeros(U_grad_projected.shape)
    for k in range(1, chr_poly_D.size(-1)):
        poly_D = _vector_polynomial_value(chr_poly_D[..., k:], D)
        series_acc += U_grad_projected * poly_D.unsqueeze(-2)
        U_grad_projected = A.matmul(U_grad_projected)
    chr_poly_D_at_A_to_U_ortho = U_ortho_t @ (_matrix_polynomial_value(chr_poly_D, A) @ U_ortho)
    sign = -1 if (largest and (k % 2 == 1)) else +1  # positive definite for distinct eigenvalues
    L = _la.cholesky(sign * chr_poly_D_at_A_to_U_ortho)
    res = _symeig_backward_complete_eigenspace(D_grad, U_grad, A, D, U)
    res -= U_ortho.matmul(sign * _la.cholesky_solve(U_ortho_t.matmul(series_acc), L)).matmul(Ut)
    return res


class LOBPCGAutogradFunction(Function):
    @staticmethod
    def forward(ctx, A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None, method=None,
                tracker=None, ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
        A = A.contiguous()
        B = None if B is None else B.contiguous()
        D, U = _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams, ortho_fparams,
                       ortho_bparams)
        ctx.save_for_backward(A, B, D, U)
        ctx.largest = largest
        return D, U

    @staticmethod
    def backward(ctx, D_grad, U_grad):
        A, B, D, U = ctx.saved_tensors
        if B is not None:
            raise ValueError("lobpcg.backward does not support backward with B != I yet.")
        largest = True if ctx.largest is None else ctx.largest
        if U.size(-1) == U.size(-2):
            A_grad = _symeig_backward_complete_eigenspace(D_grad, U_grad, A, D, U)
        else:
            A_grad = _symeig_backward_partial_eigenspace(D_grad, U_grad, A, D, U, largest)
        return (A_grad,) + (None,) * 13


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None, method=None,
           tracker=None, ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
    """The k largest (or smallest) eigenpairs of the symmetric positive definite generalized eigenproblem
    A X = B X E (B the identity when None): returns (E of shape (*, k), X of shape (*, m, k))."""
    args = (X, n, iK, niter, tol, largest, method, tracker, ortho_iparams, ortho_fparams, ortho_bparams)
    if A.requires_grad or (B is not None and B.requires_grad):
        # A's gradient made symmetric, so that A - t * A.grad stays symmetric
        B_sym = (B + B.mT) / 2 if B is not None else None
        return LOBPCGAutogradFunction.apply((A + A.mT) / 2, k, B_sym, *args)
    return _lobpcg(A, k, B, *args)


def _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams, ortho_fparams, ortho_bparams):
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    dtype = A.dtype if A.dtype.name in ("float16", "float32", "float64") else _dtype.float32
    if tol is None:
        tol = {"float32": 1.2e-07, "float64": 2.23e-16}[dtype.name] ** 0.5
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m})"
                         f" is smaller than 3 x the number of requested eigenpairs (={n})")
    method = "ortho" if method is None else method
    iparams = {"m": m, "n": n, "k": k, "niter": 1000 if niter is None else niter}
    fparams = {"tol": tol}
    bparams = {"largest": True if largest is None else largest}
    if method == "ortho":
        iparams.update(ortho_iparams or {})
        fparams.update(ortho_fparams or {})
        bparams.update(ortho_bparams or {})
        iparams.setdefault("ortho_i_max", 3)
        iparams.setdefault("ortho_j_max", 3)
        for key in ("ortho_tol", "ortho_tol_drop", "ortho_tol_replace"):
            fparams.setdefault(key, tol)
        bparams.setdefault("ortho_use_drop", False)

    def solve(A_, B_, X_):
        X_ = _creation.randn((m, n), dtype=dtype, device=A.device) if X_ is None else X_
        if not (len(X_.shape) == 2 and X_.shape == (m, n)):
            raise AssertionError(f"X shape mismatch: got {X_.shape}, expected {(m, n)}")
        worker = LOBPCG(A_, B_, X_, iK, iparams, fparams, bparams, method, tracker)
        worker.run()
        return worker.E[:k], worker.X[:, :k]

    if len(A.shape) == 2:
        return solve(A, B, X)
    batch = tuple(A.shape[:-2])
    bA = A.reshape((-1,) + tuple(A.shape[-2:]))
    bB = B.reshape(bA.shape) if B is not None else None
    bX = X.reshape((bA.shape[0],) + tuple(X.shape[-2:])) if X is not None else None
    bE = _creation.empty((bA.shape[0], k), dtype=dtype, device=A.device)
    bXret = _creation.empty((bA.shape[0], m, k), dtype=dtype, device=A.device)
    for i in range(bA.shape[0]):
        iparams["batch_index"] = i
        bE[i], bXret[i] = solve(bA[i], None if bB is None else bB[i], None if bX is None else bX[i])
    return bE.reshape(batch + (k,)), bXret.reshape(batch + (m, k))


class LOBPCG:
    """Worker class of LOBPCG methods: the state a tracker sees (iparams, fparams, bparams, ivars, fvars, bvars,
    tvars, A, B, iK, E, X, S, R)."""

    def __init__(self, A, B, X, iK, iparams, fparams, bparams, method, tracker):
        self.A, self.B, self.iK = A, B, iK
        self.iparams, self.fparams, self.bparams = iparams, fparams, bparams
        self.method = method
        self.tracker = tracker
        m, n = iparams["m"], iparams["n"]
        self.X = X
        self.E = _creation.zeros((n,), dtype=X.dtype, device=X.device)
        self.R = _creation.zeros((m, n), dtype=X.dtype, device=X.device)
        self.S = _creation.zeros((m, 3 * n), dtype=X.dtype, device=X.device)
        self.tvars = {}
        self.ivars = {"istep": 0}
        self.fvars = {"_": 0.0}
        self.bvars = {"_": False}

    def __str__(self):
        names = ("iparams", "fparams", "bparams", "ivars", "fvars", "bvars", "tvars", "A", "B", "iK", "X", "E")
        return "LOBPCG:\n" + "".join(f"  {name}={getattr(self, name)}\n" for name in names)

    def update(self):
        """Set and update iteration variables."""
        if self.ivars["istep"] == 0:
            X_norm = float(self.X.norm())
            self.fvars["X_norm"] = X_norm
            self.fvars["A_norm"] = float(_matmul(self.A, self.X).norm()) * X_norm ** -1
            self.fvars["B_norm"] = float(_matmul(self.B, self.X).norm()) * X_norm ** -1
            self.ivars["iterations_left"] = self.iparams["niter"]
            self.ivars["converged_count"] = 0
            self.ivars["converged_end"] = 0
        if self.method == "ortho":
            self._update_ortho()
        else:
            self._update_basic()
        self.ivars["iterations_left"] = self.ivars["iterations_left"] - 1
        self.ivars["istep"] = self.ivars["istep"] + 1

    def update_residual(self):
        """Update residual R from A, B, X, E."""
        self.R = _matmul(self.A, self.X) - _matmul(self.B, self.X) * self.E

    def update_converged_count(self):
        """The number of leading eigenpairs that meet the backward stable criterion of [DuerschEtal2018] 4.3."""
        prev_count = self.ivars["converged_count"]
        E, X, R = self.E, self.X, self.R
        rerr = R.norm(2, (0,)) / (X.norm(2, (0,)) * (self.fvars["A_norm"] + E[:X.shape[-1]].abs()
                                                     * self.fvars["B_norm"]))
        count = 0
        for b in (rerr < self.fparams["tol"]).tolist():
            if not b:
                break
            count += 1
        if count < prev_count:
            raise AssertionError(f"the number of converged eigenpairs (was {prev_count}, got {count}) cannot decrease")
        self.ivars["converged_count"] = count
        self.tvars["rerr"] = rerr
        return count

    def stop_iteration(self):
        """True to stop (a tracker may force it with `worker.bvars['force_stop'] = True`)."""
        return (self.bvars.get("force_stop", False) or self.ivars["iterations_left"] == 0
                or self.ivars["converged_count"] >= self.iparams["k"])

    def run(self):
        """Run LOBPCG iterations."""
        self.update()
        self.call_tracker()
        while not self.stop_iteration():
            self.update()
            self.call_tracker()

    def call_tracker(self):
        if self.tracker is not None:
            self.tracker(self)

    def _update_basic(self):
        ns, nc = self.ivars["converged_end"], self.ivars["converged_count"]
        n = self.iparams["n"]
        if self.ivars["istep"] == 0:
            Ri, E, Z = self._rayleigh_ritz(self.X, True)
            self.X[:] = self.X @ (Ri @ Z)
            self.E[:] = E
            P = self.X[:, :0]
        else:
            S_ = self.S[:, nc:ns]
            Ri, E_, Z = self._rayleigh_ritz(S_, True)
            self.X[:, nc:] = S_ @ (Ri @ Z[:, :n - nc])
            self.E[nc:] = E_[:n - nc]
            P = S_ @ (Ri @ Z[:, n:2 * n - nc])
        self._extend_basis(n, P, lambda R: _matmul(self.iK, R))

    def _update_ortho(self):
        ns, nc = self.ivars["converged_end"], self.ivars["converged_count"]
        n = self.iparams["n"]
        if self.ivars["istep"] == 0:
            Ri, _E, Z = self._rayleigh_ritz(self.X, True)
            self.X = self.X @ (Ri @ Z)
            P = self.X[:, :0]
        else:
            S_ = self.S[:, nc:ns]
            _Ri, E_, Z = self._rayleigh_ritz(S_, False)
            self.X[:, nc:] = S_ @ Z[:, :n - nc]
            self.E[nc:] = E_[:n - nc]
            P = S_ @ (Z[:, n - nc:] @ _la.qr(Z[:n - nc, n - nc:].mT).Q)
        self._extend_basis(n, P, lambda R: self._get_ortho(R, self.S[:, :n + P.shape[-1]]))

    def _rayleigh_ritz(self, S, transform):
        """(Ri, E, Z): the Ritz pairs of A on span(S), through Ri (None without `transform`: S is B-orthonormal)."""
        Ri = self._get_rayleigh_ritz_transform(S) if transform else None
        M = _qform(_qform(self.A, S), Ri) if transform else _qform(self.A, S)
        return (Ri,) + _symeig(M, self.bparams["largest"])

    def _extend_basis(self, n, P, directions):
        """Residual and convergence count for the new X, then the search basis S = [X, P, W], W = directions(R) of
        the unconverged residuals."""
        self.update_residual()
        nc = self.update_converged_count()
        np = P.shape[-1]
        self.S[:, :n] = self.X
        self.S[:, n:n + np] = P
        W = directions(self.R if self.ivars["istep"] == 0 else self.R[:, nc:])
        ns = self.ivars["converged_end"] = n + np + W.shape[-1]
        self.S[:, n + np:ns] = W

    def _get_rayleigh_ritz_transform(self, S):
        """Ri, upper triangular, that turns (S^T A S) C = (S^T B S) C E into (Ri^T S^T A S Ri) Z = Z E, C = Ri Z."""
        SBS = _qform(self.B, S)
        d_row = SBS.diagonal(0, -2, -1) ** -0.5
        d_col = d_row.reshape(d_row.shape[0], 1)
        R = _la.cholesky((SBS * d_row) * d_col, upper=True)
        return _la.solve_triangular(R, d_row.diag_embed(), upper=True, left=False)

    def _get_svqb(self, U, drop, tau):
        """B-orthonormal U (Algorithm 4 of [DuerschPhD2015]; with `drop`, columns of small contribution dropped)."""
        if U.numel() == 0:
            return U
        UBU = _qform(self.B, U)
        d = UBU.diagonal(0, -2, -1)
        nz = where(d.abs() != 0.0)[0]
        if len(nz) < len(d):  # exact zero columns dropped first
            U = U[:, nz]
            if U.numel() == 0:
                return U
            UBU = _qform(self.B, U)
            d = UBU.diagonal(0, -2, -1)
        d_col = (d ** -0.5).reshape(d.shape[0], 1)
        E, Z = _symeig((UBU * d_col) * d_col.mT)
        t = tau * E.abs().max()
        if drop:
            keep = where(E > t)[0]
            E, Z, d_col = E[keep], Z[:, keep], d_col[keep]
        else:
            E[where(E < t)[0]] = t
        return (U * d_col.mT) @ (Z * E ** -0.5)

    def _get_ortho(self, U, V):
        """B-orthonormal U, B-orthogonal to V (Algorithms 3 and 6 of [DuerschPhD2015]); empty when all of U's
        columns are B-collinear to V."""
        tau_ortho, tau_drop, tau_replace = (self.fparams[key] for key in ("ortho_tol", "ortho_tol_drop",
                                                                           "ortho_tol_replace"))
        use_drop = self.bparams["ortho_use_drop"]
        for vkey in [key for key in self.fvars if key.startswith("ortho_") and key.endswith("_rerr")]:
            self.fvars.pop(vkey)
        self.ivars.pop("ortho_i", 0)
        self.ivars.pop("ortho_j", 0)
        BV_norm = _matmul(self.B, V).norm()
        VBU = V.mT @ _matmul(self.B, U)
        i = j = 0
        for i in range(self.iparams["ortho_i_max"]):
            U = U - V @ VBU
            U, j, BU = self._svqb_rounds(U, use_drop, tau_drop, tau_replace, tau_ortho, i)
            if BU is None:
                self.ivars["ortho_i"], self.ivars["ortho_j"] = i, j
                return U
            VBU = V.mT @ BU
            rerr = float(VBU.norm()) * float(BV_norm * U.norm()) ** -1
            self.fvars[f"ortho_VBU_rerr[{i}]"] = rerr
            if rerr < tau_ortho:
                break
            if self.iparams["m"] < U.shape[-1] + V.shape[-1]:
                raise ValueError("Overdetermined shape of U:"
                                 f" #B-cols(={self.B.shape[-1]}) >= #U-cols(={U.shape[-1]}) + "
                                 f"#V-cols(={V.shape[-1]}) must hold")
        self.ivars["ortho_i"], self.ivars["ortho_j"] = i, j
        return U

    def _svqb_rounds(self, U, use_drop, tau_drop, tau_replace, tau_ortho, i):
        """_get_ortho's inner loop: (U, j, B U), B U None when U came out empty."""
        drop, tau_svqb = False, tau_drop
        j = 0
        for j in range(self.iparams["ortho_j_max"]):
            if use_drop:
                U = self._get_svqb(U, drop, tau_svqb)
                drop, tau_svqb = True, tau_replace
            else:
                U = self._get_svqb(U, False, tau_replace)
            if U.numel() == 0:
                return U, j, None
            BU = _matmul(self.B, U)
            UBU = U.mT @ BU
            R = UBU - _creation.eye(UBU.shape[-1], device=UBU.device, dtype=UBU.dtype)
            rerr = float(R.norm()) * float(BU.norm() * U.norm()) ** -1
            self.fvars[f"ortho_UBUmI_rerr[{i}, {j}]"] = rerr
            if rerr < tau_ortho:
                break
        return U, j, BU
