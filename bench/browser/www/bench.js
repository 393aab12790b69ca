// Peer libraries for bench/browser/run.py: one library per page load (?lib=tfjs|torch).
// Adapted from the shared anchors harness (bench-anchors/www/bench.js). Libraries load as their
// published UMD builds from the project's node_modules (served at /node_modules/), no bundler.
// Every row's timing is JS performance.now() around one iteration that ends in a readback.
// The page is served cross-origin isolated, so performance.now() has 5 us resolution.
const params = new URLSearchParams(location.search);
const LIB = params.get('lib') || 'tfjs';
const QUICK = params.get('quick') === '1';
const out = { lib: LIB, rows: [], notes: [], errors: [] };
const show = () => { document.getElementById('out').textContent = JSON.stringify(out, null, 1); };
const now = () => performance.now();
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const loadScript = (src) => new Promise((res, rej) => { const s = document.createElement('script'); s.src = src; s.onload = res; s.onerror = () => rej(new Error('failed to load ' + src)); document.head.appendChild(s); });
function row(bench, variant, msList, extra = {}) {
  const r = { bench, variant, ms: +median(msList).toFixed(3), n: msList.length, min: +Math.min(...msList).toFixed(3), ...extra };
  out.rows.push(r); show(); return r;
}
async function timeIt(fn, warm, reps) {
  for (let i = 0; i < warm; i++) await fn();
  const ts = [];
  for (let i = 0; i < reps; i++) { const t0 = now(); await fn(); ts.push(now() - t0); }
  return ts;
}
// The same LCG as run.py's webtorch code (identical inputs and initial weights everywhere).
function rand(n, seed) { let s = seed >>> 0; const a = new Float32Array(n); for (let i = 0; i < n; i++) { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; a[i] = s / 4294967296 - 0.5; } return a; }
const SIZES = QUICK ? [256] : [256, 512, 1024];
const repsFor = (n) => (QUICK ? 3 : n >= 1024 ? 5 : n >= 512 ? 7 : 9);
const CHAIN = 200;
const B = 64, DIN = 784, DH = 128, DOUT = 10, LR = 0.05;
const MLP_STEPS = QUICK ? 3 : 15;
function mlpData() {
  const x = rand(B * DIN, 7);
  const y = new Float32Array(B * DOUT); for (let i = 0; i < B; i++) y[i * DOUT + (i * 7) % DOUT] = 1;
  const w1 = rand(DIN * DH, 11).map(v => v * 0.1), w2 = rand(DH * DOUT, 13).map(v => v * 0.2);
  return { x, y, w1, w2 };
}
async function adapterInfo() {
  const ad = await navigator.gpu.requestAdapter();
  const i = ad.info || {};
  return { vendor: i.vendor, architecture: i.architecture, device: i.device, description: i.description, isFallbackAdapter: i.isFallbackAdapter };
}
const lossRow = (losses) => ({ loss_first: +losses[0].toFixed(4), loss_last: +losses[losses.length - 1].toFixed(4) });

// ---------------------------------------------------------------- TensorFlow.js, WebGPU backend
async function runTfjs() {
  await loadScript('/node_modules/@tensorflow/tfjs/dist/tf.min.js');
  await loadScript('/node_modules/@tensorflow/tfjs-backend-webgpu/dist/tf-backend-webgpu.min.js');
  const tf = window.tf;
  const ok = await tf.setBackend('webgpu'); await tf.ready();
  out.libVersion = `tfjs ${tf.version.tfjs} (backend ${tf.getBackend()}${ok ? '' : ', setBackend failed'})`;
  const one = async (t) => { const s = t.reshape([-1]).slice([0], [1]); const v = await s.data(); s.dispose(); return v; };
  for (const N of SIZES) {
    const a = tf.tensor2d(rand(N * N, 1), [N, N]), b = tf.tensor2d(rand(N * N, 2), [N, N]);
    const ts = await timeIt(async () => { const c = tf.matMul(a, b); await one(c); c.dispose(); }, 2, repsFor(N));
    row('matmul', `N=${N}`, ts, { gflops: +(2 * N * N * N / (median(ts) * 1e6)).toFixed(3) });
    a.dispose(); b.dispose();
  }
  { // per-op latency: 200 chained small adds, one readback
    const x0 = tf.ones([16]), one1 = tf.ones([16]);
    const ts = await timeIt(async () => {
      let x = x0; const made = [];
      for (let i = 0; i < CHAIN; i++) { x = tf.add(x, one1); made.push(x); }
      const v = await x.data(); made.forEach(t => t.dispose());
      if (v[0] !== CHAIN + 1) throw new Error('chain wrong ' + v[0]);
    }, 2, 7);
    row('per-op', `${CHAIN} chained add(16) + 1 readback`, ts, { us_per_op: +(median(ts) * 1000 / CHAIN).toFixed(1) });
    x0.dispose(); one1.dispose();
  }
  { // MLP training step, softmax cross-entropy, SGD
    const d = mlpData();
    const W1 = tf.variable(tf.tensor2d(d.w1, [DIN, DH])), b1 = tf.variable(tf.zeros([DH]));
    const W2 = tf.variable(tf.tensor2d(d.w2, [DH, DOUT])), b2 = tf.variable(tf.zeros([DOUT]));
    const x = tf.tensor2d(d.x, [B, DIN]), y = tf.tensor2d(d.y, [B, DOUT]);
    const opt = tf.train.sgd(LR);
    const f = () => tf.losses.softmaxCrossEntropy(y, tf.relu(x.matMul(W1).add(b1)).matMul(W2).add(b2));
    const losses = [];
    const ts = await timeIt(async () => { const l = opt.minimize(f, true, [W1, b1, W2, b2]); losses.push((await l.data())[0]); l.dispose(); }, 3, MLP_STEPS);
    row('mlp', '784-128-10 B=64 softmax CE, SGD (optimizer.minimize, loss readback)', ts, lossRow(losses));
    [W1, b1, W2, b2, x, y].forEach(t => t.dispose()); opt.dispose();
  }
}

// ---------------------------------------------------------------- webgpu-torch
async function runTorch() {
  await loadScript('/node_modules/webgpu-torch/torch.js');
  const torch = window.torch;
  const ok = await torch.initWebGPUAsync();
  out.libVersion = `webgpu-torch 0.3.5 (torch.js UMD${ok ? '' : ', initWebGPU failed'})`;
  // The constructor takes nested JS arrays only: flatten + withShape.
  const fromF32 = (f, shape) => {
    const t = torch.tensor(Array.from(f));
    const strides = shape.map((_, i) => shape.slice(i + 1).reduce((p, q) => p * q, 1));
    return shape.length === 1 ? t : t.withShape(shape, strides);
  };
  const dev = torch.ones([1]).device;
  const gpu = dev.gpuDevice;
  gpu.addEventListener('uncapturederror', e => out.errors.push(String(e.error.message)));
  // 1-element readback: no slicing in the library, so copy 4 bytes out of the tensor's buffer.
  const one = async (t) => {
    const buf = dev.getBufferForKernel(t.storage, t.dtype);
    const rb = gpu.createBuffer({ size: 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const e = gpu.createCommandEncoder(); e.copyBufferToBuffer(buf, 0, rb, 0, 4); gpu.queue.submit([e.finish()]);
    await rb.mapAsync(GPUMapMode.READ); const v = new Float32Array(rb.getMappedRange().slice(0)); rb.unmap(); rb.destroy(); return v;
  };
  const free = (t) => { try { t.storage.destroy(); } catch (e) { } };
  for (const N of SIZES) {
    const a = fromF32(rand(N * N, 1), [N, N]), b = fromF32(rand(N * N, 2), [N, N]);
    const ts = await timeIt(async () => { const c = torch.mm(a, b); await one(c); free(c); }, 2, repsFor(N));
    row('matmul', `N=${N}`, ts, { gflops: +(2 * N * N * N / (median(ts) * 1e6)).toFixed(3) });
    free(a); free(b);
  }
  { // per-op latency
    const x0 = torch.ones([16]), one1 = torch.ones([16]);
    const ts = await timeIt(async () => {
      let x = x0; const made = [];
      for (let i = 0; i < CHAIN; i++) { x = x.add(one1); made.push(x); }
      const v = await x.toArrayAsync(); made.forEach(free);
      if (v[0] !== CHAIN + 1) throw new Error('chain wrong ' + v[0]);
    }, 2, 7);
    row('per-op', `${CHAIN} chained add(16) + 1 readback`, ts, { us_per_op: +(median(ts) * 1000 / CHAIN).toFixed(1) });
  }
  await torchMlp(torch, fromF32, dev, one);
}

// webgpu-torch 0.3.5 has no differentiable mm/transpose, no broadcasting, no reductions with a
// backward, no nn.Linear or cross_entropy: the step is composed from what works (as in the anchors).
async function torchMlp(torch, fromF32, dev, one) {
  const tKernel = dev.createKernel({
    name: 'userTranspose', config: [{ name: 'dtype' }],
    parameters: [{ name: 'rows', shaderType: 'u32' }, { name: 'cols', shaderType: 'u32' }],
    inputs: [{ name: 'inp', shaderType: 'array<f32>' }],
    outputs: [{ name: 'outp', shaderType: 'array<f32>', size: 'rows * cols' }],
    workgroupSize: [16, 16, 1], workgroupCount: ['cols/16', 'rows/16', 1],
    shader: `
    if (global_id.x >= parameters.cols || global_id.y >= parameters.rows) { return; }
    outp[global_id.x * parameters.rows + global_id.y] = inp[global_id.y * parameters.cols + global_id.x];`,
  }, ['float32']);
  const T = (t) => {
    const [r, c] = t.shape;
    const [ob] = tKernel.run([dev.getBufferForKernel(t.storage, t.dtype)], { rows: r, cols: c });
    return new torch.Tensor({ data: dev.getStorageFromKernel(ob), dtype: 'float32', shape: [c, r], strides: [r, 1], device: dev });
  };
  const mmAG = (a, b) => {
    const o = torch.mm(a.detach(), b.detach());
    if (!a.requiresGrad && !b.requiresGrad) return o;
    const ctx = new torch.GradientContext([a, b]);
    ctx.saveForBackward(a.detach(), b.detach());
    o.setGradientFunction(ctx, (c, g) => {
      const [A, Bm] = c.savedTensors;
      return [c.needsInputGradient[0] ? torch.mm(g, T(Bm)) : null, c.needsInputGradient[1] ? torch.mm(T(A), g) : null];
    });
    return o;
  };
  const d = mlpData();
  const x = fromF32(d.x, [B, DIN]);
  const onesB = torch.ones([B, 1]), ones10 = torch.ones([DOUT, 1]), ones1x10 = torch.ones([1, DOUT]);
  const yNegOverB = fromF32(d.y.map(v => -v / B), [B, DOUT]);
  const onesRowB = torch.ones([1, B]), gOne = torch.ones([1, 1]);
  const msum = (t) => mmAG(mmAG(onesRowB, t), ones10);
  const lrs = {}; const lrT = (shape) => { const k = shape.join('x'); return lrs[k] || (lrs[k] = fromF32(new Float32Array(shape.reduce((p, q) => p * q)).fill(LR), shape)); };
  let P = { W1: fromF32(d.w1, [DIN, DH]), b1: fromF32(new Float32Array(DH), [1, DH]), W2: fromF32(d.w2, [DH, DOUT]), b2: fromF32(new Float32Array(DOUT), [1, DOUT]) };
  for (const k in P) P[k].requiresGrad = true;
  const losses = [];
  const step = async () => {
    const h = mmAG(x, P.W1).add(mmAG(onesB, P.b1));
    const z = mmAG(h.relu(), P.W2).add(mmAG(onesB, P.b2));
    const e = z.exp();
    const p = e.div(mmAG(mmAG(e, ones10), ones1x10));   // softmax without max-subtraction
    const L = msum(p.log().mul(yNegOverB));
    L.backward(gOne);
    const Pn = {};
    for (const k in P) { const g = P[k].grad; Pn[k] = P[k].detach().sub(g.mul(lrT(P[k].shape))); Pn[k].requiresGrad = true; }
    P = Pn;
    losses.push((await one(L))[0]);
  };
  try {
    const ts = await timeIt(step, 3, MLP_STEPS);
    row('mlp', '784-128-10 B=64 softmax CE composed from matmuls, user mm-grad + manual SGD (loss readback)', ts, lossRow(losses));
  } catch (e) { out.errors.push(`MLP: ${e.message}`); show(); }
}

async function main() {
  out.userAgent = navigator.userAgent;
  out.crossOriginIsolated = self.crossOriginIsolated;
  if (!navigator.gpu) throw new Error('navigator.gpu missing');
  out.adapter = await adapterInfo();
  if (LIB === 'tfjs') await runTfjs();
  else if (LIB === 'torch') await runTorch();
  else throw new Error('unknown lib ' + LIB);
}
main().catch(e => { out.errors.push(String(e && (e.stack || e.message) || e)); })
  .finally(() => { out.done = true; window.__result = out; show(); });
