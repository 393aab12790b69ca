// ewise.wgsl: one element-wise op over strided views (out[i] = op(in0[i], in1[i], ...)).
// Specialized per op, dtypes and collapsed rank by backend.py:
//   ENABLE   `enable f16;` when a binding is f16
//   BINDINGS out at binding 0, then one binding per view input (scalars live in P)
//   INDEX    row-major index -> element offset of each operand (shape/strides in P)
//   BODY     loads, converts to the compute type, computes, converts, stores
// P layout: [n, shape[0..R), then per strided operand: offset, strides[0..R), scalars...]
{{ENABLE}}
{{PRELUDE}}
{{BINDINGS}}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lix: u32) {
  let i = ((wid.z * nwg.y + wid.y) * nwg.x + wid.x) * 256u + lix;
  if (i >= P[0]) { return; }
{{INDEX}}
{{BODY}}
}
