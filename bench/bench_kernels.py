"""Kernel benchmarks: matmul GFLOP/s of the webgpu backend vs numpy vs torch (CPU), and the
cost of one small dispatch (batched) and of one synchronous wait.

    .venv/bin/python bench/bench_kernels.py
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "py"))
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

import numpy as np  # noqa: E402
from webtorch.backends.base import Strided  # noqa: E402
from webtorch.backends import webgpu  # noqa: E402

try:
    import torch
except Exception:
    torch = None


def best(f, reps):
    f()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return min(ts)


def main():
    be = webgpu.get_backend()
    info = webgpu.adapter_info()
    print(f"adapter: {info['device'] or info['vendor']} ({info['backend']}, {info['adapter_type']})")
    print(f"{'n':>6} {'webgpu GF/s':>12} {'numpy GF/s':>11} {'torch GF/s':>11} {'webgpu/numpy':>13}")
    for n in (256, 512, 1024):
        a = np.random.rand(n, n).astype(np.float32)
        b = np.random.rand(n, n).astype(np.float32)
        va = Strided(be.from_flat(a.ravel(), "float32"), (1, n, n), (0, n, 1), 0, "float32")
        vb = Strided(be.from_flat(b.ravel(), "float32"), (1, n, n), (0, n, 1), 0, "float32")
        vo = Strided(be.empty(n * n, "float32"), (1, n, n), (0, n, 1), 0, "float32")
        reps = 5 if n < 1024 else 3
        inner = 4 if n < 1024 else 2

        def gpu():
            for _ in range(inner):
                be.matmul(vo, va, vb)
            be.synchronize()
        tg = best(gpu, reps) / inner
        got = be.to_numpy(Strided(vo.buf, (n, n), (n, 1), 0, "float32"))
        assert np.allclose(got, a @ b, rtol=1e-3, atol=1e-3)
        tn = best(lambda: a @ b, reps)
        tt = None
        if torch is not None:
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            tt = best(lambda: ta @ tb, reps)
        fl = 2 * n ** 3 / 1e9
        print(f"{n:>6} {fl / tg:>12.1f} {fl / tn:>11.1f} {fl / tt if tt else float('nan'):>11.1f} "
              f"{tn / tg:>13.2f}")
    # dispatch and wait costs
    x = Strided(be.from_flat([1.0] * 1024, "float32"), (1024,), (1,), 0, "float32")
    o = Strided(be.empty(1024, "float32"), (1024,), (1,), 0, "float32")
    be.ewise("add", o, [x, 1.0], "float32")
    be.synchronize()
    k = 500
    for _ in range(2):        # the second round is the steady state (bind groups cached)
        be.synchronize()
        d0, s0 = webgpu.dispatch_count(), webgpu.submit_count()
        t0 = time.perf_counter()
        for _ in range(k):
            be.ewise("add", o, [x, 1.0], "float32")
        t_rec = time.perf_counter() - t0
        be.synchronize()
        t_all = time.perf_counter() - t0
    print(f"dispatch (1024-element add, batched): {t_all / k * 1e6:.1f} us each "
          f"({t_rec / k * 1e6:.1f} us to record); {webgpu.dispatch_count() - d0} dispatches in "
          f"{webgpu.submit_count() - s0} submit(s)")
    tw = best(lambda: be.synchronize(), 20)
    print(f"synchronous wait (empty queue): {tw * 1e6:.0f} us")


if __name__ == "__main__":
    main()
