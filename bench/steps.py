"""Training steps of issue #12, eager vs torch.compile, side by side in one run.

    python bench/steps.py [ROW ...]        (rows: see ROWS; default all)
    WEBTORCH_PY=/other/checkout/py python bench/steps.py webgpu-eager   (another checkout's library)

Workloads (bench/workloads.py, PyTorch's API only): the 784-128-10 MLP step (batch 64, SGD), a
tiny causal Transformer step (2 layers, d=64, 4 heads, T=32, B=8, AdamW) and a loop of 2,000
steps of a 3-parameter polynomial fit with SGD. Each row runs in its own subprocess, one after
another. MLP and Transformer: ms per step, best of a few blocks of 10 steps each ending in one
`loss.item()`; poly: ms for the whole 2,000-step loop ending in one `loss.item()`. On webgpu
also the dispatches and submits per step (driver counters over a timed block). "compiled" calls
`torch.compile(step)` and warms it (webtorch: call 1 traces, calls 2-3 capture, 4+ replay)
before timing; "torch.compile(model)" compiles the model alone, the step around it eager (PyTorch's
usual pattern: webtorch replays the forward and, from loss.backward(), the backward; no poly row).
PyTorch's rows are eager only (its inductor needs a C++ toolchain and minutes). tinygrad's row
(when `tinygrad` and `dawn-python` are importable, see bench/README.md) runs the same steps under
TinyJit on its WEBGPU device.
"""
import json
import os
import subprocess
import sys
import time

from run import tinygrad_env

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ROWS = ["webgpu-eager", "webgpu-compiled", "webgpu-model", "cpu-eager", "cpu-compiled", "torch-1thread", "torch-default", "tinygrad-jit"]
LABEL = {"webgpu-eager": "webtorch webgpu, eager", "webgpu-compiled": "webtorch webgpu, torch.compile",
         "webgpu-model": "webtorch webgpu, torch.compile(model), loop eager",
         "cpu-eager": "webtorch cpu (numpy), eager", "cpu-compiled": "webtorch cpu (numpy), torch.compile",
         "torch-1thread": "PyTorch CPU eager, 1 thread", "torch-default": "PyTorch CPU eager, default threads",
         "tinygrad-jit": "tinygrad 0.14 WEBGPU (Dawn), TinyJit"}
REPS = {"mlp": 5, "transformer": 4, "poly": 2}


def measure(builders, counters=None):
    """{workload: ms, ...} for builders {workload: () -> step}."""
    from workloads import POLY_STEPS
    res = {}
    for name, build in builders.items():
        step = build()
        if step is None:
            continue
        n = POLY_STEPS if name == "poly" else 10
        for _ in range(5):
            loss = step()
        loss.item()

        def block():
            for _ in range(n):
                loss = step()
            return loss.item()
        c0 = counters() if counters else None
        ts = []
        for _ in range(REPS[name]):
            t0 = time.perf_counter()
            last = block()
            ts.append(time.perf_counter() - t0)
        res[name] = min(ts) * 1e3 / (1 if name == "poly" else n)
        res[name + "_loss"] = last
        if counters:
            c1 = counters()
            k = n * REPS[name]
            res[name + "_dispatches"] = (c1["dispatches"] - c0["dispatches"]) / k
            res[name + "_submits"] = (c1["submits"] - c0["submits"]) / k
    return res


def worker(row):
    os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
    sys.path.insert(0, HERE)
    from workloads import TINYGRAD, WORKLOADS
    if row == "tinygrad-jit":
        import tinygrad
        return measure({name: (lambda b=b: b(tinygrad)) for name, b in TINYGRAD.items()})
    if row.startswith("torch"):
        import torch
        if row == "torch-1thread":
            torch.set_num_threads(1)
        return measure({name: (lambda b=b: b(torch, "cpu")) for name, b in WORKLOADS.items()})
    sys.path.insert(0, os.environ.get("WEBTORCH_PY") or os.path.join(ROOT, "py"))
    import webtorch as torch
    dev, mode = row.split("-")
    if mode != "eager" and not hasattr(torch, "compile"):
        raise SystemExit("torch.compile is not in this checkout")
    counters = None
    if dev == "webgpu":
        def counters():
            return torch.webgpu.counters()
    if mode == "model":  # torch.compile(model), the step around it eager
        return measure({name: (lambda b=b: b(torch, dev, torch.compile)) for name, b in WORKLOADS.items()}, counters)
    wrap = torch.compile if mode == "compiled" else (lambda step: step)
    return measure({name: (lambda b=b: wrap(b(torch, dev))) for name, b in WORKLOADS.items()}, counters)


def fmt(v, nd=2):
    return "n/a" if v is None else f"{v:.{nd}f}"


def main():
    rows = [r for r in ROWS if not sys.argv[1:] or r in sys.argv[1:]]
    results = {}
    for r in rows:
        t0 = time.perf_counter()
        env = tinygrad_env() if r.startswith("tinygrad") else dict(os.environ)
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", r], capture_output=True,
                           text=True, timeout=1800, env=env)
        line = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
        results[r] = json.loads(line[-1][7:]) if line else {}
        if not line:
            err = (p.stderr.strip().splitlines() or ["no output"])[-1]
            print(f"<!-- {r}: n/a ({err[:200]}) -->", file=sys.stderr)
        print(f"<!-- {r}: {time.perf_counter() - t0:.0f} s -->", file=sys.stderr)
    print("| | MLP step ms | Transformer step ms | poly 2,000 steps ms | dispatches/step (MLP, Transformer, poly) "
          "| submits/step (MLP, Transformer, poly) |")
    print("|---|---:|---:|---:|---|---|")
    for r in rows:
        res = results[r]
        cnt = lambda k: ", ".join(fmt(res.get(f"{w}_{k}"), 1) for w in ("mlp", "transformer", "poly"))  # noqa: E731
        print(f"| {LABEL[r]} | {fmt(res.get('mlp'))} | {fmt(res.get('transformer'))} | {fmt(res.get('poly'), 0)} | "
              + (f"{cnt('dispatches')} | {cnt('submits')} |" if "mlp_dispatches" in res else "| |"))
    e, c = results.get("webgpu-eager", {}), results.get("webgpu-compiled", {})
    if e and c:
        print()
        print("webgpu eager / compiled: " + ", ".join(
            f"{w} {e[w] / c[w]:.1f}x" for w in ("mlp", "transformer", "poly") if e.get(w) and c.get(w)))
    print()
    print("final losses: " + "; ".join(f"{r}: " + ", ".join(fmt(results[r].get(f"{w}_loss"), 4)
                                                          for w in ("mlp", "transformer", "poly")) for r in rows))
    return results


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        print("RESULT " + json.dumps(worker(sys.argv[2])))
    else:
        main()
