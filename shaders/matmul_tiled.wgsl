// matmul_tiled.wgsl: out[b] = A[b] @ B[b] for any strides and dtypes (the general path, and
// the fast path on real GPUs). A BMxBN output tile per workgroup of 16x16 threads,
// BK-deep tiles of A and B staged in workgroup memory, a 4x4 register block per thread.
// Bindings: O, A, B, P as in matmul_reg.wgsl.
// P: [M, N, K, batch0, a_off, a_bs, a_ms, a_ks, b_off, b_bs, b_ks, b_ns, o_off, o_bs, o_ms, o_ns]
{{ENABLE}}
{{BINDINGS}}

var<workgroup> As: array<{{CT}}, {{BK}} * {{BM}}>;
var<workgroup> Bs: array<{{CT}}, {{BK}} * {{BN}}>;

@compute @workgroup_size(16, 16, 1)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let M = P[0]; let N = P[1]; let K = P[2];
  let bt = i32(wid.z + P[3]);
  let row0 = wid.y * {{BM}}u;
  let col0 = wid.x * {{BN}}u;
  let abase = i32(P[4]) + bt * i32(P[5]); let ams = i32(P[6]); let aks = i32(P[7]);
  let bbase = i32(P[8]) + bt * i32(P[9]); let bks = i32(P[10]); let bns = i32(P[11]);
  var acc: array<array<{{CT}}, 4>, 4>;
  for (var r = 0u; r < 4u; r = r + 1u) { for (var c = 0u; c < 4u; c = c + 1u) { acc[r][c] = {{CT}}(0); } }
  for (var k0 = 0u; k0 < K; k0 = k0 + {{BK}}u) {
    for (var e = tid; e < {{BK}}u * {{BM}}u; e = e + 256u) {
      let m = e / {{BK}}u; let kk = e % {{BK}}u;
      let gm = row0 + m; let gk = k0 + kk;
      var v = {{CT}}(0);
      if (gm < M && gk < K) { let x = A[abase + i32(gm) * ams + i32(gk) * aks]; v = {{ALOAD}}; }
      As[kk * {{BM}}u + m] = v;
    }
    for (var e = tid; e < {{BK}}u * {{BN}}u; e = e + 256u) {
      let kk = e / {{BN}}u; let n = e % {{BN}}u;
      let gn = col0 + n; let gk = k0 + kk;
      var v = {{CT}}(0);
      if (gn < N && gk < K) { let x = B[bbase + i32(gk) * bks + i32(gn) * bns]; v = {{BLOAD}}; }
      Bs[kk * {{BN}}u + n] = v;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < {{BK}}u; kk = kk + 1u) {
      var a: array<{{CT}}, 4>;
      var b: array<{{CT}}, 4>;
      for (var r = 0u; r < 4u; r = r + 1u) { a[r] = As[kk * {{BM}}u + lid.y + r * 16u]; }
      for (var c = 0u; c < 4u; c = c + 1u) { b[c] = Bs[kk * {{BN}}u + lid.x + c * 16u]; }
      for (var r = 0u; r < 4u; r = r + 1u) {
        for (var c = 0u; c < 4u; c = c + 1u) { acc[r][c] = {{MAC}}; }
      }
    }
    workgroupBarrier();
  }
  let obase = i32(P[12]) + bt * i32(P[13]); let oms = i32(P[14]); let ons = i32(P[15]);
  for (var r = 0u; r < 4u; r = r + 1u) {
    let gm = row0 + lid.y + r * 16u;
    for (var c = 0u; c < 4u; c = c + 1u) {
      let gn = col0 + lid.x + c * 16u;
      if (gm < M && gn < N) { let v = acc[r][c]; {{STORE}} }
    }
  }
}
