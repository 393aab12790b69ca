// matmul_reg.wgsl: out[b] = A[b] @ B[b] in f32 for CPU adapters (lavapipe). No workgroup
// memory: each thread keeps a TMxTN block of C in vec4 registers and reads A and B as vec4
// along a contiguous dim (K % 4 == 0, 16-byte aligned strides). backend.py's _mm_reg_src
// specializes the loads per operand layout:
//   A "n": rows of A contiguous, a vec4 holds 4 k-values of one row;
//   A "t": A^T contiguous (e.g. g.mT), a vec4 holds 4 rows at one k (M % 4 == 0);
//   B "n": rows of B contiguous, a vec4 holds 4 columns at one k (N % 4 == 0);
//   B "t": B^T contiguous (x @ W.t()), a vec4 holds 4 k-values of one column.
// Out-of-range rows/columns are clamped on load and skipped on store (no early return, no
// bounds checks in the K loop). O is vec4 when N % 4 == 0, else scalar. Bindings: O, A, B, P
// (B left out when it is A's buffer; O replaced by a fused epilogue's, see lazy.py).
// P: [M, N, K4, batch0, a_off, a_bs, a_s, b_off, b_bs, b_s, o_off, o_bs, o_rs] where a_s/b_s
// is the stride of the non-contiguous dim; A/B words in vec4 units, O words in O's units.
{{ENABLE}}
{{BINDINGS}}

@compute @workgroup_size({{WX}}, {{WY}}, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let M = P[0]; let N = P[1]; let K4 = P[2];
  let bt = wid.z + P[3];
  let r0 = gid.y * {{TM}}u;
  let c0 = gid.x * {{TN}}u;
  let abase = P[4] + bt * P[5]; let as1 = P[6];
  let bbase = P[7] + bt * P[8]; let bs1 = P[9];
{{SETUP}}
{{DECL}}
  for (var k = 0u; k < K4; k = k + 1u) {
{{BODY}}
  }
  let obase = P[10] + bt * P[11]; let ors = P[12];
{{STORE}}
}
