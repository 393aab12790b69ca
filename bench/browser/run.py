#!/usr/bin/env python3
"""Browser benchmarks: webtorch in Pyodide on the page's WebGPU, side by side with TensorFlow.js
(WebGPU backend) and webgpu-torch, in ONE headless Chromium run.

    python bench/browser/run.py [--quick] [--json OUT.json] [--wheel PATH.whl] [--libs webtorch,tfjs,torch]
    make bench-browser

* webtorch runs through the real playground: the real FastAPI app (webtorch_server.app) serves
  web/, Pyodide from node_modules and a fresh wheel of this checkout; the page boots Pyodide in
  its worker and `window.webtorchPlayground.run(code)` runs webtorch_bench.py, which times each
  iteration with time.perf_counter() inside Python (every iteration ends in a readback).
* The peers run on bench/browser/www/index.html?lib=tfjs|torch, served by a small static server
  here (www/ + node_modules/, cross-origin isolated like the playground so performance.now()
  has the same 5 us resolution); the npm packages are the project's devDependencies.
* Needs: `npm ci`, /usr/bin/chromium (WEBTORCH_CHROMIUM overrides), Python Playwright (never
  `playwright install`). Nothing is fetched from outside 127.0.0.1.
"""
import argparse
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CHROMIUM = os.environ.get("WEBTORCH_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--enable-unsafe-webgpu", "--no-sandbox", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
LABELS = {"webtorch": "webtorch (Pyodide)", "tfjs": "tfjs-webgpu 4.22.0", "torch": "webgpu-torch 0.3.5"}
ISOLATION = [("Cross-Origin-Opener-Policy", "same-origin"), ("Cross-Origin-Embedder-Policy", "require-corp"),
             ("Cross-Origin-Resource-Policy", "same-origin"), ("Cache-Control", "no-store")]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- servers ------------------------------------------------------------------------------------
class PeerHandler(http.server.SimpleHTTPRequestHandler):
    """/www/... from bench/browser/www, /node_modules/... from the project's node_modules."""

    def translate_path(self, path):
        p = path.split("?", 1)[0].split("#", 1)[0]
        for prefix, root in (("/www/", HERE / "www"), ("/node_modules/", ROOT / "node_modules")):
            if p.startswith(prefix):
                rel = p[len(prefix):]
                if any(part.startswith(".") for part in rel.split("/")):
                    return "/nonexistent"
                return str(root / rel)
        return "/nonexistent"

    def end_headers(self):
        for k, v in ISOLATION:
            self.send_header(k, v)
        super().end_headers()

    def log_message(self, *a):
        pass


PeerHandler.extensions_map = {**PeerHandler.extensions_map, ".js": "text/javascript", ".mjs": "text/javascript"}


def serve_peers():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), PeerHandler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def serve_playground(wheel_dir):
    """The real playground app (webtorch_server.app.create_app) under uvicorn, in a thread."""
    sys.path[:0] = [str(ROOT / "server"), str(ROOT / "py")]
    import uvicorn
    from webtorch_server.app import create_app
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(wheel_dir=wheel_dir, build_wheel=False),
                                           host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    deadline = time.time() + 30
    while not server.started:
        if time.time() > deadline:
            sys.exit("the playground server did not start")
        time.sleep(0.05)
    return server, f"http://127.0.0.1:{port}"


def ensure_web_build():
    dist, srcs = ROOT / "web" / "dist", list((ROOT / "web" / "src").glob("*"))
    outs = [dist / "app.js", dist / "worker.js"]
    if all(p.exists() for p in outs) and min(p.stat().st_mtime for p in outs) >= max(p.stat().st_mtime for p in srcs):
        return
    log("# building web/dist (npm run build)")
    subprocess.run(["npm", "run", "build"], cwd=ROOT, check=True, capture_output=True)


def build_wheel(dest):
    """A fresh wheel of this checkout, so the browser runs the code being measured."""
    for extra in (["--no-build-isolation"], []):
        p = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", *extra, "-q", "-w", str(dest),
                            str(ROOT)], cwd=ROOT, capture_output=True, text=True)
        if p.returncode == 0:
            return
    sys.exit("building the webtorch wheel failed:\n" + p.stdout + p.stderr)


# ---- runs ---------------------------------------------------------------------------------------
def watch(page, name):
    page.on("console", lambda m: m.type == "error" and log(f"  [{name} console.error] {m.text[:300]}"))
    page.on("pageerror", lambda e: log(f"  [{name} pageerror] {e}"))


def run_peer(ctx, base, lib, quick):
    page = ctx.new_page()
    watch(page, lib)
    page.goto(f"{base}/www/index.html?lib={lib}" + ("&quick=1" if quick else ""))
    try:
        page.wait_for_function("window.__result && window.__result.done", timeout=900_000, polling=500)
        res = page.evaluate("window.__result")
    except Exception as e:
        res = {"lib": lib, "rows": [], "errors": [f"driver: {e}"]}
    page.close()
    return res


def run_webtorch(ctx, base, quick, profile=False):
    page = ctx.new_page()
    watch(page, "webtorch")
    page.set_default_timeout(900_000)
    page.goto(base + "/")
    page.wait_for_function("() => window.webtorchPlayground !== undefined")
    ready = page.evaluate("() => window.webtorchPlayground.ready.then(r => JSON.parse(JSON.stringify(r)))")
    if not (ready.get("versions") or {}).get("webtorch"):
        page.close()
        return {"lib": "webtorch", "rows": [], "errors": [f"webtorch did not load: {ready}"]}
    code = f"QUICK = {bool(quick)}\nPROFILE = {bool(profile)}\n" + (HERE.parent / "workloads.py").read_text() + "\n" \
        + (HERE / "webtorch_bench.py").read_text()
    r = page.evaluate("code => window.webtorchPlayground.run(code)", code)
    page.close()
    lines = [ln for ln in r["stdout"].splitlines() if ln.strip()]
    try:
        res = json.loads(lines[-1])
    except (IndexError, ValueError):
        return {"lib": "webtorch", "rows": [], "errors": ["run failed:\n" + r["stdout"][-2000:] + r["stderr"][-4000:]]}
    res["device"] = ready.get("device")
    res["versions"] = ready.get("versions")
    return res


# ---- report -------------------------------------------------------------------------------------
def table(results):
    by = {r["lib"]: {row["bench"] + " " + " ".join(row["variant"].split(" ")[:2 if row["bench"] == "steps" else 1])
                     if row["bench"] in ("matmul", "steps") else row["bench"]: row
                     for row in r.get("rows", [])} for r in results}
    wt, tf, th = by.get("webtorch", {}), by.get("tfjs", {}), by.get("torch", {})
    lines = []
    hdr = f"{'benchmark':<26} {'webtorch':>12} {'tfjs-webgpu':>12} {'webgpu-torch':>13} {'vs tfjs':>9} {'vs wgpu-torch':>14}  target"
    lines += [hdr, "-" * (len(hdr) + 28)]
    verdicts = []

    def ratio(a, b):
        return f"{a / b:.2f}x" if a and b else "-"

    for key in sorted((k for k in set(wt) | set(tf) | set(th) if k.startswith("matmul")), key=lambda k: int(k.split("=")[1])):
        n = key.split("=")[1]
        g = [d.get(key, {}).get("gflops") for d in (wt, tf, th)]
        ok = None if not (g[0] and g[1]) else g[0] >= 2 * g[1]
        tgt = "webtorch >= 2x tfjs: " + {None: "n/a", True: "MET", False: "not met"}[ok]
        verdicts.append((f"matmul {n}", ok))
        lines.append(f"{'matmul ' + n + ' (GFLOP/s)':<26} " + " ".join(f"{v if v is not None else '-':>{w}}" for v, w in zip(g, (12, 12, 13)))
                     + f" {ratio(g[0], g[1]):>9} {ratio(g[0], g[2]):>14}  {tgt}")
    u = [d.get("per-op", {}).get("us_per_op") for d in (wt, tf, th)]
    ok = None if not (u[0] and u[2]) else u[0] <= u[2] / 3
    verdicts.append(("per-op", ok))
    lines.append(f"{'per-op (us/op)':<26} " + " ".join(f"{v if v is not None else '-':>{w}}" for v, w in zip(u, (12, 12, 13)))
                 + f" {ratio(u[0], u[1]):>9} {ratio(u[0], u[2]):>14}  webtorch <= 1/3 webgpu-torch: "
                 + {None: "n/a", True: "MET", False: "not met"}[ok])
    m = [d.get("mlp", {}).get("ms") for d in (wt, tf, th)]
    ok = None if not (m[0] and m[1]) else m[0] <= m[1] / 2
    verdicts.append(("mlp", ok))
    lines.append(f"{'MLP train step (ms)':<26} " + " ".join(f"{v if v is not None else '-':>{w}}" for v, w in zip(m, (12, 12, 13)))
                 + f" {ratio(m[0], m[1]):>9} {ratio(m[0], m[2]):>14}  webtorch <= 1/2 tfjs: "
                 + {None: "n/a", True: "MET", False: "not met"}[ok])
    lines.append("ratios: webtorch / peer (GFLOP/s: higher is better for webtorch; us and ms: lower is better)")
    steps = [k for k in wt if k.startswith("steps ")]
    if steps:       # issue #12's training steps: webtorch eager vs torch.compile (per step; poly: per step of 2,000)
        lines.append("")
        lines.append(f"{'training step (ms/step)':<26} {'eager':>9} {'compiled':>9} {'speedup':>8} {'vs tfjs':>8}  "
                     f"dispatches, submits per step (eager -> compiled)")
        for w in ("mlp", "transformer", "poly"):
            e, c = wt.get(f"steps {w} eager", {}), wt.get(f"steps {w} compiled", {})
            pe, pc = e.get("per_step_ms"), c.get("per_step_ms")
            vs = ratio(pc, m[1]) if w == "mlp" else "-"
            lines.append(f"{w:<26} {pe if pe is not None else '-':>9} {pc if pc is not None else '-':>9} "
                         f"{ratio(pe, pc):>8} {vs:>8}  {e.get('dispatches')}, {e.get('submits')} -> "
                         f"{c.get('dispatches')}, {c.get('submits')}")
    losses = []
    for r in results:
        row = by.get(r["lib"], {}).get("mlp")
        if row:
            losses.append(f"{LABELS[r['lib']]} {row.get('loss_first')} -> {row.get('loss_last')}")
    if losses:
        lines.append("MLP loss, first -> last step: " + "; ".join(losses))
    return "\n".join(lines), verdicts


def merge(runs):
    """One result per library: per benchmark row, the round with the lowest median."""
    res = dict(runs[0])
    best = {}
    for r in runs:
        for row in r.get("rows", []):
            key = (row["bench"], row["variant"])
            if key not in best or row["ms"] < best[key]["ms"]:
                best[key] = row
    res["rows"] = list(best.values())
    res["errors"] = [e for r in runs for e in r.get("errors", [])]
    res["wall_s"] = round(sum(r["wall_s"] for r in runs), 1)
    res["rounds"] = len(runs)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="tiny sizes and few repetitions (smoke test)")
    ap.add_argument("--json", help="also write the raw results here")
    ap.add_argument("--wheel", help="serve this webtorch wheel instead of building one from the checkout")
    ap.add_argument("--libs", default="webtorch,tfjs,torch")
    ap.add_argument("--rounds", type=int, default=1,
                    help="run every library this many times, interleaved (the machine may be shared); "
                         "each benchmark keeps its round with the lowest median")
    ap.add_argument("--profile", action="store_true", help="also print cProfile tables of webtorch in Pyodide")
    args = ap.parse_args()
    libs = args.libs.split(",")
    for pkg in ("pyodide", "webgpu-torch", "@tensorflow/tfjs", "@tensorflow/tfjs-backend-webgpu"):
        if not (ROOT / "node_modules" / pkg).is_dir():
            sys.exit(f"node_modules/{pkg} missing: run `npm ci` in {ROOT}")
    from playwright.sync_api import sync_playwright

    t0 = time.time()
    wheel_dir = Path(tempfile.mkdtemp(prefix="webtorch-bench-wheel-"))
    results = []
    try:
        if "webtorch" in libs:
            ensure_web_build()
            if args.wheel:
                shutil.copy(args.wheel, wheel_dir)
            else:
                log("# building the webtorch wheel")
                build_wheel(wheel_dir)
        pg_server, pg_base = serve_playground(wheel_dir)
        peers = serve_peers()
        peers_base = f"http://127.0.0.1:{peers.server_address[1]}"
        with sync_playwright() as p, tempfile.TemporaryDirectory(prefix="bench-profile-") as prof:
            ctx = p.chromium.launch_persistent_context(prof, executable_path=CHROMIUM, headless=True, args=ARGS)

            def offline(route):   # nothing may leave this machine
                u = route.request.url
                if u.startswith(("http://127.0.0.1:", "data:", "blob:")):
                    route.continue_()
                else:
                    log(f"  [blocked] {u}")
                    route.abort()
            ctx.route("**/*", offline)
            version = ctx.browser.version if ctx.browser else "?"
            rounds = {lib: [] for lib in libs}
            for k in range(args.rounds):
                for lib in libs[k % len(libs):] + libs[:k % len(libs)]:   # rotate the order each round
                    ts = time.time()
                    res = (run_webtorch(ctx, pg_base, args.quick, args.profile) if lib == "webtorch"
                           else run_peer(ctx, peers_base, lib, args.quick))
                    res["label"], res["wall_s"] = LABELS[lib], round(time.time() - ts, 1)
                    rounds[lib].append(res)
                    log(f"# round {k + 1}: {LABELS[lib]}: {len(res.get('rows', []))} rows in {res['wall_s']} s, "
                        f"errors={len(res.get('errors', []))}")
            ctx.close()
        results = [merge(rounds[lib]) for lib in libs]
        peers.shutdown()
        pg_server.should_exit = True
    finally:
        shutil.rmtree(wheel_dir, ignore_errors=True)

    adapter = next((r.get("adapter") for r in results if isinstance(r.get("adapter"), dict)), None)
    print(f"Chromium {version} headless ({' '.join(ARGS)})")
    if adapter:
        print("Adapter:", json.dumps(adapter))
    for r in results:
        print(f"{r['label']}: {r.get('libVersion', '?')}  (wall {r['wall_s']} s)")
    print()
    text, _ = table(results)
    print(text)
    print()
    print(f"{'library':<20} {'benchmark':<9} {'median ms':>10} {'min ms':>9} {'n':>3}  variant")
    for r in results:
        for row in r.get("rows", []):
            print(f"{r['label']:<20} {row['bench']:<9} {row['ms']:>10.3f} {row['min']:>9.3f} {row['n']:>3}  {row['variant']}")
    wt = next((r for r in results if r["lib"] == "webtorch"), None)
    if wt and wt.get("profile"):
        prof = dict(wt["profile"])
        tables = {k: prof.pop(k) for k in list(prof) if k.startswith("cprofile_")}
        print("\nwebtorch profile (last round):", json.dumps(prof))
        for k, v in tables.items():
            print(f"\n--- {k} ---\n{v}")
    for r in results:
        for e in r.get("errors", [])[:10]:
            print(f"ERROR [{r['label']}]: {e[:500]}")
        if len(r.get("errors", [])) > 10:
            print(f"ERROR [{r['label']}]: ... {len(r['errors']) - 10} more")
    print(f"total wall {time.time() - t0:.1f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"chromium": version, "args": ARGS, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
