"""The playground's start and first runs, in headless Chromium, side by side.

    python bench/start.py [--before DIR] [--rounds N]

For each checkout (this one, and DIR when given: another checkout with its `web/dist` and
`dist/*.whl` built), one server; then, alternating the sides for N rounds and keeping each
side's best:

    cold    a fresh browser context (empty cache): navigation to `ready`
    warm    a reload in that context (second visit): navigation to `ready`
    digits  the training example: its first run (clicked at `ready`), its second run, and on a
            reloaded page its first run clicked once the page is idle (kernels warmed where the
            page warms them; the same as a plain first run where it does not)

Times are milliseconds; compare only within one run of this script (the machine is noisy).  Then
the status line's texts and the worker's boot stages (performance marks) of each side's best
cold start.
"""
import argparse
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))
from pwutil import CHROMIUM, CHROMIUM_ARGS, _free_port  # noqa: E402

READY_JS = "() => window.webtorchPlayground.ready.then((info) => [performance.now(), info.stages || []])"
IDLE_JS = "() => (window.webtorchPlayground.warm || Promise.resolve()).then(() => performance.now())"
RUN_JS = """async (code) => {
  const t0 = performance.now();
  const r = await window.webtorchPlayground.run(code);
  if (!r.ok) throw new Error(r.stderr);
  return performance.now() - t0;
}"""
STAGES_JS = """() => {  // the status line's texts with their times, for the stage table
  window.__stages = [];
  new MutationObserver(() => {
    const el = document.getElementById('status-text');
    if (el) window.__stages.push([Math.round(performance.now()), el.textContent]);
  }).observe(document, {subtree: true, childList: true, characterData: true});
}"""


def serve(root, wheel_dir=None):
    """A playground server for checkout `root` (its dist/ wheel, or wheel_dir's): (process, base URL)."""
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root / "server"), str(root / "py")]))
    proc = subprocess.Popen([sys.executable, "-m", "webtorch_server", "--host", "127.0.0.1", "--port",
                             str(port), "--wheel-dir", str(wheel_dir or root / "dist"), "--no-build-wheel",
                             "--log-level", "warning"], cwd=root, env=env)
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            with urllib.request.urlopen(base + "/api/health", timeout=2):
                return proc, base
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit(f"the server of {root} did not start")


def measure(browser, base, digits):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(600_000)
    page.add_init_script(f"({STAGES_JS})()")
    page.goto(base + "/")
    cold, cold_marks = page.evaluate(READY_JS)
    stages = page.evaluate("() => window.__stages")
    first = page.evaluate(RUN_JS, digits)
    second = page.evaluate(RUN_JS, digits)
    page.reload()
    warm, warm_marks = page.evaluate(READY_JS)
    page.evaluate(IDLE_JS)
    first_idle = page.evaluate(RUN_JS, digits)
    context.close()
    return {"cold": cold, "warm": warm, "digits 1st (at ready)": first, "digits 2nd": second,
            "digits 1st (page idle)": first_idle}, (stages, cold_marks, warm_marks)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", type=Path, help="another checkout, built, to compare with")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    sides = {"after": ROOT} if args.before is None else {"before": args.before.resolve(), "after": ROOT}
    digits = (ROOT / "web" / "examples" / "04_train_digits.py").read_text()
    servers = {name: serve(root) for name, root in sides.items()}
    best, stages = {}, {}
    from playwright.sync_api import sync_playwright
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            for r in range(args.rounds):
                for name, (_, base) in servers.items():
                    times, st = measure(browser, base, digits)
                    print(f"round {r + 1} {name}: " + ", ".join(f"{k} {v:.0f}" for k, v in times.items()),
                          flush=True)
                    if name not in best or times["cold"] < best[name]["cold"]:
                        stages[name] = st
                    best[name] = {k: min(v, best.get(name, {}).get(k, v)) for k, v in times.items()}
            browser.close()
    finally:
        for proc, _ in servers.values():
            proc.terminate()
    for name, (st, cold_marks, warm_marks) in stages.items():
        print(f"\n{name}: status line during the best cold start (ms since navigation)")
        for t, text in st:
            print(f"  {t:6d}  {text}")
        for visit, marks in (("cold", cold_marks), ("warm", warm_marks)):
            if marks:
                print(f"{name}: the worker's boot stages, {visit} start of that round (ms since navigation)")
                print("  " + ", ".join(f"{n} {t}" for n, t in marks))
    names = list(best)
    print("\nbest of", args.rounds, "rounds, ms | " + " | ".join(names))
    for k in best[names[0]]:
        print(f"{k:24s} | " + " | ".join(f"{best[n][k]:8.0f}" for n in names))
    for n in names:
        print(f"{n}: digits 1st/2nd = {best[n]['digits 1st (at ready)'] / best[n]['digits 2nd']:.2f} at ready, "
              f"{best[n]['digits 1st (page idle)'] / best[n]['digits 2nd']:.2f} once idle")


if __name__ == "__main__":
    main()
