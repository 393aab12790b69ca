"""webtorch benchmarks, side by side in one run: prints a markdown table and ratios.

    python bench/run.py            (or: make bench)

Rows: webtorch on webgpu (lavapipe here) and on cpu (numpy), PyTorch CPU with 1 thread and with
its default threads, and tinygrad 0.14 on its WEBGPU device (Dawn) when `tinygrad` and
`dawn-python` are importable (else "n/a"; they are not webtorch dependencies). Each row runs in
its own subprocess, one after another. Every figure is the best of a few repetitions: on a
shared 2-core machine the load of other processes makes single timings noisy.

Columns: matmul GFLOP/s at 256/512/1024 (float32, square), element-wise add GB/s over 4M
elements (12 bytes moved per element), per-op dispatch cost in us (200 chained small adds, one
sync), and one training step of a 784-128-10 MLP (batch 64, SGD, cross entropy as
log_softmax + gather + mean, loss read back) in ms.
"""
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ROWS = ["webtorch-webgpu", "webtorch-cpu", "torch-1thread", "torch-default", "tinygrad-webgpu"]
LABEL = {"webtorch-webgpu": "webtorch webgpu", "webtorch-cpu": "webtorch cpu (numpy)",
         "torch-1thread": "PyTorch CPU, 1 thread", "torch-default": "PyTorch CPU, default threads",
         "tinygrad-webgpu": "tinygrad 0.14 WEBGPU (Dawn)"}
SIZES = (256, 512, 1024)


def best(f, reps, inner=1):
    f()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(inner):
            f()
        ts.append((time.perf_counter() - t0) / inner)
    return min(ts)


# ---- webtorch -------------------------------------------------------------------------------
def run_webtorch(dev):
    sys.path.insert(0, os.path.join(ROOT, "py"))
    import numpy as np
    import webtorch as torch
    sync = torch.webgpu.synchronize if dev == "webgpu" else (lambda: None)
    res = {}
    for n in SIZES:
        a = torch.rand(n, n, device=dev)
        b = torch.rand(n, n, device=dev)

        def mm():
            c = a @ b
            sync()
            return c
        res[f"mm{n}"] = 2 * n ** 3 / best(mm, 5 if n < 1024 else 4) / 1e9
    x = torch.rand(1 << 22, device=dev)
    y = torch.rand(1 << 22, device=dev)

    def add():
        z = x + y
        sync()
        return z
    res["ew"] = 12 * (1 << 22) / best(add, 5) / 1e9
    s = torch.ones(16, device=dev)

    def chain():
        z = s
        for _ in range(200):
            z = z + 1.0
        z[0].item()
    res["disp"] = best(chain, 5) / 200 * 1e6
    res["mlp"] = _mlp_webtorch(torch, np, dev) * 1e3
    if dev == "webgpu":
        c0 = torch.webgpu.dispatch_count()
        _MLP["step"]()
        torch.webgpu.synchronize()
        res["mlp_dispatches"] = torch.webgpu.dispatch_count() - c0
        res["adapter"] = torch.webgpu.get_device_name()
    return res


_MLP = {}


def _mlp_webtorch(torch, np, dev):
    r = np.random.default_rng(0)
    X = torch.tensor(r.standard_normal((64, 784)).astype(np.float32), device=dev)
    Y = torch.tensor(r.integers(0, 10, 64), device=dev)
    ps = [torch.tensor((r.standard_normal(s) * sc).astype(np.float32), device=dev).requires_grad_()
          for s, sc in (((128, 784), 0.03), ((128,), 0.0), ((10, 128), 0.1), ((10,), 0.0))]
    W1, b1, W2, b2 = ps
    opt = torch.optim.SGD(ps, lr=0.1)

    def step():
        h = (X @ W1.t() + b1).relu()
        logits = h @ W2.t() + b2
        loss = -logits.log_softmax(1).gather(1, Y.unsqueeze(1)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    _MLP["step"] = step

    def ten():
        for _ in range(10):
            loss = step()
        loss.item()
    return best(ten, 5) / 10


# ---- PyTorch --------------------------------------------------------------------------------
def run_torch(threads):
    import numpy as np
    import torch
    if threads:
        torch.set_num_threads(threads)
    res = {}
    for n in SIZES:
        a, b = torch.rand(n, n), torch.rand(n, n)
        res[f"mm{n}"] = 2 * n ** 3 / best(lambda: a @ b, 5, 3) / 1e9
    x, y = torch.rand(1 << 22), torch.rand(1 << 22)
    res["ew"] = 12 * (1 << 22) / best(lambda: x + y, 5, 3) / 1e9
    s = torch.ones(16)

    def chain():
        z = s
        for _ in range(200):
            z = z + 1.0
        z[0].item()
    res["disp"] = best(chain, 5) / 200 * 1e6
    r = np.random.default_rng(0)
    X = torch.tensor(r.standard_normal((64, 784)).astype(np.float32))
    Y = torch.tensor(r.integers(0, 10, 64))
    ps = [torch.tensor((r.standard_normal(s) * sc).astype(np.float32)).requires_grad_()
          for s, sc in (((128, 784), 0.03), ((128,), 0.0), ((10, 128), 0.1), ((10,), 0.0))]
    W1, b1, W2, b2 = ps
    opt = torch.optim.SGD(ps, lr=0.1)

    def step():
        h = (X @ W1.t() + b1).relu()
        loss = -(h @ W2.t() + b2).log_softmax(1).gather(1, Y.unsqueeze(1)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    def ten():
        for _ in range(10):
            loss = step()
        loss.item()
    res["mlp"] = best(ten, 5) / 10 * 1e3
    return res


# ---- tinygrad -------------------------------------------------------------------------------
def run_tinygrad():
    import tinygrad
    from tinygrad import Tensor, Device
    dev = Device[Device.DEFAULT]
    res = {"adapter": Device.DEFAULT}
    for n in SIZES:
        a, b = Tensor.rand(n, n).realize(), Tensor.rand(n, n).realize()

        def mm():
            c = (a @ b).realize()
            dev.synchronize()
            return c
        res[f"mm{n}"] = 2 * n ** 3 / best(mm, 5 if n < 1024 else 4) / 1e9
    x, y = Tensor.rand(1 << 22).realize(), Tensor.rand(1 << 22).realize()

    def add():
        z = (x + y).realize()
        dev.synchronize()
        return z
    res["ew"] = 12 * (1 << 22) / best(add, 5) / 1e9
    s = Tensor.ones(16).contiguous().realize()

    def chain():                     # realize each op: tinygrad would otherwise fuse the chain
        z = s
        for _ in range(200):
            z = (z + 1.0).realize()
        z[0].item()
    res["disp"] = best(chain, 3) / 200 * 1e6
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from workloads import tinygrad_mlp
    step = tinygrad_mlp(tinygrad)

    def ten():
        for _ in range(10):
            loss = step()
        loss.item()
    try:
        res["mlp"] = best(ten, 5) / 10 * 1e3
    except Exception as e:  # noqa: BLE001 - an API difference must not hide the other columns
        print(f"tinygrad MLP step failed: {e}", file=sys.stderr)
    return res


def worker(name):
    os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
    if name == "webtorch-webgpu":
        return run_webtorch("webgpu")
    if name == "webtorch-cpu":
        return run_webtorch("cpu")
    if name == "torch-1thread":
        return run_torch(1)
    if name == "torch-default":
        return run_torch(0)
    if name == "tinygrad-webgpu":
        return run_tinygrad()
    raise SystemExit(f"unknown row {name}")


def tinygrad_env():
    env = dict(os.environ, DEV="WEBGPU", XDG_RUNTIME_DIR=os.environ.get("XDG_RUNTIME_DIR", "/tmp"))
    try:
        import importlib.util
        spec = importlib.util.find_spec("pydawn")
        if spec and spec.submodule_search_locations:
            lib = os.path.join(list(spec.submodule_search_locations)[0], "lib", "libwebgpu_dawn_x86_64.so")
            if os.path.exists(lib):
                env.setdefault("WEBGPU_PATH", lib)
    except Exception:
        pass
    return env


def fmt(v, nd=1):
    return "n/a" if v is None else f"{v:.{nd}f}"


def main():
    rows = [r for r in ROWS if not sys.argv[1:] or r in sys.argv[1:]]
    results = {}
    for r in rows:
        env = tinygrad_env() if r.startswith("tinygrad") else dict(os.environ)
        t0 = time.perf_counter()
        try:
            p = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", r], env=env,
                               capture_output=True, text=True, timeout=600)
            line = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
            results[r] = json.loads(line[-1][7:]) if line else None
            if not line:
                err = (p.stderr.strip().splitlines() or ["no output"])[-1]
                print(f"<!-- {r}: n/a ({err[:160]}) -->", file=sys.stderr)
        except Exception as e:  # noqa: BLE001
            results[r] = None
            print(f"<!-- {r}: n/a ({e}) -->", file=sys.stderr)
        print(f"<!-- {r}: {time.perf_counter() - t0:.0f} s -->", file=sys.stderr)
    cols = [("mm256", "matmul 256 GFLOP/s", 1), ("mm512", "matmul 512 GFLOP/s", 1),
            ("mm1024", "matmul 1024 GFLOP/s", 1), ("ew", "add 4M GB/s", 2), ("disp", "dispatch us/op", 1),
            ("mlp", "MLP step ms", 1)]
    print("| | " + " | ".join(c[1] for c in cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for r in rows:
        res = results.get(r) or {}
        print(f"| {LABEL[r]} | " + " | ".join(fmt(res.get(k), nd) for k, _, nd in cols) + " |")
    wg = results.get("webtorch-webgpu") or {}
    print()
    if wg.get("adapter"):
        print(f"webtorch webgpu adapter: {wg['adapter']}; MLP step = {wg.get('mlp_dispatches')} dispatches")
    print()
    print("| ratio (webtorch webgpu / other) | matmul 1024 | add 4M | dispatch (other/webtorch) | MLP step (other/webtorch) |")
    print("|---|---:|---:|---:|---:|")
    for r in rows[1:]:
        o = results.get(r) or {}

        def ratio(k, inv=False):
            a, b = wg.get(k), o.get(k)
            if not a or not b:
                return "n/a"
            return f"{(b / a) if inv else (a / b):.2f}x"
        print(f"| vs {LABEL[r]} | {ratio('mm1024')} | {ratio('ew')} | {ratio('disp', True)} | {ratio('mlp', True)} |")
    return results


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        out = worker(sys.argv[2])
        print("RESULT " + json.dumps(out))
    else:
        main()
