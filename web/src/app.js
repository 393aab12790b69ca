// The webtorch playground page: a CodeMirror editor, Python (Pyodide) in a Web Worker, output,
// a live plot, an autograd-graph view, files (upload into Python's working directory by button
// or drag-and-drop; download what the code wrote), examples, share links, and a small JS API:
//
//   window.webtorchPlayground = {
//     ready: Promise<{device, versions}>,   resolves once Python (and webtorch) are loaded
//     run(code?) -> Promise<{ok, stdout, stderr}>   same path as the Run button (default: the editor's code)
//     stop()                                  same as the Stop button
//     getCode(), setCode(code), shareUrl(), device, plotData(), graphData(),
//     files()                                 [{name, size}] in Python's working directory
//   }
import { EditorView, basicSetup } from 'codemirror';
import { python } from '@codemirror/lang-python';
import { keymap } from '@codemirror/view';
import { Prec } from '@codemirror/state';
import { indentWithTab } from '@codemirror/commands';
import { renderGraph } from './graph.js';
import { LivePlot } from './plot.js';
import { codeFromHash, shareUrl } from './share.js';

const $ = (id) => document.getElementById(id);
const HARD_STOP_MS = 5000;  // generous: a loaded page may take seconds to drain output before the run reports done

const DEFAULT_CODE = `import webtorch as torch

x = torch.randn(2, 3)
print(x)
print(x * 0.5 + 1.0)
`;

// ---- editor -----------------------------------------------------------------------------------
const editor = new EditorView({
  doc: codeFromHash(location.hash) ?? DEFAULT_CODE,
  extensions: [
    Prec.highest(keymap.of([
      { key: 'Mod-Enter', run: () => { runCode(getCode()); return true; } },
      { key: 'Shift-Enter', run: () => { runCode(getCode()); return true; } },
    ])),
    basicSetup,
    keymap.of([indentWithTab]),
    python(),
    EditorView.theme({ '&': { height: '100%' }, '.cm-scroller': { overflow: 'auto' } }),
  ],
  parent: $('editor'),
});
const getCode = () => editor.state.doc.toString();
function setCode(code) {
  editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: code } });
}

// ---- output -----------------------------------------------------------------------------------
const out = $('output');
const MAX_OUTPUT = 256 * 1024;      // characters kept in the output pane (the tail)
const MAX_RESULT = 4 * 1024 * 1024; // characters of stdout/stderr kept for run()'s result
let outQueue = [], outPending = false, outLen = 0;
function appendOutput(text, cls) {
  outQueue.push([text, cls]);
  if (outPending) return;
  outPending = true;
  setTimeout(flushOutput, 30);
}
function flushOutput() {
  outPending = false;
  if (!outQueue.length) return;
  const stick = out.scrollTop + out.clientHeight >= out.scrollHeight - 4;
  const frag = document.createDocumentFragment();
  for (const [text, cls] of outQueue) {
    outLen += text.length;
    const last = frag.lastChild || out.lastChild;
    if (last && last.className === cls && frag.lastChild) last.textContent += text;
    else { const s = document.createElement('span'); s.className = cls; s.textContent = text; frag.appendChild(s); }
  }
  outQueue = [];
  out.appendChild(frag);
  // Keep the page responsive under runaway printing: keep only the tail of the output.
  if (outLen > MAX_OUTPUT) {
    let kept = 0;
    for (let n = out.lastChild; n; n = n.previousSibling) {
      kept += n.textContent.length;
      if (kept > MAX_OUTPUT / 2) {
        while (n.previousSibling) out.removeChild(n.previousSibling);
        n.textContent = '[… earlier output dropped …]\n' + n.textContent.slice(-(MAX_OUTPUT / 4));
        break;
      }
    }
    outLen = out.textContent.length;
  }
  if (stick) out.scrollTop = out.scrollHeight;
}
function clearOutput() { outQueue = []; out.textContent = ''; outLen = 0; }

// ---- status bar -----------------------------------------------------------------------------------
function setStatus(text, progress) {
  $('status-text').textContent = text;
  const bar = $('progress');
  if (progress === undefined || progress === null) return;
  bar.value = progress;
  bar.hidden = progress >= 1;
}
let device = null;
function showDevice(d) {
  device = d;
  const badge = $('device');
  badge.textContent = d.kind === 'webgpu' ? d.label : `CPU (${d.reason})`;
  badge.dataset.kind = d.kind;
  badge.title = d.info ? JSON.stringify({ vendor: d.info.vendor, architecture: d.info.architecture, description: d.info.description, features: d.info.deviceFeatures }, null, 1) : d.reason;
}

// ---- plot and graph --------------------------------------------------------------------------------
const plot = new LivePlot($('plot'));
let lastGraph = null;
function showGraph(g) { lastGraph = g; renderGraph($('graph'), g); $('graph-title').textContent = g.title ? `: ${g.title}` : ''; }
function clearGraph() { lastGraph = null; $('graph').textContent = 'show_graph(t) draws the autograd graph of t here.'; $('graph-title').textContent = ''; }
clearGraph();

// ---- files ----------------------------------------------------------------------------------------
let fileList = [], fileUrls = [];
function formatSize(n) {
  return n < 1024 ? `${n} B` : n < 1 << 20 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / (1 << 20)).toFixed(1)} MiB`;
}
function showFiles(files, uploaded) {
  for (const u of fileUrls) URL.revokeObjectURL(u);
  fileUrls = [];
  fileList = files.map(({ name, size }) => ({ name, size }));
  const ul = $('files');
  ul.textContent = '';
  for (const f of files) {
    const li = document.createElement('li');
    if (f.data) {
      const a = document.createElement('a');
      a.href = URL.createObjectURL(new Blob([f.data]));
      a.download = f.name.split('/').pop();
      a.textContent = f.name;
      fileUrls.push(a.href);
      li.appendChild(a);
    } else {
      li.textContent = f.name;
      li.title = 'too large to download from here';
    }
    const size = document.createElement('span');
    size.className = 'size';
    size.textContent = formatSize(f.size);
    li.appendChild(size);
    ul.appendChild(li);
  }
  if (uploaded.length) setStatus(`Uploaded ${uploaded.join(', ')}`, 1);
}
async function uploadFiles(list) {
  const files = await Promise.all([...list].map(async (f) => ({ name: f.name, data: await f.arrayBuffer() })));
  if (!files.length) return;
  await workerReady;
  worker.postMessage({ type: 'upload', files }, files.map((f) => f.data));
}
$('upload').addEventListener('change', (e) => { uploadFiles(e.target.files); e.target.value = ''; });
const hasFiles = (e) => e.dataTransfer && [...e.dataTransfer.types].includes('Files');
document.addEventListener('dragover', (e) => {
  if (!hasFiles(e)) return;
  e.preventDefault();
  document.body.classList.add('dragging');
});
document.addEventListener('dragleave', (e) => { if (!e.relatedTarget) document.body.classList.remove('dragging'); });
document.addEventListener('drop', (e) => {
  document.body.classList.remove('dragging');
  if (!hasFiles(e)) return;
  e.preventDefault();  // a file dropped on the editor goes to Python, not into the text
  e.stopPropagation();
  uploadFiles(e.dataTransfer.files);
}, true);

// ---- the worker ----------------------------------------------------------------------------------
const isolated = self.crossOriginIsolated && typeof SharedArrayBuffer === 'function';
const interrupt = isolated ? new Int32Array(new SharedArrayBuffer(4)) : null;  // SIGINT flag for Stop
const flow = isolated ? new Int32Array(new SharedArrayBuffer(8)) : null;       // [posted, consumed] output messages
let worker = null, workerReady = null, current = null, runSeq = 0;
let readyResolve, readyReject;
const ready = new Promise((res, rej) => { readyResolve = res; readyReject = rej; });

function startWorker() {
  let resolveBoot, rejectBoot;
  workerReady = new Promise((res, rej) => { resolveBoot = res; rejectBoot = rej; });
  workerReady.catch(() => {});
  const w = new Worker('/dist/worker.js', { type: 'module', name: 'webtorch-python' });
  worker = w;
  w.onmessage = (ev) => {
    if (w !== worker) return;
    const m = ev.data;
    switch (m.type) {
      case 'status': setStatus(m.text, m.progress); break;
      case 'device': showDevice(m.device); break;
      case 'ready': {
        const info = { device, versions: m.versions, libError: m.libError || null };
        $('versions').textContent = `Python ${m.versions.python} · Pyodide ${m.versions.pyodide}` + (m.versions.webtorch ? ` · webtorch ${m.versions.webtorch}` : '');
        resolveBoot(info); readyResolve(info); setRunning(false); break;
      }
      case 'fatal': setStatus('Python failed to start: ' + m.error.split('\n')[0], 1); appendOutput(m.error + '\n', 'err'); rejectBoot(new Error(m.error)); readyReject(new Error(m.error)); break;
      case 'stdout': case 'stderr': {
        if (flow && m.counted) { Atomics.add(flow, 1, 1); Atomics.notify(flow, 1); }
        const cls = m.type === 'stdout' ? 'out' : 'err';
        appendOutput(m.text, cls);
        if (current && m.id === current.id) {
          current[m.type] += m.text;
          if (current[m.type].length > MAX_RESULT) current[m.type] = '[… earlier output dropped …]\n' + current[m.type].slice(-MAX_RESULT / 2);
        }
        break;
      }
      case 'plot': plot.add(m.data.series, m.data.x, m.data.y); break;
      case 'plot_clear': plot.clear(); break;
      case 'graph': showGraph(m.data); break;
      case 'files': showFiles(m.files, m.uploaded); break;
      case 'done': if (current && m.id === current.id) finishRun(m.ok); break;
      default: break;
    }
  };
  w.onerror = (e) => { appendOutput(`[worker error] ${e.message}\n`, 'err'); };
  if (interrupt) Atomics.store(interrupt, 0, 0); // a killed worker may have left a SIGINT there
  if (flow) { Atomics.store(flow, 0, 0); Atomics.store(flow, 1, 0); }
  w.postMessage({ type: 'init', interrupt, flow });
}

function setRunning(on) {
  $('run').disabled = false;
  $('stop').disabled = !on;
  document.body.classList.toggle('running', on);
}

function finishRun(ok, extra) {
  const r = current;
  if (!r) return;
  current = null;
  clearTimeout(r.hardTimer);
  flushOutput();
  setRunning(false);
  const secs = ((performance.now() - r.t0) / 1000).toFixed(2);
  setStatus(ok ? `Done in ${secs} s` : (extra || (r.stopping ? `Stopped after ${secs} s` : `Failed after ${secs} s`)), 1);
  r.resolve({ ok: !!ok, stdout: r.stdout, stderr: r.stderr });
}

let chain = Promise.resolve();
function runCode(code) {
  if (typeof code !== 'string') code = getCode();
  const p = chain.then(() => runNow(code));
  chain = p.catch(() => {});
  return p;
}

async function runNow(code) {
  await workerReady;
  clearOutput(); plot.clear(); clearGraph();
  if (interrupt) Atomics.store(interrupt, 0, 0);
  return new Promise((resolve) => {
    current = { id: ++runSeq, stdout: '', stderr: '', resolve, t0: performance.now(), hardTimer: null };
    setRunning(true);
    setStatus('Running…', 1);
    worker.postMessage({ type: 'run', id: current.id, code });
  });
}

function stop() {
  const r = current;
  if (!r) return;
  r.stopping = true;
  setStatus('Stopping…', 1);
  if (interrupt) {
    Atomics.store(interrupt, 0, 2); // SIGINT: KeyboardInterrupt at the next bytecode check
    if (!r.hardTimer) r.hardTimer = setTimeout(() => { if (current === r) hardStop(); }, HARD_STOP_MS);
  } else {
    hardStop();
  }
}

// Python did not answer the interrupt (stuck in a JS call, or no SharedArrayBuffer):
// terminate the worker and boot a fresh one.
function hardStop() {
  const r = current;
  worker.terminate();
  const msg = '\n[stopped: Python did not respond to the interrupt, so it was restarted]\n';
  appendOutput(msg, 'err');
  if (r) r.stderr += msg;
  finishRun(false, 'Stopped (Python restarted)');
  setStatus('Restarting Python…', 0);
  startWorker();
}

// ---- examples and share links ----------------------------------------------------------------------
async function loadExamples() {
  const sel = $('examples');
  try {
    const r = await fetch('/api/examples');
    if (!r.ok) throw new Error('HTTP ' + r.status);
    const list = await r.json();
    for (const ex of list) {
      const o = document.createElement('option');
      o.value = ex.name; o.textContent = ex.title; o.dataset.code = ex.code;
      sel.appendChild(o);
    }
    window.webtorchPlayground.examples = list;
    if (!codeFromHash(location.hash) && list.length) { sel.value = list[0].name; setCode(list[0].code); }
  } catch (e) {
    const o = document.createElement('option'); o.textContent = 'examples unavailable'; o.disabled = true; sel.appendChild(o);
  }
}
$('examples').addEventListener('change', (e) => {
  const o = e.target.selectedOptions[0];
  if (o && o.dataset.code !== undefined) setCode(o.dataset.code);
});

function makeShareUrl() {
  const url = shareUrl(getCode(), location.href);
  history.replaceState(null, '', url);
  return url;
}
$('share').addEventListener('click', async () => {
  const url = makeShareUrl();
  try { await navigator.clipboard.writeText(url); setStatus('Link copied to the clipboard', 1); } catch (e) { setStatus('Link is in the address bar', 1); }
});
window.addEventListener('hashchange', () => { const c = codeFromHash(location.hash); if (c !== null && c !== getCode()) setCode(c); });

$('run').addEventListener('click', () => runCode(getCode()));
$('stop').addEventListener('click', () => stop());
$('clear').addEventListener('click', () => clearOutput());

window.webtorchPlayground = {
  ready,
  run: (code) => runCode(code),
  stop,
  getCode,
  setCode,
  shareUrl: makeShareUrl,
  get device() { return device; },
  get running() { return !!current; },
  plotData: () => plot.points(),
  graphData: () => lastGraph,
  files: () => fileList,
  examples: [],
};

setRunning(false);
$('stop').disabled = true;
startWorker();
loadExamples();
