// sort_fin: global bitonic (fin); temp buffers tv (values), ti (positions), n_rows * N slots
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
       @builtin(local_invocation_index) lix: u32) {
  let g = ((wid.z * nwg.y + wid.y) * nwg.x + wid.x) * 256u + lix;
  let L = P[1]; let N = P[2];
  if (g >= P[0] * L) { return; }
  let row = g / L; let t = g % L;
{{ROW}}
  let sv_t = tv[row * N + t]; let si_t = ti[row * N + t];
{{STORE}}
}
