"""Lazy element-wise fusion in the WebGPU backend (backends/webgpu/lazy.py): chains of ewise
ops become one dispatch; results equal the unfused kernels and PyTorch (mixed dtypes,
broadcasting, scalars, NaN/inf, float16, 0-d, empty, folded grids); pending buffers are
materialized before any other primitive reads them; in-place ops; a training loop."""
import os

import numpy as np
import pytest

os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

import webtorch as wt  # noqa: E402
from webtorch.backends import webgpu  # noqa: E402
from webtorch.backends.base import Strided  # noqa: E402

pytestmark = pytest.mark.usefixtures("webgpu")  # conftest: skipped only by WEBTORCH_SKIP_WEBGPU=1
be = webgpu.get_backend() if webgpu.is_available() else None  # no adapter: the fixture fails each test
rng = np.random.default_rng(1)


def G(a):
    return wt.tensor(a, device="webgpu")


def N(t):
    return t.detach().cpu().numpy()


def both(f):
    """f() with fusion on and off -> (fused numpy results, unfused numpy results)"""
    old = webgpu.set_fusion(True)
    try:
        r1 = [N(t) for t in f()]
        webgpu.set_fusion(False)
        r0 = [N(t) for t in f()]
    finally:
        webgpu.set_fusion(old)
    return r1, r0


def same(a, b, rtol=1e-6, atol=1e-6):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    if a.dtype.kind == "f":
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol,
                                   equal_nan=True)
    else:
        assert np.array_equal(a, b), (a, b)


def test_chain_of_200_adds_is_a_few_dispatches():
    s = wt.ones(16, device="webgpu")
    webgpu.synchronize()
    d0 = webgpu.dispatch_count()
    z = s
    for _ in range(200):
        z = z + 1.0
    assert z[3].item() == 201.0
    assert webgpu.dispatch_count() - d0 <= 4
    # the scalar lives in the parameter words: another constant reuses the kernels
    p0 = webgpu.counters()["pipelines"]
    z = s
    for _ in range(200):
        z = z + 2.5
    assert z[0].item() == 501.0
    assert webgpu.counters()["pipelines"] == p0


def test_intermediates_kept_alive_are_written():
    a = rng.standard_normal((7, 9)).astype(np.float32)
    x = G(a)
    ys = [x]
    for k in range(20):
        ys.append(ys[-1] * 0.5 + float(k))
    ref = [a]
    for k in range(20):
        ref.append(ref[-1] * np.float32(0.5) + np.float32(k))
    for y, r in zip(ys, ref):
        same(N(y), r, rtol=1e-5, atol=1e-5)


def test_mixed_dtypes_match_unfused_and_numpy():
    a = rng.standard_normal((5, 6)).astype(np.float32) * 4
    ia = rng.integers(-20, 20, (5, 6)).astype(np.int32)
    ib = rng.integers(1, 7, (5, 6)).astype(np.int64)
    u = rng.integers(0, 255, (5, 6)).astype(np.uint8)
    a[0, 0], a[1, 1], a[2, 2] = np.nan, np.inf, -np.inf

    def f():
        x, i, j, w = G(a), G(ia), G(ib), G(u)
        q = i // j                     # int floor division
        r = i % j                      # remainder takes the divisor's sign
        s = (x * 2 + 1).floor()        # float with NaN/inf
        m = (x > 0) & (i < 5)          # bool from float and int comparisons
        c = wt.where(m, s, q.to(wt.float32))
        k = c.to(wt.int32) - r.to(wt.int32)    # float -> int truncates
        v = (w + 200) * 3              # uint8 wraps
        nan = x.isnan() | x.isinf()
        e = (x.abs() + 1).log().sqrt() - x.sigmoid()
        return q, r, s, m, c, k, v, nan, e
    r1, r0 = both(f)
    for x1, x0 in zip(r1, r0):
        same(x1, x0)
    q, r, s, m, c, k, v, nan, e = r1
    same(q, ia.astype(np.int64) // ib)
    same(r, ia.astype(np.int64) % ib)
    same(v, ((u.astype(np.int64) + 200) * 3 % 256).astype(np.uint8))
    same(nan, np.isnan(a) | np.isinf(a))
    with np.errstate(invalid="ignore", over="ignore"):
        same(s, np.floor(a * 2 + 1))
        same(e, np.sqrt(np.log(np.abs(a) + 1)) - 1 / (1 + np.exp(-a)), rtol=1e-5, atol=1e-5)


def test_float16_chain():
    if not be.has_f16:
        pytest.skip("adapter lacks shader-f16")
    a = (rng.standard_normal(64) * 100).astype(np.float16)

    def f():
        x = G(a)
        y = x * 3.3 + 1000.0            # each step rounds to float16, as unfused
        z = y * y - 7.0                 # overflows to inf in float16
        return y, z, (z / y).to(wt.float32)
    r1, r0 = both(f)
    for x1, x0 in zip(r1, r0):
        same(x1, x0, rtol=0, atol=0)


def test_broadcast_leaves_and_pending_broadcast():
    a = rng.standard_normal((4, 5)).astype(np.float32)
    b = rng.standard_normal((5,)).astype(np.float32)
    x, y = G(a), G(b)
    c = (x + y) * y - 1                 # y broadcast (stride 0) as a leaf
    p = y * 2                           # pending [5]
    d = x + p                           # pending read through a broadcast view: materialized
    e = x.t() * 3 + 1                   # transposed leaf
    same(N(c), (a + b) * b - 1, rtol=1e-6)
    same(N(d), a + b * 2, rtol=1e-6)
    same(N(e), a.T * 3 + 1, rtol=1e-6)
    q = x * 2                           # pending, then sliced / transposed views of it
    same(N(q[1:3] + 1), a[1:3] * 2 + 1)
    same(N(q.t() - 1), a.T * 2 - 1)


def test_pending_consumed_by_other_primitives():
    a = rng.standard_normal((6, 8)).astype(np.float32)
    w = rng.standard_normal((8, 3)).astype(np.float32)
    x, W = G(a), G(w)
    h = (x * 2 - 1).relu()
    hn = np.maximum(a * 2 - 1, 0)
    same(N(h @ W), hn @ w, rtol=1e-5, atol=1e-5)
    h = (x * 2 - 1).relu()
    same(N(h.sum(1)), hn.sum(1), rtol=1e-5, atol=1e-5)
    h = (x * 2 - 1).relu()
    same(N(h.max()), hn.max())
    h = (x * 2 - 1).relu()
    idx = G(np.array([5, 0, 3], np.int64))
    same(N(h[idx]), hn[[5, 0, 3]])
    h = (x * 2 - 1).relu()
    same(N(h.cumsum(1)), np.cumsum(hn, 1), rtol=1e-5, atol=1e-5)
    h = (x * 2 - 1).relu()
    same(N(h.softmax(1)), np.exp(hn) / np.exp(hn).sum(1, keepdims=True), rtol=1e-5, atol=1e-6)
    h = (x * 2 - 1).relu()
    same(N(wt.sort(h, 1)[0]), np.sort(hn, 1))
    i = G(np.array([1, 2, 3], np.int64)) * 2            # pending index tensor
    same(N(x.reshape(-1)[i]), a.reshape(-1)[[2, 4, 6]])


def test_inplace_on_pending_and_on_leaves():
    a = rng.standard_normal((3, 4)).astype(np.float32)
    x = G(a)
    y = x * 2
    y.add_(1)                           # in place on a pending buffer
    y[:, 1] = 0                         # strided write into it
    r = a * 2 + 1
    r[:, 1] = 0
    same(N(y), r)
    x = G(a)
    z = x + 1                           # pending node reads x ...
    x.mul_(10)                          # ... then x changes in place: z keeps the old value
    w = x + 2                           # and a read after the write sees the new one (x, a leaf again)
    same(N(z), a + 1)
    same(N(x), a * 10)
    same(N(w), a * 10 + 2)
    x = G(a)
    z = x + 1
    x.copy_(G(np.zeros_like(a)))        # full overwrite of a buffer a pending node reads
    same(N(z), a + 1)
    same(N(x), np.zeros_like(a))


def test_many_inputs_respect_the_binding_limit():
    arrs = [rng.standard_normal(33).astype(np.float32) for _ in range(12)]
    ts = [G(a) for a in arrs]
    webgpu.synchronize()
    acc = ts[0]
    for t in ts[1:]:
        acc = acc * 0.5 + t
    ref = arrs[0]
    for a in arrs[1:]:
        ref = ref * np.float32(0.5) + a
    same(N(acc), ref, rtol=1e-5, atol=1e-5)
    keep = [t * 2 for t in ts]          # twelve live outputs
    for k, a in zip(keep, arrs):
        same(N(k), a * 2)


def test_zero_dim_empty_and_folded_grid():
    s = G(np.float32(3.0))
    same(N((s * 2 + 1).exp()), np.exp(np.float32(7.0)), rtol=1e-6)
    e = G(np.zeros((0, 4), np.float32))
    assert N(e * 2 + 1).shape == (0, 4)
    old = be.max_wg
    be.max_wg = 5
    try:
        n = 256 * 5 * 5 * 2 + 17                # needs a 3-D grid
        x = G(np.arange(n, dtype=np.int32))
        y = (x * 2 - 3) % 1000
        same(N(y), ((np.arange(n, dtype=np.int64) * 2 - 3) % 1000).astype(np.int32))
    finally:
        be.max_wg = old


def test_backend_level_views_and_dead_outputs():
    a = rng.standard_normal(100).astype(np.float32)
    v = Strided(be.from_flat(a, "float32"), (100,), (1,), 0, "float32")

    def out():
        return Strided(be.empty(100, "float32"), (100,), (1,), 0, "float32")
    d0 = webgpu.dispatch_count()
    o1 = out()
    be.ewise("exp", o1, [v], "float32")
    o2 = out()
    be.ewise("mul", o2, [o1, v], "float32")
    del o1                                  # dead intermediate: computed inline, not stored
    o3 = out()
    be.ewise("lt", Strided(be.empty(100, "bool"), (100,), (1,), 0, "bool"), [o2, 0.0], "float32")
    be.ewise("sub", o3, [o2, 1.0], "float32")
    r3 = np.array(be.to_flat(o3), np.float32)
    assert webgpu.dispatch_count() - d0 == 1
    same(r3, np.exp(a) * a - 1, rtol=1e-5, atol=1e-6)
    same(np.array(be.to_flat(o2), np.float32), np.exp(a) * a, rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError):          # unsupported op/dtype raises at the call, not later
        be.ewise("bitwise_and", out(), [v, v], "float32")


def test_training_loop_matches_unfused_and_cpu():
    X = rng.standard_normal((32, 6)).astype(np.float32)
    Y = (X @ rng.standard_normal((6, 1)).astype(np.float32)).astype(np.float32)
    w0 = (rng.standard_normal((6, 1)) * 0.1).astype(np.float32)

    def train(dev, fuse):
        old = webgpu.set_fusion(fuse)
        try:
            w = wt.tensor(w0, device=dev).requires_grad_()
            b = wt.zeros(1, device=dev, requires_grad=True)
            opt = wt.optim.Adam([w, b], lr=0.05)
            x, y = wt.tensor(X, device=dev), wt.tensor(Y, device=dev)
            losses = []
            for _ in range(15):
                p = (x @ w + b).tanh() * 3
                loss = ((p - y) ** 2).mean() + 0.01 * (w * w).sum()
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.item())
            return np.array(losses), N(w)
        finally:
            webgpu.set_fusion(old)
    l1, w1 = train("webgpu", True)
    l0, w0_ = train("webgpu", False)
    lc, wc = train("cpu", True)
    np.testing.assert_allclose(l1, l0, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w1, w0_, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(l1, lc, rtol=1e-4, atol=1e-5)
    assert l1[-1] < l1[0]


BESSEL_DISPATCHES = {"i0": 3, "special_i0e": 3, "special_i1": 3, "special_i1e": 3,
                     "special_ndtri": 2}  # (ndtri: three Newton steps on log_ndtr, ~100 steps)


@pytest.mark.parametrize("op", sorted(op for op, d in wt.ops.registry.ELEMENTWISE.items() if d.ref is not None))
def test_decomposed_op_is_one_dispatch(op):
    """An element-wise op declared as a reference decomposition (ops/pointwise.py `ref=`) costs one
    dispatch on webgpu, as a primitive would: the fusion joins its steps into one kernel."""
    kind = wt.ops.registry.ELEMENTWISE[op].kind
    x = G(rng.uniform(0.05, 0.95, 64).astype(np.float32))
    args = (x,) if kind == "unary" else (x, G(rng.uniform(0.05, 0.95, 64).astype(np.float32)))
    webgpu.synchronize()
    d0 = webgpu.dispatch_count()
    y = (getattr(wt.special, op[8:]) if op.startswith("special_") else getattr(wt, op))(*args)
    N(y)
    # the Bessel functions' two Chebyshev expansions are 130-160 steps: a kernel takes lazy.MAX_NODES (64) of them
    assert webgpu.dispatch_count() - d0 == BESSEL_DISPATCHES.get(op, 1)
