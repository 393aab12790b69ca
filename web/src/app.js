// The webtorch playground page: a CodeMirror editor, Python (Pyodide) in a Web Worker, output,
// a live plot, an autograd-graph view, files (upload into Python's working directory by button
// or drag-and-drop; download what the code wrote), examples, share links, and a small JS API:
//
//   window.webtorchPlayground = {
//     ready: Promise<{device, versions, stages}>  resolves once Python (and webtorch) are loaded;
//                                           stages: [[name, ms since navigation]] of the boot
//     warm: Promise<number>                   resolves once the background kernel warm-up is done
//                                           (to the number of kernels it built)
//     run(code?) -> Promise<{ok, stdout, stderr}>   same path as the Run button (default: the editor's code)
//     stop()                                  same as the Stop button
//     getCode(), setCode(code), shareUrl(), device, plotData(), graphData(),
//     files()                                 [{name, size}] in Python's working directory
//   }
import { EditorView, basicSetup } from 'codemirror';
import { python } from '@codemirror/lang-python';
import { Decoration, keymap } from '@codemirror/view';
import { Prec, StateEffect, StateField } from '@codemirror/state';
import { indentWithTab } from '@codemirror/commands';
import { renderGraph } from './graph.js';
import { LivePlot } from './plot.js';
import { codeFromHash, shareUrl } from './share.js';

const $ = (id) => document.getElementById(id);
const HARD_STOP_MS = 5000;  // generous: a loaded page may take seconds to drain output before the run reports done

const DEFAULT_CODE = `import torch

x = torch.randn(2, 3)
print(x)
print(x * 0.5 + 1.0)
`;

// ---- editor -----------------------------------------------------------------------------------
// The code (and the example it came from) is kept in local storage, so a reload brings it back.
const STORE_KEY = 'webtorch-playground';
function loadStored() {
  try { return JSON.parse(localStorage.getItem(STORE_KEY)) || {}; } catch (e) { return {}; }
}
const stored = loadStored();
let storeTimer = 0;
function store() {
  clearTimeout(storeTimer);
  storeTimer = setTimeout(() => {
    try { localStorage.setItem(STORE_KEY, JSON.stringify({ code: getCode(), example: currentExample })); } catch (e) { /* full or denied */ }
  }, 200);
}
let currentExample = stored.example || null;  // the example the code came from, while unedited
let examples = [];                             // [{name, title, code}] from /api/examples

// The failing line of the last run, marked in the editor.
const markError = StateEffect.define();
const errorLine = StateField.define({
  create: () => Decoration.none,
  update(deco, tr) {
    for (const e of tr.effects) {
      if (e.is(markError)) {
        if (e.value === null || e.value > tr.state.doc.lines) return Decoration.none;
        const line = tr.state.doc.line(e.value);
        return Decoration.set([Decoration.line({ class: 'cm-error-line', attributes: { title: 'the error was raised here' } }).range(line.from)]);
      }
    }
    return tr.docChanged ? Decoration.none : deco;
  },
  provide: (f) => EditorView.decorations.from(f),
});
function showErrorLine(line) {
  editor.dispatch({ effects: markError.of(line) });
  if (line !== null && line <= editor.state.doc.lines) {
    editor.dispatch({ effects: EditorView.scrollIntoView(editor.state.doc.line(line).from, { y: 'center' }) });
  }
}

const editor = new EditorView({
  doc: codeFromHash(location.hash) ?? stored.code ?? DEFAULT_CODE,
  extensions: [
    Prec.highest(keymap.of([
      { key: 'Mod-Enter', run: () => { runCode(getCode()); return true; } },
      { key: 'Shift-Enter', run: () => { runCode(getCode()); return true; } },
    ])),
    basicSetup,
    keymap.of([indentWithTab]),
    python(),
    EditorView.lineWrapping,
    errorLine,
    EditorView.updateListener.of((u) => { if (u.docChanged) codeChanged(); }),
    EditorView.theme({ '&': { height: '100%' }, '.cm-scroller': { overflow: 'auto' } }),
  ],
  parent: $('editor'),
});
const getCode = () => editor.state.doc.toString();
function setCode(code, example = null) {
  editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: code } });
  currentExample = example;
  codeChanged();
}
// The picker names the example only while the code is that example's, unedited.
function codeChanged() {
  const ex = examples.find((e) => e.name === currentExample);
  if (examples.length && (!ex || ex.code !== getCode())) currentExample = null;
  $('examples').value = currentExample || '';
  store();
}
const edited = () => !examples.some((e) => e.code === getCode()) && getCode().trim() !== '' && getCode() !== DEFAULT_CODE;

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
  let frag = document.createDocumentFragment();
  const add = (text, cls) => {
    outLen += text.length;
    const last = frag.lastChild || out.lastChild;
    if (last && last.className === cls && frag.lastChild) last.textContent += text;
    else { const s = document.createElement('span'); s.className = cls; s.textContent = text; frag.appendChild(s); }
  };
  for (const [text, cls] of outQueue) {
    // a carriage return (progress bars: tqdm) goes back to the start of the line
    const [first, ...rest] = text.replace(/\r\n/g, '\n').split('\r');
    add(first, cls);
    for (const part of rest) {
      out.appendChild(frag);
      frag = document.createDocumentFragment();
      eraseLine();
      add(part, cls);
    }
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
function eraseLine() {  // the output's last line, up to its last newline
  for (let n = out.lastChild; n; n = out.lastChild) {
    const t = n.textContent, i = t.lastIndexOf('\n');
    if (i >= 0) { n.textContent = t.slice(0, i + 1); return; }
    out.removeChild(n);
  }
}
function clearOutput() { outQueue = []; out.textContent = ''; outLen = 0; }

// A failed run: its traceback in the output shows the user's frames; webtorch's own frames are
// behind a toggle; the failing line of the editor's code is marked.
function showError({ line, hidden, full }) {
  showErrorLine(line);
  if (!hidden) return;
  flushOutput();
  const d = document.createElement('details');
  d.className = 'full-traceback';
  const s = document.createElement('summary');
  s.textContent = `${hidden} frame${hidden === 1 ? '' : 's'} inside webtorch hidden: show the full traceback`;
  const pre = document.createElement('span');
  pre.textContent = full;
  d.append(s, pre);
  out.appendChild(d);
}

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
// A panel with nothing to show folds to its title bar (class `empty`).
const plot = new LivePlot($('plot'));
function plotAdd(series, x, y) { $('plot-panel').classList.remove('empty'); plot.add(series, x, y); }
function plotClear() { $('plot-panel').classList.add('empty'); plot.clear(); }
let lastGraph = null;
function showGraph(g) {
  lastGraph = g;
  $('graph-panel').classList.remove('empty');
  renderGraph($('graph'), g);
  $('graph-title').textContent = g.title ? `: ${g.title}` : '';
}
function clearGraph() { lastGraph = null; $('graph-panel').classList.add('empty'); $('graph').textContent = ''; $('graph-title').textContent = ''; }
clearGraph();
const graphSvg = () => $('graph').querySelector('svg');
$('zoom-in').addEventListener('click', () => graphSvg()?.zoomBy(1 / 1.4));
$('zoom-out').addEventListener('click', () => graphSvg()?.zoomBy(1.4));
$('zoom-fit').addEventListener('click', () => graphSvg()?.fit());

// ---- resizable split and panels ----------------------------------------------------------------
function dragGutter(gutter, onMove) {
  gutter.addEventListener('pointerdown', (e) => {
    e.preventDefault();
    gutter.setPointerCapture(e.pointerId);
    const move = (m) => onMove(m);
    gutter.addEventListener('pointermove', move);
    gutter.addEventListener('pointerup', () => gutter.removeEventListener('pointermove', move), { once: true });
  });
}
dragGutter($('split'), (e) => {
  const box = document.querySelector('main').getBoundingClientRect();
  const w = Math.min(Math.max(e.clientX - box.left, 200), box.width - 200);
  document.documentElement.style.setProperty('--editor-width', `${w}px`);
});
for (const g of document.querySelectorAll('.gutter.row')) {
  dragGutter(g, (e) => {  // the panel above the gutter takes the height down to the pointer
    const above = g.previousElementSibling;
    above.style.flex = `0 0 ${Math.max(e.clientY - above.getBoundingClientRect().top, 28)}px`;
  });
}

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
let worker = null, workerReady = null, current = null, runSeq = 0, booted = false, queued = 0;
let readyResolve, readyReject, warmResolve;
const ready = new Promise((res, rej) => { readyResolve = res; readyReject = rej; });
const warm = new Promise((res) => { warmResolve = res; });  // the kernels are built in the background

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
        // the worker's boot stages, in ms since this page's navigation
        const stages = (m.stages || []).map(([name, t]) => [name, Math.round(t - performance.timeOrigin)]);
        const info = { device, versions: m.versions, libError: m.libError || null, stages };
        $('versions').textContent = `Python ${m.versions.python} · Pyodide ${m.versions.pyodide}` + (m.versions.webtorch ? ` · webtorch ${m.versions.webtorch}` : '');
        booted = true;
        resolveBoot(info); readyResolve(info); setRunning(!!current); break;
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
      case 'plot': plotAdd(m.data.series, m.data.x, m.data.y); break;
      case 'plot_clear': plotClear(); break;
      case 'graph': showGraph(m.data); break;
      case 'error': if (current && m.id === current.id) showError(m.data); break;
      case 'warm': warmResolve(m.kernels); break;
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

// Run is disabled until Python is ready; a run asked for before (Ctrl+Enter, the JS API) waits,
// and the button says so.
function setRunning(on) {
  $('run').disabled = !booted;
  $('run').textContent = booted ? '▶ Run' : queued ? 'Queued…' : 'Loading…';
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
  queued++;
  setRunning(!!current);
  const p = chain.then(() => runNow(code));
  chain = p.catch(() => {});
  return p;
}

async function runNow(code) {
  try { await workerReady; } finally { queued--; }
  clearOutput(); plotClear(); clearGraph(); showErrorLine(null);
  if (interrupt) Atomics.store(interrupt, 0, 0);
  return new Promise((resolve) => {
    current = { id: ++runSeq, stdout: '', stderr: '', resolve, t0: performance.now(), hardTimer: null };
    setRunning(true);
    setStatus('Running…', 1);
    worker.postMessage({ type: 'run', id: current.id, code, cudaAlias: $('cuda-alias').checked });
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
  booted = false;
  startWorker();
}

// ---- examples and share links ----------------------------------------------------------------------
async function loadExamples() {
  const sel = $('examples');
  try {
    const r = await fetch('/api/examples');
    if (!r.ok) throw new Error('HTTP ' + r.status);
    examples = await r.json();
    for (const ex of examples) {
      const o = document.createElement('option');
      o.value = ex.name; o.textContent = ex.title;
      sel.appendChild(o);
    }
    window.webtorchPlayground.examples = examples;
    if (codeFromHash(location.hash) === null && stored.code === undefined && examples.length) setCode(examples[0].code, examples[0].name);
    else codeChanged();
  } catch (e) {
    const o = document.createElement('option'); o.textContent = 'examples unavailable'; o.disabled = true; sel.appendChild(o);
  }
}
// Picking an example asks before it replaces code the user wrote or edited.
$('examples').addEventListener('change', (e) => {
  const ex = examples.find((x) => x.name === e.target.value);
  if (!ex) return;
  if (ex.code !== getCode() && edited() && !confirm(`Replace your code with the example "${ex.title}"? Your edits will be lost.`)) {
    e.target.value = currentExample || '';
    return;
  }
  setCode(ex.code, ex.name);
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
  warm,
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
