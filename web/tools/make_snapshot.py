"""Build the playground's start for a first visit: a memory snapshot of Python with webtorch
imported, and the site-packages files it expects, as content-hashed files in web/dist/.

    python web/tools/make_snapshot.py [--wheel-dir dist]

Writes, in web/dist/: site-packages-<hash>.bin.gz (webtorch's wheel and the vendored wheels,
unpacked; the format is in web/src/python.js); python-<hash>.snapshot.gz (made in headless
Chromium by web/src/snapshot.js, the same Pyodide the page runs); kernels-<hash>.json.gz (the
WGSL kernels the examples build, recorded in the playground on Chromium's WebGPU adapter: the
page builds them while Python starts); and snapshot-<hash>.json, which names them, <hash> being
that of the wheels' and snapshot.js's names and contents: the server offers the files made from
what it serves.  Nothing is done when they exist; the 3 newest sets are kept.  Without Chromium
or Playwright it writes nothing and the page starts Python itself.
"""
import argparse
import fcntl
import gzip
import hashlib
import json
import struct
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DIST = ROOT / "web" / "dist"
KEEP = 3  # snapshots kept (one per set of wheels: `make install`'s, the browser tests' own build, ...)
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(ROOT / "bench"))
from webtorch_server.app import playground_wheels, sha256_file, shipped_snapshot, snapshot_manifest  # noqa: E402

RECORD_JS = """async () => {
  const pg = window.webtorchPlayground;
  const { device } = await pg.ready;
  if (device.kind !== 'webgpu') return { adapter: null, kernels: [] };
  for (const e of await (await fetch('/api/examples')).json()) {
    const r = await pg.run(e.code);
    if (!r.ok) throw new Error(`example ${e.name}: ${r.stderr}`);
  }
  await new Promise((resolve) => setTimeout(resolve, 1500));  // the worker records kernels 1 s after the last
  const saved = await (await caches.open('webtorch')).match('/webtorch-kernels.json');
  return { adapter: device.adapterKey, kernels: saved ? await saved.json() : [] };
}"""
MAKE_JS = """async () => {
  const w = new Worker('/dist/snapshot.js', { type: 'module' });
  const r = await new Promise((resolve) => { w.onmessage = (ev) => resolve(ev.data); w.postMessage(%s); });
  w.terminate();
  if (!r.ok) throw new Error(r.error);
  return true;
}"""


def site_packages(wheels):
    """The bundle of the wheels' files (their paths inside site-packages)."""
    index, blobs = [], []
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as z:
            for info in z.infolist():
                if not info.is_dir():
                    blobs.append(z.read(info))
                    index.append([info.filename, len(blobs[-1])])
    head = json.dumps(index, separators=(",", ":")).encode()
    return b"WTSP" + struct.pack("<I", len(head)) + head + b"".join(blobs)


def write_hashed(stem, suffix, data):
    """`data` gzipped into web/dist/<stem>-<sha256 of it, 16 hex digits><suffix>; its URL."""
    gz = gzip.compress(data, compresslevel=6, mtime=0)
    name = f"{stem}-{hashlib.sha256(gz).hexdigest()[:16]}{suffix}"
    (DIST / name).write_bytes(gz)
    return "/dist/" + name


def make_snapshot(browser, base, site_url):
    """The gzipped snapshot, made by web/src/snapshot.js in headless Chromium."""
    got = {}

    def upload(route):
        got["snapshot"] = route.request.post_data_buffer
        route.fulfill(status=204)

    page = browser.new_page()
    page.set_default_timeout(300_000)
    page.route("**/snapshot-upload", upload)
    page.goto(base + "/api/health")
    page.evaluate(MAKE_JS % json.dumps({"sitePackages": site_url}))
    page.close()
    return got["snapshot"]


def record_kernels(browser, base):
    """{"adapter", "kernels"}: the kernels the playground's examples build, run in the page (which
    restores the new snapshot), on this Chromium's WebGPU adapter."""
    page = browser.new_page()
    page.set_default_timeout(600_000)
    page.goto(base + "/")
    page.wait_for_function("() => window.webtorchPlayground !== undefined")
    got = page.evaluate(RECORD_JS)
    page.close()
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wheel-dir", type=Path, default=ROOT / "dist")
    args = ap.parse_args()
    wheels = playground_wheels(args.wheel_dir, ROOT / "web")
    if wheels is None:
        raise SystemExit(f"no webtorch wheel in {args.wheel_dir}: build it first")
    try:
        import playwright  # noqa: F401
        from start import CHROMIUM
    except ImportError:
        print("make_snapshot: no Playwright: the page will start Python itself")
        return
    if not Path(CHROMIUM).exists():
        print(f"make_snapshot: no {CHROMIUM}: the page will start Python itself")
        return
    DIST.mkdir(parents=True, exist_ok=True)
    with open(DIST / ".snapshot.lock", "w") as lock:  # browser-test workers may ask at once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if shipped_snapshot(ROOT / "web", wheels):
            print("make_snapshot: up to date")
            return
        build(wheels, args.wheel_dir.resolve())
        prune()


def build(wheels, wheel_dir):
    site_url = write_hashed("site-packages", ".bin.gz", site_packages(wheels))
    from playwright.sync_api import sync_playwright
    from start import CHROMIUM, CHROMIUM_ARGS, serve

    path = snapshot_manifest(ROOT / "web", wheels)
    proc, base = serve(ROOT, wheel_dir)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            snapshot = make_snapshot(browser, base, site_url)
            snapshot_url = "/dist/python-%s.snapshot.gz" % hashlib.sha256(snapshot).hexdigest()[:16]
            (DIST / Path(snapshot_url).name).write_bytes(snapshot)
            manifest = {"snapshot": snapshot_url, "sitePackages": site_url,
                        "wheels": {w.name: sha256_file(w) for w in wheels}}
            path.write_text(json.dumps(manifest, indent=1) + "\n")  # the page below restores it
            kernels = record_kernels(browser, base)
            browser.close()
    finally:
        proc.terminate()
    if kernels["kernels"]:
        manifest["kernels"] = write_hashed("kernels", ".json.gz", json.dumps(kernels).encode())
        path.write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"make_snapshot: {snapshot_url} ({len(snapshot) / 1e6:.1f} MB), {site_url}, "
          f"{len(kernels['kernels'])} kernels of the examples on {kernels['adapter']}")


def prune(keep=KEEP):
    """Keep the `keep` newest manifests and the files they name; remove older ones."""
    manifests = sorted(DIST.glob("snapshot-*.json"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for old in manifests[keep:]:
        old.unlink()
    named = {Path(url).name for m in manifests[:keep] for k, url in json.loads(m.read_text()).items() if k != "wheels"}
    for f in [*DIST.glob("site-packages-*.bin.gz"), *DIST.glob("python-*.snapshot.gz"), *DIST.glob("kernels-*.gz")]:
        if f.name not in named:
            f.unlink()


if __name__ == "__main__":
    main()
