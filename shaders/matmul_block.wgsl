// matmul_block.wgsl: out[b] = A[b] @ B[b] for any strides and dtypes on CPU adapters (lavapipe,
// SwiftShader), in place of matmul_tiled.wgsl: the same parts and bindings, a 4x4 register block
// per thread of an 8x8 workgroup, no workgroup memory (a CPU's caches do what it would; on
// SwiftShader a kernel with workgroup tiles compiles for ~1 s, this one in ~50 ms). Sums in the
// same order as the tiled kernel (k = 0, 1, ..., K - 1), so the results are the same.
// P: as matmul_tiled.wgsl's
{{ENABLE}}
{{BINDINGS}}

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let M = P[0]; let N = P[1]; let K = P[2];
  let bt = i32(wid.z + P[3]);
  let abase = i32(P[4]) + bt * i32(P[5]); let ams = i32(P[6]); let aks = i32(P[7]);
  let bbase = i32(P[8]) + bt * i32(P[9]); let bks = i32(P[10]); let bns = i32(P[11]);
  let row0 = gid.y * 4u; let col0 = gid.x * 4u;
  var arow: array<i32, 4>;
  var bcol: array<i32, 4>;
  for (var r = 0u; r < 4u; r = r + 1u) { arow[r] = abase + i32(min(row0 + r, M - 1u)) * ams; }
  for (var c = 0u; c < 4u; c = c + 1u) { bcol[c] = bbase + i32(min(col0 + c, N - 1u)) * bns; }
  var acc: array<array<{{CT}}, 4>, 4>;
  for (var r = 0u; r < 4u; r = r + 1u) { for (var c = 0u; c < 4u; c = c + 1u) { acc[r][c] = {{CT}}(0); } }
  for (var k = 0u; k < K; k = k + 1u) {
    var a: array<{{CT}}, 4>;
    var b: array<{{CT}}, 4>;
    for (var r = 0u; r < 4u; r = r + 1u) { let x = A[arow[r] + i32(k) * aks]; a[r] = {{ALOAD}}; }
    for (var c = 0u; c < 4u; c = c + 1u) { let x = B[bcol[c] + i32(k) * bks]; b[c] = {{BLOAD}}; }
    for (var r = 0u; r < 4u; r = r + 1u) {
      for (var c = 0u; c < 4u; c = c + 1u) { acc[r][c] = {{MAC}}; }
    }
  }
  let obase = i32(P[12]) + bt * i32(P[13]); let oms = i32(P[14]); let ons = i32(P[15]);
  for (var r = 0u; r < 4u; r = r + 1u) {
    let gm = row0 + r;
    for (var c = 0u; c < 4u; c = c + 1u) {
      let gn = col0 + c;
      if (gm < M && gn < N) { let v = acc[r][c]; {{STORE}} }
    }
  }
}
