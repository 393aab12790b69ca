// ewise.wgsl: one element-wise op over strided views (out[i] = op(in0[i], in1[i], ...)).
// Specialized per op, dtypes and collapsed rank by backend.py:
//   ENABLE   `enable f16;` when a binding is f16
//   BINDINGS out at binding 0, then one binding per view input (scalars live in P)
//   HOIST    `let pN = P[N];` for each parameter word INDEX and BODY read (once per thread)
//   INDEX    row-major index -> element offset of each operand (shape/strides in P)
//   BODY     loads, converts to the compute type, computes, converts, stores
//   K        elements per thread: a workgroup covers 256*K consecutive elements, thread lix
//            elements base + lix + 256*k (k < K), so each load instruction reads consecutive words
// P layout: [n, shape[0..R), then per strided operand: offset, strides[0..R), scalars...]
{{ENABLE}}
{{PRELUDE}}
{{BINDINGS}}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lix: u32) {
  let ew_n = P[0];                                // (ew_ names: none of the bodies' names)
  let ew_g = (wid.z * nwg.y + wid.y) * nwg.x + wid.x;
  if (ew_g > (ew_n - 1u) / {{SPAN}}u) { return; }  // past the last group (a folded grid's rest)
  let ew_base = ew_g * {{SPAN}}u;                 // <= n - 1: no 32-bit wrap
  let ew_rem = ew_n - ew_base;
{{HOIST}}
  for (var ew_k = 0u; ew_k < {{K}}u; ew_k = ew_k + 1u) {
    let ew_j = ew_k * 256u + lix;
    if (ew_j >= ew_rem) { break; }
    let i = ew_base + ew_j;
{{INDEX}}
{{BODY}}
  }
}
