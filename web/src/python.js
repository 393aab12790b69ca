// Python's start, shared by the page's worker (worker.js) and the build's snapshot maker
// (snapshot.js, driven by web/tools/make_snapshot.py), so a shipped snapshot holds exactly the
// state a normal start reaches.
//
// Site-packages bundle (web/tools/make_snapshot.py writes it from the webtorch wheel and the
// vendored wheels, gzipped; the server sends it gzip-encoded, so the browser unpacks it): "WTSP",
// a little-endian u32 n, n bytes of JSON [[path, size], ...], then the files' bytes in order.  Writing it into the file system is one pass of FS.writeFile, where
// `loadPackage` unzips in Python (seconds on a slow machine).

import PLAYGROUND_PY from './playground.py';

export const PYODIDE_URL = '/pyodide/';

// Run once webtorch's files are in place; a shipped snapshot is taken right after it.
export const IMPORT_WEBTORCH = `
import webtorch
if not hasattr(webtorch, "tensor"):
    raise ImportError("the webtorch package is incomplete (no webtorch.tensor)")
from webtorch import _torch_alias
_torch_alias.install()  # "import torch" in the page is webtorch: Pyodide has no other torch
# imported lazily by webtorch, but in nearly every training script (and the examples): imported here, before the
# shipped snapshot is taken, so a first run does not import them (optim alone took 0.4 s in the page)
import webtorch.optim, webtorch._compile, webtorch._dynamo, webtorch.fx
try:
    import tqdm
    tqdm.tqdm.monitor_interval = 0  # its monitor is a thread, and the page has no threads
except ImportError:
    pass
`;

// Python restored from a memory snapshot (Pyodide's `_loadSnapshot`).  `bytes` may still be
// arriving: Python's WebAssembly module is compiled and instantiated meanwhile, and the restore
// waits for the promise `filled`.  Pyodide sizes the heap for a snapshot through INITIAL_MEMORY,
// which its module ignores (the memory is the module's own), so a snapshot taken after imports,
// larger than a fresh heap, would not fit: the memory is grown to the snapshot's size first.
// `instantiated()` is called once the module is instantiated.
export async function loadSnapshot(loadPyodide, bytes, filled, instantiated = () => {}) {
  const { default: create } = await import(/* webpackIgnore: true */ PYODIDE_URL + 'pyodide.asm.mjs');
  const grow = (Module) => {
    instantiated();
    Module.addRunDependency('webtorch-snapshot');
    const restore = () => { Module.growMemory(bytes.byteLength); Module.removeRunDependency('webtorch-snapshot'); };
    filled.then(restore, restore);  // a failed download left a snapshot that cannot restore
  };
  const createPyodideModule = (settings) => create({ ...settings, preRun: [grow, ...settings.preRun] });
  return loadPyodide({ indexURL: PYODIDE_URL, fullStdLib: false, _loadSnapshot: bytes, createPyodideModule });
}

export function installSitePackages(py, bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteLength < 8 || new TextDecoder().decode(bytes.subarray(0, 4)) !== 'WTSP') {
    throw new Error('not a site-packages bundle');
  }
  const n = view.getUint32(4, true);
  const index = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const root = py.runPython("import sysconfig; sysconfig.get_path('purelib')");
  let at = 8 + n;
  for (const [path, size] of index) {
    const full = `${root}/${path}`;
    py.FS.mkdirTree(full.slice(0, full.lastIndexOf('/')));
    py.FS.writeFile(full, bytes.subarray(at, at + size));
    at += size;
  }
  if (at !== bytes.byteLength) throw new Error('a truncated site-packages bundle');
  py.runPython('import importlib; importlib.invalidate_caches()');
}

// The playground helpers (web/src/playground.py), as the module `webtorch_playground` on sys.path.
export function importPlayground(py) {
  py.FS.mkdirTree('/playground');
  py.FS.writeFile('/playground/webtorch_playground.py', PLAYGROUND_PY);
  py.runPython(`
import sys
if '/playground' not in sys.path:
    sys.path.insert(0, '/playground')
import webtorch_playground
`);
}
