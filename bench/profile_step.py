"""Where the GPU time of a compiled training step goes, per dispatch (native webgpu, e.g. lavapipe).

    python bench/profile_step.py [WORKLOAD ...]      (mlp, transformer, poly; default mlp transformer)
    WEBTORCH_PY=/other/checkout/py python bench/profile_step.py mlp

Each workload of bench/workloads.py is compiled with `torch.compile` and warmed until it replays;
the replayed Program (backends/webgpu/capture.py) is then taken apart: every recorded dispatch is
submitted ALONE, `REPEAT` times in one compute pass, and waited for; its time is the wait minus an
empty submit's, divided by `REPEAT` (best of `ROUNDS`), in wall time and in the process's CPU
time (lavapipe's workers included; steadier than wall time on a shared machine). Dispatches are
grouped by kernel (the backend's kernel signature, its `_memo` key) and workgroup grid and
printed as a table sorted by CPU time, with the sums compared to a whole replay (submit + wait).
Also printed: the fixed cost of an empty submit + wait and of one empty one-workgroup dispatch.
Repeating a dispatch reruns it on whatever its buffers hold (in-place updates compound): the
step's values are garbage afterwards, only the timings matter.
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("WEBTORCH_PY") or os.path.join(os.path.dirname(HERE), "py"))
sys.path.insert(0, HERE)
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

import webtorch as torch                                     # noqa: E402
from webtorch._dynamo.eval_frame import compiled_state       # noqa: E402
from workloads import WORKLOADS                              # noqa: E402

REPEAT, ROUNDS = 10, 3
EMPTY_WGSL = """@group(0) @binding(0) var<storage, read_write> O: array<u32>;
@group(0) @binding(1) var<storage, read> P: array<u32>;
@compute @workgroup_size(1) fn main() { O[0] = P[0]; }"""


def program_of(step):
    """The Program the compiled `step` replays."""
    progs = [e.program for e in compiled_state(step).entries.values() if e.program is not None]
    if len(progs) != 1:
        raise SystemExit(f"expected one replayed program, found {len(progs)}")
    return progs[0]


def kernel_names(be):
    """{C handle of a pipeline: short kernel name} from the backend's kernel signatures."""
    names = {}
    for key, pipe in be._memo.items():
        for p in (pipe if isinstance(pipe, list) else [pipe]):
            if hasattr(p, "_internal"):
                k = key if isinstance(key, tuple) else (key,)
                names[p._internal] = " ".join(str(x) for x in k if x not in (None, False, ()))[:60]
    return names


def timed(d, encode):
    """(wall ms, process CPU ms) of one submit of what `encode(pass_handle)` records, waited for
    (best of ROUNDS each). The CPU time counts lavapipe's worker threads too (they live in this
    process): on a loaded machine it moves far less than the wall time."""
    best, cpu = float("inf"), float("inf")
    for _ in range(ROUNDS):
        c0, t0 = time.process_time(), time.perf_counter()
        enc = d.device.create_command_encoder()
        p = enc.begin_compute_pass()
        encode(p._internal)
        p.end()
        d.queue.submit([enc.finish()])
        d.queue.read_buffer(d._sync_buf, 0, 4)
        best = min(best, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    return best * 1e3, cpu * 1e3


def profile(name):
    step = torch.compile(WORKLOADS[name](torch, "webgpu"))
    for _ in range(6):
        loss = step()
    loss.item()
    prog = program_of(step)
    be = prog.be
    d = be.driver
    impl = prog._impl
    set_pipeline, set_bind_group, dispatch, null, _ = impl.fns

    # a whole replay, submit + wait
    t_replay = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        loss = step()
        d.synchronize()
        t_replay = min(t_replay, time.perf_counter() - t0)
    t_replay *= 1e3

    t_submit = timed(d, lambda p: None)
    pipe = d.create_pipeline(EMPTY_WGSL)
    bg = d.device.create_bind_group(layout=d._layouts[id(pipe)], entries=[
        {"binding": i, "resource": {"buffer": d.create_buffer(16), "offset": 0, "size": 16}} for i in range(2)])

    def empty(p, n=REPEAT):
        for _ in range(n):
            set_pipeline(p, pipe._internal)
            set_bind_group(p, 0, bg._internal, 0, null)
            dispatch(p, 1, 1, 1)
    t_empty = [(e - s) / REPEAT for e, s in zip(timed(d, empty), t_submit)]

    names = kernel_names(be)
    rows = {}
    for is_pass, items in impl.ops:
        if not is_pass:
            continue
        for pi, bgi, x, y, z in items:
            def one(p, pi=pi, bgi=bgi, x=x, y=y, z=z):
                set_pipeline(p, pi)
                for _ in range(REPEAT):
                    set_bind_group(p, 0, bgi, 0, null)
                    dispatch(p, x, y, z)
            ms = [max(0.0, t - s) / REPEAT for t, s in zip(timed(d, one), t_submit)]
            r = rows.setdefault((names.get(pi, "?"), (x, y, z)), [0, 0.0, 0.0])
            r[0] += 1
            r[1] += ms[0]
            r[2] += ms[1]
    total, total_cpu = (sum(r[i] for r in rows.values()) for i in (1, 2))
    print(f"\n## {name}: {prog.dispatches} dispatches, {prog.copies} copies; replay + wait {t_replay:.2f} ms; "
          f"sum of dispatches alone {total:.2f} ms wall, {total_cpu:.2f} ms CPU")
    print(f"empty submit + wait {t_submit[0] * 1e3:.0f} us wall, {t_submit[1] * 1e3:.0f} us CPU; empty 1-workgroup "
          f"dispatch {t_empty[0] * 1e3:.0f} us wall, {t_empty[1] * 1e3:.0f} us CPU\n")
    print("| kernel | workgroups | count | ms total | ms each | CPU ms total | % of CPU |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for (k, wg), (n, ms, cpu) in sorted(rows.items(), key=lambda kv: -kv[1][2]):
        print(f"| {k} | {'x'.join(map(str, wg))} | {n} | {ms:.3f} | {ms / n:.3f} | {cpu:.3f} | "
              f"{100 * cpu / total_cpu:.1f} |")


if __name__ == "__main__":
    for w in sys.argv[1:] or ["mlp", "transformer"]:
        profile(w)
