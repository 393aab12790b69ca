// sort_init: global bitonic (init); temp buffers tv (values), ti (positions), n_rows * N slots
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lix: u32) {
  let g = ((wid.z * nwg.y + wid.y) * nwg.x + wid.x) * 256u + lix;
  let N = P[2];
  if (g >= P[0] * N) { return; }
  let row = g / N; let t = g % N; let L = P[1];
{{ROW}}
  if (t < L) { tv[g] = {{LOAD}}; } else { tv[g] = {{CT}}(0); }
  ti[g] = t;
}
