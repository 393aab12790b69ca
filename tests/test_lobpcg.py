"""torch.lobpcg against PyTorch: eigenvalues to a tolerance and eigenvectors up to sign on every device (the
"ortho" and "basic" methods, largest and smallest, a wider search block, a batch, a preconditioner, B), the tracker's
view of the iteration, the custom backward for a symmetric A (float64 on cpu, float32 on webgpu), and the errors."""
import numpy as np
import pytest
import torch

import webtorch as wt

M = 12
_R = np.random.RandomState(24)
_G = _R.standard_normal((M, M))
A = (_G @ _G.T + M * np.eye(M)).astype(np.float32)  # symmetric positive definite, distinct eigenvalues
X0 = _R.standard_normal((M, 3)).astype(np.float32)


def _check(w, t, device):
    """Both stop at a relative residual of sqrt(eps) = 3.5e-4: eigenvectors agree to about that over the gap to the
    next eigenvalue; on webgpu the start X is not PyTorch's (its random numbers are not PyTorch's), so the two
    iterations stop at different points within it."""
    (Ew, Xw), (Et, Xt) = [np.array(v.tolist()) for v in w], [v.detach().numpy() for v in t]
    np.testing.assert_allclose(Ew, Et, rtol=1e-5, atol=1e-4 * np.abs(Et).max())
    Xw = Xw * np.sign((Xw * Xt).sum(-2, keepdims=True))
    np.testing.assert_allclose(Xw, Xt, atol=1e-3 if device == "cpu" else 2e-2)


@pytest.mark.parametrize("kw", [dict(k=2), dict(k=2, largest=False), dict(k=1, method="basic"),
                                dict(k=2, largest=False, method="basic"), dict(k=2, n=3), dict(X="X0", k=2)])
def test_lobpcg_matches_pytorch(device, kw):
    kw_t = {**kw, "X": torch.tensor(X0)} if "X" in kw else kw
    kw_w = {**kw, "X": wt.tensor(X0, device=device)} if "X" in kw else kw
    torch.manual_seed(0)
    wt.manual_seed(0)
    _check(wt.lobpcg(wt.tensor(A, device=device), **kw_w), torch.lobpcg(torch.tensor(A), **kw_t), device)


def test_lobpcg_batch_preconditioner_and_B():
    B = (np.eye(M) + 0.1 * np.diag(np.arange(M))).astype(np.float32)
    iK = np.diag(1 / np.diag(A)).astype(np.float32)
    batch = np.stack([A, A + np.eye(M, dtype=np.float32)])
    for args in [dict(A=batch, k=2), dict(A=A, B=B, k=2, largest=False), dict(A=A, iK=iK, k=2)]:
        torch.manual_seed(0)
        wt.manual_seed(0)
        _check(wt.lobpcg(**{key: wt.tensor(v) if isinstance(v, np.ndarray) else v for key, v in args.items()}),
               torch.lobpcg(**{key: torch.tensor(v) if isinstance(v, np.ndarray) else v for key, v in args.items()}),
               "cpu")


def test_lobpcg_tracker_sees_pytorch_iterations():
    seen = {}
    for lib in (torch, wt):
        steps = seen[lib.__name__] = []
        lib.manual_seed(0)
        lib.lobpcg(lib.tensor(A.tolist()), k=2, X=lib.tensor(X0.tolist()),
                   tracker=lambda w, steps=steps: steps.append((w.ivars["istep"], w.ivars["converged_count"],
                                                                sorted(w.fvars))))
    assert seen["webtorch"] == seen["torch"]


@pytest.mark.parametrize("kw", [dict(k=2), dict(k=3, largest=False, method="basic")])
def test_lobpcg_backward_matches_pytorch(kw):
    weights = np.arange(M, dtype=np.float64)[:, None]
    grads = []
    for lib in (torch, wt):
        lib.manual_seed(0)
        a = lib.tensor(A.astype(np.float64).tolist(), dtype=lib.float64, requires_grad=True)
        E, X = lib.lobpcg(a, **kw)
        (E.sum() + (X ** 2 * lib.tensor(weights.tolist(), dtype=lib.float64)).sum()).backward()
        grads.append(np.array(a.grad.tolist()))
    np.testing.assert_allclose(grads[1], grads[0], atol=1e-6)


def test_lobpcg_backward_on_webgpu(webgpu):
    """float32 (webgpu has no float64), from the same start X."""
    weights = np.arange(M, dtype=np.float32)[:, None]
    grads = []
    for lib, dev in ((torch, "cpu"), (wt, webgpu)):
        a = lib.tensor(A, device=dev, requires_grad=True)
        E, X = lib.lobpcg(a, k=2, X=lib.tensor(X0[:, :2], device=dev))
        (E.sum() + (X ** 2 * lib.tensor(weights, device=dev)).sum()).backward()
        grads.append(np.array(a.grad.tolist()))
    np.testing.assert_allclose(grads[1], grads[0], atol=1e-3)


def _error(lib, call):
    with pytest.raises(Exception) as info:
        call(lib)
    return type(info.value).__name__, str(info.value)


@pytest.mark.parametrize("call", [
    lambda lib: lib.lobpcg(lib.eye(5), k=2),
    lambda lib: lib.lobpcg(lib.ones(4, 5)),
    lambda lib: lib.lobpcg(lib.eye(6), B=lib.eye(5)),
    lambda lib: lib.lobpcg(lib.eye(9) * 2, B=lib.eye(9).requires_grad_(), k=1)[0].sum().backward(),
])
def test_lobpcg_errors_match_pytorch(call):
    assert _error(wt, call) == _error(torch, call)
