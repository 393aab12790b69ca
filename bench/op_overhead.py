"""Python overhead per op: µs per call of common ops on tiny (16-element) tensors.

    python bench/op_overhead.py [cpu|webgpu] [--frontend] [--calls] [--profile OP]
    python bench/op_overhead.py --against DIR [--rounds N]

--frontend replaces the backend's compute primitives (ewise, reduce, matmul) with no-ops, so
the figures are webtorch's own Python per op (dispatch, promotion, autograd, allocation).
--calls adds the Python function calls per op (cProfile's count, the figure Pyodide's profile gives).
WEBTORCH_PY=dir runs another checkout's library (before/after comparisons).
--against DIR prints another checkout's library (DIR: its py/) and this one side by side, cpu and
webgpu, from N rounds (default 3) of subprocesses alternating the two; each figure the median of its rounds
(a round's figure: the best of 7 repeats in its process, in the process's CPU time, which other jobs on a
shared machine disturb less than the wall clock).
"""
import json
import os
import statistics
import subprocess
import sys
import time
import timeit

sys.path.insert(0, os.environ.get("WEBTORCH_PY") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
import webtorch as torch  # noqa: E402


def cases(dev):
    x = torch.rand(16, device=dev)
    y = torch.rand(16, device=dev)
    m = torch.rand(4, 4, device=dev)
    a = torch.rand(4, 4, device=dev)
    b = torch.rand(4, 4, device=dev)
    w = torch.rand(16, device=dev, requires_grad=True)
    return {
        "x + y": lambda: x + y,
        "x * 2": lambda: x * 2,
        "x * 0.5 + y": lambda: x * 0.5 + y,
        "x / y": lambda: x / y,
        "x.exp()": lambda: x.exp(),
        "x.sigmoid()": lambda: x.sigmoid(),
        "x > y": lambda: x > y,
        "x.add_(y)": lambda: x.add_(y),
        "x.mul_(0.5)": lambda: x.mul_(0.5),
        "x.reshape(4,4)": lambda: x.reshape(4, 4),
        "m.transpose(0,1)": lambda: m.transpose(0, 1),
        "x.unsqueeze(0)": lambda: x.unsqueeze(0),
        "x.sum()": lambda: x.sum(),
        "x.mean()": lambda: x.mean(),
        "a @ b": lambda: a @ b,
        "w * y (grad)": lambda: w * y,
    }


def against(other, rounds):
    """{(side, device): {op: median us}} alternating this checkout and `other` in subprocesses."""
    runs = {}
    for _ in range(rounds):
        for side, py in (("before", other), ("after", "")):
            for dev in ("cpu", "webgpu"):
                env = dict(os.environ, WEBTORCH_PY=py)
                out = subprocess.run([sys.executable, __file__, dev, "--json"], env=env, capture_output=True,
                                     text=True, check=True).stdout
                for op, t in json.loads(out.splitlines()[-1]).items():
                    runs.setdefault((side, dev), {}).setdefault(op, []).append(t)
    med = {k: {op: statistics.median(ts) for op, ts in v.items()} for k, v in runs.items()}
    ops = list(med["after", "cpu"])
    print("| us per op | cpu before | cpu after | webgpu before | webgpu after |")
    print("|---|---:|---:|---:|---:|")
    for op in ops:
        print(f"| `{op}` | " + " | ".join(f"{med[side, dev][op]:.2f}" for dev in ("cpu", "webgpu")
                                         for side in ("before", "after")) + " |")


def main():
    if "--against" in sys.argv:
        rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
        return against(os.path.abspath(sys.argv[sys.argv.index("--against") + 1]), rounds)
    dev = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else "cpu"
    cs = cases(dev)
    if "--frontend" in sys.argv:
        be = torch.ones(1, device=dev)._backend
        for prim in ("ewise", "reduce", "matmul"):
            setattr(be, prim, lambda *a, **k: None)
    if "--profile" in sys.argv:
        import cProfile
        import pstats
        f = cs[sys.argv[sys.argv.index("--profile") + 1]]
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(1000):
            f()
        pr.disable()
        pstats.Stats(pr).sort_stats("tottime").print_stats(25)
        return
    times = {}
    for name, f in cs.items():
        n = 3000
        timer = time.process_time if "--json" in sys.argv else time.perf_counter
        t = times[name] = min(timeit.repeat(f, number=n, repeat=7, timer=timer)) / n * 1e6
        if "--json" in sys.argv:
            continue
        calls = ""
        if "--calls" in sys.argv:
            import cProfile
            import pstats
            pr = cProfile.Profile()
            pr.enable()
            for _ in range(100):
                f()
            pr.disable()
            calls = f" {pstats.Stats(pr).total_calls / 100:6.0f} calls"
        print(f"{name:18s} {t:7.2f} us{calls}")
    if "--json" in sys.argv:
        print(json.dumps(times))


if __name__ == "__main__":
    main()
