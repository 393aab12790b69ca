"""Browser tests: the real FastAPI server, the real playground, headless Chromium (Playwright).

One server, one browser and one shared playground page per session (Pyodide boots once per
page); tests that need a fresh page open their own.  Needs: `npm ci && npm run build` (the
fixture builds web/dist when it is missing or older than web/src), /usr/bin/chromium, and
Python Playwright (never `playwright install`: the system Chromium is used).
Environment: WEBTORCH_TEST_WHEEL=path/to/webtorch-*.whl serves that wheel instead of a fresh
build of this checkout; WEBTORCH_CHROMIUM overrides /usr/bin/chromium.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
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


def _ensure_web_build():
    dist = ROOT / "web" / "dist"
    srcs = list((ROOT / "web" / "src").glob("*"))
    outs = [dist / "app.js", dist / "worker.js"]
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


@pytest.fixture(scope="session")
def server():
    """Base URL of the playground server (`python -m webtorch_server`) on a free local port."""
    _ensure_web_build()
    wheel_dir = Path(tempfile.mkdtemp(prefix="webtorch-wheels-"))
    if os.environ.get("WEBTORCH_TEST_WHEEL"):  # a prebuilt wheel instead of building one
        shutil.copy(os.environ["WEBTORCH_TEST_WHEEL"], wheel_dir)
    else:
        _build_wheel(wheel_dir)
    port = _free_port()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "server"), str(ROOT / "py")] +
                                        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    log = open(wheel_dir / "server.log", "w+")
    proc = subprocess.Popen(
        [sys.executable, "-m", "webtorch_server", "--host", "127.0.0.1", "--port", str(port),
         "--wheel-dir", str(wheel_dir), "--no-build-wheel", "--log-level", "warning"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while True:
        try:
            with urllib.request.urlopen(base + "/api/health", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.time() > deadline:
            log.seek(0)
            proc.kill()
            pytest.exit("the playground server did not start:\n" + log.read(), 2)
        time.sleep(0.2)
    yield base
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()
    shutil.rmtree(wheel_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


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


def open_playground(browser, base, path="/", wait_ready=True):
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
    page.on("pageerror", lambda e: pg.errors.append(f"pageerror: {e}"))
    page.on("console", lambda m: m.type == "error" and pg.errors.append(f"console.error: {m.text}"))
    page.set_default_timeout(BOOT_TIMEOUT_MS)
    page.goto(base + path)
    if wait_ready:
        page.wait_for_function("() => window.webtorchPlayground !== undefined")
        pg.info = pg.ready()
    return pg


@pytest.fixture(scope="session")
def playground(browser, server):
    """The shared playground page (booted once for the session)."""
    pg = open_playground(browser, server)
    yield pg
    pg.context.close()


@pytest.fixture(scope="session")
def webtorch_loaded(playground):
    """True when the webtorch wheel loaded in the page (the library tests need it)."""
    info = playground.info
    assert info["versions"]["webtorch"], f"webtorch did not load in the browser: {info.get('libError')}"
    return True


def py_json(r):
    """The last stdout line of a run, parsed as JSON."""
    lines = [ln for ln in r["stdout"].splitlines() if ln.strip()]
    assert lines, f"no output; stderr:\n{r['stderr']}"
    return json.loads(lines[-1])
