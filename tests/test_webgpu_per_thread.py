"""The ewise.wgsl kernels (single ops, fused chains, fused optimizer steps, take/put) do `ew_k`
elements per thread (backend.py: 16 on CPU adapters, 1 on GPUs), a workgroup 256 * ew_k of them.
Every size around those boundaries (1, k - 1, k + 1, 257k + 3, a workgroup's span +- 1) for each
per-thread count, also with a grid folded past the workgroups-per-dimension limit (lowered here
so that small tensors fold, leaving extra workgroups past the last element), against PyTorch
(forward and gradient) and bit-identical to one element per thread; int64 overflow and
division-by-zero flags and NaN/inf still reach the last element."""
import os

import numpy as np
import pytest

os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

import torch  # noqa: E402  (the oracle)
import webtorch as wt  # noqa: E402
from webtorch.backends import webgpu  # noqa: E402

pytestmark = pytest.mark.usefixtures("webgpu")  # conftest: skipped only by WEBTORCH_SKIP_WEBGPU=1

KS = [16, 1, 3]          # this adapter's default on lavapipe, a GPU's, an odd count


def _sizes(k):
    span = 256 * k
    return sorted({1, max(k - 1, 1), k + 1, 257 * k + 3, span - 1, span + 1, 4 * span + 7})


class _PerThread:
    """Runs the backend with `k` elements per thread and at most `max_wg` workgroups per grid
    dimension, on its own kernel cache (the kernels' signatures do not name k)."""

    def __init__(self, k, max_wg=65535):
        self.k, self.max_wg = k, max_wg

    def __enter__(self):
        be = self.be = webgpu.get_backend()
        be.fusion.flush()
        self.saved = be.ew_k, be.max_wg, be._memo
        be.ew_k, be.max_wg, be._memo = self.k, self.max_wg, {}
        return be

    def __exit__(self, *exc):
        be = self.be
        be.fusion.flush()
        be.ew_k, be.max_wg, be._memo = self.saved


def _np(t):
    return t.detach().cpu().numpy()


def _chain(x, y, z):
    """a fused chain over two contiguous leaves and a strided one"""
    a = (x * y + 0.5) * z - y
    return a.sin() * x + a / (y.abs() + 1)


def _run_chain(T, dev, x0, y0, z0):
    x = T.tensor(x0, device=dev, requires_grad=True)
    y = T.tensor(y0, device=dev, requires_grad=True)
    zb = T.tensor(np.stack([z0, -z0], 1), device=dev)
    z = zb[:, 0]                                        # a strided view (stride 2)
    out = _chain(x, y, z)
    out.backward(T.tensor(y0 * 0.5 + 1, device=dev))
    with T.no_grad():
        z.mul_(2).add_(1)                               # in place through the strided view
    return [_np(v) for v in (out, x.grad, y.grad, zb)]


@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("max_wg", [65535, 2], ids=["grid", "folded"])
def test_fused_chain_sizes(k, max_wg):
    r = np.random.default_rng(k)
    for n in _sizes(k):
        x0, y0, z0 = (r.standard_normal(n).astype(np.float32) for _ in range(3))
        want = _run_chain(torch, "cpu", x0, y0, z0)
        with _PerThread(k, max_wg):
            got = _run_chain(wt, "webgpu", x0, y0, z0)
        with _PerThread(1):
            one = _run_chain(wt, "webgpu", x0, y0, z0)
        for g, w, o in zip(got, want, one):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=f"n={n}")
            np.testing.assert_array_equal(g.view(np.uint32), o.view(np.uint32), err_msg=f"n={n}")


def _run_optim(T, dev, name, kw, p0, grads):
    p = T.tensor(p0, device=dev, requires_grad=True)
    opt = getattr(T.optim, name)([p], **kw)
    for g in grads:
        p.grad = T.tensor(g, device=dev)
        opt.step()
    return [_np(p)] + [_np(v) for k, v in sorted(opt.state[p].items()) if k != "step"]


OPTIMS = [("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
          ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.1)),
          ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)),
          ("Adagrad", dict(lr=0.1, lr_decay=0.01))]


@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("name,kw", OPTIMS, ids=[n for n, _ in OPTIMS])
def test_optimizer_step_sizes(k, name, kw):
    r = np.random.default_rng(k)
    for n in _sizes(k):
        p0 = r.standard_normal(n).astype(np.float32)
        grads = [r.standard_normal(n).astype(np.float32) for _ in range(3)]
        want = _run_optim(torch, "cpu", name, kw, p0, grads)
        with _PerThread(k, 2):
            got = _run_optim(wt, "webgpu", name, kw, p0, grads)
        with _PerThread(1):
            one = _run_optim(wt, "webgpu", name, kw, p0, grads)
        assert len(got) == len(want) == len(one)
        for g, w, o in zip(got, want, one):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=f"n={n}")
            np.testing.assert_array_equal(g.view(np.uint32), o.view(np.uint32), err_msg=f"n={n}")


@pytest.mark.parametrize("k", KS)
def test_last_element_flags_and_specials(k):
    """The int64 overflow and division-by-zero flags and NaN/inf at the last element of a size
    that leaves a partial last thread and workgroup; take/put there too."""
    n = 257 * k + 3
    big = np.zeros(n, np.int64)
    big[-1] = 2**31 - 1
    with _PerThread(k, 2):
        x = wt.tensor(big, device="webgpu")
        assert (x + 0).cpu().tolist() == big.tolist()
        y = x + 1
        with pytest.raises(RuntimeError, match="int64 overflow on webgpu"):
            webgpu.synchronize()
        del y
        d = np.ones(n, np.int64)
        d[-1] = 0
        q = x // wt.tensor(d, device="webgpu")
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            webgpu.synchronize()
        del q
        f = np.arange(n, dtype=np.float32)
        f[-3:] = [np.inf, -np.inf, np.nan]
        for T, dev in ((torch, "cpu"), (wt, "webgpu")):
            t = T.tensor(f, device=dev)
            res = (t - t) * 2 + t / t
            idx = T.tensor(np.arange(n)[::-1].copy(), device=dev)
            tk = t[idx]
            pt = T.zeros(n, device=dev).index_put_((idx,), t, accumulate=True)
            if T is torch:
                want = [v.numpy() for v in (res, tk, pt)]
            else:
                got = [_np(v) for v in (res, tk, pt)]
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("k", KS)
def test_folded_grid_writes_nothing_past_the_view(k):
    """A grid folded into (2, 3) workgroups for 5 workgroups' worth of elements: the sixth
    workgroup must not touch the elements after an in-place op's view."""
    span = 256 * k
    n = 4 * span + 7
    f = np.arange(7 * span, dtype=np.float32)
    want = torch.tensor(f)
    want[:n].mul_(2).add_(1)
    with _PerThread(k, 2):
        got = wt.tensor(f, device="webgpu")
        got[:n].mul_(2).add_(1)
        np.testing.assert_array_equal(_np(got), want.numpy())
