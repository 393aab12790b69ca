// sort_step: global bitonic (step); temp buffers tv (values), ti (positions), n_rows * N slots
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lix: u32) {
  let g = ((wid.z * nwg.y + wid.y) * nwg.x + wid.x) * 256u + lix;
  let N = P[2]; let k = P[3]; let j = P[4]; let L = P[1];
  let half = N / 2u;
  if (g >= P[0] * half) { return; }
  let row = g / half; let t = g % half;
  let a = (t / j) * 2u * j + (t % j);
  let b = a + j;
  let up = (a & k) == 0u;
  let ga = row * N + a; let gb = row * N + b;
  let av = tv[ga]; let ai = ti[ga]; let bv = tv[gb]; let bi = ti[gb];
  var sw: bool;
  if (up) { sw = before(bv, bi, av, ai, L); } else { sw = before(av, ai, bv, bi, L); }
  if (sw) { tv[ga] = bv; ti[ga] = bi; tv[gb] = av; ti[gb] = ai; }
}
