// matmul_reg.wgsl: out[b] = A[b] @ B[b] for f32 with A rows and B rows contiguous and
// 16-byte aligned (K % 4 == 0, N % 4 == 0). No workgroup memory: each thread keeps a
// TMxTN register block and reads A and B as vec4 (the fastest form measured on CPU
// adapters such as lavapipe, where "workgroup memory" is just more memory traffic).
// All offsets/strides in P are in vec4 units:
// P: [M, N4, K4, batch0, a_off, a_bs, a_rs, b_off, b_bs, b_rs, o_off, o_bs, o_rs]
@group(0) @binding(0) var<storage, read_write> O: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> A: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> B: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> P: array<u32>;

@compute @workgroup_size({{WX}}, {{WY}}, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
  let M = P[0]; let N4 = P[1]; let K4 = P[2];
  let bt = wid.z + P[3];
  let r0 = gid.y * {{TM}}u;
  let c0 = {{C0}};   // first vec4 column; this thread's columns are c0 + j * {{CSTEP}}
  if (r0 >= M || c0 >= N4) { return; }
  let abase = P[4] + bt * P[5];
  let bbase = P[7] + bt * P[8];
  let ars = P[6]; let brs = P[9];
{{ROWS}}
{{COLS}}
{{DECL}}
  for (var k = 0u; k < K4; k = k + 1u) {
{{LOADA}}
    let kb = bbase + k * 4u * brs;
{{BODY}}
  }
  let obase = P[10] + bt * P[11]; let ors = P[12];
{{STORE}}
}
