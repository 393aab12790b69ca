"""torch.utils.checkpoint: same gradients as without it, fewer tensors held between forward
and backward, recomputation in backward (with the RNG state of the forward)."""
import gc
import warnings
import weakref

import numpy as np
import pytest
import torch

import webtorch as wt
from webtorch.autograd.graph import SavedTensor
from webtorch.utils.checkpoint import checkpoint, checkpoint_sequential


def _params(T, device="cpu"):
    g = np.random.RandomState(0)
    mk = lambda *s: T.tensor(g.standard_normal(s).tolist(), device=device, requires_grad=True)  # noqa: E731
    return mk(3, 4), mk(4, 4), mk(4, 4)


def _block(T, w1, w2, calls, refs=None):
    def f(h):
        calls.append(1)
        a = (h @ w1).tanh()
        s = (a @ w2).sigmoid()
        if refs is not None:  # the block's intermediates (storage: views/aliases share it)
            refs.extend([weakref.ref(a._storage), weakref.ref(s._storage)])
        return s * a
    return f


def _run(T, device, mode):
    x, w1, w2 = _params(T, device)
    calls = []
    f = _block(T, w1, w2, calls)
    h = f(x) if mode is None else T.utils.checkpoint.checkpoint(f, x, use_reentrant=mode)
    assert len(calls) == 1
    loss = (h.exp().sum(1) * T.tensor([1.0, -2.0, 0.5], device=device)).sum()
    loss.backward()
    assert len(calls) == (1 if mode is None else 2)  # recomputed once in backward
    return [np.array(t.grad.cpu().tolist()) for t in (x, w1, w2)]


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_same_gradients(device, use_reentrant):
    expected = _run(torch, "cpu", None)
    plain = _run(wt, device, None)
    ck = _run(wt, device, use_reentrant)
    ck_torch = _run(torch, "cpu", use_reentrant)
    for e, p, c, ct in zip(expected, plain, ck, ck_torch):
        np.testing.assert_allclose(p, e, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(c, e, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(ct, e, rtol=1e-5)


def _live_saved():
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, SavedTensor) and o.tensor is not None)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_holds_fewer_tensors(use_reentrant):
    x, w1, w2 = _params(wt)
    base = _live_saved()
    refs_plain, refs_ck = [], []
    y_plain = _block(wt, w1, w2, [], refs_plain)(x)
    saved_plain = _live_saved() - base
    y_ck = checkpoint(_block(wt, w1, w2, [], refs_ck), x, use_reentrant=use_reentrant)
    saved_ck = _live_saved() - base - saved_plain
    gc.collect()
    # without checkpoint the block's intermediates live on in the graph; with it they are gone
    assert all(r() is not None for r in refs_plain)
    assert all(r() is None for r in refs_ck)
    assert saved_plain >= 5 and saved_ck <= 1, (saved_plain, saved_ck)
    (y_plain.sum() + y_ck.sum()).backward()
    assert _live_saved() == base


def test_checkpoint_non_reentrant_works_with_autograd_grad_and_reentrant_refuses():
    x, w1, w2 = _params(wt)
    f = _block(wt, w1, w2, [])
    y = checkpoint(f, x, use_reentrant=False)
    g = wt.autograd.grad(y.sum(), [x, w1, w2])
    e = wt.autograd.grad(f(x).sum(), [x, w1, w2])
    for a, b in zip(g, e):
        np.testing.assert_allclose(a.tolist(), b.tolist(), rtol=1e-6)
    msgs = []
    for T in (torch, wt):
        xt, w1t, w2t = _params(T)
        yt = T.utils.checkpoint.checkpoint(_block(T, w1t, w2t, []), xt, use_reentrant=True)
        with pytest.raises(RuntimeError) as err:
            T.autograd.grad(yt.sum(), [xt])
        msgs.append(str(err.value))
    assert msgs[1] == msgs[0]


def test_checkpoint_preserves_rng_state_for_dropout_like_blocks():
    x = wt.tensor([[1.0, 2.0, 3.0, 4.0]] * 8, requires_grad=True)

    def noisy(h):
        return h * (wt.rand(h.shape) > 0.5) * 2.0

    for mode in (True, False):
        wt.manual_seed(0)
        y = checkpoint(noisy, x, use_reentrant=mode)
        y.sum().backward()
        mask = (y != 0).tolist()
        grad_nonzero = (x.grad != 0).tolist()
        assert mask == grad_nonzero  # the recomputation drew the same random numbers
        x.grad = None


def test_checkpoint_warns_without_use_reentrant_like_torch():
    msgs = []
    for T in (torch, wt):
        x = T.ones(2, requires_grad=True)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            T.utils.checkpoint.checkpoint(lambda t: t * 2, x)
        msgs.append([str(r.message) for r in rec])
    assert msgs[1] == msgs[0] and len(msgs[1]) == 1


def test_checkpoint_sequential_and_create_graph():
    x, w1, w2 = _params(wt)
    fns = [lambda h: h @ w1, wt.tanh, lambda h: h @ w2, wt.sigmoid]
    y = checkpoint_sequential(fns, 2, x, use_reentrant=False)
    ref = fns[3](fns[2](fns[1](fns[0](x))))
    np.testing.assert_allclose(y.tolist(), ref.tolist(), rtol=1e-6)
    (g,) = wt.autograd.grad(y.sum(), x, create_graph=True)
    (g_ref,) = wt.autograd.grad(ref.sum(), x, create_graph=True)
    np.testing.assert_allclose(g.tolist(), g_ref.tolist(), rtol=1e-6)
    (gg,) = wt.autograd.grad(g.pow(2).sum(), w1)
    (gg_ref,) = wt.autograd.grad(g_ref.pow(2).sum(), w1)
    np.testing.assert_allclose(gg.tolist(), gg_ref.tolist(), rtol=1e-5)
