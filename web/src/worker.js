// The playground's Web Worker: boots Pyodide (served from /pyodide/), asks for the WebGPU
// adapter and device before Python starts, loads the webtorch wheel, and runs user code
// with `pyodide.runPythonAsync` (so `pyodide.ffi.run_sync` -- JSPI -- works inside it).
//
// page -> worker: {type: 'init', interrupt, flow}: Int32Arrays over SharedArrayBuffers | null
//                 {type: 'run', id, code, cudaAlias}  cudaAlias: "cuda" names the WebGPU device
//                 {type: 'upload', files: [{name, data: ArrayBuffer}]}  into the working directory
// worker -> page: {type: 'status', text, progress}   boot progress (0..1)
//                 {type: 'device', device}            {kind: 'webgpu'|'cpu', label, reason, info}
//                 {type: 'ready', versions}
//                 {type: 'stdout'|'stderr', id, text}
//                 {type: 'graph'|'plot'|'plot_clear'|'error', id, data}   error: {line, hidden, full}
//                 {type: 'warm', kernels}             the recorded kernels are built
//                 {type: 'files', files: [{name, size, data: ArrayBuffer | null}], uploaded}
//                                                     the working directory, after boot, each
//                                                     run and each upload
//                 {type: 'done', id, ok}
//                 {type: 'fatal', error}
import { IMPORT_WEBTORCH, PYODIDE_URL, importPlayground, installSitePackages, loadSnapshot } from './python.js';
// Defines `webtorchReplay`, torch.compile's replay in the browser driver: bundled here, never
// evaluated from source, so the page's Content-Security-Policy needs no 'unsafe-eval'.
import '../../py/webtorch/backends/webgpu/drivers/replay.js';

const WORKDIR = '/home/pyodide';  // Pyodide's working directory: where open('name') reads and writes
const MAX_FILES = 200;            // files listed
const MAX_DOWNLOAD = 64 << 20;    // bytes: a larger file is listed without its contents
let pyodide = null;
let currentRun = null;
const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };

const post = (msg, transfer = []) => self.postMessage(msg, transfer);
const status = (text, progress) => post({ type: 'status', text, progress });

// Boot stages: performance marks here, and [name, epoch ms] pairs sent with 'ready' (the page
// subtracts its own time origin, so the bench's stage table is in navigation time).
const stages = [];
const mark = (name) => {
  performance.mark(name);
  stages.push([name, performance.timeOrigin + performance.now()]);
};

// Output flow control. `flow` (Int32Array over a SharedArrayBuffer, from the page) holds
// [messages posted, messages consumed]. A print loop would otherwise post millions of tiny
// messages and starve the page. While the page keeps up, each write is posted at once; when
// it falls behind, writes are coalesced into one pending chunk, and past MAX_IN_FLIGHT the
// worker waits for the page (it stops waiting as soon as Stop raises the interrupt flag).
// A pending chunk goes out at the next write, at 64 KiB, at the end of the run, or from a
// timer when Python yields to the event loop (e.g. while it waits for the GPU).
const MAX_IN_FLIGHT = 16, BUSY = 4;
let flow = null, interruptFlag = null, pending = null, pendingTimer = 0;

function postCounted(type, text) {
  post({ type, id: currentRun, text, counted: true });
  const posted = Atomics.add(flow, 0, 1) + 1;
  for (;;) {
    const consumed = Atomics.load(flow, 1);
    if (posted - consumed <= MAX_IN_FLIGHT) break;
    if (interruptFlag && Atomics.load(interruptFlag, 0) !== 0) break;
    Atomics.wait(flow, 1, consumed, 50);
  }
}

function flushPending() {
  if (pendingTimer) { clearTimeout(pendingTimer); pendingTimer = 0; }
  if (!pending) return;
  const p = pending;
  pending = null;
  postCounted(p.type, p.text);
}

function emit(type, text) {
  if (!flow) { post({ type, id: currentRun, text }); return; }
  if (pending && pending.type !== type) flushPending();
  const busy = Atomics.load(flow, 0) - Atomics.load(flow, 1) >= BUSY;
  if (!busy && !pending) { postCounted(type, text); return; }
  if (!pending) pending = { type, text: '' };
  pending.text += text;
  if (!busy || pending.text.length > 65536) flushPending();
  else if (!pendingTimer) pendingTimer = setTimeout(flushPending, 30);
}

function stream(name) {
  return {
    write(buf) {
      const text = decoders[name].decode(buf, { stream: true });
      if (text) emit(name, text);
      return buf.length;
    },
    isatty: false,
  };
}

// ---- WebGPU: adapter and device requested here, handed to Python as a JS module -----------
const LIMIT_NAMES = [
  'maxBufferSize', 'maxStorageBufferBindingSize', 'maxStorageBuffersPerShaderStage',
  'maxComputeWorkgroupStorageSize', 'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX', 'maxComputeWorkgroupSizeY', 'maxComputeWorkgroupSizeZ',
  'maxComputeWorkgroupsPerDimension', 'maxBindGroups', 'maxBindingsPerBindGroup',
  'maxUniformBufferBindingSize',
];

async function probeGPU() {
  const jspi = typeof WebAssembly.Suspending === 'function' && typeof WebAssembly.promising === 'function';
  const gpu = self.navigator && self.navigator.gpu;
  if (!gpu) return { kind: 'cpu', label: 'CPU', reason: 'WebGPU is not available (navigator.gpu is missing)', jspi };
  let adapter;
  try {
    adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  } catch (e) {
    return { kind: 'cpu', label: 'CPU', reason: 'requestAdapter failed: ' + e, jspi };
  }
  if (!adapter) return { kind: 'cpu', label: 'CPU', reason: 'WebGPU found no adapter', jspi };
  mark('gpu adapter');
  const ai = adapter.info || {};
  const info = {
    vendor: ai.vendor || '', architecture: ai.architecture || '', device: ai.device || '',
    description: ai.description || '', isFallbackAdapter: !!ai.isFallbackAdapter,
    features: [...adapter.features].sort(), limits: {},
  };
  const requiredLimits = {};
  for (const k of LIMIT_NAMES) {
    if (adapter.limits[k] !== undefined) { requiredLimits[k] = adapter.limits[k]; info.limits[k] = adapter.limits[k]; }
  }
  const requiredFeatures = ['shader-f16', 'timestamp-query'].filter((f) => adapter.features.has(f));
  let device;
  try {
    device = await adapter.requestDevice({ requiredFeatures, requiredLimits });
  } catch (e) {
    try { device = await adapter.requestDevice(); } catch (e2) {
      return { kind: 'cpu', label: 'CPU', reason: 'requestDevice failed: ' + e2, jspi, info };
    }
  }
  mark('gpu device');
  info.deviceFeatures = [...device.features].sort();
  device.addEventListener('uncapturederror', (ev) => {
    post({ type: 'stderr', id: currentRun, text: `[WebGPU error] ${ev.error && ev.error.message}\n` });
  });
  device.lost.then((l) => post({ type: 'stderr', id: currentRun, text: `[WebGPU device lost] ${l.reason}: ${l.message}\n` }));
  const name = [info.vendor, info.architecture].filter(Boolean).join(' ') || info.description || 'adapter';
  const adapterKey = [info.vendor, info.architecture, info.device, info.description].join('/');  // kernels differ per adapter
  const gpuInfo = { kind: 'webgpu', label: `WebGPU: ${name}`, reason: '', jspi, info, adapterKey, adapter, device };
  if (!jspi) {
    // Reading results back (item(), print) waits on a GPU promise from synchronous Python,
    // which needs WebAssembly JS Promise Integration.
    return { ...gpuInfo, kind: 'cpu', label: 'CPU', reason: `WebGPU present (${name}) but JSPI is missing, so Python cannot wait for the GPU` };
  }
  return gpuInfo;
}

// ---- kernels: built once, kept across runs, warmed in the background from the start ----------
// The driver builds each WGSL kernel with createShaderModule + createComputePipeline (layout
// 'auto').  Both are answered from caches here; each kernel's (code, entry point) is recorded in
// Cache Storage.  As soon as the GPU device is there (while Python starts), the kernels recorded
// on earlier visits and those the examples use on this adapter (recorded at build time by
// web/tools/make_snapshot.py, shipped as /dist/kernels-<hash>.json) are built with
// createComputePipelineAsync, off this thread, so a first run finds them ready.
const KERNELS_URL = '/webtorch-kernels.json';  // a key in Cache Storage, never fetched
const MAX_KERNELS = 400;
const modules = new Map(), moduleCode = new WeakMap(), pipelines = new Map();
let recorded = [], compiling = 0, recordTimer = 0;

function cacheKernels(device) {
  const createShaderModule = device.createShaderModule.bind(device);
  const createComputePipeline = device.createComputePipeline.bind(device);
  const module = (code) => {
    let m = modules.get(code);
    if (!m) {
      m = createShaderModule({ code });
      modules.set(code, m);
      moduleCode.set(m, code);
    }
    return m;
  };
  device.createShaderModule = (desc) => (Object.keys(desc).length === 1 ? module(desc.code) : createShaderModule(desc));
  device.createComputePipeline = (desc) => {
    const code = moduleCode.get(desc.compute.module), entry = desc.compute.entryPoint || 'main';
    if (desc.layout !== 'auto' || code === undefined) return createComputePipeline(desc);
    const key = entry + '\n' + code;
    let p = pipelines.get(key);
    if (!p) {
      if (currentRun !== null) status(`Running… (compiling kernel ${++compiling})`, 1);
      p = createComputePipeline(desc);
      pipelines.set(key, p);
      record(code, entry);
    }
    return p;
  };
  return module;
}

function record(code, entry) {
  recorded.push([code, entry]);
  clearTimeout(recordTimer);
  recordTimer = setTimeout(async () => {
    try {
      const c = await caches.open('webtorch');
      await c.put(KERNELS_URL, new Response(JSON.stringify(recorded.slice(-MAX_KERNELS))));
    } catch (e) { /* no Cache Storage (an opaque origin): nothing is kept */ }
  }, 1000);
}

const kernelKey = ([code, entry]) => entry + '\n' + code;

async function savedKernels() {
  try {
    const r = await (await caches.open('webtorch')).match(KERNELS_URL);
    return r ? await r.json() : [];
  } catch (e) { return []; }
}

async function shippedKernels(fetched, adapterKey) {  // [] unless recorded on this very adapter
  try {
    const k = await fetched;
    return k && k.adapter === adapterKey ? k.kernels : [];
  } catch (e) { return []; }
}

async function warmKernels(gpu, shippedFetch, pythonReady) {
  const module = cacheKernels(gpu.device);
  const [saved, shipped] = await Promise.all([savedKernels(), shippedKernels(shippedFetch, gpu.adapterKey)]);
  const now = new Set(recorded.map(kernelKey));
  recorded = [...saved.filter((k) => !now.has(kernelKey(k))), ...recorded];  // what this origin used
  // this origin's own kernels (what its runs built on earlier visits) first, then the examples'
  const todo = new Map([...saved, ...shipped].map((k) => [kernelKey(k), k]));
  // In the order they were recorded, by one builder while Python starts (the GPU process compiles
  // them on one core -- SwiftShader: on the CPU -- while Python starts on another) and by two once
  // Python is ready and idle (the warm-up then ends ~2.7 s after ready instead of ~3.8 on
  // SwiftShader here).
  // Paused while code runs: a run builds what it needs itself, and the warm-up would only compete
  // with it
  const queue = todo.entries();
  const build = async () => {
    for (const [key, [code, entry]] of queue) {
      while (currentRun !== null) await new Promise((resolve) => setTimeout(resolve, 100));
      if (pipelines.has(key)) continue;
      try {
        const p = await gpu.device.createComputePipelineAsync({ layout: 'auto', compute: { module: module(code), entryPoint: entry } });
        if (!pipelines.has(key)) pipelines.set(key, p);
      } catch (e) { /* a stale kernel that no longer compiles: it is rebuilt when used */ }
    }
  };
  await Promise.all([build(), pythonReady.then(build)]);
  return todo.size;
}

// ---- boot -----------------------------------------------------------------------------------
// Boot stages and the share of the progress bar each ends at.  Downloading is measured in bytes
// (the runtime, the standard library and the wheels, fetched here first with progress; Pyodide's
// own fetches of the same URLs then come from the HTTP cache).
const DOWNLOADED = 0.5, STARTED = 0.8, LOADED = 0.9;
const MB = (n) => (n / 1e6).toFixed(1);

// Fetches `urls` with one byte count in the status line.  Resolves once their headers are in, to
// {snapshot, blobs}: `snapshot` (for `snapshotUrl`) a Uint8Array of its unpacked size that its
// bytes fill as they arrive, so Python's module compiles meanwhile (its first 16 bytes are zeroed
// when the download fails or its size comes out wrong: it then cannot be restored); `blobs` a
// promise of a Map url -> Blob of the others.
async function download(urls, snapshotUrl = null) {
  const responses = await Promise.all(urls.map(async (url) => {
    const r = await fetch(url);
    if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
    return r;
  }));
  // a gzip-encoded response counts its unpacked bytes (the server's X-Decoded-Length)
  const size = (r) => +(r.headers.get('x-decoded-length') || r.headers.get('content-length')) || 0;
  const total = responses.reduce((n, r) => n + size(r), 0);
  const snapshot = snapshotUrl ? new Uint8Array(size(responses[urls.indexOf(snapshotUrl)])) : null;
  let got = 0, shown = 0;
  const read = async (r, into) => {
    const reader = r.body.getReader(), chunks = [];
    let at = 0;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!into) chunks.push(value);
        else if (at + value.length <= into.length) into.set(value, at);
        at += value.length;
        got += value.length;
        if (got - shown > total / 50 || got === total) {
          shown = got;
          status(`Downloading Python and webtorch: ${MB(got)} of ${MB(total)} MB`, DOWNLOADED * Math.min(1, got / total));
        }
      }
    } finally {
      if (into && at !== into.length) into.fill(0, 0, 16);
    }
    return into ? null : new Blob(chunks);
  };
  const blobs = Promise.all(responses.map((r, i) => read(r, urls[i] === snapshotUrl ? snapshot : null)));
  return { snapshot, blobs: blobs.then((b) => new Map(urls.map((url, i) => [url, b[i]]))) };
}

// The shipped snapshot (web/tools/make_snapshot.py): Python with webtorch already imported,
// restored instead of started (once `downloaded`); then the site-packages files it expects are
// written.  Null when it fails (a stale or corrupt snapshot): the caller starts Python the
// normal way.
async function restoreShipped(loadPyodide, wheel, downloaded, snapshot) {
  try {
    const py = await loadSnapshot(loadPyodide, snapshot, downloaded, () => mark('wasm instantiated'));
    mark('python restored (shipped)');
    installSitePackages(py, new Uint8Array(await (await downloaded).get(wheel.sitePackages).arrayBuffer()));
    py.runPython('import random; random.seed()');  // not the build's random state
    mark('site-packages written');
    return py;
  } catch (e) {
    console.warn('the shipped Python snapshot failed; starting Python instead:', e);
    return null;
  }
}

// Python, then webtorch: from the shipped snapshot when the server offers one (see above).
// Else a first visit starts Python and keeps a memory snapshot of it, just started, in Cache
// Storage; a later visit restores that snapshot instead of starting Python (Pyodide's
// `_makeSnapshot`/`_loadSnapshot`).  That snapshot is taken before any package is loaded
// (loadPackage leaves JS references a snapshot cannot hold), so each visit then loads the wheels
// and imports webtorch.
async function startPython(loadPyodide, wheel, wheels, downloaded, snapshot) {
  const shipped = snapshot && await restoreShipped(loadPyodide, wheel, downloaded, snapshot);
  if (shipped) return [shipped, null];
  await downloaded;
  const key = `/webtorch-snapshot/${encodeURIComponent(PYODIDE_URL)}`;
  // Cache Storage exists only in a secure context (https, localhost)
  const cache = self.caches ? await caches.open('webtorch').catch(() => null) : null;
  const saved = cache && await cache.match(key).catch(() => null);
  let py = null;
  if (saved) {
    try {
      py = await loadPyodide({ indexURL: PYODIDE_URL, fullStdLib: false, _loadSnapshot: saved.arrayBuffer() });
      mark('python restored');
    } catch (e) {
      cache.delete(key);  // from another build of Pyodide: start afresh
    }
  }
  if (!py) {
    py = await loadPyodide({ indexURL: PYODIDE_URL, fullStdLib: false, _makeSnapshot: !!cache });
    mark('python started');
    if (cache) {
      try { await cache.put(key, new Response(py.makeMemorySnapshot())); } catch (e) { /* no room: start afresh next time */ }
      mark('snapshot saved');
    }
  }
  status('Loading webtorch…', STARTED);
  try {
    if (!wheel.url) throw new Error(wheel.error || wheel.detail);
    let error = null;
    await py.loadPackage(wheels, { messageCallback: () => {}, errorCallback: (m) => { error = m; } });
    if (error) return [py, error];
    mark('wheels loaded');
    status('Importing webtorch…', LOADED);
    await py.runPythonAsync(IMPORT_WEBTORCH);
    mark('webtorch imported');
  } catch (e) {
    return [py, String(e && e.message ? e.message : e).split('\n').filter(Boolean).slice(-1)[0]];
  }
  return [py, null];
}

async function fetchBytes(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}

async function boot(interrupt, flowBuffer) {
  interruptFlag = interrupt || null;
  flow = flowBuffer || null;
  mark('boot');
  status('Downloading Python and webtorch…', 0);
  const gpuPromise = probeGPU();
  import(/* webpackIgnore: true */ PYODIDE_URL + 'pyodide.asm.mjs').catch(() => {});  // parsed while the rest downloads
  const wheelInfo = fetch('/api/wheel').then((r) => (r.ok ? r.json() : { error: `/api/wheel: HTTP ${r.status}` }));
  const wheel = await wheelInfo;
  // the shipped kernels' list is asked for before the downloads below take the browser's six connections
  const shippedFetch = wheel.kernels ? fetch(wheel.kernels).then((r) => r.json()) : Promise.resolve(null);
  shippedFetch.catch(() => {});
  // not awaited: the kernels build while Python starts and runs go ahead
  let pythonReady;
  const readyPromise = new Promise((resolve) => { pythonReady = resolve; });
  const warming = gpuPromise.then((gpu) => (gpu.kind === 'webgpu' ? warmKernels(gpu, shippedFetch, readyPromise) : 0));
  const wheels = wheel.url ? [wheel.url, ...(wheel.vendor || [])] : [];
  const [{ loadPyodide }, { snapshot, blobs }] = await Promise.all([
    import(/* webpackIgnore: true */ PYODIDE_URL + 'pyodide.mjs'),
    download(['pyodide.asm.mjs', 'pyodide.asm.wasm', 'python_stdlib.zip', 'pyodide-lock.json'].map((f) => PYODIDE_URL + f)
      .concat(wheel.snapshot ? [wheel.snapshot, wheel.sitePackages] : wheels), wheel.snapshot),
  ]);
  const downloaded = blobs.then((fetched) => {
    mark('downloaded');
    status('Starting Python…', DOWNLOADED);
    return fetched;
  });
  let libError;
  [pyodide, libError] = await startPython(loadPyodide, wheel, wheels, downloaded, snapshot);
  pyodide.setStdout(stream('stdout'));
  pyodide.setStderr(stream('stderr'));
  if (interrupt) pyodide.setInterruptBuffer(interrupt);
  status('Connecting WebGPU…', LOADED);

  const gpu = await gpuPromise;
  mark('gpu ready');
  const { adapter, device, ...shown } = gpu;
  const hostInfo = { ...shown, info: shown.info || null };
  post({ type: 'device', device: hostInfo });
  // `webtorch_gpu_host`: what py/webtorch/backends/webgpu/drivers/browser.py uses.
  pyodide.registerJsModule('webtorch_gpu_host', {
    available: gpu.kind === 'webgpu',
    reason: gpu.reason,
    adapter: adapter || null,
    device: gpu.kind === 'webgpu' ? device : null,
    info_json: JSON.stringify(hostInfo.info),
    jspi: gpu.jspi,
    // Upload from a Python buffer without an extra copy: Python passes a memoryview, which
    // arrives as a borrowed PyProxy; getBuffer() views the wasm heap in place.
    writeBuffer: (queue, buffer, offset, data) => {
      const pb = data.getBuffer('u8');
      try { queue.writeBuffer(buffer, offset, pb.data); } finally { pb.release(); }
    },
    // One dispatch in one call from Python (descriptors built here, not converted per call):
    // bind `buffers` at 0..n-1 and the parameter window of `arena` at n.
    dispatch: (device, pass, pipeline, layout, arena, offset, size, x, y, z, ...buffers) => {
      const entries = buffers.map((buffer, binding) => ({ binding, resource: { buffer } }));
      entries.push({ binding: buffers.length, resource: { buffer: arena, offset, size } });
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, device.createBindGroup({ layout, entries }));
      pass.dispatchWorkgroups(x, y, z);
    },
    // ONE wait per read or synchronize: pop the validation error scope the driver keeps open
    // over its unwaited work (when `pop`) and wait for `staging` to map for reading (or,
    // with no staging buffer, for the queue to finish), together, as one promise: Python
    // makes one `run_sync` of it. Resolves to null, or to an error message (a validation
    // error first); a staging buffer mapped despite a validation error is unmapped.
    wait: async (device, pop, staging, size) => {
      const scope = pop ? device.popErrorScope() : null;
      const done = staging ? staging.mapAsync(GPUMapMode.READ, 0, size) : device.queue.onSubmittedWorkDone();
      const [s, d] = await Promise.allSettled([scope, done]);
      const why = (e) => String((e && e.message) || e);
      let err = null;
      if (s.status === 'rejected') err = 'WebGPU error: ' + why(s.reason);
      else if (s.value) err = 'WebGPU validation error: ' + s.value.message;
      if (d.status === 'rejected') return err || 'WebGPU error: ' + why(d.reason);
      if (err && staging) staging.unmap();
      return err;
    },
    // After `wait`: copy `size` mapped bytes of `staging` into the Python buffer `dest` (a
    // borrowed PyProxy of a bytearray: one copy, straight into the wasm heap) and unmap.
    readMapped: (staging, size, dest) => {
      const pb = dest.getBuffer('u8');
      try { pb.data.set(new Uint8Array(staging.getMappedRange(0, size))); } finally { pb.release(); staging.unmap(); }
    },
  });
  pyodide.registerJsModule('webtorch_playground_host', {
    post: (kind, json) => post({ type: kind, id: currentRun, data: JSON.parse(json) }),
  });

  importPlayground(pyodide);  // already imported in a shipped snapshot; its file is written again
  pyodide.runPython('from webtorch_playground import run_user_code as __wt_run');
  mark('playground imported');

  // The 8x8 digits data set, for the training example.
  try {
    pyodide.FS.mkdirTree('/data');
    pyodide.FS.writeFile('/data/digits.bin', await fetchBytes('/data/digits.bin'));
  } catch (e) {
    post({ type: 'stderr', id: null, text: `[playground] digits data unavailable: ${e}\n` });
  }

  const versions = { python: pyodide.runPython('import sys; sys.version.split()[0]'), pyodide: pyodide.version, webtorch: null };
  if (!libError) versions.webtorch = pyodide.runPython('import webtorch; getattr(webtorch, "__version__", "?")');
  enterWorkdir();
  postFiles();
  status(libError ? `Ready (webtorch not loaded: ${libError})` : 'Ready', 1);
  mark('ready');
  post({ type: 'ready', versions, libError, stages });
  pythonReady();
  warming.then((warmed) => {
    if (warmed && currentRun === null) status(`Ready (${warmed} kernels built in the background)`, 1);
    post({ type: 'warm', kernels: warmed });
  });
}

// ---- files: uploads into the working directory, and what is there for download ---------------
function enterWorkdir() {  // each run starts there, even if the last one changed directory
  pyodide.FS.mkdirTree(WORKDIR);
  pyodide.FS.chdir(WORKDIR);
}

function postFiles(uploaded = []) {
  const FS = pyodide.FS, files = [];
  const walk = (dir, prefix) => {
    for (const name of FS.readdir(dir).sort()) {
      if (name.startsWith('.') || files.length >= MAX_FILES) continue;  // ., .. and hidden files
      const path = `${dir}/${name}`, st = FS.stat(path);
      if (FS.isDir(st.mode)) walk(path, `${prefix}${name}/`);
      else if (FS.isFile(st.mode)) {
        files.push({ name: prefix + name, size: st.size,
                     data: st.size <= MAX_DOWNLOAD ? FS.readFile(path).buffer : null });
      }
    }
  };
  walk(WORKDIR, '');
  post({ type: 'files', files, uploaded }, files.map((f) => f.data).filter(Boolean));
}

function upload(files) {
  const uploaded = [];
  for (const f of files) {
    const name = f.name.replace(/[\\/]/g, '_');  // a file name, never a path
    if (name === '' || name === '.' || name === '..') continue;
    pyodide.FS.writeFile(`${WORKDIR}/${name}`, new Uint8Array(f.data));
    uploaded.push(name);
  }
  postFiles(uploaded);
}

// ---- run --------------------------------------------------------------------------------------
async function run(id, code, cudaAlias) {
  currentRun = id;
  compiling = 0;
  let ok = false;
  try {
    enterWorkdir();
    pyodide.globals.set('__wt_code', code);
    ok = await pyodide.runPythonAsync(`await __wt_run(__wt_code, cuda_alias=${cudaAlias ? 'True' : 'False'})`);
    ok = !!ok;
  } catch (e) {
    // Errors inside user code are printed by __wt_run; this is for failures of the runner.
    post({ type: 'stderr', id, text: String(e && e.message ? e.message : e) + '\n' });
  } finally {
    try { pyodide.globals.delete('__wt_code'); } catch (e) { /* ignore */ }
    for (const name of ['stdout', 'stderr']) {
      const rest = decoders[name].decode();
      if (rest) emit(name, rest);
    }
    flushPending();
  }
  try { postFiles(); } catch (e) { post({ type: 'stderr', id, text: `[playground] cannot list files: ${e}\n` }); }
  post({ type: 'done', id, ok });
  currentRun = null;
}

let queue = Promise.resolve();
self.onmessage = (ev) => {
  const m = ev.data;
  if (m.type === 'init') {
    queue = queue.then(() => boot(m.interrupt, m.flow)).catch((e) => {
      post({ type: 'fatal', error: String(e && e.stack ? e.stack : e) });
    });
  } else if (m.type === 'run') {
    queue = queue.then(() => run(m.id, m.code, m.cudaAlias));
  } else if (m.type === 'upload') {
    queue = queue.then(() => upload(m.files)).catch((e) => {
      post({ type: 'stderr', id: null, text: `[playground] upload failed: ${e}\n` });
    });
  }
};
