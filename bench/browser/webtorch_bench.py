# webtorch side of bench/browser/run.py: runs inside the playground (Pyodide, page WebGPU) via
# window.webtorchPlayground.run(code). run.py prepends QUICK and PROFILE (True/False). Timing is
# time.perf_counter() in Python around each iteration, which ends in a readback (a wait), as the
# JS peers' iterations do. The last stdout line is one JSON object.
import json
import statistics
import time

import webtorch as torch
import webtorch.nn as nn
import webtorch.nn.functional as F
import webtorch.optim as optim

DEV = "webgpu"
SIZES = [256] if QUICK else [256, 512, 1024]  # noqa: F821 (QUICK is prepended by run.py)
CHAIN = 200
B, DIN, DH, DOUT, LR = 64, 784, 128, 10, 0.05
MLP_STEPS = 3 if QUICK else 15
out = {"lib": "webtorch", "rows": [], "errors": [], "profile": {}}
wg = torch.webgpu


def reps_for(n):
    return 3 if QUICK else 5 if n >= 1024 else 7 if n >= 512 else 9


def time_it(fn, warm, reps):
    for _ in range(warm):
        fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    return ts


def row(bench, variant, ts, **extra):
    r = {"bench": bench, "variant": variant, "ms": round(statistics.median(ts), 3), "n": len(ts),
         "min": round(min(ts), 3), **extra}
    out["rows"].append(r)
    return r


def rand(n, seed):
    """The LCG of www/bench.js: the same inputs and initial weights as the JS peers."""
    s, a = seed & 0xFFFFFFFF, [0.0] * n
    for i in range(n):
        s = (s * 1664525 + 1013904223) & 0xFFFFFFFF
        a[i] = s / 4294967296 - 0.5
    return a


def counts(fn):
    """(dispatches, submits) recorded by one call of fn."""
    d0, s0 = wg.dispatch_count(), wg.submit_count()
    fn()
    return wg.dispatch_count() - d0, wg.submit_count() - s0


out["adapter"] = wg.get_device_name()
out["libVersion"] = f"webtorch {getattr(torch, '__version__', '?')} (Pyodide, browser driver)"

# ---- matmul: C = A @ B, then a 1-element readback ----------------------------------------------
for n in SIZES:
    a = torch.tensor(rand(n * n, 1), device=DEV).view(n, n)
    b = torch.tensor(rand(n * n, 2), device=DEV).view(n, n)

    def mm():
        c = a @ b
        c[0, 0].item()
    ts = time_it(mm, 2, reps_for(n))
    row("matmul", f"N={n}", ts, gflops=round(2 * n ** 3 / (statistics.median(ts) * 1e6), 3))
    del a, b

# ---- per-op: 200 chained adds of 16 elements, one readback --------------------------------------
x0 = torch.ones(16, device=DEV)
one = torch.ones(16, device=DEV)


def chain():
    x = x0
    for _ in range(CHAIN):
        x = x + one
    v = x.tolist()
    if v[0] != CHAIN + 1:
        raise AssertionError(f"chain wrong {v[0]}")


ts = time_it(chain, 2, 7)
row("per-op", f"{CHAIN} chained add(16) + 1 readback", ts,
    us_per_op=round(statistics.median(ts) * 1000 / CHAIN, 1))

# where the time goes: recording 200 adds (Python + JS calls, no wait) vs the final readback
rec, wait = [], []
for _ in range(7):
    t0 = time.perf_counter()
    x = x0
    for _ in range(CHAIN):
        x = x + one
    t1 = time.perf_counter()
    x.tolist()
    t2 = time.perf_counter()
    rec.append((t1 - t0) * 1e6 / CHAIN)
    wait.append((t2 - t1) * 1e3)
d, s = counts(chain)
out["profile"]["per_op"] = {
    "record_us_per_op": round(statistics.median(rec), 1), "readback_ms": round(statistics.median(wait), 3),
    "dispatches": d, "submits": s}

# the same 200 dispatches straight through the driver (no tensor layer): JS-call cost per dispatch
be = torch.backends.webgpu.get_backend() if hasattr(torch.backends, "webgpu") else None
if be is None:
    from webtorch.backends import webgpu as _w
    be = _w.get_backend()
_fusion = getattr(be, "fusion", None)    # per-dispatch costs: adds must dispatch one by one here
_fused = _fusion.enabled if _fusion is not None else False
if _fusion is not None:
    _fusion.set_enabled(False)
try:
    drv = be.driver
    y = x0 + one          # compile/find the add pipeline by doing one add, then replay its dispatch
    last = {}
    orig = drv.dispatch

    def spy(pipeline, buffers, params, workgroups):
        last["args"] = (pipeline, list(buffers), bytes(params), tuple(workgroups))
        return orig(pipeline, buffers, params, workgroups)
    drv.dispatch = spy
    y = x0 + one
    drv.dispatch = orig
    pipe, bufs, prm, wgs = last["args"]
    drv.synchronize()
    dts = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(CHAIN):
            drv.dispatch(pipe, bufs, prm, wgs)
        t1 = time.perf_counter()
        drv.synchronize()
        dts.append((t1 - t0) * 1e6 / CHAIN)
    out["profile"]["per_op"]["driver_dispatch_us"] = round(statistics.median(dts), 1)
    # Python-only overhead of one add above the driver call: record with a no-op driver.dispatch
    drv.dispatch = lambda *a: None
    pts = []
    for _ in range(5):
        t0 = time.perf_counter()
        x = x0
        for _ in range(CHAIN):
            x = x + one
        pts.append((time.perf_counter() - t0) * 1e6 / CHAIN)
    drv.dispatch = orig
    out["profile"]["per_op"]["python_us_per_op_without_dispatch"] = round(statistics.median(pts), 1)
    # one empty wait (synchronize with nothing queued) and one 4-byte readback
    sts = time_it(drv.synchronize, 2, 9)
    out["profile"]["per_op"]["empty_sync_ms"] = round(statistics.median(sts), 3)
    rts = time_it(lambda: x0[0].item(), 2, 9)
    out["profile"]["per_op"]["item_ms"] = round(statistics.median(rts), 3)
except Exception as e:  # profiling is best effort
    drv.dispatch = orig
    out["errors"].append(f"profile: {type(e).__name__}: {e}")
if _fusion is not None:
    _fusion.set_enabled(_fused)

# ---- MLP training step: nn.Linear, F.cross_entropy, optim.SGD, as a user writes it -------------
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(DIN, DH), nn.ReLU(), nn.Linear(DH, DOUT)).to(DEV)
with torch.no_grad():   # the peers' initial weights (theirs are [in, out]; Linear's are [out, in])
    model[0].weight.copy_(torch.tensor(rand(DIN * DH, 11)).view(DIN, DH).t() * 0.1)
    model[2].weight.copy_(torch.tensor(rand(DH * DOUT, 13)).view(DH, DOUT).t() * 0.2)
    model[0].bias.zero_()
    model[2].bias.zero_()
xb = torch.tensor(rand(B * DIN, 7), device=DEV).view(B, DIN)
yb = torch.tensor([(i * 7) % DOUT for i in range(B)], device=DEV)
opt = optim.SGD(model.parameters(), lr=LR)
losses = []


def step():
    opt.zero_grad()
    loss = F.cross_entropy(model(xb), yb)
    loss.backward()
    opt.step()
    losses.append(loss.item())


ts = time_it(step, 3, MLP_STEPS)
row("mlp", "784-128-10 B=64 softmax CE, SGD (nn.Linear, F.cross_entropy, optim.SGD; loss.item())", ts,
    loss_first=round(losses[0], 4), loss_last=round(losses[-1], 4))
d, s = counts(step)
# the step without its wait: recording only, then the readback alone
rec, wait = [], []
for _ in range(5):
    t0 = time.perf_counter()
    opt.zero_grad()
    loss = F.cross_entropy(model(xb), yb)
    loss.backward()
    opt.step()
    t1 = time.perf_counter()
    loss.item()
    t2 = time.perf_counter()
    rec.append((t1 - t0) * 1e3)
    wait.append((t2 - t1) * 1e3)
out["profile"]["mlp"] = {"dispatches": d, "submits": s, "record_ms": round(statistics.median(rec), 3),
                         "readback_ms": round(statistics.median(wait), 3)}
out["counters"] = wg.counters()

# ---- optional: cProfile of the chain and of the MLP step (run.py --profile) ----------------------
if PROFILE:  # noqa: F821
    import cProfile
    import io
    import pstats
    for name, fn, n in (("per_op", chain, 5), ("mlp", step, 5)):
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(n):
            fn()
        pr.disable()
        buf = io.StringIO()
        pstats.Stats(pr, stream=buf).sort_stats("tottime").print_stats(25)
        out["profile"]["cprofile_" + name] = f"{n} calls of {name}\n" + buf.getvalue()
    # experiments (library code patched here only, restored after), A/B interleaved 5 times
    # and reported as the best median (the machine may be shared):
    # * submit every K dispatches instead of at the readback (lets the GPU overlap Python);
    # * the MLP step without gather's index range check (nll_loss gathers with a new tensor,
    #   where(valid, target, 0), every step, so the per-storage cache misses: a readback per step).
    from webtorch.backends.webgpu.drivers import browser as _br
    from webtorch.ops import indexing as _ix
    keep_batch, keep_check = _br._MAX_BATCH, _ix._check_gather_range

    def set_batch(k):
        _br._MAX_BATCH = k

    def set_check(on):
        _ix._check_gather_range = keep_check if on else (lambda *a: None)
    variants = [("default", lambda: None)] + [(f"submit_every_{k}", lambda k=k: set_batch(k)) for k in (16, 64)] \
        + [("no_gather_range_check", lambda: set_check(False))]
    best = {}
    for _ in range(5):
        for name, apply in variants:
            apply()
            c = statistics.median(time_it(chain, 1, 5)) * 1000 / CHAIN
            m = statistics.median(time_it(step, 1, 5))
            set_batch(keep_batch)
            set_check(True)
            b0 = best.setdefault(name, {"per_op_us": c, "mlp_ms": m})
            b0["per_op_us"], b0["mlp_ms"] = min(b0["per_op_us"], c), min(b0["mlp_ms"], m)
    out["profile"]["experiments"] = {k: {kk: round(vv, 2) for kk, vv in v.items()} for k, v in best.items()}
print(json.dumps(out))
