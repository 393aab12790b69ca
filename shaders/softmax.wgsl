// softmax.wgsl: fused softmax / log_softmax along the last dim of a strided view, and their
// backward, one workgroup per row (replaces max, isinf/where, sub, exp, sum, log/div: 7
// dispatches forward, 4-5 backward). Row values are read 2-3 times (they stay in cache).
// Forward (MODE 0 softmax, 1 log_softmax):  m = max(x), s = sum(exp(x - m)),
//   y = exp(x - m) / s  |  y = x - m - log(s)   (m: NaN-propagating max; -inf -> 0)
// Backward (MODE 2 softmax, 3 log_softmax), inputs g and y:
//   gx = y * (g - sum(g * y))  |  gx = g - exp(y) * sum(g)
// P: [n_rows, L, <row index params of the operands>]
{{ENABLE}}
{{PRELUDE}}
{{BINDINGS}}
var<workgroup> red: array<f32, {{WG}}>;

fn wg_reduce(v: f32, lix: u32, is_max: bool) -> f32 {
  red[lix] = v;
  workgroupBarrier();
  for (var s = {{WG}}u / 2u; s > 0u; s = s >> 1u) {
    if (lix < s) {
      if (is_max) { red[lix] = wmaximum(red[lix], red[lix + s]); } else { red[lix] = red[lix] + red[lix + s]; }
    }
    workgroupBarrier();
  }
  let r = red[0];
  workgroupBarrier();
  return r;
}

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lix: u32) {
  let row = (wid.z * nwg.y + wid.y) * nwg.x + wid.x;
  if (row >= P[0]) { return; }
  let L = P[1];
{{ROW}}
{{KERNEL}}
}
