"""WebGPU's documented limits, each either computed as PyTorch does or raised, never wrapped:

* int64 is stored as int32: every kernel whose int64 result can leave that range sets a device
  flag, read with the next sync (one wait, like the deferred index checks) and raised there as
  RuntimeError; on cpu the same code equals PyTorch;
* kernels count and index with 32-bit words: an op over 2**32 or more elements raises, one
  between 2**31 and 2**32 computes;
* one tensor above the adapter's largest binding raises "WebGPU out of memory", float64 TypeError;
* float16 through fused chains (shader-f16 needed);
* a training loop holds flat GPU memory (allocator counters) after warm-up.
"""
import math

import numpy as np
import pytest
import torch

from core_util import wt
from webtorch.backends import webgpu

M, MIN = 2**31 - 1, -2**31
I64_ERR = "int64 overflow on webgpu"


def L(T, dev, v, dtype="int64"):
    return T.tensor(v, dtype=getattr(T, dtype), device=dev if T is wt else "cpu")


# name -> (fn(T, dev) -> tensor, overflows: True when the int64 result leaves the int32 range)
I64 = {
    "add": (lambda T, d: L(T, d, [M - 1, MIN + 1]) + L(T, d, [1, -1]), False),
    "add over": (lambda T, d: L(T, d, [M]) + 1, True),
    "add under": (lambda T, d: L(T, d, [MIN]) + L(T, d, [-1]), True),
    "sub": (lambda T, d: L(T, d, [MIN + 1]) - 1, False),
    "sub under": (lambda T, d: L(T, d, [MIN]) - 1, True),
    "mul": (lambda T, d: L(T, d, [46340, MIN]) * L(T, d, [46341, 1]), False),
    "mul over": (lambda T, d: L(T, d, [46341]) * 46341, True),
    "mul -1 * MIN": (lambda T, d: L(T, d, [-1]) * MIN, True),
    "neg": (lambda T, d: -L(T, d, [-M]), False),
    "neg MIN": (lambda T, d: -L(T, d, [MIN]), True),
    "abs MIN": (lambda T, d: L(T, d, [MIN]).abs(), True),
    "pow": (lambda T, d: L(T, d, [2, -2]) ** L(T, d, [30, 31]), False),
    "pow over": (lambda T, d: L(T, d, [2]) ** 31, True),
    "floor_divide": (lambda T, d: L(T, d, [MIN]) // 1, False),
    "floor_divide MIN // -1": (lambda T, d: L(T, d, [MIN]) // -1, True),
    "div trunc MIN / -1": (lambda T, d: T.div(L(T, d, [MIN]), -1, rounding_mode="trunc"), True),
    "lshift": (lambda T, d: L(T, d, [1]) << 30, False),
    "lshift over": (lambda T, d: L(T, d, [1]) << 31, True),
    "lshift 40": (lambda T, d: L(T, d, [3]) << 40, True),
    "sum": (lambda T, d: L(T, d, [2**30, 2**30 - 1]).sum(), False),
    "sum over": (lambda T, d: L(T, d, [2**30, 2**30]).sum(), True),
    "sum int32 promotes": (lambda T, d: L(T, d, [2**30, 2**30], "int32").sum(), True),
    "sum two-pass": (lambda T, d: T.full((20000,), 100000, dtype=T.int64, device=d if T is wt else "cpu").sum(), False),
    "sum two-pass over": (lambda T, d: T.full((20000,), 110000, dtype=T.int64, device=d if T is wt else "cpu").sum(), True),
    "sum dim over": (lambda T, d: L(T, d, [[M, 1], [1, 1]]).sum(1), True),
    "prod": (lambda T, d: L(T, d, [2**15, 2**15]).prod(), False),
    "prod over": (lambda T, d: L(T, d, [2**16, 2**15]).prod(), True),
    "cumsum": (lambda T, d: L(T, d, [M - 1, 1]).cumsum(0), False),
    "cumsum over": (lambda T, d: L(T, d, [M, 1]).cumsum(0), True),
    "cumprod over": (lambda T, d: L(T, d, [2**16, 2**16]).cumprod(0), True),
    "float to int64": (lambda T, d: L(T, d, [2147483520.0, -2147483648.0], "float32").long(), False),
    "float to int64 over": (lambda T, d: L(T, d, [3e9], "float32").long(), True),
    "float to int64 under": (lambda T, d: L(T, d, [-3e9], "float32").to(T.int64), True),
    "float16 to int64 over": (lambda T, d: L(T, d, [65504.0], "float32").half().long() * 65536, True),
    "arange": (lambda T, d: T.arange(M - 3, M + 1, device=d if T is wt else "cpu"), False),
    "arange over": (lambda T, d: T.arange(M - 3, M + 2, device=d if T is wt else "cpu"), True),
    "matmul": (lambda T, d: L(T, d, [[46340, 1]]) @ L(T, d, [[46341], [-5]]), False),
    "matmul over": (lambda T, d: L(T, d, [[2**30, 2**30]]) @ L(T, d, [[1], [1]]), True),
    "index_add": (lambda T, d: L(T, d, [0, 0]).index_add_(0, L(T, d, [0, 0]), L(T, d, [M - 1, 1])), False),
    "index_add over": (lambda T, d: L(T, d, [0, 0]).index_add_(0, L(T, d, [0, 0]), L(T, d, [M, 1])), True),
    "fused chain": (lambda T, d: (L(T, d, [M - 3]) * 1 + 2) - 1 + 2, False),
    "fused chain over": (lambda T, d: ((L(T, d, [M - 3]) * 2 + 2) - 1) // 2, True),
}


def test_int64_boundaries(device):
    """Results at the int32 boundary equal PyTorch's; one step past it raises on webgpu (at the
    sync) and equals PyTorch's 64-bit result on cpu. After an error the next op is clean."""
    for name, (fn, over) in I64.items():
        t = fn(torch, "cpu")
        if device == "webgpu" and over:
            with pytest.raises(RuntimeError, match=I64_ERR + "|does not fit in int32") as e:
                fn(wt, device).tolist()
            assert "compute on cpu" in str(e.value) or "int32" in str(e.value), name
            continue
        w = fn(wt, device)
        assert w.dtype.name == str(t.dtype).split(".")[-1], name
        assert w.tolist() == t.tolist(), name


UNDEFINED = [math.nan, math.inf, -math.inf, -3.4e38, 1e19, -1e19]  # outside int64: a C++ cast's undefined behaviour


def test_casting_nan_inf_out_of_range_floats_to_integers(device):
    """PyTorch's CPU casts (x86) give NaN, +-inf and out-of-range floats as the integer type's minimum (uint8: 0);
    so does every device here, int64 on webgpu as its 32-bit storage's minimum (no overflow error: PyTorch's own
    value is platform-defined). T5's relative-position buckets cast log(0) = -inf and discard it with `where`."""
    x = L(wt, device, UNDEFINED + [2.7, -3e9, 3e9], "float32")
    want = L(torch, device, UNDEFINED + [2.7, -3e9, 3e9], "float32")
    for dt in ("int32", "uint8"):
        assert x.to(getattr(wt, dt)).tolist() == want.to(getattr(torch, dt)).tolist(), dt
    buckets = []
    for T, dev in ((torch, "cpu"), (wt, device)):
        n = T.arange(12, device=dev)
        buckets.append(T.where(n < 3, n, T.min(8 + (T.log(n / 8) * 3).long(), T.full_like(n, 10))).tolist())
    assert buckets[0] == buckets[1]
    got, lowest = x[:6].long().tolist(), MIN if device == "webgpu" else -2**63
    assert got == [lowest] * 6 and want[:6].long().tolist() == [-2**63] * 6
    assert x[:6].half().long().tolist() == [lowest] * 6


def test_int64_overflow_is_raised_at_sync_without_extra_waits():
    be = webgpu.get_backend()
    waits = []
    rb = be.driver.read_buffer
    be.driver.read_buffer = lambda *a, **k: waits.append(1) or rb(*a, **k)
    try:
        x = wt.tensor([M - 20], device="webgpu")
        for _ in range(10):
            x = x + 1                  # queued: no wait per op
        s = x.sum()
        assert not waits
        assert s.item() == M - 10 and len(waits) == 1
        y = x * 4                      # overflows on the device; raised by the next sync
        assert len(waits) == 1
        with pytest.raises(RuntimeError, match=I64_ERR) as e:
            webgpu.synchronize()
        assert "cpu" in str(e.value) and "asynchronously" in str(e.value)
        del y
        assert (x + 1).item() == M - 9            # the flag was cleared
        n = len(waits)
        q = x // wt.tensor([0], device="webgpu")  # integer division by zero: the other flag word
        assert len(waits) == n
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            webgpu.synchronize()
        del q
        assert (x // 2).item() == (M - 10) // 2
        f = wt.ones(3, device="webgpu") * 2       # float work alone reads no flag
        be.driver.read_buffer = lambda *a, **k: pytest.fail("float-only work must not read the flag") or rb(*a, **k)
        assert be._i64_armed is False
        del f
    finally:
        be.driver.read_buffer = rb        # (the fusion layer's wrapper: not deleted)


def test_counts_past_32_bits():
    """Kernels index with 32-bit words: an op over n >= 2**32 elements raises before it is
    queued (a stride-0 expanded view, so no memory is needed). (2**31 < n < 2**32 computes:
    each index is a u32, but summing 2**31 elements takes minutes on lavapipe, so no test.)"""
    one = wt.ones(1, device="webgpu")
    big = one.expand(2**16, 2**16 + 1)
    for f in (lambda: big.sum(), lambda: big.mean(), lambda: big.amax(), lambda: big.sum(dim=(0, 1))):
        with pytest.raises(RuntimeError, match="32-bit"):
            f().item()
    with pytest.raises(RuntimeError, match="32-bit"):
        wt.ones(1, dtype=wt.int64, device="webgpu").expand(2**31 + 1).argmax().item()
    assert (one + 1).item() == 2.0


def test_out_of_memory_and_float64_errors():
    be = webgpu.get_backend()
    n = be.max_bytes // 4 + 1
    with pytest.raises(RuntimeError, match=r"^WebGPU out of memory: tried to allocate \d+ bytes"):
        wt.empty(n, device="webgpu")
    with pytest.raises(RuntimeError, match=r"^WebGPU out of memory"):
        wt.ones(1, device="webgpu").expand(n).contiguous()
    for f in (lambda: wt.zeros(2, dtype=wt.float64, device="webgpu"),
              lambda: wt.zeros(2, dtype=wt.float64).to("webgpu"),
              lambda: wt.ones(2, device="webgpu").double()):
        with pytest.raises(TypeError, match="float64 is not supported on webgpu"):
            f()


def test_float16_fused_chains(device):
    if device == "webgpu" and "shader-f16" not in webgpu.adapter_info()["features"]:
        pytest.skip("this WebGPU adapter lacks the shader-f16 feature")
    x = np.array([0.1, 1.5, -3.25, 1000.0, 70000.0, -0.0, math.inf, math.nan], np.float32)

    def fn(T, x):
        h = x.half()
        return (h.float(), (h * 3 + 1).float().exp().half(), (h * h - h).float() + 0.5,
                (x.half() + 0.001).half().float())
    dev = device
    for w, t in zip(fn(wt, wt.tensor(x.tolist(), device=dev)), fn(torch, torch.tensor(x))):
        assert w.dtype.name == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(w.cpu().numpy().astype("float64"), t.numpy().astype("float64"),
                                   rtol=2e-3, equal_nan=True)


def test_training_loop_holds_flat_memory():
    """300 Adam steps of a small MLP with cross-entropy: after warm-up the allocator's live and
    pooled bytes and the count of live GPU buffers stop growing."""
    import webtorch.nn as nn
    import webtorch.nn.functional as F
    wt.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).to("webgpu")
    opt = wt.optim.Adam(model.parameters(), lr=1e-2)
    x = wt.randn(64, 16, device="webgpu")
    y = wt.randint(0, 4, (64,), device="webgpu")
    seen = []
    for step in range(300):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 9:
            loss.item()
            if step >= 99:
                c = webgpu.counters()
                seen.append((c["allocated_bytes"], c["cached_bytes"], c["reserved_bytes"], c["live_buffers"],
                             c["pooled_buffers"]))
    assert len(set(seen)) == 1, f"GPU memory grows after warm-up: {seen}"
    assert math.isfinite(loss.item()) and loss.item() < 1.3


def test_long_loops_on_cpu_adapters_are_sliced():
    """llvmpipe (lavapipe here) ends any shader loop after 65,535 iterations, silently: a product's K past
    262,140 stopped there, a cumsum of 2**22 elements ended in 0. Products and scans run in slices on CPU
    adapters; cummax over such a row raises."""
    d = "webgpu"
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(2, 300001, generator=g), torch.randn(300001, 3, generator=g)
    got = (wt.tensor(a.numpy(), device=d) @ wt.tensor(b.numpy(), device=d)).cpu().numpy()
    np.testing.assert_allclose(got, (a.double() @ b.double()).numpy(), rtol=0, atol=2e-2)
    assert (wt.ones(300000, device=d) @ wt.ones(300000, device=d)).item() == 300000
    assert wt.ones(2**22, device=d).cumsum(0)[-1].item() == 2**22
    assert wt.ones(2, 2**19 + 7, dtype=wt.int32, device=d).cumsum(1)[:, -1].tolist() == [2**19 + 7] * 2
    if webgpu.get_backend().is_cpu_adapter:
        with pytest.raises(RuntimeError, match="compute it on the cpu device"):
            wt.ones(2**19 + 1, device=d).cummax(0)
