// A live line plot on a <canvas>: named series of (x, y) points, redrawn at most once a frame.
const COLORS = ['#e8590c', '#1c7ed6', '#2f9e44', '#ae3ec9', '#f08c00', '#0c8599', '#e03131'];

export class LivePlot {
  constructor(canvas) {
    this.canvas = canvas;
    this.series = new Map();
    this.pending = false;
    new ResizeObserver(() => this.draw()).observe(canvas);
  }

  clear() { this.series.clear(); this.schedule(); }

  add(name, x, y) {
    if (!this.series.has(name)) this.series.set(name, []);
    this.series.get(name).push([x, y]);
    this.schedule();
  }

  points() { return Object.fromEntries([...this.series].map(([k, v]) => [k, v.slice()])); }

  schedule() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => { this.pending = false; this.draw(); });
  }

  draw() {
    const c = this.canvas, dpr = window.devicePixelRatio || 1;
    const W = Math.max(1, c.clientWidth), H = Math.max(1, c.clientHeight);
    if (c.width !== Math.round(W * dpr) || c.height !== Math.round(H * dpr)) { c.width = Math.round(W * dpr); c.height = Math.round(H * dpr); }
    const ctx = c.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    const style = getComputedStyle(c);
    const fg = style.getPropertyValue('--plot-fg').trim() || '#444', grid = style.getPropertyValue('--plot-grid').trim() || '#ddd';
    ctx.font = '11px system-ui, sans-serif';
    const all = [...this.series.values()].flat().filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
    if (!all.length) {
      ctx.fillStyle = fg; ctx.textAlign = 'center';
      ctx.fillText('plot(value) or plot_point(series, x, y) draws here', W / 2, H / 2);
      return;
    }
    let [x0, x1] = [Math.min(...all.map((p) => p[0])), Math.max(...all.map((p) => p[0]))];
    let [y0, y1] = [Math.min(...all.map((p) => p[1])), Math.max(...all.map((p) => p[1]))];
    if (x0 === x1) { x0 -= 1; x1 += 1; }
    if (y0 === y1) { y0 -= Math.abs(y0) * 0.1 || 1; y1 += Math.abs(y1) * 0.1 || 1; }
    const L = 52, R = 12, T = 12, B = 24;
    const sx = (x) => L + ((x - x0) / (x1 - x0)) * (W - L - R);
    const sy = (y) => H - B - ((y - y0) / (y1 - y0)) * (H - T - B);
    ctx.strokeStyle = grid; ctx.fillStyle = fg; ctx.lineWidth = 1;
    ctx.textAlign = 'right'; ctx.textBaseline = 'middle';
    for (const v of niceTicks(y0, y1, Math.max(2, Math.floor((H - T - B) / 40)))) {
      const y = sy(v);
      ctx.beginPath(); ctx.moveTo(L, y); ctx.lineTo(W - R, y); ctx.stroke();
      ctx.fillText(fmt(v), L - 4, y);
    }
    ctx.textAlign = 'center'; ctx.textBaseline = 'top';
    for (const v of niceTicks(x0, x1, Math.max(2, Math.floor((W - L - R) / 80)))) ctx.fillText(fmt(v), sx(v), H - B + 5);
    ctx.strokeStyle = fg; ctx.beginPath(); ctx.moveTo(L, T); ctx.lineTo(L, H - B); ctx.lineTo(W - R, H - B); ctx.stroke();
    let k = 0, ly = T + 4;
    for (const [name, pts] of this.series) {
      const color = COLORS[k++ % COLORS.length];
      ctx.strokeStyle = color; ctx.fillStyle = color; ctx.lineWidth = 2;
      ctx.beginPath();
      pts.forEach(([x, y], i) => { if (i) ctx.lineTo(sx(x), sy(y)); else ctx.moveTo(sx(x), sy(y)); });
      ctx.stroke();
      if (pts.length < 40) for (const [x, y] of pts) { ctx.beginPath(); ctx.arc(sx(x), sy(y), 2.5, 0, 2 * Math.PI); ctx.fill(); }
      const last = pts[pts.length - 1];
      ctx.textAlign = 'right'; ctx.textBaseline = 'top';
      ctx.fillText(`${name}: ${fmt(last[1])}`, W - R - 4, ly); ly += 14;
    }
  }
}

// Round tick values (1, 2 or 5 times a power of ten) inside [lo, hi], about n of them.
function niceTicks(lo, hi, n) {
  const raw = (hi - lo) / n, p = 10 ** Math.floor(Math.log10(raw)), m = raw / p;
  const step = (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return out;
}

function fmt(v) {
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e5)) return v.toExponential(1);
  return +v.toFixed(a < 1 ? 3 : a < 100 ? 2 : 0) + '';
}
