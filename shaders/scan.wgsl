// scan.wgsl: inclusive scan along the last dim, one workgroup per row. The row is walked in
// tiles of WG: each tile is scanned in workgroup memory (Hillis-Steele, log2 steps) and
// combined with the running carry of the previous tiles.
// P: [n_rows, L, <row index params>]
{{ENABLE}}
{{PRELUDE}}
{{BINDINGS}}
var<workgroup> sv: array<{{ACC}}, {{WG}}>;
var<workgroup> si: array<i32, {{WG}}>;

fn take_b(av: {{ACC}}, bv: {{ACC}}) -> bool {   // cummax/cummin: does the later b win?
{{TAKEB}}
}
fn comb(a: {{ACC}}, b: {{ACC}}) -> {{ACC}} { return {{COMBINE}}; }

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lix: u32) {
  let row = (wid.z * nwg.y + wid.y) * nwg.x + wid.x;
  if (row >= P[0]) { return; }
  let L = P[1];
{{ROW}}
  var carry: {{ACC}} = {{IDENT}};
  var carryi: i32 = -1;
  for (var t0 = 0u; t0 < L; t0 = t0 + {{WG}}u) {
    let t = t0 + lix;
    var v: {{ACC}} = {{IDENT}};
    var vi: i32 = -1;
    if (t < L) {
      v = {{LOAD}};
      vi = i32(t);
    }
    // fold the carry into the first element of the tile
    if (lix == 0u && t0 > 0u) {
{{CARRY_IN}}
    }
    sv[lix] = v; si[lix] = vi;
    workgroupBarrier();
    for (var s = 1u; s < {{WG}}u; s = s << 1u) {
      var nv = sv[lix]; var ni = si[lix];
      if (lix >= s) {
        let pv = sv[lix - s]; let pi = si[lix - s];
{{STEP}}
      }
      workgroupBarrier();
      sv[lix] = nv; si[lix] = ni;
      workgroupBarrier();
    }
    if (t < L) {
{{STORE}}
    }
    carry = sv[{{WG}}u - 1u]; carryi = si[{{WG}}u - 1u];
    workgroupBarrier();
  }
}
