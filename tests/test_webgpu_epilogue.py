"""Epilogue fusion on webgpu (backends/webgpu/lazy.py `defer_matmul`): a matmul whose product
feeds pending element-wise ops runs as ONE dispatch whose store applies them (F.linear's bias +
activation, attention's scale + causal mask, an activation's backward after the input-gradient
product). Forward and gradients against PyTorch 2.13 on every device; on webgpu also equal to
the unfused kernels (WEBTORCH_FUSION off), NaN/inf through the fused store, dispatch counts."""
import os

import numpy as np
import pytest

os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

import torch  # noqa: E402  (the oracle)
import webtorch as wt  # noqa: E402
import webtorch.nn.functional as WF  # noqa: E402
from webtorch.backends import webgpu as gpu  # noqa: E402

rng = np.random.default_rng(3)


def arr(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def run(lib, dev, fn, arrays, grad=True):
    """fn(lib, F, *tensors) -> output; returns numpy (output, grads of every input)"""
    F = WF if lib is wt else torch.nn.functional
    kw = {"device": dev} if lib is wt else {}
    ts = [lib.tensor(a, **kw).requires_grad_(grad) for a in arrays]
    out = fn(lib, F, *ts)
    res = [out.detach().cpu().numpy()]
    if grad:
        (out * lib.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(tuple(out.shape)), **kw)).sum() \
            .backward()
        res += [t.grad.detach().cpu().numpy() for t in ts]
    return res


def close(got, want, rtol=1e-4, atol=1e-5):
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)


def count(f):
    gpu.synchronize()
    d0 = gpu.dispatch_count()
    out = f()
    n = gpu.dispatch_count() - d0
    return n, out


def unfused(f):
    old = gpu.set_fusion(False)
    try:
        return f()
    finally:
        gpu.set_fusion(old)


EPILOGUES = {
    "linear": lambda t, F, x, w, b: F.linear(x, w, b),
    "linear_relu": lambda t, F, x, w, b: F.relu(F.linear(x, w, b)),
    "linear_gelu": lambda t, F, x, w, b: F.gelu(F.linear(x, w, b)),
    "linear_gelu_tanh": lambda t, F, x, w, b: F.gelu(F.linear(x, w, b), approximate="tanh"),
    "scale_sigmoid": lambda t, F, x, w, b: t.sigmoid((x @ w.t()) * 0.5 - b),
    "silu_residual": lambda t, F, x, w, b: F.silu(F.linear(x, w, b)) + b * 2,
}


@pytest.mark.parametrize("name", sorted(EPILOGUES))
def test_linear_epilogues_match_torch(device, name):
    for K in (16, 7) if device == "webgpu" else (7,):    # register-block kernel (K % 4 == 0) / tiled
        a = [arr(6, K), arr(12, K, scale=0.5), arr(12)]
        close(run(wt, device, EPILOGUES[name], a), run(torch, "cpu", EPILOGUES[name], a))


@pytest.mark.parametrize("K", [16, 7])
def test_linear_bias_activation_is_one_dispatch(webgpu, K):
    x, w, b = (wt.tensor(v, device="webgpu") for v in (arr(32, K), arr(24, K), arr(24)))
    for act in (WF.relu, WF.gelu, lambda h: h.tanh() * 2):
        n, y = count(lambda: act(WF.linear(x, w, b)).cpu())
        assert n == 1
        y0 = unfused(lambda: act(WF.linear(x, w, b)).cpu())
        close([y.numpy()], [y0.numpy()], rtol=1e-6, atol=1e-6)
    n, _ = count(lambda: [WF.linear(x, w, b)] and None)   # a product nothing reads is never computed
    assert n == 0


def test_product_kept_alive_is_stored_with_the_epilogue(webgpu):
    a, w, b = arr(9, 8), arr(8, 5), arr(5)
    x, W, B = (wt.tensor(v, device="webgpu") for v in (a, w, b))
    n, (p, q, r) = count(lambda: [v.cpu() for v in (lambda p: (p, p + B, (p + B).relu()))(x @ W)])
    assert n == 1
    close([p.numpy(), q.numpy(), r.numpy()], [a @ w, a @ w + b, np.maximum(a @ w + b, 0)])


def test_dead_product_with_an_unrelated_op_in_its_group(webgpu):
    # the product dies before the flush and the one live op of its group does not read it: that op
    # runs on its own (the group once dispatched the plain product into the op's buffer)
    a, w = arr(1, 2), arr(3, 2)
    x, W = wt.tensor(a, device="webgpu"), wt.tensor(w, device="webgpu")

    def zeros_after_a_dead_product():
        p = x.mm(W.t())
        return p.new_zeros(p.shape)
    np.testing.assert_array_equal(zeros_after_a_dead_product().cpu().numpy(), np.zeros((1, 3), np.float32))
    # the same through autograd: sign's zero gradient after a product's backward (PyTorch: 0)
    v = wt.tensor([[-4.0, -1.25, 1.5]], device="webgpu", requires_grad=True)
    (wt.sign(v) @ W).backward(wt.ones(1, 2, device="webgpu"))
    np.testing.assert_array_equal(v.grad.cpu().numpy(), np.zeros((1, 3), np.float32))


def test_nan_and_inf_through_the_fused_store(webgpu):
    a, w, b = arr(8, 12), arr(4, 12), arr(4)
    a[0, 0], a[1, 3], w[2, 5] = np.nan, np.inf, -np.inf
    b[3] = np.inf
    f = lambda t, F, x, w, b: F.relu(F.linear(x, w, b)) - F.linear(x, w, b) * 0.5  # noqa: E731
    got = run(wt, "webgpu", f, [a, w, b], grad=False)
    close(got, run(torch, "cpu", f, [a, w, b], grad=False))
    close(got, unfused(lambda: run(wt, "webgpu", f, [a, w, b], grad=False)), rtol=1e-6, atol=1e-6)
    assert np.isnan(got[0]).any() and np.isinf(got[0]).any()
    # x - x of an inf product is NaN, not folded to 0 (the opaque operands of lazy.py)
    x, W = wt.tensor(a, device="webgpu"), wt.tensor(w.T.copy(), device="webgpu")
    p = x @ W
    d = (p - p).cpu().numpy()
    with np.errstate(invalid="ignore"):
        ref = a @ w.T
        np.testing.assert_array_equal(np.isnan(d), np.isnan(ref - ref))


def test_batched_products_views_and_broadcast_leaves(device):
    a, b, m = arr(2, 3, 5, 8), arr(2, 3, 8, 6), arr(5, 1)
    f = lambda t, F, x, y, m: ((x @ y) * 0.25 + m).reshape(6, 30).tanh()  # noqa: E731
    close(run(wt, device, f, [a, b, m]), run(torch, "cpu", f, [a, b, m]))
    g = lambda t, F, x, y, m: (x @ y).transpose(-1, -2) + m.t()  # noqa: E731  (a view that cannot join)
    close(run(wt, device, g, [a, b, m]), run(torch, "cpu", g, [a, b, m]))


def test_operands_changed_in_place_or_read_by_the_epilogue(webgpu):
    a, w = arr(8, 8), arr(8, 8)
    x, W = wt.tensor(a, device="webgpu"), wt.tensor(w, device="webgpu")
    y = x @ W                      # pending ...
    W.mul_(2)                      # ... then its operand changes in place: y keeps the old product
    z = y + 1
    close([z.cpu().numpy(), W.cpu().numpy()], [a @ w + 1, w * 2])
    W = wt.tensor(w, device="webgpu")
    n, r = count(lambda: ((x @ W) + x * 3 - W).cpu())   # the operands as leaves: not joined
    close([r.numpy()], [a @ w + a * 3 - w])
    assert n == 2


def test_many_leaves_respect_the_binding_limit(webgpu):
    a, w = arr(8, 16), arr(16, 8)
    leaves = [arr(8, 8) for _ in range(10)]
    x, W = wt.tensor(a, device="webgpu"), wt.tensor(w, device="webgpu")
    ls = [wt.tensor(v, device="webgpu") for v in leaves]
    acc, ref = x @ W, a @ w
    for t, v in zip(ls, leaves):
        acc, ref = acc * 0.5 + t, ref * np.float32(0.5) + v
    close([acc.cpu().numpy()], [ref], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("causal", [True, False])
def test_sdpa_matches_torch_and_fuses_scale_and_mask(device, causal):
    q, k, v = arr(2, 2, 6, 8), arr(2, 2, 6, 8), arr(2, 2, 6, 8)
    f = lambda t, F, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # noqa: E731
    close(run(wt, device, f, [q, k, v]), run(torch, "cpu", f, [q, k, v]))
    if device == "webgpu" and causal:
        Q, K, V = (wt.tensor(x, device="webgpu") for x in (q, k, v))
        WF.scaled_dot_product_attention(Q, K, V, is_causal=True)     # the mask is built once
        n, _ = count(lambda: WF.scaled_dot_product_attention(Q, K, V, is_causal=True).cpu())
        assert n == 3            # QK^T with scale + mask in its store, softmax, @V


def test_mlp_training_step_fewer_dispatches_same_numbers(webgpu):
    X, Y = arr(16, 20), rng.integers(0, 5, 16)
    init = [arr(32, 20, scale=0.2), arr(32, scale=0.1), arr(5, 32, scale=0.2), arr(5, scale=0.1)]

    def train(lib, dev):
        kw = {"device": dev} if lib is wt else {}
        ps = [lib.tensor(p, **kw).requires_grad_() for p in init]
        x, y = lib.tensor(X, **kw), lib.tensor(Y, **kw)
        opt = lib.optim.AdamW(ps, lr=0.01)
        F = WF if lib is wt else torch.nn.functional
        losses = []
        for _ in range(4):
            h = F.gelu(F.linear(x, ps[0], ps[1]))
            loss = F.cross_entropy(F.linear(h, ps[2], ps[3]), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return [np.array(losses)] + [p.detach().cpu().numpy() for p in ps]
    got = train(wt, "webgpu")
    close(got, train(torch, "cpu"), rtol=1e-4, atol=2e-5)
    close(got, unfused(lambda: train(wt, "webgpu")), rtol=1e-5, atol=1e-6)
    x, w, b = (wt.tensor(v, device="webgpu") for v in (X, init[0], init[1]))
    w.requires_grad_()
    n1, _ = count(lambda: WF.relu(WF.linear(x, w, b)).sum().backward())
    n0, _ = unfused(lambda: count(lambda: WF.relu(WF.linear(x, w, b)).sum().backward()))
    assert n1 < n0


def test_epilogue_outputs_of_other_dtypes(webgpu):
    a, w = arr(8, 16), arr(16, 12)
    x, W = wt.tensor(a, device="webgpu"), wt.tensor(w, device="webgpu")
    n, (big, pos) = count(lambda: [v.cpu() for v in (((x @ W) * 1000).long(), (x @ W) > 0)])
    assert n == 2
    np.testing.assert_array_equal(big.numpy(), ((a @ w) * 1000).astype(np.int64))
    np.testing.assert_array_equal(pos.numpy(), (a @ w) > 0)
    with pytest.raises(RuntimeError, match="int64 overflow"):    # the overflow flag is set in the store
        ((x @ W) * 1e12).long().cpu()
