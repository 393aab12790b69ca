// reduce.wgsl: out[o] = op over the inner elements of inp[o] (a strided view).
// One workgroup per (output, chunk of the inner extent): each thread folds a strided slice
// of the chunk into a register, then a pairwise tree in index order in workgroup memory. For a
// huge inner extent with few outputs, backend.py runs two passes (chunks -> temp -> final).
// WG threads; ACC accumulator type; arg ops carry an i32 index alongside.
// P: [n_out, n_inner, chunk, n_chunks, <outer index params>, <inner index params>]
{{ENABLE}}
{{PRELUDE}}
{{BINDINGS}}
var<workgroup> sv: array<{{ACC}}, {{WG}}>;
var<workgroup> si: array<i32, {{WG}}>;

fn better(av: {{ACC}}, ai: i32, bv: {{ACC}}, bi: i32) -> bool {   // does b win over a?
{{BETTER}}
}
fn comb(a: {{ACC}}, b: {{ACC}}) -> {{ACC}} { return {{COMBINE}}; }

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lix: u32) {
  let g = (wid.z * nwg.y + wid.y) * nwg.x + wid.x;
  let n_inner = P[1]; let chunk = P[2]; let n_chunks = P[3];
  if (g >= P[0] * n_chunks) { return; }
  let o = g / n_chunks;
  let c = g % n_chunks;
{{OUTER}}
  var acc: {{ACC}} = {{IDENT}};
  var acci: i32 = 2147483647;
  let jend = min((c + 1u) * chunk, n_inner);
  for (var j = c * chunk + lix; j < jend; j = j + {{WG}}u) {
{{INNER}}
{{FOLD}}
  }
  sv[lix] = acc;
  si[lix] = acci;
  workgroupBarrier();
  for (var s = 1u; s < {{WG}}u; s = s << 1u) {   // neighbours first: ((x0 + x1) + x2) for three, as
    if ((lix & (2u * s - 1u)) == 0u) {              // PyTorch's sum in index order (no 3e38 + 1e38 = inf)
{{TREE}}
    }
    workgroupBarrier();
  }
  if (lix == 0u) {
{{STORE}}
  }
}
