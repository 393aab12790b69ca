var<workgroup> sv: array<{{CT}}, {{N}}>;
var<workgroup> si: array<u32, {{N}}>;

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lix: u32) {
  let row = (wid.z * nwg.y + wid.y) * nwg.x + wid.x;
  if (row >= P[0]) { return; }
  let L = P[1];
{{ROW}}
  for (var t = lix; t < {{N}}u; t = t + {{WG}}u) {
    if (t < L) { sv[t] = {{LOAD}}; } else { sv[t] = {{CT}}(0); }
    si[t] = t;
  }
  workgroupBarrier();
  for (var k = 2u; k <= {{N}}u; k = k << 1u) {
    for (var j = k >> 1u; j > 0u; j = j >> 1u) {
      for (var t = lix; t < {{N}}u / 2u; t = t + {{WG}}u) {
        let a = (t / j) * 2u * j + (t % j);
        let b = a + j;
        let up = (a & k) == 0u;
        let av = sv[a]; let ai = si[a]; let bv = sv[b]; let bi = si[b];
        var sw: bool;
        if (up) { sw = before(bv, bi, av, ai, L); } else { sw = before(av, ai, bv, bi, L); }
        if (sw) { sv[a] = bv; si[a] = bi; sv[b] = av; si[b] = ai; }
      }
      workgroupBarrier();
    }
  }
  for (var t = lix; t < L; t = t + {{WG}}u) {
{{STORE}}
  }
}
