// The build's snapshot maker (web/tools/make_snapshot.py opens the playground and starts this
// worker): starts Python as the page does, installs the site-packages bundle, imports webtorch
// and the playground helpers, and posts the memory snapshot, gzipped, to /snapshot-upload (answered by the build script).
import { IMPORT_WEBTORCH, PYODIDE_URL, importPlayground, installSitePackages } from './python.js';

self.onmessage = async ({ data }) => {
  try {
    const { loadPyodide } = await import(/* webpackIgnore: true */ PYODIDE_URL + 'pyodide.mjs');
    const py = await loadPyodide({ indexURL: PYODIDE_URL, fullStdLib: false, _makeSnapshot: true });
    const r = await fetch(data.sitePackages);
    if (!r.ok) throw new Error(`${data.sitePackages}: HTTP ${r.status}`);
    installSitePackages(py, new Uint8Array(await r.arrayBuffer()));
    py.runPython(IMPORT_WEBTORCH);
    importPlayground(py);
    const gz = new Blob([py.makeMemorySnapshot()]).stream().pipeThrough(new CompressionStream('gzip'));
    const up = await fetch('/snapshot-upload', { method: 'POST', body: await new Response(gz).arrayBuffer() });
    self.postMessage({ ok: up.ok });
  } catch (e) {
    self.postMessage({ ok: false, error: String(e && e.stack ? e.stack : e) });
  }
};
