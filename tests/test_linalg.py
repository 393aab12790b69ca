"""torch.linalg and the top-level linear-algebra functions against PyTorch on cpu, cpu-pure (the page's
pure-Python kernels) and webgpu: values and gradients on a compact set of batched inputs, ill-conditioned
inputs (near-singular solves, repeated eigenvalues and singular values) with the tolerances stated
here, LinAlgError and the dtype / shape errors with PyTorch's messages, float64 on cpu."""
import math
import re

import numpy as np
import pytest
import torch
from core_util import skip_unsupported, to_wt

import webtorch as wt
from webtorch.backends.cpu import PureBackend

RNG = np.random.default_rng(0)
A4 = RNG.standard_normal((2, 4, 4)).astype(np.float32) + 3 * np.eye(4, dtype=np.float32)  # well conditioned
SPD = (A4 @ A4.transpose(0, 2, 1) + np.eye(4, dtype=np.float32)).astype(np.float32)
TALL = RNG.standard_normal((2, 5, 3)).astype(np.float32)
RHS = RNG.standard_normal((2, 4, 3)).astype(np.float32)

# (name, function of the linalg module (torch or webtorch), inputs); every output is differentiable
CASES = [
    ("solve", lambda L, a, b: L.linalg.solve(a, b), (A4, RHS)),
    ("solve_vec_left_false", lambda L, a, b: L.linalg.solve(a, b[:, :, 0]) + L.linalg.solve(a, b.mT, left=False)[:, 0],
     (A4, RHS)),
    ("inv", lambda L, a: L.linalg.inv(a), (A4,)),
    ("det", lambda L, a: L.linalg.det(a), (A4,)),
    ("slogdet", lambda L, a: L.linalg.slogdet(a).logabsdet, (A4,)),
    ("logdet", lambda L, a: L.logdet(a), (SPD,)),
    ("cholesky", lambda L, a: L.linalg.cholesky(a), (SPD,)),
    ("cholesky_upper", lambda L, a: L.linalg.cholesky(a, upper=True), (SPD,)),
    ("cholesky_solve", lambda L, a, b: L.cholesky_solve(b, L.linalg.cholesky(a)), (SPD, RHS)),
    ("cholesky_inverse", lambda L, a: L.cholesky_inverse(L.linalg.cholesky(a)), (SPD,)),
    ("solve_triangular", lambda L, a, b: L.linalg.solve_triangular(a.triu(), b, upper=True), (A4, RHS)),
    ("solve_triangular_right_unit", lambda L, a, b: L.linalg.solve_triangular(a.tril(), b.mT, upper=False,
                                                                              left=False, unitriangular=True),
     (A4, RHS)),
    ("lu", lambda L, a: L.linalg.lu(a)[1] + L.linalg.lu(a)[2], (A4,)),
    ("lu_tall", lambda L, a: L.linalg.lu(a)[1], (TALL,)),
    ("lu_wide", lambda L, a: L.linalg.lu(a.mT)[2], (TALL,)),
    ("lu_solve_adjoint", lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b, adjoint=True), (A4, RHS)),
    ("qr_Q", lambda L, a: L.linalg.qr(a).Q, (TALL,)),
    ("qr_R_wide", lambda L, a: L.linalg.qr(a.mT).R, (TALL,)),
    ("eigvalsh", lambda L, a: L.linalg.eigvalsh(a), (SPD,)),
    ("eigh_projector", lambda L, a: (lambda r: r[1][..., -1:] @ r[1][..., -1:].mT)(L.linalg.eigh(a, UPLO="U")),
     (SPD,)),
    ("svdvals", lambda L, a: L.linalg.svdvals(a), (TALL,)),
    ("svd_gauge_free", lambda L, a: (lambda r: r.U * r.S.unsqueeze(-2) @ r.Vh)(L.linalg.svd(a, False)), (TALL,)),
    ("torch_svd", lambda L, a: L.svd(a).V.abs(), (TALL,)),
    ("pinv", lambda L, a: L.linalg.pinv(a), (TALL,)),
    ("lstsq", lambda L, a, b: L.linalg.lstsq(a, b[:, :, :2].sum(1, keepdim=True).expand(2, 5, 2)).solution,
     (TALL, RHS)),
    ("matrix_norm_2_nuc_inf", lambda L, a: L.linalg.matrix_norm(a, 2) + L.linalg.matrix_norm(a, "nuc") +
     L.linalg.matrix_norm(a, -math.inf), (TALL,)),
    ("norm_fro_dim", lambda L, a: L.linalg.norm(a, dim=(0, 2)), (TALL,)),
    ("cond", lambda L, a: L.linalg.cond(a) + L.linalg.cond(a, -2), (A4,)),
    ("matrix_power_neg", lambda L, a: L.linalg.matrix_power(a, -2), (A4,)),
    ("matrix_exp", lambda L, a: L.linalg.matrix_exp(a * 0.3), (A4,)),
    ("multi_dot", lambda L, a, b: L.linalg.multi_dot([b[0, :, 0], a[0], a[1], b[1]]), (A4, RHS)),
    ("householder_product", lambda L, a: L.linalg.householder_product(a, a[:, 0, :2]), (TALL,)),
    ("tensorinv", lambda L, a: L.linalg.tensorinv(a[0].reshape(4, 2, 2), ind=1), (A4,)),
    ("vander_vecdot", lambda L, a: L.linalg.vander(a[0, 0]) * L.linalg.vecdot(a[0], a[1]), (A4,)),
]
# float32 tolerances (relative, absolute): the host computes in float64 and rounds once; PyTorch's own
# float32 LAPACK results differ from float64's by up to ~1e-6 relative on these conditioned inputs
RTOL, ATOL = 2e-5, 2e-5


def _compare(w, t, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(w.detach().cpu().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name,fn,inputs", CASES, ids=[c[0] for c in CASES])
def test_forward_and_gradient(device, name, fn, inputs):
    ts = [torch.tensor(x, requires_grad=True) for x in inputs]
    ws = [to_wt(x, device).requires_grad_() for x in inputs]
    t, w = fn(torch, *ts), fn(wt, *ws)
    _compare(w, t)
    cot = np.random.default_rng(1).standard_normal(tuple(t.shape)).astype(np.float32)
    tg = torch.autograd.grad(t, ts, torch.tensor(cot), allow_unused=True)
    wg = wt.autograd.grad(w, ws, to_wt(cot, device), allow_unused=True)
    for a, b in zip(wg, tg):
        _compare(a, b if b is not None else torch.zeros(()), rtol=1e-4, atol=1e-4)


def test_near_singular_solve(device):
    """cond(A) ~ 1e5 in float32: the solution agrees with float64 truth to ~cond * eps (2e-2 relative),
    no worse than 4x PyTorch's own error; the residual against the float32 matrix is within 10x
    PyTorch's (the GPU's LU is float32, as PyTorch's; the host's is float64)."""
    n = 6
    u, _ = np.linalg.qr(RNG.standard_normal((n, n)))
    a = (u * np.logspace(0, -5, n)) @ u.T
    b = RNG.standard_normal((n, 2))
    x = wt.linalg.solve(to_wt(a.astype(np.float32), device), to_wt(b.astype(np.float32), device)).cpu().numpy()
    truth = np.linalg.solve(a, b)
    assert np.abs(x - truth).max() / np.abs(truth).max() < 2e-2
    xt = torch.linalg.solve(torch.tensor(a, dtype=torch.float32), torch.tensor(b, dtype=torch.float32)).numpy()
    assert np.abs(x - truth).max() <= 4 * np.abs(xt - truth).max() + 1e-6
    a32, b32 = a.astype(np.float32).astype(np.float64), b.astype(np.float32).astype(np.float64)
    assert np.abs(a32 @ x - b32).max() <= 10 * np.abs(a32 @ xt - b32).max() + 1e-5


@pytest.mark.parametrize("driver", [None, "gelsy", "gelsd", "gelss"])
def test_lstsq_rank_deficient_is_the_minimum_norm_solution(device, driver):
    """A rank-2 4x3 matrix (and its transpose): PyTorch's drivers give the minimum-norm least-squares solution.
    (The 3x4 transpose is compared for the SVD drivers only: gelsy's rank estimate from its pivoted QR says rank 1
    or 2 in float32 depending on PyTorch's threading, and returns another solution for 1; webtorch's is the
    minimum-norm one.)"""
    a = np.array([[1., 2, 3], [2, 4, 6], [1, 0, 1], [0, 1, 1]], dtype=np.float32)
    b = np.array([[1., 0], [2, 1], [0, 3], [1, 1]], dtype=np.float32)
    for A, B in ((a, b),) + (((a.T.copy(), b[:3]),) if driver in ("gelsd", "gelss") else ()):
        t = torch.linalg.lstsq(torch.tensor(A), torch.tensor(B), driver=driver)
        w = wt.linalg.lstsq(to_wt(A, device), to_wt(B, device), driver=driver)
        _compare(w.solution, t.solution, rtol=1e-4, atol=1e-5)
        assert w.rank.tolist() == t.rank.tolist() == 2


def test_repeated_eigenvalues_and_singular_values(device):
    """eigh of a matrix with a triple eigenvalue: values to 1e-5 relative, the eigenspaces' projectors
    (gauge-free) to 1e-4; svd of a rank-2 4x3 matrix: two singular values and an exact zero (< 1e-5)."""
    q, _ = np.linalg.qr(RNG.standard_normal((5, 5)))
    lam = np.array([1.0, 2.0, 2.0, 2.0, 5.0])
    a = ((q * lam) @ q.T).astype(np.float32)
    L, V = wt.linalg.eigh(to_wt(a, device))
    np.testing.assert_allclose(L.cpu().numpy(), lam, rtol=1e-5, atol=1e-5)
    V = V.cpu().numpy()
    P = V[:, 1:4] @ V[:, 1:4].T
    np.testing.assert_allclose(P, q[:, 1:4] @ q[:, 1:4].T, atol=1e-4)
    np.testing.assert_allclose(V.T @ V, np.eye(5), atol=1e-5)
    b = (RNG.standard_normal((4, 2)) @ RNG.standard_normal((2, 3))).astype(np.float32)
    U, S, Vh = wt.linalg.svd(to_wt(b, device), full_matrices=True)
    S = S.cpu().numpy()
    np.testing.assert_allclose(S[:2], np.linalg.svd(b.astype(np.float64))[1][:2], rtol=1e-5)
    assert S[2] < 1e-5
    np.testing.assert_allclose(U.cpu().numpy().T @ U.cpu().numpy(), np.eye(4), atol=1e-5)
    assert int(wt.linalg.matrix_rank(to_wt(b, device))) == 2


def test_pure_python_factorizations_match_lapack(device):
    """The page's kernels (pure Python) and numpy's give PyTorch's LU pivots, LDL pivots and QR signs."""
    a = RNG.standard_normal((3, 5, 5)).astype(np.float32)
    s = a + a.transpose(0, 2, 1)
    LU, piv = wt.linalg.lu_factor(to_wt(a, device))
    tLU, tpiv = torch.linalg.lu_factor(torch.tensor(a))
    assert piv.tolist() == tpiv.tolist()
    _compare(LU, tLU)
    LD, lpiv = wt.linalg.ldl_factor(to_wt(s, device))
    tLD, tlpiv = torch.linalg.ldl_factor(torch.tensor(s))
    assert lpiv.tolist() == tlpiv.tolist()
    _compare(LD, tLD, rtol=1e-4, atol=1e-5)
    _compare(wt.linalg.ldl_solve(LD, lpiv, to_wt(RHS[0, :, :2].repeat(5 // 4 + 1, 0)[:5], device)),
             torch.linalg.ldl_solve(tLD, tlpiv, torch.tensor(RHS[0, :, :2].repeat(2, 0)[:5])), rtol=1e-4, atol=1e-4)
    for mode in ("reduced", "complete"):
        Q, R = wt.linalg.qr(to_wt(TALL, device), mode=mode)
        tQ, tR = torch.linalg.qr(torch.tensor(TALL), mode=mode)
        _compare(R, tR)
        _compare(Q[..., :3], tQ[..., :3])


def test_errors(device):
    sing = to_wt(np.zeros((2, 3, 3), np.float32), device)
    with pytest.raises(wt.linalg.LinAlgError, match=r"torch.linalg.solve: \(Batch element 0\): The solver failed "
                                                    "because the input matrix is singular."):
        wt.linalg.solve(sing, to_wt(np.ones((2, 3), np.float32), device))
    with pytest.raises(RuntimeError, match="linalg.inv: The diagonal element 1 is zero"):
        wt.linalg.inv(sing[0])
    with pytest.raises(wt.linalg.LinAlgError, match=r"the leading minor of order 1 is not positive-definite"):
        wt.linalg.cholesky(sing[0])
    assert issubclass(wt.linalg.LinAlgError, RuntimeError)
    L, info = wt.linalg.cholesky_ex(sing)
    assert info.tolist() == [1, 1]
    assert wt.linalg.inv_ex(sing).info.tolist() == [1, 1]
    with pytest.raises(RuntimeError, match="linalg.det: A must be batches of square matrices, but they are 3 by 4"):
        wt.linalg.det(to_wt(np.ones((3, 4), np.float32), device))
    with pytest.raises(RuntimeError, match="linalg.det: Expected a floating point or complex tensor as input. Got"):
        wt.linalg.det(wt.zeros(2, 2, dtype=wt.int64, device=device))
    with pytest.raises(RuntimeError, match=r"Incompatible shapes of A and B for the equation AX = B \(3x3 and 2x1\)"):
        wt.linalg.solve(sing[0], to_wt(np.ones(2, np.float32), device))
    for name in ("lstsq", "solve", "eig", "symeig"):  # removed in PyTorch 1.9: PyTorch's message
        n = 2 if name in ("lstsq", "solve") else 1
        with pytest.raises(RuntimeError) as want:
            getattr(torch, name)(*[torch.eye(2)] * n)
        with pytest.raises(RuntimeError) as got:
            getattr(wt, name)(*[sing[0]] * n)
        assert str(got.value) == str(want.value)
    assert wt.linalg.det(sing).tolist() == [0.0, 0.0]
    assert wt.linalg.slogdet(sing).logabsdet.tolist() == [-math.inf, -math.inf]


@pytest.mark.parametrize("dtype", ["float64"])
def test_float64(device, dtype):
    skip_unsupported(device, dtype)
    a = torch.tensor(A4, dtype=torch.float64, requires_grad=True)
    w = to_wt(A4.astype(np.float64), device).requires_grad_()
    t, r = torch.linalg.inv(a) @ torch.linalg.cholesky(a @ a.mT).mT, wt.linalg.inv(w) @ wt.linalg.cholesky(w @ w.mT).mT
    assert r.dtype == wt.float64
    np.testing.assert_allclose(r.detach().cpu().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-12)
    t.sum().backward()
    r.sum().backward()
    np.testing.assert_allclose(w.grad.cpu().numpy(), a.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_float64_is_a_type_error_on_webgpu(webgpu):
    with pytest.raises(TypeError):
        wt.zeros(2, 2, dtype=wt.float64, device="webgpu")


def _eig_loss(L, V, cot):
    """A loss of eig's results that does not depend on the eigenvectors' phases (PyTorch's requirement)."""
    return (L.real * cot[0, :, 0]).sum() + (L.imag * cot[0, :, 1]).sum() + (V.abs() * cot[1]).sum()


@pytest.mark.parametrize("dtype", ["float32", "complex64", "float64", "complex128"])
def test_eig(device, dtype):
    """linalg.eig/eigvals as PyTorch (LAPACK's geev through numpy, on the host for every device): eigenvalues in
    LAPACK's order, eigenvectors up to a unit complex factor per column, gradients of a phase-free loss."""
    if device == "webgpu" and dtype == "complex128":
        pytest.skip("complex128 does not exist on WebGPU")
    a = A4.astype(dtype) + (0.5j * A4[:, ::-1] if dtype.startswith("complex") else 0)
    w = to_wt(a, device).requires_grad_()
    if isinstance(w._backend, PureBackend):
        with pytest.raises(NotImplementedError, match="linalg.eig: needs numpy"):
            wt.linalg.eig(w)
        return
    t = torch.tensor(a, requires_grad=True)
    (L, V), (tL, tV) = wt.linalg.eig(w), torch.linalg.eig(t)
    assert (L.dtype, V.dtype) == (wt.complex64, wt.complex64) if dtype in ("float32", "complex64") else \
        (wt.complex128, wt.complex128)
    _compare(L, tL)
    _compare(wt.linalg.eigvals(w), tL)
    Vn, tVn = V.detach().cpu().numpy(), tV.detach().numpy()
    phase = (Vn.conj() * tVn).sum(-2, keepdims=True)
    _compare(torch.tensor(Vn * phase / abs(phase)), tV)
    cot = np.random.default_rng(2).standard_normal((2,) + tuple(tV.shape)).astype(np.float32)
    tg = torch.autograd.grad(_eig_loss(tL, tV, torch.tensor(cot)), t)[0]
    wg = wt.autograd.grad(_eig_loss(L, V, to_wt(cot, device)), w)[0]
    assert wg.dtype == w.dtype
    _compare(wg, tg, rtol=1e-3, atol=1e-3)
    tg = torch.autograd.grad(torch.linalg.eigvals(t).imag.sum(), t)[0]
    _compare(wt.autograd.grad(wt.linalg.eigvals(w).imag.sum(), w)[0], tg, rtol=1e-3, atol=1e-3)


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
def test_eig_errors_and_out(device):
    half = [torch.ones(2, 2).half()] if device != "webgpu" else []  # float16 there needs shader-f16
    for x in [torch.ones(2, 2, dtype=torch.int64), torch.ones(2, 3), torch.ones(2)] + half:
        for name in ("eig", "eigvals"):
            with pytest.raises(Exception) as want:
                getattr(torch.linalg, name)(x)
            with pytest.raises(type(want.value), match=re.escape(str(want.value))):
                getattr(wt.linalg, name)(to_wt(x, device))
    a = to_wt(A4[0], device).requires_grad_()
    if isinstance(a._backend, PureBackend):
        return
    with pytest.raises(RuntimeError, match=r"linalg_eig_backward: The eigenvectors in the complex case are "
                                           r"specified up to multiplication by e\^\{i phi\}"):
        wt.linalg.eig(a)[1].real.sum().backward()
    L, V = wt.empty(0, dtype=wt.complex64, device=device), wt.empty(0, dtype=wt.complex64, device=device)
    r = wt.linalg.eig(a.detach(), out=(L, V))
    assert r.eigenvalues is L and r.eigenvectors is V and tuple(V.shape) == (4, 4)
    np.testing.assert_allclose(wt.linalg.eigvals(a.detach()).cpu().numpy(), L.cpu().numpy())


@pytest.mark.parametrize("budget", [None, 600])
def test_webgpu_qr_eigh_svd_are_kernels(webgpu, monkeypatch, budget):
    """QR, eigh and SVD of float32 webgpu matrices run as WGSL kernels (the host's are removed here), in several
    dispatches where a dispatch's loop budget is small (600), against PyTorch in float32: QR as LAPACK's
    Householder (R's signs too) and eigenvalues, singular values, reconstructions, orthogonality to 1e-5."""
    from webtorch.backends import linalg_host
    from webtorch.webgpu import linalg_orth
    for name in ("qr", "geqrf", "eigh", "svd"):
        monkeypatch.delitem(linalg_host.NP, name)
    if budget:
        monkeypatch.setattr(linalg_orth, "BUDGET", budget)
    rng = np.random.default_rng(3)
    for shape in [(1, 1), (2, 7, 5), (5, 7), (9, 9), (3, 2, 2)]:
        a = rng.standard_normal(shape).astype(np.float32)
        w, t = to_wt(a, "webgpu"), torch.tensor(a)
        for mode in ("reduced", "complete", "r"):
            (Q, R), (tQ, tR) = wt.linalg.qr(w, mode), torch.linalg.qr(t, mode)
            _compare(R, tR, 1e-5, 1e-5)
            assert Q.shape == tQ.shape
            if mode != "r":
                _compare(Q, tQ, 1e-5, 1e-5)
        for x, y in zip(wt.geqrf(w), torch.geqrf(t)):
            _compare(x, y, 1e-5, 1e-5)
        k = min(shape[-2:])
        for full in (True, False):
            U, S, Vh = (x.cpu().numpy() for x in wt.linalg.svd(w, full_matrices=full))
            _compare(wt.tensor(S), torch.linalg.svdvals(t), 1e-5, 1e-5)
            np.testing.assert_allclose((U[..., :k] * S[..., None, :]) @ Vh[..., :k, :], a, atol=1e-5)
            for M in (U.swapaxes(-1, -2) @ U, Vh @ Vh.swapaxes(-1, -2)):
                np.testing.assert_allclose(M, np.broadcast_to(np.eye(M.shape[-1]), M.shape), atol=1e-5)
        if shape[-1] == shape[-2]:
            s = a + a.swapaxes(-1, -2)
            L, V = (x.cpu().numpy() for x in wt.linalg.eigh(to_wt(s, "webgpu")))
            _compare(wt.tensor(L), torch.linalg.eigvalsh(torch.tensor(s)), 1e-5, 1e-5)
            np.testing.assert_allclose((V * L[..., None, :]) @ V.swapaxes(-1, -2), s, atol=1e-5)
            np.testing.assert_allclose(V.swapaxes(-1, -2) @ V, np.broadcast_to(np.eye(shape[-1]), shape), atol=1e-5)
    U = wt.linalg.svd(wt.zeros(3, 2, device="webgpu")).U.cpu().numpy()   # a null space: completed
    np.testing.assert_allclose(U.T @ U, np.eye(3), atol=1e-6)


def test_webgpu_lu_cholesky_past_lavapipes_loop_limit(webgpu):
    """n = 200 passes lavapipe's 65,535 loop iterations per invocation in the one-dispatch LU and Cholesky
    kernels: there the host factors (elsewhere the kernels), and the numbers are PyTorch's either way."""
    n = 200
    a = RNG.standard_normal((n, n)).astype(np.float32)
    spd = a @ a.T / n + np.eye(n, dtype=np.float32)
    a += 15 * np.eye(n, dtype=np.float32)
    LU, piv = wt.linalg.lu_factor(to_wt(a, "webgpu"))
    tLU, tpiv = torch.linalg.lu_factor(torch.tensor(a))
    assert piv.tolist() == tpiv.tolist()
    _compare(LU, tLU, 1e-4, 1e-4)
    _compare(wt.linalg.cholesky(to_wt(spd, "webgpu")), torch.linalg.cholesky(torch.tensor(spd)), 1e-4, 1e-5)


def test_det_gradient_at_singular_matrices(device):
    """linalg.det's gradient as PyTorch's linalg_det_backward: zero where A's LU has a zero pivot (LAPACK leaves
    that zero right-hand side unsolved), and under create_graph the cofactors through the SVD (the adjugate of a
    singular A), with second derivatives; LinalgDetBackward0."""
    a = np.array([[[1., 2], [2, 4]], [[1, 0], [0, 2]]], dtype=np.float32)
    b = np.array([[1., 2, 3], [2, 4, 6], [1, 0, 1]], dtype=np.float32)
    for x in (a, b):
        t, w = torch.tensor(x, requires_grad=True), to_wt(x, device).requires_grad_()
        d = wt.linalg.det(w)
        assert d.grad_fn.name() == "LinalgDetBackward0"
        _compare(wt.autograd.grad(d.sum(), w)[0], torch.autograd.grad(torch.linalg.det(t).sum(), t)[0])
        g = wt.autograd.grad(wt.linalg.det(w).sum(), w, create_graph=True)[0]
        tg = torch.autograd.grad(torch.linalg.det(t).sum(), t, create_graph=True)[0]
        _compare(g, tg, 1e-5, 1e-5)
        _compare(wt.autograd.grad(g.square().sum(), w)[0], torch.autograd.grad(tg.square().sum(), t)[0], 1e-4, 1e-4)
