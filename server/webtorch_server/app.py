"""The playground's HTTP server.

Routes (GET and HEAD):

    /                      web/index.html
    /web/<path>, /<path>   static files from web/ (index.html, dist/, worker.js, css, examples)
    /pyodide/<path>        the Pyodide runtime from node_modules/pyodide/ (npm package, core only)
    /wheels/<name>.whl     a built webtorch wheel from dist/
    /api/wheel             {"url": "/wheels/webtorch-...whl", "name", "size", "vendor": [urls],
                           "snapshot", "sitePackages"}: the newest wheel, the vendored wheels
                           Pyodide loads with it, and (where web/tools/make_snapshot.py made one
                           from exactly these wheels) the URLs of the shipped Python snapshot, its
                           site-packages files and the kernels the examples build on its adapter
    /vendor/<name>.whl     a vendored pure-Python wheel (tqdm, einops) from web/vendor/
    /api/examples          [{"name", "title", "code"}] from web/examples/*.py
    /api/examples/<name>   one example
    /api/health            {"ok": true}

Every file lookup resolves the path (symlinks included) and refuses anything that leaves its
root, any dot-segment ("..", ".git", ...), and directories: all of those are 404.  Every
response (errors, 500s and refused hosts included) carries a same-origin
Content-Security-Policy and the cross-origin isolation headers (COOP same-origin + COEP
require-corp), so the page is `crossOriginIsolated` and Pyodide can use a SharedArrayBuffer
interrupt buffer for the Stop button.  Only requests whose Host header names an allowed host
(127.0.0.1, localhost, [::1] and `allowed_hosts`, any port) are served, others get a 400: a
DNS-rebinding page cannot read the server.  The server runs no user code.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import mimetypes
import os
import re
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, Response
from starlette.responses import FileResponse, PlainTextResponse

log = logging.getLogger("webtorch_server")

PACKAGE_DIR = Path(__file__).resolve().parent


def _find_repo_root() -> Path:
    """The repository root when running from a checkout (editable install), else the cwd."""
    here = PACKAGE_DIR.parents[1]  # server/webtorch_server -> <repo>
    if (here / "pyproject.toml").is_file() and (here / "server" / "webtorch_server").is_dir():
        return here
    return Path.cwd()


REPO_ROOT = _find_repo_root()

CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'self'",
    # WebAssembly for Pyodide, and no eval: the browser driver's JavaScript (torch.compile's
    # replay) is bundled into the worker, never built from source in the page
    "script-src 'self' 'wasm-unsafe-eval'",
    "worker-src 'self' blob:",
    "connect-src 'self'",
    "img-src 'self' data: blob:",
    "style-src 'self' 'unsafe-inline'",
    "font-src 'self' data:",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
])

SECURITY_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-embedder-policy", b"require-corp"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
]

# Cache policies.  Pyodide's files change only when the npm package is upgraded: cache them a
# week (revalidated by ETag on a reload, so an upgrade is picked up).  The wheel keeps its name
# (webtorch-<version>-py3-none-any.whl) across rebuilds, so it is revalidated every time (a 304
# when unchanged).  HTML, the API and the playground's own files: no-cache.  Files in web/dist
# named by their content's hash (python-<16 hex>.snapshot.gz): a year, immutable; those ending
# in .gz are sent gzip-encoded, with their unpacked size in X-Decoded-Length.
CACHE_LONG = "public, max-age=604800"
CACHE_REVALIDATE = "no-cache"
CACHE_IMMUTABLE = "public, max-age=31536000, immutable"
_HASHED = re.compile(r"^dist/[a-z-]+-[0-9a-f]{16}\.[a-z.]+$")

MIME_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".htm": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".cjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".map": "application/json",
    ".wasm": "application/wasm",
    ".whl": "application/zip",
    ".zip": "application/zip",
    ".tar": "application/x-tar",
    ".gz": "application/gzip",
    ".py": "text/plain; charset=utf-8",
    ".pyi": "text/plain; charset=utf-8",
    ".wgsl": "text/plain; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/plain; charset=utf-8",
    ".ts": "text/plain; charset=utf-8",  # d.ts files in the pyodide package, not video/mp2t
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".ico": "image/x-icon",
    ".woff": "font/woff",
    ".woff2": "font/woff2",
    ".ttf": "font/ttf",
    ".safetensors": "application/octet-stream",
}


def media_type_for(path: Path) -> str:
    mt = MIME_TYPES.get(path.suffix.lower())
    if mt is None:
        mt = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return mt


def with_security_headers(headers) -> list[tuple[bytes, bytes]]:
    """`headers` (raw ASGI pairs) with SECURITY_HEADERS (replacing any the response set), and
    `Cache-Control: no-cache` when it set none."""
    security = {n for n, _ in SECURITY_HEADERS}
    out = [(k, v) for k, v in headers if k.lower() not in security]
    out.extend(SECURITY_HEADERS)
    if b"cache-control" not in {k.lower() for k, _ in headers}:
        out.append((b"cache-control", CACHE_REVALIDATE.encode()))
    return out


class SecurityHeadersMiddleware:
    """Pure ASGI middleware: security headers on every response (404s and errors too), and
    `Cache-Control: no-cache` where a route set none."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": with_security_headers(message.get("headers", []))}
            await send(message)

        await self.app(scope, receive, send_with_headers)


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
# A Host header: a name or a bracketed IPv6 literal, then an optional port.
_HOST_HEADER = re.compile(r"(\[[^\]]*\]|[^:\[\]]*)(?::[0-9]{1,5})?", re.ASCII)


def normalize_host(name: str) -> str:
    """A host name as it appears in a Host header: lower case, IPv6 literals in brackets."""
    name = name.strip().lower()
    return f"[{name}]" if ":" in name and not name.startswith("[") else name


class HostCheckMiddleware:
    """Pure ASGI middleware: serve only requests with exactly one Host header that names an
    allowed host (with any port or none); the rest get a 400.  A page on another site that
    re-binds its DNS name to this machine sends its own name as Host, so it cannot read the
    playground (DNS rebinding)."""

    def __init__(self, app, allowed_hosts):
        self.app = app
        self.allowed = frozenset(normalize_host(h) for h in allowed_hosts)

    def allows(self, scope) -> bool:
        hosts = [v for k, v in scope["headers"] if k == b"host"]
        if len(hosts) != 1:
            return False
        m = _HOST_HEADER.fullmatch(hosts[0].decode("latin-1").lower())
        return m is not None and m.group(1) in self.allowed

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and not self.allows(scope):
            log.warning("refused a request for a host that is not allowed (Host: %r); "
                        "serve it with --allow-host NAME",
                        dict(scope["headers"]).get(b"host", b"").decode("latin-1"))
            response = PlainTextResponse("Invalid Host header", status_code=400)
            return await response(scope, receive, send)
        await self.app(scope, receive, send)


def server_error(request: Request, exc: Exception):
    """The 500 page, with the security headers (Starlette sends it from its outermost
    middleware, past SecurityHeadersMiddleware); the exception is logged by the server."""
    return SecurityHeadersMiddleware(PlainTextResponse("Internal Server Error", status_code=500))


def safe_path(root: Path, rel: str) -> Path | None:
    """`root/rel` as a regular file that lies inside `root` after resolving symlinks, or None.

    Refuses absolute paths, backslashes, NUL bytes, and any segment that starts with a dot
    ("..", ".", ".git", ...)."""
    if not rel or "\x00" in rel or "\\" in rel:
        return None
    parts = rel.split("/")
    if rel.startswith("/") or any(p == "" or p.startswith(".") for p in parts):
        return None
    try:
        root_resolved = root.resolve(strict=True)
        candidate = root_resolved.joinpath(*parts).resolve(strict=True)
    except (OSError, RuntimeError, ValueError):
        return None
    if not candidate.is_relative_to(root_resolved) or not candidate.is_file():
        return None
    return candidate


def _etag(st: os.stat_result) -> str:
    return f'"{st.st_mtime_ns:x}-{st.st_size:x}"'


def file_response(request: Request, path: Path, cache_control: str,
                  media_type: str | None = None) -> Response:
    """A FileResponse with a content type from MIME_TYPES, an ETag and 304 on If-None-Match."""
    st = path.stat()
    etag = _etag(st)
    headers = {"cache-control": cache_control, "etag": etag}
    inm = request.headers.get("if-none-match")
    if inm and (inm.strip() == "*" or etag in [t.strip() for t in inm.split(",")]):
        return Response(status_code=304, headers=headers)
    return FileResponse(path, media_type=media_type or media_type_for(path), headers=headers,
                        stat_result=st)


def not_found() -> HTTPException:
    return HTTPException(status_code=404, detail="Not Found")


_EXAMPLE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]*$")
_WHEEL_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]*\.whl$")
_TITLE = re.compile(r"^#\s*title:\s*(.*?)\s*$", re.IGNORECASE)


def read_example(path: Path) -> dict | None:
    """{"name", "title", "code"} of one example file, or None (logged) when it cannot be read
    as UTF-8 text."""
    try:
        code = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        log.error("example %s is skipped: %s", path, e)
        return None
    first = code.splitlines()[0] if code else ""
    m = _TITLE.match(first)
    title = m.group(1) if m and m.group(1) else path.stem.replace("_", " ")
    return {"name": path.stem, "title": title, "code": code}


def servable_wheel(wheel_dir: Path, name: str) -> Path | None:
    """The webtorch wheel `name` in wheel_dir if it may be served (a webtorch-*.whl file whose
    real path lies inside wheel_dir), else None.  /api/wheel and /wheels/ both ask this."""
    if not (name.startswith("webtorch-") and _WHEEL_NAME.match(name)):
        return None
    return safe_path(wheel_dir, name)


@functools.lru_cache(maxsize=64)
def _sha256(path: Path, mtime_ns: int, size: int) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def sha256_file(path: Path) -> str:
    st = path.stat()
    return _sha256(path, st.st_mtime_ns, st.st_size)


def playground_wheels(wheel_dir: Path, web: Path) -> list[Path] | None:
    """The wheels the page loads: the newest webtorch wheel, then the vendored ones (by name);
    None without a webtorch wheel."""
    w = newest_wheel(wheel_dir)
    if w is None:
        return None
    vendor = sorted((p for p in (web / "vendor").glob("*.whl") if safe_path(web / "vendor", p.name)),
                    key=lambda p: p.name)
    return [w, *vendor]


def snapshot_manifest(web: Path, wheels: list[Path]) -> Path:
    """Where make_snapshot.py writes the manifest of a snapshot made from `wheels` and the
    snapshot maker web/dist/snapshot.js (which holds the Python it runs):
    web/dist/snapshot-<16 hex digits of their names' and contents' hash>.json."""
    maker = web / "dist" / "snapshot.js"
    made_from = json.dumps({p.name: sha256_file(p) for p in [*wheels, maker] if p.is_file()}, sort_keys=True)
    return web / "dist" / f"snapshot-{hashlib.sha256(made_from.encode()).hexdigest()[:16]}.json"


def shipped_snapshot(web: Path, wheels: list[Path]) -> dict:
    """{"snapshot", "sitePackages"[, "kernels"]}: the URLs of the Python snapshot made from
    exactly `wheels` and web/dist/snapshot.js (by name and content), of its site-packages files
    and of the kernels recorded with it, from its manifest, when the files are there; else {}."""
    try:
        m = json.loads(snapshot_manifest(web, wheels).read_text())
        urls = {k: m[k] for k in ("snapshot", "sitePackages", "kernels") if k in m}
    except (OSError, ValueError, TypeError):
        return {}
    if not {"snapshot", "sitePackages"} <= urls.keys():
        return {}
    if any(not isinstance(u, str) or not _HASHED.match(u.removeprefix("/")) or safe_path(web, u[1:]) is None
           for u in urls.values()):
        return {}
    return urls


def newest_wheel(wheel_dir: Path) -> Path | None:
    """The newest servable wheel in wheel_dir (by mtime, then name), or None."""
    try:
        wheels = [p for p in wheel_dir.glob("webtorch-*.whl") if servable_wheel(wheel_dir, p.name)]
    except OSError:
        return None
    if not wheels:
        return None
    return max(wheels, key=lambda p: (p.stat().st_mtime_ns, p.name))


def build_wheel_into(wheel_dir: Path, project_dir: Path) -> Path | None:
    """`pip wheel --no-deps -w <wheel_dir> <project_dir>`; returns the newest wheel or None."""
    wheel_dir.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheel_dir),
           str(project_dir)]
    log.warning("no webtorch wheel in %s: building one (%s)", wheel_dir, " ".join(cmd))
    try:
        proc = subprocess.run(cmd, cwd=project_dir, capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as e:
        log.error("building the wheel failed: %s", e)
        return None
    if proc.returncode != 0:
        log.error("building the wheel failed (exit %d):\n%s%s", proc.returncode, proc.stdout,
                  proc.stderr)
        return None
    return newest_wheel(wheel_dir)


def create_app(web_dir: str | os.PathLike | None = None,
               node_modules_dir: str | os.PathLike | None = None,
               wheel_dir: str | os.PathLike | None = None,
               *,
               build_wheel: bool | None = None,
               project_dir: str | os.PathLike | None = None,
               allowed_hosts=()) -> FastAPI:
    """The playground app.

    web_dir           playground files (default <repo>/web)
    node_modules_dir  npm packages; Pyodide is served from <node_modules_dir>/pyodide
                      (default <repo>/node_modules)
    wheel_dir         where webtorch wheels are (default <repo>/dist)
    build_wheel       build a wheel on startup if wheel_dir has none (default: only when
                      wheel_dir is the default one and project_dir holds a pyproject.toml)
    project_dir       what to build the wheel from (default <repo>)
    allowed_hosts     host names served besides LOOPBACK_HOSTS (the Host header's name part)
    """
    if build_wheel is None:
        build_wheel = wheel_dir is None
    web = Path(web_dir) if web_dir is not None else REPO_ROOT / "web"
    node_modules = Path(node_modules_dir) if node_modules_dir is not None else REPO_ROOT / "node_modules"
    wheels = Path(wheel_dir) if wheel_dir is not None else REPO_ROOT / "dist"
    project = Path(project_dir) if project_dir is not None else REPO_ROOT
    pyodide = node_modules / "pyodide"

    @asynccontextmanager
    async def lifespan(app):
        if build_wheel and newest_wheel(wheels) is None and (project / "pyproject.toml").is_file():
            from starlette.concurrency import run_in_threadpool
            await run_in_threadpool(build_wheel_into, wheels, project)
        yield

    app = FastAPI(title="webtorch playground", lifespan=lifespan, docs_url=None,
                  redoc_url=None, openapi_url=None, exception_handlers={Exception: server_error})
    app.state.web_dir, app.state.pyodide_dir, app.state.wheel_dir = web, pyodide, wheels
    _api_routes(app, web, wheels)
    _file_routes(app, web, pyodide, wheels)
    app.add_middleware(HostCheckMiddleware, allowed_hosts=[*LOOPBACK_HOSTS, *allowed_hosts])
    app.add_middleware(SecurityHeadersMiddleware)  # outermost: the Host check's 400 gets them
    return app


METHODS = ["GET", "HEAD"]


def _api_routes(app: FastAPI, web: Path, wheels: Path) -> None:
    """/api/health, /api/examples[/<name>], /api/wheel; any other /api/ path is 404."""
    methods = METHODS

    @app.api_route("/api/health", methods=methods)
    def health():
        return {"ok": True}

    @app.api_route("/api/examples", methods=methods)
    def examples():
        d = web / "examples"
        out = []
        if d.is_dir():
            for p in sorted(d.glob("*.py")):
                if _EXAMPLE_NAME.match(p.stem) and safe_path(d, p.name) is not None:
                    out.append(read_example(p))
        return [e for e in out if e is not None]

    @app.api_route("/api/examples/{name}", methods=methods)
    def example(name: str):
        if not _EXAMPLE_NAME.match(name):
            raise not_found()
        p = safe_path(web / "examples", name + ".py")
        e = read_example(p) if p is not None else None
        if e is None:
            raise not_found()
        return e

    @app.api_route("/api/wheel", methods=methods)
    def wheel_info():
        served = playground_wheels(wheels, web)
        if served is None:
            return JSONResponse(status_code=404, content={
                "detail": f"no webtorch wheel in {wheels.name}/: run `make install` "
                          "(or `pip wheel --no-deps -w dist .`)"})
        w, vendor = served[0], served[1:]
        return {"url": f"/wheels/{w.name}", "name": w.name, "size": w.stat().st_size,
                "vendor": [f"/vendor/{p.name}" for p in vendor], **shipped_snapshot(web, served)}

    @app.api_route("/api/{rest:path}", methods=methods)
    def api_not_found(rest: str):
        raise not_found()


def _file_routes(app: FastAPI, web: Path, pyodide: Path, wheels: Path) -> None:
    """/, /wheels/, /vendor/, /pyodide/, /web/<path> and /<path>: files, each from its root."""
    methods = METHODS

    def web_file(request: Request, rel: str) -> Response:
        p = safe_path(web, rel)
        if p is None:
            raise not_found()
        if not _HASHED.match(rel):
            return file_response(request, p, CACHE_REVALIDATE)
        response = file_response(request, p, CACHE_IMMUTABLE, "application/octet-stream")
        if p.suffix == ".gz":  # the browser unpacks it while it downloads, off the page's threads
            with open(p, "rb") as f:  # gzip's trailer: the unpacked size (mod 2**32), for progress
                f.seek(-4, os.SEEK_END)
                decoded = int.from_bytes(f.read(4), "little")
            response.headers.update({"content-encoding": "gzip", "x-decoded-length": str(decoded)})
        return response

    @app.api_route("/", methods=methods)
    def index(request: Request):
        return web_file(request, "index.html")

    @app.api_route("/wheels/{name}", methods=methods)
    def wheel_file(request: Request, name: str):
        p = servable_wheel(wheels, name)
        if p is None:
            raise not_found()
        return file_response(request, p, CACHE_REVALIDATE, "application/zip")

    @app.api_route("/pyodide/{rel:path}", methods=methods)
    def pyodide_file(request: Request, rel: str):
        p = safe_path(pyodide, rel)
        if p is None:
            raise not_found()
        return file_response(request, p, CACHE_LONG)

    @app.api_route("/vendor/{name}", methods=methods)
    def vendor_file(request: Request, name: str):
        p = safe_path(web / "vendor", name) if _WHEEL_NAME.match(name) else None
        if p is None:
            raise not_found()
        return file_response(request, p, CACHE_LONG, "application/zip")  # pinned: name-version

    @app.api_route("/web/{rel:path}", methods=methods)
    def web_prefixed(request: Request, rel: str):
        return web_file(request, rel)

    @app.api_route("/{rel:path}", methods=methods)
    def web_root(request: Request, rel: str):
        return web_file(request, rel)
