"""Deferred (device-side) index bounds checks on webgpu: an out-of-range index in gather,
index_select, embedding, x[idx], nll_loss/cross_entropy targets is not read back when the op
is queued (that would wait mid-step); the check's values are computed on the device and the
next sync point (item/tolist/numpy/cpu/print/bool/synchronize) raises PyTorch's exception
type and message there. cpu still raises immediately. A valid training loop waits once per
step (loss.item())."""
import os
import re

import numpy as np
import pytest

os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

import webtorch as wt  # noqa: E402
import webtorch.nn.functional as F  # noqa: E402
from webtorch.backends import webgpu  # noqa: E402

pytestmark = pytest.mark.usefixtures("webgpu")  # conftest: skipped only by WEBTORCH_SKIP_WEBGPU=1
be = webgpu.get_backend() if webgpu.is_available() else None  # no adapter: the fixture fails each test
GPU = "webgpu"


class Waits:
    """counts the driver's waits (read_buffer and synchronize)"""

    def __enter__(self):
        d = be.driver
        self.n = 0
        self.rb, self.sy = d.read_buffer, d.synchronize

        def rb(*a, **k):
            self.n += 1
            return self.rb(*a, **k)

        def sy(*a, **k):
            self.n += 1
            return self.sy(*a, **k)
        d.read_buffer, d.synchronize = rb, sy
        return self

    def __exit__(self, *exc):
        del be.driver.read_buffer, be.driver.synchronize


def _ops():
    """name -> (callable(device) queuing the failing op, exception type, PyTorch's message)"""
    def ce(dev):
        return F.cross_entropy(wt.zeros(4, 10, device=dev), wt.tensor([1, 12, 3, -100], device=dev))

    def nll(dev):
        return F.nll_loss(wt.zeros(3, 5, device=dev), wt.tensor([0, -2, 1], device=dev))

    def nllw(dev):
        return F.nll_loss(wt.zeros(3, 5, device=dev), wt.tensor([0, 7, 1], device=dev),
                          weight=wt.ones(5, device=dev))

    def gather(dev):
        return wt.arange(12.0, device=dev).reshape(3, 4).gather(1, wt.tensor([[0], [4], [1]], device=dev))

    def scatter(dev):
        return wt.zeros(3, 4, device=dev).scatter(1, wt.tensor([[0], [5], [1]], device=dev),
                                                  wt.ones(3, 1, device=dev))

    def isel(dev):
        return wt.arange(10.0, device=dev).index_select(0, wt.tensor([1, 10], device=dev))

    def emb(dev):
        return F.embedding(wt.tensor([[0, 1], [2, 9]], device=dev), wt.ones(5, 3, device=dev))

    def adv(dev):
        return wt.arange(6.0, device=dev)[wt.tensor([0, 6], device=dev)]

    def adv_neg(dev):
        return wt.arange(6.0, device=dev)[wt.tensor([0, -7], device=dev)]

    def setitem(dev):
        x = wt.zeros(6, device=dev)
        x[wt.tensor([1, 8], device=dev)] = 1.0
        return x

    return {
        "cross_entropy": (ce, IndexError, "Target 12 is out of bounds."),
        "nll_loss": (nll, IndexError, "Target -2 is out of bounds."),
        "nll_loss_weight": (nllw, IndexError, "Target 7 is out of bounds."),
        "gather": (gather, RuntimeError, "index 4 is out of bounds for dimension 1 with size 4"),
        "scatter": (scatter, RuntimeError, "index 5 is out of bounds for dimension 1 with size 4"),
        "index_select": (isel, IndexError, "index out of range in self"),
        "embedding": (emb, IndexError, "index out of range in self"),
        "advanced_indexing": (adv, IndexError, "index 6 is out of bounds for dimension 0 with size 6"),
        "advanced_indexing_negative": (adv_neg, IndexError, "index -7 is out of bounds for dimension 0 with size 6"),
        "setitem": (setitem, IndexError, "index 8 is out of bounds for dimension 0 with size 6"),
    }


OPS = _ops()


@pytest.mark.parametrize("name", sorted(OPS))
def test_cpu_raises_immediately(name):
    f, exc, msg = OPS[name]
    with pytest.raises(exc) as e:
        f("cpu")
    assert str(e.value) == msg


@pytest.mark.parametrize("sync", ["item", "tolist", "cpu", "numpy", "bool", "repr", "synchronize"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_webgpu_raises_at_next_sync(name, sync):
    f, exc, msg = OPS[name]
    with Waits() as w:
        out = f(GPU)                               # queued: no wait, no raise
        other = wt.ones(2, device=GPU) * 3
    assert w.n == 0
    with Waits() as w, pytest.raises(exc) as e:
        if sync == "item":
            other.sum().item()
        elif sync == "tolist":
            other.tolist()
        elif sync == "cpu":
            other.cpu()
        elif sync == "numpy":
            other.cpu().numpy()
        elif sync == "bool":
            bool(other[0] > 0)
        elif sync == "repr":
            repr(other)
        else:
            webgpu.synchronize()
    assert w.n == 1                                # the checks ride on the sync's one wait
    s = str(e.value)
    assert s.startswith(msg) and "asynchronously" in s
    # the pending list is consumed: the next sync succeeds, and so does reading the result
    assert other.tolist() == [3.0, 3.0]
    out.detach().cpu()
    webgpu.synchronize()


def test_first_failed_check_wins_and_all_are_consumed():
    a = wt.arange(6.0, device=GPU)
    ok = a[wt.tensor([1, 2], device=GPU)]
    a.index_select(0, wt.tensor([7], device=GPU))
    a[wt.tensor([9], device=GPU)]
    with pytest.raises(IndexError, match="index out of range in self"):
        ok.tolist()
    assert ok.tolist() == [1.0, 2.0]


def test_check_survives_freed_index_tensor():
    a = wt.arange(6.0, device=GPU)
    idx = wt.tensor([0, 11], device=GPU)
    out = a.index_select(0, idx)
    del idx, out
    import gc
    gc.collect()
    wt.ones(64, device=GPU) + 1                    # reuse freed buffers
    with pytest.raises(IndexError, match="index out of range in self"):
        webgpu.synchronize()


def test_out_of_range_put_stays_in_bounds():
    """the queued put is clamped: neighbours of the target in the same allocation arena stay intact"""
    x = wt.zeros(4, device=GPU)
    y = wt.zeros(4, device=GPU)
    x[wt.tensor([1, 1000], device=GPU)] = 5.0
    with pytest.raises(IndexError):
        webgpu.synchronize()
    assert y.tolist() == [0.0] * 4


def test_valid_results_and_negative_wrap():
    a = wt.arange(6.0, device=GPU)
    assert a[wt.tensor([-1, 0, -6], device=GPU)].tolist() == [5.0, 0.0, 0.0]
    x = wt.arange(12.0, device=GPU).reshape(3, 4)
    assert x.gather(1, wt.tensor([[3], [0], [2]], device=GPU)).tolist() == [[3.0], [4.0], [10.0]]
    assert x.index_select(1, wt.tensor([3, 0], dtype=wt.int32, device=GPU)).tolist() == \
        [[3.0, 0.0], [7.0, 4.0], [11.0, 8.0]]


def test_training_loop_one_wait_per_step():
    r = np.random.default_rng(0)
    X = wt.tensor(r.standard_normal((256, 20)).astype(np.float32), device=GPU)
    Y = wt.tensor(r.integers(0, 5, 256), device=GPU)
    emb = wt.nn.Embedding(50, 8).to(GPU)
    lin = wt.nn.Linear(28, 5).to(GPU)
    opt = wt.optim.SGD(list(emb.parameters()) + list(lin.parameters()), lr=0.1)

    def step():
        idx = wt.tensor(r.integers(0, 256, 32), device=GPU)
        tok = wt.tensor(r.integers(0, 50, 32), device=GPU)
        h = wt.cat([X[idx], emb(tok)], 1)
        loss = F.cross_entropy(lin(h), Y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()
    step()
    with Waits() as w:
        for _ in range(3):
            step()
    assert w.n == 3


def test_many_pending_checks_resolve_in_batches():
    a = wt.arange(6.0, device=GPU)
    idx = [wt.tensor([i % 6], device=GPU) for i in range(600)]   # distinct tensors: no cache
    with Waits() as w:
        for t in idx:
            a[t]
    assert w.n <= 600 // be.CHECKS_MAX
    webgpu.synchronize()
    assert not be._checks


@pytest.mark.parametrize("dev", ["cpu", "webgpu"])
@pytest.mark.parametrize("op,kind,msg", [
    ("index_add", RuntimeError, "index 5 is out of bounds for dimension 0 with size 3"),
    ("index_copy", IndexError, "index_copy_(): index 5 is out of bounds for dimension 0 with size 3"),
    ("index_fill", IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
])
def test_index_add_copy_fill_bounds(dev, op, kind, msg):
    """As PyTorch: out-of-range indices raise (at the next sync on webgpu), never write elsewhere."""
    import torch as T
    x = wt.zeros(3, 2, device=dev)
    idx = wt.tensor([5], device=dev)
    args = {"index_add": (wt.ones(1, 2, device=dev),), "index_copy": (wt.ones(1, 2, device=dev),),
            "index_fill": (1.0,)}[op]
    targs = {"index_add": (T.ones(1, 2),), "index_copy": (T.ones(1, 2),), "index_fill": (1.0,)}[op]
    with pytest.raises(kind) as ref:
        getattr(T.zeros(3, 2), op)(0, T.tensor([5]), *targs)
    assert msg in str(ref.value)
    with pytest.raises(kind, match=re.escape(msg)):
        y = getattr(x, op)(0, idx, *args)
        y.tolist()
    assert x.tolist() == [[0.0, 0.0]] * 3
