"""Helpers for the browser tests (a module of its own: `conftest` is ambiguous, since
tests/conftest.py exists too)."""
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("WEBTORCH_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--enable-unsafe-webgpu", "--no-sandbox", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
BOOT_TIMEOUT_MS = 180_000
RUN_TIMEOUT_S = 600


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ensure_vendor():
    """web/vendor/: the pinned wheels the page vendors (tqdm, einops), as `make install` gets them."""
    if list((ROOT / "web" / "vendor").glob("*.whl")):
        return
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--require-hashes",
                    "-q", "-d", str(ROOT / "web" / "vendor"), "-r", str(ROOT / "web" / "vendor-requirements.txt")],
                   check=True)


def _ensure_web_build():
    _ensure_vendor()
    dist = ROOT / "web" / "dist"
    srcs = list((ROOT / "web" / "src").glob("*")) + list((ROOT / "py" / "webtorch").rglob("*.js"))
    outs = [dist / "app.js", dist / "worker.js", dist / "snapshot.js"]
    if all(p.exists() for p in outs):
        newest_src = max(p.stat().st_mtime for p in srcs)
        if min(p.stat().st_mtime for p in outs) >= newest_src:
            return
    if not (ROOT / "node_modules" / "esbuild").is_dir():
        pytest.exit("web/dist is missing and node_modules is not installed: run `npm ci && npm run build`", 2)
    subprocess.run(["npm", "run", "build"], cwd=ROOT, check=True, capture_output=True)


def _build_wheel(dest):
    """A fresh webtorch wheel of this checkout (so the browser runs the code under test)."""
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                           "-q", "-w", str(dest), str(ROOT)], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:  # retry with build isolation (setuptools not in the venv)
        proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dest),
                               str(ROOT)], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        print("building the webtorch wheel failed:\n" + proc.stdout + proc.stderr, file=sys.stderr)


class Playground:
    """A loaded playground page, its request log, console errors, and helpers."""

    def __init__(self, context, page, base):
        self.context, self.page, self.base = context, page, base
        self.requests = []
        self.blocked = []
        self.errors = []

    def ready(self):
        return self.page.evaluate("() => window.webtorchPlayground.ready.then(r => JSON.parse(JSON.stringify(r)))")

    def run(self, code, timeout_s=RUN_TIMEOUT_S):
        """Run code through window.webtorchPlayground.run; returns {ok, stdout, stderr}."""
        self.page.set_default_timeout(timeout_s * 1000)
        return self.page.evaluate("code => window.webtorchPlayground.run(code)", code)

    def run_ok(self, code, timeout_s=RUN_TIMEOUT_S):
        r = self.run(code, timeout_s)
        assert r["ok"], f"run failed:\nstdout:\n{r['stdout']}\nstderr:\n{r['stderr']}"
        return r

    def output_text(self):
        return self.page.inner_text("#output")


def _without_csp(route):
    r = route.fetch()
    route.fulfill(response=r, headers={k: v for k, v in r.headers.items() if k != "content-security-policy"})


def open_playground(browser, base, path="/", wait_ready=True, worker_eval=False, init_script=None, setup=None):
    """`worker_eval`: the worker script is served without its Content-Security-Policy, so eval
    works in the worker as in a bare Pyodide.  `init_script`: JS run in the page before its own.
    `setup(context)`: called before the page opens (its routes take precedence)."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    pg = Playground(context, page, base)

    def on_request(req):
        pg.requests.append(req.url)

    def route(r):
        url = r.request.url
        if url.startswith("http://127.0.0.1:") or url.startswith("data:") or url.startswith("blob:"):
            r.continue_()
        else:  # the playground must work offline: nothing may leave this machine
            pg.blocked.append(url)
            r.abort()

    context.on("request", on_request)
    context.route("**/*", route)
    if worker_eval:
        context.route("**/dist/worker.js", _without_csp)
    page.on("pageerror", lambda e: pg.errors.append(f"pageerror: {e}"))
    page.on("console", lambda m: m.type == "error" and pg.errors.append(f"console.error: {m.text}"))
    page.set_default_timeout(BOOT_TIMEOUT_MS)
    if init_script:
        page.add_init_script(init_script)
    if setup:
        setup(context)
    page.goto(base + path)
    if wait_ready:
        page.wait_for_function("() => window.webtorchPlayground !== undefined")
        pg.info = pg.ready()
    return pg


def py_json(r):
    """The last stdout line of a run, parsed as JSON."""
    lines = [ln for ln in r["stdout"].splitlines() if ln.strip()]
    assert lines, f"no output; stderr:\n{r['stderr']}"
    return json.loads(lines[-1])
