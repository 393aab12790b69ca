"""The playground server: routes, MIME types, headers, path safety, the examples and wheel APIs,
and the real `webtorch-playground` command on a free port."""

import asyncio
import concurrent.futures
import gzip
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

# fastapi and httpx(2) are test dependencies (pyproject's `test`/`server` extras): a missing one
# fails this tier loudly instead of skipping it
try:  # starlette's TestClient takes httpx2 (preferred) or httpx
    import httpx2  # noqa: F401
except ImportError:
    import httpx  # noqa: F401

from fastapi.testclient import TestClient  # noqa: E402

from webtorch_server import app as app_module  # noqa: E402
from webtorch_server.app import create_app, safe_path  # noqa: E402

REPO = Path(__file__).resolve().parents[1]

SECURITY = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-embedder-policy": "require-corp",
    "cross-origin-resource-policy": "same-origin",
}


def make_wheel(path: Path, files: dict) -> bytes:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return path.read_bytes()


@pytest.fixture
def site(tmp_path):
    return make_site(tmp_path)


def make_site(tmp_path: Path) -> Path:
    """A fake repo: web/, node_modules/pyodide/, dist/ and things outside them to protect."""
    web = tmp_path / "web"
    (web / "dist").mkdir(parents=True)
    (web / "examples").mkdir()
    (web / "sub").mkdir()
    (web / "index.html").write_text("<!doctype html><title>webtorch</title>")
    (web / "style.css").write_text("body{}")
    (web / "worker.js").write_text("self.onmessage = () => {};")
    (web / "dist" / "app.js").write_text("console.log(1)")
    (web / "dist" / "app.mjs").write_text("export {}")
    (web / "dist" / "app.js.map").write_text("{}")
    (web / "sub" / "kernel.wgsl").write_text("@compute @workgroup_size(1) fn main() {}")
    (web / "data.json").write_text('{"a": 1}')
    (web / "data.zip").write_bytes(b"PK\x05\x06" + b"\0" * 18)
    (web / ".hidden").write_text("hidden")
    (web / "examples" / "hello.py").write_text("# title: Hello, tensors\nprint('hi')\n")
    (web / "examples" / "b_untitled.py").write_text("x = 1\n")
    (web / "examples" / "notes.txt").write_text("not an example")

    pyodide = tmp_path / "node_modules" / "pyodide"
    pyodide.mkdir(parents=True)
    (pyodide / "pyodide.mjs").write_text("export const loadPyodide = 1;")
    (pyodide / "pyodide.js").write_text("var loadPyodide = 1;")
    (pyodide / "pyodide.asm.js").write_text("var x = 1;")
    (pyodide / "pyodide.asm.wasm").write_bytes(b"\0asm\x01\0\0\0")
    (pyodide / "python_stdlib.zip").write_bytes(b"PK\x05\x06" + b"\0" * 18)
    (pyodide / "pyodide-lock.json").write_text('{"packages": {}}')
    (tmp_path / "node_modules" / "other.js").write_text("outside pyodide")

    dist = tmp_path / "dist"
    dist.mkdir()
    old = dist / "webtorch-0.0.9-py3-none-any.whl"
    make_wheel(old, {"webtorch/__init__.py": "old"})
    os.utime(old, (time.time() - 100, time.time() - 100))
    new = dist / "webtorch-0.1.0-py3-none-any.whl"
    make_wheel(new, {"webtorch/__init__.py": "", "webtorch/shaders/a.wgsl": "// a"})
    (dist / "notes.txt").write_text("not a wheel")

    (tmp_path / "secret.txt").write_text("TOP SECRET")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.txt").write_text("TOP SECRET dir")
    (web / "leak.txt").symlink_to(tmp_path / "secret.txt")
    (web / "linkdir").symlink_to(outside, target_is_directory=True)
    (web / "inside_link.css").symlink_to(web / "style.css")
    (pyodide / "leak.js").symlink_to(tmp_path / "secret.txt")
    (dist / "leak.whl").symlink_to(tmp_path / "secret.txt")
    return tmp_path


def local_client(app, **kw) -> TestClient:
    """A TestClient that sends `Host: 127.0.0.1` (its default, "testserver", is refused)."""
    return TestClient(app, base_url="http://127.0.0.1", **kw)


@pytest.fixture
def client(site):
    app = create_app(site / "web", site / "node_modules", site / "dist", build_wheel=False)
    with local_client(app) as c:
        yield c


def assert_security_headers(r):
    for k, v in SECURITY.items():
        assert r.headers.get(k) == v, (r.url, k, r.headers.get(k))
    csp = r.headers["content-security-policy"]
    directives = {d.split()[0]: d.split()[1:] for d in csp.split("; ")}
    assert directives["default-src"] == ["'self'"]
    assert directives["script-src"] == ["'self'", "'wasm-unsafe-eval'"]  # WebAssembly, never eval
    assert "'unsafe-eval'" not in csp
    assert directives["worker-src"] == ["'self'", "blob:"]
    assert directives["connect-src"] == ["'self'"]
    assert directives["img-src"] == ["'self'", "data:", "blob:"]
    assert directives["style-src"] == ["'self'", "'unsafe-inline'"]
    assert "*" not in csp and "http" not in csp


def asgi_get(app, raw_path: str, headers=((b"host", b"127.0.0.1"),)):
    """Send one GET with exactly this path to the ASGI app (no client-side normalization of
    `..`, unlike httpx).  Returns (status, headers, body)."""
    messages = []
    received = []

    async def receive():
        received.append(1)
        if len(received) == 1:
            return {"type": "http.request", "body": b"", "more_body": False}
        return {"type": "http.disconnect"}

    async def send(message):
        messages.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0", "spec_version": "2.4"}, "http_version": "1.1", "method": "GET",
        "scheme": "http", "path": raw_path, "raw_path": raw_path.encode(), "root_path": "",
        "query_string": b"", "headers": list(headers),
        "client": ("127.0.0.1", 1234), "server": ("testserver", 80),
    }
    # In a thread of its own: another test's plugin (Playwright's sync API) may hold a running
    # event loop in this one.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(lambda: asyncio.run(app(scope, receive, send))).result(timeout=30)
    start = next(m for m in messages if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.response.body")
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, body


# ---------------------------------------------------------------- routes and MIME types


def test_index(client):
    r = client.get("/")
    assert r.status_code == 200
    assert "<title>webtorch</title>" in r.text
    assert r.headers["content-type"] == "text/html; charset=utf-8"
    assert r.headers["cache-control"] == "no-cache"
    assert_security_headers(r)


@pytest.mark.parametrize("url, mime, body", [
    ("/style.css", "text/css; charset=utf-8", b"body{}"),
    ("/web/style.css", "text/css; charset=utf-8", b"body{}"),
    ("/worker.js", "text/javascript; charset=utf-8", b"self.onmessage"),
    ("/dist/app.js", "text/javascript; charset=utf-8", b"console.log(1)"),
    ("/web/dist/app.mjs", "text/javascript; charset=utf-8", b"export {}"),
    ("/dist/app.js.map", "application/json", b"{}"),
    ("/data.json", "application/json", b'{"a": 1}'),
    ("/data.zip", "application/zip", b"PK"),
    ("/examples/hello.py", "text/plain; charset=utf-8", b"# title"),
    ("/web/sub/kernel.wgsl", "text/plain; charset=utf-8", b"@compute"),
    ("/index.html", "text/html; charset=utf-8", b"<!doctype html>"),
    ("/inside_link.css", "text/css; charset=utf-8", b"body{}"),  # a symlink inside the root
    ("/pyodide/pyodide.mjs", "text/javascript; charset=utf-8", b"export const"),
    ("/pyodide/pyodide.js", "text/javascript; charset=utf-8", b"var loadPyodide"),
    ("/pyodide/pyodide.asm.js", "text/javascript; charset=utf-8", b"var x"),
    ("/pyodide/pyodide.asm.wasm", "application/wasm", b"\0asm"),
    ("/pyodide/python_stdlib.zip", "application/zip", b"PK"),
    ("/pyodide/pyodide-lock.json", "application/json", b'{"packages"'),
    ("/wheels/webtorch-0.1.0-py3-none-any.whl", "application/zip", b"PK"),
])
def test_static_files_and_mime_types(client, url, mime, body):
    r = client.get(url)
    assert r.status_code == 200, url
    assert r.headers["content-type"] == mime
    assert r.content.startswith(body)
    assert "etag" in r.headers
    assert_security_headers(r)


def test_cache_headers(client):
    assert client.get("/").headers["cache-control"] == "no-cache"
    assert client.get("/dist/app.js").headers["cache-control"] == "no-cache"
    assert client.get("/api/examples").headers["cache-control"] == "no-cache"
    assert client.get("/api/wheel").headers["cache-control"] == "no-cache"
    cc = client.get("/pyodide/pyodide.asm.wasm").headers["cache-control"]
    assert "public" in cc and int(cc.split("max-age=")[1].split(",")[0]) >= 86400
    # The wheel keeps its name across rebuilds: always revalidated (cheap 304s).
    assert client.get("/wheels/webtorch-0.1.0-py3-none-any.whl").headers["cache-control"] == "no-cache"


def test_etag_revalidation_gives_304(client):
    for url in ["/", "/pyodide/pyodide.asm.wasm", "/wheels/webtorch-0.1.0-py3-none-any.whl"]:
        r = client.get(url)
        r2 = client.get(url, headers={"If-None-Match": r.headers["etag"]})
        assert r2.status_code == 304 and r2.content == b""
        assert r2.headers["cache-control"] == r.headers["cache-control"]
        assert_security_headers(r2)
        assert client.get(url, headers={"If-None-Match": '"other"'}).status_code == 200


def test_head_requests(client):
    r = client.head("/pyodide/pyodide.asm.wasm")
    assert r.status_code == 200 and r.content == b""
    assert r.headers["content-type"] == "application/wasm"
    assert r.headers["content-length"] == "8"
    assert client.head("/api/examples").status_code == 200


@pytest.mark.parametrize("method, url, status", [
    ("GET", "/missing.js", 404),
    ("GET", "/api/nothing", 404),
    ("GET", "/pyodide/missing.wasm", 404),
    ("POST", "/", 405),
    ("DELETE", "/api/examples", 405),
])
def test_errors_carry_security_headers(client, method, url, status):
    r = client.request(method, url)
    assert r.status_code == status
    assert r.headers["cache-control"] == "no-cache"
    assert_security_headers(r)


# ---------------------------------------------------------------- path safety


@pytest.mark.parametrize("url", [
    "/web/", "/web", "/dist", "/dist/", "/web/dist/", "/examples", "/examples/", "/sub/",
    "/pyodide/", "/pyodide", "/wheels/", "/linkdir", "/linkdir/",
])
def test_directories_are_404(client, url):
    r = client.get(url)
    assert r.status_code == 404, url
    assert b"<" not in r.content  # no listing, no index page
    assert_security_headers(r)


@pytest.mark.parametrize("url", [
    "/%2e%2e/secret.txt",
    "/web/%2e%2e/secret.txt",
    "/web/%2E%2E/secret.txt",
    "/%2e%2e%2fsecret.txt",
    "/web/sub/%2e%2e/%2e%2e/secret.txt",
    "/web/..%2fsecret.txt",
    "/web/..%5csecret.txt",
    "/pyodide/%2e%2e/other.js",
    "/pyodide/%2e%2e/%2e%2e/secret.txt",
    "/pyodide/..%2f..%2fsecret.txt",
    "/wheels/..%2fsecret.txt",
    "/wheels/%2e%2e%2fdist%2fwebtorch-0.1.0-py3-none-any.whl",
    "/api/examples/..%2f..%2fsecret",
    "/api/examples/%2e%2e",
    "//etc/passwd",
    "/web//etc/passwd",
    "/%2fetc%2fpasswd",
    "/web/%2fetc%2fpasswd",
    "/pyodide//etc/passwd",
    "/pyodide/%2fetc%2fpasswd",
    "/leak.txt",             # symlink out of web/
    "/linkdir/x.txt",        # symlinked directory out of web/
    "/pyodide/leak.js",      # symlink out of node_modules/pyodide
    "/wheels/leak.whl",      # symlink out of dist/
    "/.hidden",
    "/web/.hidden",
    "/index.html%00.js",
    "/wheels/notes.txt",
])
def test_traversal_is_404(client, url):
    r = client.get(url)
    assert r.status_code == 404, url
    assert b"SECRET" not in r.content and b"root:" not in r.content
    assert_security_headers(r)


@pytest.mark.parametrize("raw", [
    "/../secret.txt", "/web/../secret.txt", "/web/../../etc/passwd", "/sub/../../secret.txt",
    "/pyodide/../other.js", "/pyodide/../../secret.txt", "/wheels/../secret.txt",
    "/./index.html", "/web/./style.css", "/api/examples/../../secret",
])
def test_literal_dot_segments_are_404(site, raw):
    app = create_app(site / "web", site / "node_modules", site / "dist", build_wheel=False)
    status, headers, body = asgi_get(app, raw)
    assert status == 404, raw
    assert b"SECRET" not in body and b"outside pyodide" not in body
    assert headers["cross-origin-embedder-policy"] == "require-corp"


def test_safe_path(site):
    web = site / "web"
    assert safe_path(web, "style.css") == (web / "style.css").resolve()
    assert safe_path(web, "dist/app.js") == (web / "dist" / "app.js").resolve()
    for bad in ["", "/etc/passwd", "../secret.txt", "sub/../../secret.txt", "dist", "dist/",
                "sub//kernel.wgsl", ".hidden", "leak.txt", "linkdir/x.txt", "a\x00b",
                "..\\secret.txt", str(site / "secret.txt"), "missing"]:
        assert safe_path(web, bad) is None, bad
    assert safe_path(site / "does-not-exist", "x") is None


# ---------------------------------------------------------------- examples API


def test_examples_list(client):
    r = client.get("/api/examples")
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    data = r.json()
    assert [e["name"] for e in data] == ["b_untitled", "hello"]  # *.py only, sorted
    hello = data[1]
    assert hello == {"name": "hello", "title": "Hello, tensors",
                     "code": "# title: Hello, tensors\nprint('hi')\n"}
    assert data[0]["title"] == "b untitled"  # no title comment: from the file name
    assert_security_headers(r)


def test_example_by_name(client):
    r = client.get("/api/examples/hello")
    assert r.status_code == 200
    assert r.json()["title"] == "Hello, tensors"
    assert client.get("/api/examples/notes").status_code == 404
    assert client.get("/api/examples/missing").status_code == 404
    assert client.get("/api/examples/hello.py").status_code == 404


def test_examples_without_dir(tmp_path):
    app = create_app(tmp_path / "web", tmp_path / "nm", tmp_path / "dist", build_wheel=False)
    c = local_client(app)
    assert c.get("/api/examples").json() == []
    assert c.get("/").status_code == 404


# ---------------------------------------------------------------- wheel


def test_vendored_wheels_listed_and_cached_long(client, site):
    vendor = site / "web" / "vendor"
    vendor.mkdir()
    make_wheel(vendor / "tqdm-4.70.1-py3-none-any.whl", {"tqdm/__init__.py": ""})
    (vendor / "notes.txt").write_text("not a wheel")
    assert client.get("/api/wheel").json()["vendor"] == ["/vendor/tqdm-4.70.1-py3-none-any.whl"]
    r = client.get("/vendor/tqdm-4.70.1-py3-none-any.whl")
    assert r.status_code == 200 and r.headers["content-type"] == "application/zip"
    assert "max-age=604800" in r.headers["cache-control"]
    assert client.get("/vendor/notes.txt").status_code == 404
    assert client.get("/vendor/..%2fdist%2fwebtorch-0.1.0-py3-none-any.whl").status_code == 404


def test_api_wheel_points_at_newest_wheel(client, site):
    r = client.get("/api/wheel")
    assert r.status_code == 200
    info = r.json()
    assert info["url"] == "/wheels/webtorch-0.1.0-py3-none-any.whl"
    assert info["name"] == "webtorch-0.1.0-py3-none-any.whl"
    w = client.get(info["url"])
    assert w.status_code == 200
    assert w.content == (site / "dist" / info["name"]).read_bytes()
    assert w.headers["content-type"] == "application/zip"
    assert client.get("/wheels/webtorch-0.0.9-py3-none-any.whl").status_code == 200
    assert client.get("/wheels/webtorch-9.9.9-py3-none-any.whl").status_code == 404


def test_shipped_snapshot_offered_only_for_the_wheels_it_was_made_from(client, site):
    """/api/wheel names the files of the manifest made from the wheels it serves (names and
    contents); the content-hashed files are cached a year; a broken or unsafe manifest offers none."""
    web, dist = site / "web", site / "web" / "dist"
    (dist / "python-0123456789abcdef.snapshot.gz").write_bytes(gzip.compress(b"snap"))
    (dist / "site-packages-fedcba9876543210.bin.gz").write_bytes(b"files")
    urls = {"snapshot": "/dist/python-0123456789abcdef.snapshot.gz",
            "sitePackages": "/dist/site-packages-fedcba9876543210.bin.gz"}

    def manifest(**over):
        wheels = app_module.playground_wheels(site / "dist", web)
        app_module.snapshot_manifest(web, wheels).write_text(json.dumps({**urls, **over}))
        return client.get("/api/wheel").json()

    info = manifest()
    assert {k: info[k] for k in urls} == urls
    r = client.get(urls["snapshot"])
    assert r.content == b"snap" and r.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert r.headers["content-encoding"] == "gzip" and r.headers["x-decoded-length"] == "4"
    assert client.get("/dist/app.js").headers["cache-control"] == "no-cache"
    assert "snapshot" not in manifest(snapshot="/dist/python-0000000000000000.snapshot.gz")  # missing
    assert "snapshot" not in manifest(snapshot="/../secret.txt")
    wheel = site / "dist" / "webtorch-0.1.0-py3-none-any.whl"  # another build of the wheel
    make_wheel(wheel, {"webtorch/__init__.py": "# changed"})
    assert "snapshot" not in client.get("/api/wheel").json()
    assert "snapshot" in manifest()
    for p in dist.glob("snapshot-*.json"):
        p.write_text("{not json")
    assert "snapshot" not in client.get("/api/wheel").json()


def test_api_wheel_without_wheel_is_404(tmp_path):
    (tmp_path / "dist").mkdir()
    app = create_app(tmp_path / "web", tmp_path / "nm", tmp_path / "dist", build_wheel=False)
    with local_client(app) as c:
        r = c.get("/api/wheel")
    assert r.status_code == 404
    assert "make install" in r.json()["detail"]


def test_wheel_is_built_on_startup_when_missing(tmp_path, monkeypatch):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname='x'\n")
    calls = []

    def fake_build(wheel_dir, project_dir):
        calls.append((wheel_dir, project_dir))
        wheel_dir.mkdir(parents=True, exist_ok=True)
        make_wheel(wheel_dir / "webtorch-0.1.0-py3-none-any.whl", {"webtorch/__init__.py": ""})

    monkeypatch.setattr(app_module, "build_wheel_into", fake_build)
    app = create_app(tmp_path / "web", tmp_path / "nm", tmp_path / "dist", build_wheel=True,
                     project_dir=project)
    with local_client(app) as c:
        assert calls == [(tmp_path / "dist", project)]
        assert c.get("/api/wheel").json()["url"] == "/wheels/webtorch-0.1.0-py3-none-any.whl"
    with local_client(app):  # a wheel exists now: no second build
        assert len(calls) == 1


def test_build_wheel_command(tmp_path, monkeypatch):
    seen = {}

    def fake_run(cmd, **kw):
        seen["cmd"] = cmd
        make_wheel(Path(cmd[cmd.index("-w") + 1]) / "webtorch-0.1.0-py3-none-any.whl", {})
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(app_module.subprocess, "run", fake_run)
    w = app_module.build_wheel_into(tmp_path / "dist", tmp_path)
    assert w == tmp_path / "dist" / "webtorch-0.1.0-py3-none-any.whl"
    assert seen["cmd"][:5] == [sys.executable, "-m", "pip", "wheel", "--no-deps"]
    assert seen["cmd"][-1] == str(tmp_path)


def test_defaults_point_at_the_repo():
    app = create_app(build_wheel=False)
    assert app.state.web_dir == REPO / "web"
    assert app.state.pyodide_dir == REPO / "node_modules" / "pyodide"
    assert app.state.wheel_dir == REPO / "dist"


def test_repo_wheel_ships_shaders():
    """The wheel `make install` built into dist/ is pure Python and carries shaders/*.wgsl as
    webtorch/shaders/*.wgsl and the browser driver's replay.js (served to Pyodide by /api/wheel)."""
    wheel = app_module.newest_wheel(REPO / "dist")
    assert wheel is not None, "no wheel in dist/: run `make install` (make test builds it)"
    assert wheel.name.endswith("-py3-none-any.whl")
    names = zipfile.ZipFile(wheel).namelist()
    shaders = sorted(n for n in names if n.startswith("webtorch/shaders/"))
    assert shaders and all(n.endswith(".wgsl") for n in shaders)
    assert "webtorch_server/app.py" in names
    assert "webtorch/backends/webgpu/drivers/replay.js" in names  # the browser driver's replay
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)
    repo_shaders = list((REPO / "shaders").glob("*.wgsl"))
    if repo_shaders and wheel.stat().st_mtime >= max(p.stat().st_mtime for p in repo_shaders):
        assert shaders == sorted(f"webtorch/shaders/{p.name}" for p in repo_shaders)
    with local_client(create_app(build_wheel=False)) as c:
        info = c.get("/api/wheel").json()
        assert info["url"].startswith("/wheels/webtorch-") and info["url"].endswith(".whl")
        assert c.head(info["url"]).status_code == 200


# ---------------------------------------------------------------- Host check, 500s, bad files


@pytest.mark.parametrize("host", [
    "127.0.0.1", "127.0.0.1:8000", "localhost", "LocalHost:1", "[::1]", "[::1]:8000",
    "example.test", "Example.Test:8000", "[::2]:80",
])
def test_allowed_hosts_are_served(site, host):
    app = create_app(site / "web", site / "node_modules", site / "dist", build_wheel=False,
                     allowed_hosts=["example.test", "::2"])
    status, headers, body = asgi_get(app, "/", headers=[(b"host", host.encode())])
    assert status == 200 and b"<title>webtorch</title>" in body, host


@pytest.mark.parametrize("host_headers", [
    [b"evil.test"], [b"evil.test:8000"], [b"127.0.0.1.evil.test"], [b"localhost.evil.test"],
    [b"localhost."], [b"[::2]"], [b"::1"], [b"127.0.0.1:"], [b"127.0.0.1:80:80"],
    [b"127.0.0.1:x"], [b""], [], [b"127.0.0.1", b"evil.test"], [b"example.test"],
])
def test_other_hosts_are_refused(site, host_headers):
    """A DNS-rebinding page sends its own name as Host: a 400, with the security headers."""
    app = create_app(site / "web", site / "node_modules", site / "dist", build_wheel=False)
    for url in ["/", "/api/examples", "/wheels/webtorch-0.1.0-py3-none-any.whl"]:
        status, headers, body = asgi_get(app, url, headers=[(b"host", h) for h in host_headers])
        assert status == 400 and body == b"Invalid Host header", (host_headers, url)
        assert headers["content-security-policy"].startswith("default-src 'self'")
        assert headers["cross-origin-embedder-policy"] == "require-corp"
        assert headers["x-content-type-options"] == "nosniff"


def test_server_errors_carry_security_headers(site, monkeypatch):
    def broken(root, rel):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(app_module, "safe_path", broken)
    app = create_app(site / "web", site / "node_modules", site / "dist", build_wheel=False)
    with local_client(app, raise_server_exceptions=False) as c:
        for url in ["/", "/api/examples", "/pyodide/pyodide.mjs"]:
            r = c.get(url)
            assert r.status_code == 500 and r.text == "Internal Server Error", url
            assert "disk on fire" not in r.text
            assert r.headers["cache-control"] == "no-cache"
            assert_security_headers(r)


def test_example_that_is_not_utf8_is_skipped(client, site, caplog):
    (site / "web" / "examples" / "broken.py").write_bytes(b"# title: Broken\nx = '\xff\xfe'\n")
    with caplog.at_level("ERROR", logger="webtorch_server"):
        r = client.get("/api/examples")
    assert r.status_code == 200
    assert [e["name"] for e in r.json()] == ["b_untitled", "hello"]
    assert any("broken.py" in m and "utf-8" in m for m in caplog.messages), caplog.messages
    assert client.get("/api/examples/broken").status_code == 404
    assert client.get("/api/examples/hello").json()["title"] == "Hello, tensors"


@pytest.mark.parametrize("layout", ["outside_newest", "inside_link_newest", "only_outside"])
def test_api_wheel_and_wheels_agree_on_symlinks(site, layout):
    """/api/wheel advertises only a wheel that /wheels/ serves: a wheel symlinked from outside
    dist/ is neither advertised nor served; a link within dist/ is both."""
    dist = site / "dist"
    outside = site / "outside" / "webtorch-9.0.0-py3-none-any.whl"
    make_wheel(outside, {"webtorch/__init__.py": "outside"})
    if layout == "only_outside":
        for w in dist.glob("webtorch-*.whl"):
            w.unlink()
    if layout == "inside_link_newest":
        (dist / "webtorch-9.1.0-py3-none-any.whl").symlink_to(dist / "webtorch-0.1.0-py3-none-any.whl")
    else:
        (dist / "webtorch-9.0.0-py3-none-any.whl").symlink_to(outside)
    app = create_app(site / "web", site / "node_modules", dist, build_wheel=False)
    with local_client(app) as c:
        r = c.get("/api/wheel")
        served = {n: c.get(f"/wheels/{n}").status_code for n in sorted(os.listdir(dist))}
        if layout == "only_outside":
            assert r.status_code == 404
        else:
            info = r.json()
            assert c.get(info["url"]).status_code == 200
            assert info["name"] == {"outside_newest": "webtorch-0.1.0-py3-none-any.whl",
                                    "inside_link_newest": "webtorch-9.1.0-py3-none-any.whl"}[layout]
    assert served.get("webtorch-9.0.0-py3-none-any.whl", 404) == 404
    for name, status in served.items():
        assert (status == 200) == (app_module.servable_wheel(dist, name) is not None), name


# ---------------------------------------------------------------- the real command on real sockets

HEADER_TIMEOUT = 1.0  # the live server's --header-timeout
LIMIT = 6  # its --limit-concurrency
PER_CLIENT = 3  # its --limit-per-client


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_until_closed(s: socket.socket, limit_s: float = 10) -> bytes:
    """Everything the server sends until it closes the connection (at most limit_s)."""
    s.settimeout(limit_s)
    chunks = []
    while True:
        try:
            b = s.recv(65536)
        except ConnectionResetError:
            break
        if not b:
            break
        chunks.append(b)
    return b"".join(chunks)


def connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    """A connection to the live server from the loopback address `source` (127.0.0.2 and up
    are other clients: Linux routes all of 127/8 to the loopback device)."""
    return socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))


def raw_request(port: int, request: bytes, source: str = "127.0.0.1"):
    """Send these exact bytes; returns (status, headers, body) of the response."""
    with connect(port, source) as s:
        s.sendall(request)
        resp = read_until_closed(s)
    head, _, body = resp.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return int(lines[0].split()[1]), headers, body


def raw_get(port: int, path: str, host: str = "127.0.0.1", source: str = "127.0.0.1"):
    """One HTTP/1.1 GET with the path and Host exactly as given (no client normalization)."""
    return raw_request(port, f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode(),
                       source)


def assert_raw_security_headers(headers):
    for k, v in SECURITY.items():
        assert headers.get(k) == v, (k, headers)
    assert headers["content-security-policy"].startswith("default-src 'self'")
    assert headers["cache-control"] == "no-cache"
    assert "server" not in headers  # no banner naming the server software


def closed_within(s: socket.socket, limit_s: float) -> float | None:
    """Seconds until the server closed `s` (reading and dropping what it sends), or None."""
    t0 = time.monotonic()
    s.settimeout(0.05)
    while True:
        try:
            if s.recv(65536) == b"":
                return time.monotonic() - t0
        except socket.timeout:
            pass
        except ConnectionResetError:
            return time.monotonic() - t0
        if time.monotonic() - t0 >= limit_s:
            return None


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """(port, site) of `webtorch-playground` serving a fake site on 127.0.0.1, with a short
    header timeout and a small concurrency limit."""
    site = make_site(tmp_path_factory.mktemp("live"))
    exe = shutil.which("webtorch-playground", path=str(Path(sys.executable).parent))
    cmd = [exe] if exe else [sys.executable, "-m", "webtorch_server"]
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "server"), str(REPO / "py")])}
    proc = subprocess.Popen(
        cmd + ["--port", str(port), "--web-dir", str(site / "web"),
               "--node-modules-dir", str(site / "node_modules"), "--wheel-dir", str(site / "dist"),
               "--no-build-wheel", "--log-level", "warning", "--allow-host", "example.test",
               "--header-timeout", str(HEADER_TIMEOUT), "--limit-concurrency", str(LIMIT),
               "--limit-per-client", str(PER_CLIENT)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.time() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=5):
                    break
            except OSError:
                if proc.poll() is not None or time.time() > deadline:
                    out = proc.stdout.read().decode() if proc.poll() is not None else ""
                    pytest.fail(f"server did not come up (exit {proc.poll()}):\n{out}")
                time.sleep(0.2)
        yield port, site
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_console_command_serves_the_playground(live):
    port, site = live
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as r:
        body, headers = r.read(), r.headers
    assert b"<title>webtorch</title>" in body
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert headers["Cross-Origin-Embedder-Policy"] == "require-corp"
    assert headers["Cross-Origin-Opener-Policy"] == "same-origin"
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/wheel", timeout=5) as r:
        assert json.load(r)["url"] == "/wheels/webtorch-0.1.0-py3-none-any.whl"
    for path in ["/../secret.txt", "/web/../../secret.txt", "/%2e%2e/secret.txt",
                 "/pyodide/../../secret.txt", "/leak.txt", "//" + str(site / "secret.txt")]:
        status, headers, body = raw_get(port, path)
        assert status in (400, 404), path
        assert b"TOP SECRET" not in body
        assert_raw_security_headers(headers)


@pytest.mark.parametrize("host, status", [
    ("127.0.0.1", 200), ("localhost", 200), ("[::1]", 200), ("example.test", 200),
    ("evil.test", 400), ("127.0.0.1.evil.test", 400), ("[::2]", 400),
])
def test_live_host_check(live, host, status):
    port, _ = live
    for h in [host, f"{host}:{port}"]:
        got, headers, body = raw_get(port, "/api/health", host=h)
        assert got == status, h
        assert (body == b"Invalid Host header") == (status == 400)
        assert_raw_security_headers(headers)


@pytest.mark.parametrize("request_bytes", [
    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nno colon here\r\n\r\n",
    b"GARBAGE\r\n\r\n",
    b"GET / HTTP/1.1\r\n\r\n",  # HTTP/1.1 without Host
    # a request head that grows past 64 KiB without ending (h11_max_incomplete_event_size)
    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 300_000,
])
def test_live_malformed_requests_get_400_with_headers(live, request_bytes):
    """uvicorn answers these itself, below the app: the 400 still carries the headers."""
    status, headers, body = raw_request(live[0], request_bytes)
    assert status == 400
    assert_raw_security_headers(headers)


def test_live_half_open_connections_are_closed(live):
    """Connections that send nothing, half a request, or a byte at a time (also after a
    response on a keep-alive connection, each byte well within the keep-alive timeout) are
    closed within the header timeout."""
    port, _ = live
    socks = [connect(port, f"127.0.0.{10 + i}") for i in range(4)]  # not past PER_CLIENT
    try:
        socks[1].sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        socks[2].sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert socks[2].recv(65536).startswith(b"HTTP/1.1 200 ")  # keep-alive: stays open
        t0 = time.monotonic()
        still_open = set(range(len(socks)))
        while still_open and time.monotonic() - t0 < HEADER_TIMEOUT + 3:
            time.sleep(0.1)
            for i in sorted(still_open):
                if i >= 2:  # the trickling ones
                    try:
                        socks[i].sendall(b"G")
                    except OSError:
                        pass
                if closed_within(socks[i], 0) is not None:
                    still_open.discard(i)
        assert not still_open, f"connections {still_open} still open"
        assert time.monotonic() - t0 < HEADER_TIMEOUT + 1
    finally:
        for s in socks:
            s.close()
    assert raw_get(port, "/api/health")[0] == 200


def test_live_concurrency_limit_answers_503_with_headers(live):
    port, _ = live
    sources = [f"127.0.0.{2 + i // PER_CLIENT}" for i in range(LIMIT)]  # each within its limit
    idle = [connect(port, src) for src in sources]
    try:
        time.sleep(0.2)  # let the server accept them all
        status, headers, body = raw_get(port, "/api/health")
        assert status == 503 and body == b"Service Unavailable"
        assert_raw_security_headers(headers)
        for s in idle:  # the header timeout frees the slots
            assert closed_within(s, HEADER_TIMEOUT + 3) is not None
    finally:
        for s in idle:
            s.close()
    time.sleep(0.2)
    assert raw_get(port, "/api/health")[0] == 200


def test_client_key():
    """The per-client limit counts an IPv4 address (IPv4-mapped in IPv6 too) or an IPv6 /64."""
    from webtorch_server.serve import client_key
    assert client_key("192.0.2.7") == client_key("::ffff:192.0.2.7") == "192.0.2.7"
    assert client_key("2001:db8::1") == client_key("2001:db8::ffff:1") == "2001:db8::/64"
    assert client_key("2001:db8:0:1::1") == "2001:db8:0:1::/64"


def test_live_one_client_cannot_take_every_connection(live):
    """A client opening many idle connections keeps PER_CLIENT of them (the rest are closed at
    once), well within the server's LIMIT: another client is still served, at once."""
    port, _ = live
    idle = [connect(port, "127.0.0.2") for _ in range(4 * LIMIT)]
    try:
        time.sleep(0.2)  # let the server accept them all
        t0 = time.monotonic()
        status, headers, body = raw_get(port, "/api/health")
        assert status == 200 and body == b'{"ok":true}' and time.monotonic() - t0 < 1
        assert_raw_security_headers(headers)
        closed = [closed_within(s, 0) is not None for s in idle]  # within the header timeout
        assert closed == [False] * PER_CLIENT + [True] * (len(idle) - PER_CLIENT)
        with connect(port, "127.0.0.2") as s:  # one more from it: closed, however long it waits
            assert closed_within(s, 1) is not None
    finally:
        for s in idle:
            s.close()
    time.sleep(0.2)
    assert raw_get(port, "/api/health", source="127.0.0.2")[0] == 200
