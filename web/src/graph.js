// Draws an autograd DAG ({nodes: [{id, label, kind, detail}], edges: [[src, dst]]}) as SVG.
// Layered layout: each node's layer is its longest path from a source (leaves left, the
// output tensor right); order within a layer by the mean position of its parents.
const SVG = 'http://www.w3.org/2000/svg';

function el(name, attrs, parent) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (parent) parent.appendChild(e);
  return e;
}

export function layout(graph) {
  const nodes = graph.nodes.map((n) => ({ ...n, parents: [], children: [], layer: 0 }));
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const edges = graph.edges.filter(([a, b]) => byId.has(a) && byId.has(b) && a !== b);
  for (const [a, b] of edges) { byId.get(a).children.push(byId.get(b)); byId.get(b).parents.push(byId.get(a)); }
  // Longest path from sources (Kahn's order; a cycle, impossible in autograd, is cut).
  const indeg = new Map(nodes.map((n) => [n, n.parents.length]));
  const order = nodes.filter((n) => indeg.get(n) === 0);
  for (let i = 0; i < order.length; i++) {
    for (const c of order[i].children) {
      c.layer = Math.max(c.layer, order[i].layer + 1);
      indeg.set(c, indeg.get(c) - 1);
      if (indeg.get(c) === 0) order.push(c);
    }
  }
  // Leaves sit just before their first consumer (short edges, not all in column 0).
  for (const n of nodes) if (!n.parents.length && n.children.length) n.layer = Math.min(...n.children.map((c) => c.layer)) - 1;
  const nLayers = Math.max(0, ...nodes.map((n) => n.layer)) + 1;
  const layers = Array.from({ length: nLayers }, () => []);
  for (const n of nodes) layers[n.layer].push(n);
  // Barycentre ordering, two sweeps.
  const pos = (n) => layers[n.layer].indexOf(n);
  for (let sweep = 0; sweep < 2; sweep++) {
    for (let l = 1; l < nLayers; l++) {
      const bc = (n) => (n.parents.length ? n.parents.reduce((s, p) => s + pos(p), 0) / n.parents.length : pos(n));
      const keyed = layers[l].map((n) => [bc(n), n]);
      keyed.sort((x, y) => x[0] - y[0]);
      layers[l] = keyed.map((x) => x[1]);
    }
  }
  // Left to right: layer l is column l (leaves left, the output tensor right), which suits
  // the wide, short panel better than top to bottom.
  const CH = 7.2, H = 34, VGAP = 14, HGAP = 42, PAD = 12;
  for (const n of nodes) n.w = Math.max(n.label.length, (n.detail || '').length * 0.85) * CH + 20;
  const colW = layers.map((col) => Math.max(...col.map((n) => n.w)));
  const colH = layers.map((col) => col.length * H + VGAP * Math.max(0, col.length - 1));
  const height = Math.max(...colH) + 2 * PAD;
  let x = PAD;
  layers.forEach((col, l) => {
    let y = PAD + (height - 2 * PAD - colH[l]) / 2;
    for (const n of col) { n.x = x + (colW[l] - n.w) / 2; n.y = y; n.h = H; y += H + VGAP; }
    x += colW[l] + HGAP;
  });
  const width = x - HGAP + PAD;
  return { nodes, edges: edges.map(([a, b]) => [byId.get(a), byId.get(b)]), width, height };
}

export function renderGraph(container, graph) {
  container.textContent = '';
  if (!graph || !graph.nodes || !graph.nodes.length) {
    container.textContent = 'No graph: call show_graph(t) on a tensor with a grad_fn.';
    return;
  }
  const g = layout(graph);
  const svg = el('svg', { width: '100%', height: '100%', class: 'graph-svg', role: 'img', preserveAspectRatio: 'xMidYMid meet' });
  el('title', {}, svg).textContent = graph.title || 'autograd graph';
  const defs = el('defs', {}, svg);
  const marker = el('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, defs);
  el('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'graph-arrow' }, marker);
  for (const [a, b] of g.edges) {
    const x1 = a.x + a.w, y1 = a.y + a.h / 2, x2 = b.x, y2 = b.y + b.h / 2;
    const mx = (x1 + x2) / 2;
    el('path', { d: `M ${x1} ${y1} C ${mx} ${y1}, ${mx} ${y2}, ${x2} ${y2}`, class: 'graph-edge', 'marker-end': 'url(#arrow)' }, svg);
  }
  for (const n of g.nodes) {
    const grp = el('g', { class: `graph-node graph-${n.kind}`, 'data-label': n.label }, svg);
    el('rect', { x: n.x, y: n.y, width: n.w, height: n.h, rx: 6 }, grp);
    const t = el('text', { x: n.x + n.w / 2, y: n.y + (n.detail ? 14 : 21), 'text-anchor': 'middle', class: 'graph-label' }, grp);
    t.textContent = n.label;
    if (n.detail) {
      const d = el('text', { x: n.x + n.w / 2, y: n.y + 27, 'text-anchor': 'middle', class: 'graph-detail' }, grp);
      d.textContent = n.detail;
    }
  }
  container.appendChild(svg);
  panZoom(svg, g.width, g.height);
}

// The whole graph fits the panel (the SVG scales it); the wheel zooms about the pointer, a drag
// pans, a double click fits again.  `svg.zoomBy(f)` and `svg.fit()` serve the panel's buttons.
function panZoom(svg, width, height) {
  let view;
  const show = () => svg.setAttribute('viewBox', view.join(' '));
  svg.fit = () => { view = [0, 0, width, height]; show(); };
  svg.zoomBy = (f, cx = view[0] + view[2] / 2, cy = view[1] + view[3] / 2) => {
    const w = Math.min(Math.max(view[2] * f, 40), width * 4), k = w / view[2];
    view = [cx - (cx - view[0]) * k, cy - (cy - view[1]) * k, w, view[3] * k];
    show();
  };
  const toGraph = (e) => {  // a pointer position in graph units
    const p = new DOMPoint(e.clientX, e.clientY).matrixTransform(svg.getScreenCTM().inverse());
    return [p.x, p.y];
  };
  svg.addEventListener('wheel', (e) => { e.preventDefault(); svg.zoomBy(e.deltaY > 0 ? 1.2 : 1 / 1.2, ...toGraph(e)); }, { passive: false });
  svg.addEventListener('dblclick', () => svg.fit());
  svg.addEventListener('pointerdown', (e) => {
    let [x0, y0] = toGraph(e);
    svg.setPointerCapture(e.pointerId);
    const move = (m) => {
      const [x, y] = toGraph(m);
      view[0] -= x - x0; view[1] -= y - y0;
      show();
      [x0, y0] = toGraph(m);
    };
    svg.addEventListener('pointermove', move);
    svg.addEventListener('pointerup', () => svg.removeEventListener('pointermove', move), { once: true });
  });
  svg.fit();
}
