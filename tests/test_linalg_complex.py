"""Complex linear algebra (issue #24) against PyTorch: torch.linalg and the top-level linear-algebra functions on
complex64 / complex128 matrices (values and gradients of real losses, PyTorch's conjugate Wirtinger convention),
the phase checks of eigh's and svd's gradients, and the complex reductions and products (var/std, logsumexp,
lerp, vdot, vecdot, ...). cpu (numpy's LAPACK), cpu-pure (the page: the factorizations in pure Python, eigh and
svd by complex Jacobi rotations) and webgpu (complex64: the host's LAPACK on the read matrices)."""
import math

import numpy as np
import pytest
import torch
from core_util import to_wt

import webtorch as wt

RNG = np.random.default_rng(24)


def _c(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


A4 = _c(2, 4, 4) + 3 * np.eye(4)                          # well conditioned
HPD = A4 @ A4.conj().transpose(0, 2, 1) + np.eye(4)       # Hermitian positive definite
TALL = _c(2, 5, 3)
RHS = _c(2, 4, 3)

# (name, function of the library (torch or webtorch), inputs)
CASES = [
    ("solve", lambda L, a, b: L.linalg.solve(a, b), (A4, RHS)),
    ("solve_left_false", lambda L, a, b: L.linalg.solve(a, b.mT, left=False), (A4, RHS)),
    ("inv", lambda L, a: L.linalg.inv(a), (A4,)),
    ("det", lambda L, a: L.linalg.det(a), (A4,)),
    ("slogdet", lambda L, a: L.linalg.slogdet(a).sign * L.linalg.slogdet(a).logabsdet, (A4,)),
    ("logdet", lambda L, a: L.logdet(a), (A4,)),
    ("cholesky", lambda L, a: L.linalg.cholesky(a), (HPD,)),
    ("cholesky_upper", lambda L, a: L.linalg.cholesky(a, upper=True), (HPD,)),
    ("cholesky_solve_inverse", lambda L, a, b: L.cholesky_solve(b, L.linalg.cholesky(a)) +
     L.cholesky_inverse(L.linalg.cholesky(a))[..., :3], (HPD, RHS)),
    ("solve_triangular", lambda L, a, b: L.linalg.solve_triangular(a.triu(), b, upper=True), (A4, RHS)),
    ("solve_triangular_right_upper_unit", lambda L, a, b: L.linalg.solve_triangular(
        a.triu(), b.mT, upper=True, left=False, unitriangular=True), (A4, RHS)),
    ("lu", lambda L, a: L.linalg.lu(a)[1] + L.linalg.lu(a)[2], (A4,)),
    ("lu_tall", lambda L, a: L.linalg.lu(a)[1], (TALL,)),
    ("lu_solve_adjoint", lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b, adjoint=True), (A4, RHS)),
    ("qr", lambda L, a: L.linalg.qr(a).Q.sum(-1, keepdim=True) + L.linalg.qr(a).R[..., :1, :], (TALL,)),
    ("qr_wide", lambda L, a: L.linalg.qr(a.mT).R, (TALL,)),
    ("householder_product", lambda L, a: L.linalg.householder_product(a, L.geqrf(a.detach())[1]), (TALL,)),
    ("eigvalsh", lambda L, a: L.linalg.eigvalsh(a), (HPD,)),
    ("eigh_projector", lambda L, a: (lambda r: r[1][..., -1:] @ r[1][..., -1:].mH)(L.linalg.eigh(a, UPLO="U")),
     (HPD,)),
    ("svdvals", lambda L, a: L.linalg.svdvals(a), (TALL,)),
    ("svd_gauge_free", lambda L, a: (lambda r: (r.U * r.S.unsqueeze(-2)) @ r.Vh + r.U.abs().sum(-1, keepdim=True))(
        L.linalg.svd(a, False)), (TALL,)),
    ("torch_svd", lambda L, a: (lambda r: (r.U * r.S.unsqueeze(-2)) @ r.V.mH)(L.svd(a)), (TALL,)),
    ("pinv", lambda L, a: L.linalg.pinv(a), (TALL,)),
    ("pinv_hermitian", lambda L, a: L.linalg.pinv(a, hermitian=True), (HPD,)),
    ("lstsq", lambda L, a, b: L.linalg.lstsq(a, b[:, :, :2].sum(1, keepdim=True).expand(2, 5, 2)).solution,
     (TALL, RHS)),
    ("matrix_norms", lambda L, a: L.linalg.matrix_norm(a, 2) + L.linalg.matrix_norm(a, "nuc") +
     L.linalg.matrix_norm(a, -math.inf) + L.linalg.norm(a, dim=(0, 2)).sum(), (TALL,)),
    ("cond", lambda L, a: L.linalg.cond(a) + L.linalg.cond(a, -2), (A4,)),
    ("matrix_power_neg", lambda L, a: L.linalg.matrix_power(a, -2), (A4,)),
    ("matrix_exp", lambda L, a: L.linalg.matrix_exp(a * 0.3), (A4,)),
    ("vecdot_vdot", lambda L, a, b: L.linalg.vecdot(a[0], b[0, :, :1].mT) + L.vdot(a[0, 0], b[1, :, 0]),
     (A4, RHS)),
]
CASES64 = [c for c in CASES if c[0] not in ("matrix_exp",)]


def _loss(out, cot):
    """A real loss of a complex or real result: Re <cot, out>."""
    return (out * cot).real.sum() if out.is_complex() else (out * cot.real).sum()


def _run(L, fn, arrays, device, dtype):
    npdt = np.complex64 if dtype is torch.complex64 else np.complex128
    make = (lambda a: torch.tensor(a, dtype=dtype)) if L is torch else (lambda a: to_wt(np.asarray(a, npdt), device))
    xs = [make(a).requires_grad_() for a in arrays]
    out = fn(L, *xs)
    cot = make(RNG.standard_normal(tuple(out.shape)) + 1j * RNG.standard_normal(tuple(out.shape)))
    grads = L.autograd.grad(_loss(out, cot), xs)
    return out, grads


def _np(t):
    return t.detach().cpu().resolve_conj().numpy()


def _check(device, fn, arrays, dtype, rtol, atol):
    state = RNG.bit_generator.state
    t_out, t_grads = _run(torch, fn, arrays, None, dtype)
    RNG.bit_generator.state = state  # the same cotangent
    w_out, w_grads = _run(wt, fn, arrays, device, dtype)
    assert str(w_out.dtype) == str(t_out.dtype)
    np.testing.assert_allclose(_np(w_out), _np(t_out), rtol=rtol, atol=atol)
    for w, t in zip(w_grads, t_grads):
        assert w.dtype.is_complex
        np.testing.assert_allclose(_np(w), _np(t), rtol=rtol, atol=atol)


V = _c(3, 4)
W = _c(3, 4)
# the complex reductions and products: (name, function, inputs)
REDUCTIONS = [
    ("var_std", lambda L, x: L.var(x, 0) + L.std(x, 1, correction=0).sum() + x.var(), (V,)),
    ("var_mean_std_mean", lambda L, x: L.var_mean(x, 1)[0] * L.var_mean(x, 1)[1] + L.std_mean(x)[0] *
     L.std_mean(x)[1], (V,)),
    ("logsumexp", lambda L, x: L.logsumexp(x, 1) + L.logsumexp(x, (0, 1), keepdim=True).squeeze(0), (V,)),
    ("lerp", lambda L, x, y: L.lerp(x, y, 0.3) + L.lerp(x, y, 0.7), (V, W)),
    ("lerp_tensor", lambda L, x, y: L.lerp(x, y, (x * 0.2).exp() * 0.3), (V, W)),
    ("cumsum_cumprod", lambda L, x: L.cumsum(x, 0) + L.cumprod(x * 0.5, 1), (V,)),
    ("prod", lambda L, x: x.prod(1) + x.prod(), (V,)),
    ("trace_diag", lambda L, x: L.trace(x[:, :3]) + L.diag(x).sum() + L.diag(x[0]).sum(0), (V,)),
    ("einsum_tensordot", lambda L, x, y: L.einsum("ij,kj->ik", x, y) + L.tensordot(x, y.mT, 1), (V, W)),
    ("outer_kron", lambda L, x, y: L.outer(x[0], y[1]).sum(0) + L.kron(x[:2, :2], y[:2, :2]).sum(1), (V, W)),
    ("cross", lambda L, x, y: L.linalg.cross(x[:, :3], y[:, :3]) + L.cross(x[:, 1:], y[:, 1:], dim=1), (V, W)),
    ("dot_vdot_inner", lambda L, x, y: L.dot(x[0], y[0]) + L.vdot(x[1], y[1]) + L.inner(x, y).sum() +
     L.mv(x, y[2]).sum(), (V, W)),
    ("cov_corrcoef", lambda L, x: L.cov(x, fweights=L.tensor([1, 2, 1, 3], device=x.device)) + L.corrcoef(x), (V,)),
    ("gradient_masked", lambda L, x: L.gradient(x, dim=1)[0] + L.masked.var(x, 1, mask=x.real > 0).unsqueeze(1) +
     L.masked.mean(x, 0, mask=x.imag > 0) + L.masked.std(x, 1, mask=x.real > -1).unsqueeze(1), (V,)),
    ("norms", lambda L, x: L.norm(x) + L.linalg.norm(x, 3, dim=1).sum() + L.linalg.vector_norm(x, math.inf) +
     L.linalg.matrix_norm(x, 1) + L.norm(x, "nuc"), (V,)),
]


# (case, tolerance): the factorizations' complex64 results round more steps than the reductions'
ALL64 = [(c, 2e-4) for c in CASES] + [(c, 2e-5) for c in REDUCTIONS]
ALL128 = [(c, 1e-9) for c in CASES64] + [(c, 1e-12) for c in REDUCTIONS]


@pytest.mark.parametrize("case,tol", ALL64, ids=[c[0] for c, _ in ALL64])
def test_complex64(device, case, tol):
    _check(device, case[1], case[2], torch.complex64, tol, tol)


@pytest.mark.parametrize("case,tol", ALL128, ids=[c[0] for c, _ in ALL128])
def test_complex128_cpu(case, tol):
    _check("cpu", case[1], case[2], torch.complex128, tol, tol)


@pytest.mark.parametrize("op", ["svd", "eigh"])
def test_phase_dependent_loss_raises(device, op):
    """A loss that depends on the singular vectors' or eigenvectors' phases: PyTorch's RuntimeError."""
    msgs = []
    for L in (torch, wt):
        a = torch.tensor(HPD[0], dtype=torch.complex64) if L is torch else to_wt(HPD[0].astype(np.complex64), device)
        a.requires_grad_()
        vecs = L.linalg.svd(a).U if op == "svd" else L.linalg.eigh(a).eigenvectors
        with pytest.raises(RuntimeError) as e:
            L.autograd.grad(vecs.real.sum(), a)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_geqrf_complex(device):
    t = torch.geqrf(torch.tensor(TALL[0], dtype=torch.complex64))
    w = wt.geqrf(to_wt(TALL[0].astype(np.complex64), device))
    for x, y in zip(w, t):
        np.testing.assert_allclose(_np(x), _np(y), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("hermitian", [False, True])
def test_ldl_complex(device, hermitian):
    """ldl_factor / ldl_solve of a complex symmetric matrix (LAPACK's sytrf / sytrs) and of a Hermitian one
    (hetrf / hetrs), with 2 x 2 pivots (a small diagonal)."""
    M = A4[0] - 3 * np.eye(4)
    S = M + (M.conj().T if hermitian else M.T)
    S[np.diag_indices(4)] = 0.01
    t = torch.tensor(S, dtype=torch.complex64)
    w = to_wt(S.astype(np.complex64), device)
    (tLD, tp), (wLD, wp) = torch.linalg.ldl_factor(t, hermitian=hermitian), wt.linalg.ldl_factor(w, hermitian=hermitian)
    assert (_np(tp) < 0).any()
    np.testing.assert_allclose(_np(wLD), _np(tLD), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(_np(wp), _np(tp))
    b = RHS[0].astype(np.complex64)
    np.testing.assert_allclose(_np(wt.linalg.ldl_solve(wLD, wp, to_wt(b, device), hermitian=hermitian)),
                               _np(torch.linalg.ldl_solve(tLD, tp, torch.tensor(b), hermitian=hermitian)), rtol=1e-4,
                               atol=1e-5)


def test_isreal_float_power():
    x = np.array([1 + 2j, 3 + 0j, -1.5 - 0.5j], dtype=np.complex64)
    for fn in (lambda L, a: L.isreal(a), lambda L, a: L.float_power(a, 2), lambda L, a: L.float_power(a.real, 2j)):
        t, w = fn(torch, torch.tensor(x)), fn(wt, wt.from_numpy(x.copy()))
        assert str(w.dtype) == str(t.dtype)
        np.testing.assert_allclose(_np(w), _np(t), rtol=1e-12)


def test_complex_errors():
    """PyTorch's checks still hold: an integer matrix, and half-precision complex."""
    for L in (torch, wt):
        with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as input. Got Long"):
            L.linalg.inv(L.ones(2, 2, dtype=L.int64))
    with pytest.raises(RuntimeError, match="std and var only support floating point and complex dtypes"):
        wt.var(wt.ones(3, dtype=wt.int64))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.complex128])
def test_svd_pca_lowrank(dtype):
    """torch.svd_lowrank / pca_lowrank on cpu: the same random start as PyTorch, so the same singular values and
    rank-q approximation (the singular vectors up to each column's phase), and its gradient."""
    A = (TALL[0] @ RHS[0, :3, :]).astype(dtype)   # 5 x 3, rank 3
    A = np.concatenate([A, A[:, :1] * 2], 1)       # 5 x 4, rank 3
    for fn in (lambda L, a: L.svd_lowrank(a, q=3), lambda L, a: L.pca_lowrank(a, q=2, center=True),
               lambda L, a: L.svd_lowrank(a.mT, q=3, M=a.mT[:1])):
        res = []
        for L, make in ((torch, torch.tensor), (wt, lambda x: wt.from_numpy(x.copy()))):
            a = make(A).requires_grad_()
            L.manual_seed(42)
            U, S, V = fn(L, a)
            approx = (U * S.unsqueeze(-2)) @ V.mH
            g, = L.autograd.grad(approx.abs().sum() + S.sum(), a)
            res.append([_np(x) for x in (S, approx, g)])
        for w, t in zip(*res):
            np.testing.assert_allclose(w, t, rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_logsumexp_gradient_large_magnitudes(device, dtype):
    """logsumexp's own derivative row, PyTorch's logsumexp_backward: grad * (x - result).exp().conj(), keepdim or
    not (a differentiated composition was 6e-5 off in complex64 at magnitudes ~1e3); and its second derivative."""
    if device == "webgpu" and dtype in ("float64", "complex128"):
        pytest.skip("no float64 on webgpu")
    rtol = 1e-13 if dtype in ("float64", "complex128") else 2e-5 if device == "webgpu" else 1e-6  # webgpu's exp
    a = RNG.standard_normal((3, 4, 5)) * 1e3 + (1j * RNG.standard_normal((3, 4, 5)) * 1e3 if "complex" in dtype else 0)
    for dim, keepdim in ((1, False), ((0, 2), True), ((0, 1, 2), False)):
        res = []
        for L in (torch, wt):
            x = (torch.tensor(a, dtype=getattr(torch, dtype)) if L is torch else
                 to_wt(a.astype(dtype), device)).requires_grad_()
            y = L.logsumexp(x, dim, keepdim=keepdim)
            cot = L.full(tuple(y.shape), 0.5 - 0.25j if y.is_complex() else 0.5, dtype=y.dtype, device=y.device)
            g, = L.autograd.grad(_loss(y, cot), x, create_graph=True)
            gg, = L.autograd.grad((g * g.conj()).real.sum(), x)
            res.append([_np(v) for v in (y, g, gg)])
        assert y.grad_fn.name() == "LogsumexpBackward0"
        for w, t in zip(res[1], res[0]):
            np.testing.assert_allclose(w, t, rtol=rtol, atol=1e-30)


def _cofactors(A):
    """The cofactor matrix from the minors' determinants (a polynomial: exact where A is singular too)."""
    n = A.shape[-1]
    return np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(A, i, 0), j, 1)) for j in range(n)]
                     for i in range(n)])


R3 = _c(3)
SINGULAR = [np.stack([R3, R3, _c(3)]),                               # two equal rows: det exactly 0
            np.stack([_c(3), np.zeros(3), _c(3)]),                    # a zero row
            np.array([[1, 2j, 1], [1j, 0, 1 + 1j], [1 + 1j, 2j, 2 + 1j]]),  # rank 2, det exactly 0
            np.outer([1, 2j, 1 + 1j], [1j, 1, 2]),                    # rank 1
            (lambda u, s, vh: (u * (s * [1, 1, 1, 0])) @ vh)(*np.linalg.svd(_c(4, 4)))]  # rank 3: det ~1e-16


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_det_second_derivative_at_singular_matrices(device, dtype):
    """det's gradient under create_graph at a (nearly) singular complex A: its value PyTorch's (the SVD's
    cofactors), its derivative that of the cofactors (checked against central differences of the cofactors from
    the minors, exact: each cofactor is affine in each entry). PyTorch's own second derivative there (through the
    SVD's phase term, rounding noise over a zero singular value) fails its gradgradcheck at rank n - 1."""
    if device == "webgpu" and dtype == "complex128":
        pytest.skip("no complex128 on webgpu")
    c = 1 + 2j
    for A in SINGULAR:
        V = np.arange(A.size).reshape(A.shape) * (0.3 - 0.7j)
        x = to_wt(A.astype(dtype), device).requires_grad_()
        g, = wt.autograd.grad((wt.linalg.det(x) * c).real, x, create_graph=True)
        gg, = wt.autograd.grad((g * to_wt(V.astype(dtype), device)).real.sum(), x)
        tg, = torch.autograd.grad((torch.linalg.det(t := torch.tensor(A).requires_grad_()) * c).real, t,
                                  create_graph=True)
        tol = 1e-9 if dtype == "complex128" else 2e-4
        np.testing.assert_allclose(_np(g), _np(tg), rtol=tol, atol=tol * 10)

        def loss2(B):
            return (np.conj(c * _cofactors(B)) * V).real.sum()
        fd = np.zeros(A.shape, complex)
        for idx in np.ndindex(A.shape):
            for unit in (1, 1j):
                E = np.zeros(A.shape, complex)
                E[idx] = unit
                fd[idx] += (loss2(A + E) - loss2(A - E)) / 2 * unit
        np.testing.assert_allclose(_np(gg), fd, rtol=tol, atol=tol * np.abs(fd).max())
