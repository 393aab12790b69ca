"""Browser tests: the real FastAPI server, the real playground, headless Chromium (Playwright).

One server, one browser and one shared playground page per session (Pyodide boots once per
page); tests that need a fresh page open their own.  Needs: `npm ci && npm run build` (the
fixture builds web/dist when it is missing or older than web/src), /usr/bin/chromium, and
Python Playwright (never `playwright install`: the system Chromium is used).
Environment: WEBTORCH_TEST_WHEEL=path/to/webtorch-*.whl serves that wheel instead of a fresh
build of this checkout; WEBTORCH_CHROMIUM overrides /usr/bin/chromium.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from pwutil import ROOT, CHROMIUM, CHROMIUM_ARGS, _build_wheel, _ensure_web_build, _free_port, open_playground


@pytest.fixture(scope="session")
def server():
    """Base URL of the playground server (`python -m webtorch_server`) on a free local port."""
    _ensure_web_build()
    wheel_dir = Path(tempfile.mkdtemp(prefix="webtorch-wheels-"))
    if os.environ.get("WEBTORCH_TEST_WHEEL"):  # a prebuilt wheel instead of building one
        shutil.copy(os.environ["WEBTORCH_TEST_WHEEL"], wheel_dir)
    else:
        _build_wheel(wheel_dir)
    # the Python snapshot a first visit restores, for this wheel (nothing to do when it is current)
    subprocess.run([sys.executable, str(ROOT / "web" / "tools" / "make_snapshot.py"), "--wheel-dir", str(wheel_dir)],
                   check=True)
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
