// fft_thread.wgsl: the radix-2 FFT of one row of N (a power of two, <= 2048) points per invocation, in place in
// its dst row after a bit-reversed copy (backends/webgpu/fft.py; CPU adapters such as lavapipe, where a
// workgroup barrier costs more than a pass: no barrier here). complex64: interleaved f32 pairs.
// N, L = log2(N), SIGN, TWIDDLE, tw, G and P as fft_local.wgsl's.
@group(0) @binding(0) var<storage, read_write> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<storage, read_write> tw: array<f32>;
@group(0) @binding(3) var<storage, read> P: array<u32>;

fn twiddle(t: u32) -> vec2<f32> { return vec2<f32>(tw[2u * t], {{SIGN}} * tw[2u * t + 1u]); }
fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> { return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lix: u32) {
  let row = ((wid.z * nwg.y + wid.y) * nwg.x + wid.x) * 64u + lix;
  if (row >= P[0]) { return; }
  let b = row / P[1];
  let q = row % P[1];
  let sb = P[3] + b * P[4] + q * P[5];
  let db = P[7] + b * P[8] + q * P[9];
  // the bit-reversed row into dst, then the butterflies in place there (global memory: a private array of 2048
  // points takes lavapipe minutes to compile)
  for (var i = 0u; i < {{N}}u; i = i + 1u) {
    let e = 2u * (sb + (reverseBits(i) >> {{SHIFT}}u) * P[6]);
    let d = 2u * (db + i * P[10]);
    dst[d] = src[e];
    dst[d + 1u] = src[e + 1u];
  }
  let es = 2u * P[10];
  var ts = {{H}}u * P[2];                      // twiddle stride M / (2 half)
  for (var half = 1u; half < {{N}}u; half = half << 1u) {
    for (var k = 0u; k < half; k = k + 1u) {
      let w = twiddle(k * ts);
      for (var j = k; j < {{N}}u; j = j + 2u * half) {
        let a = 2u * db + j * es;
        let c = a + half * es;
        let u = vec2<f32>(dst[a], dst[a + 1u]);
        let v = cmul(vec2<f32>(dst[c], dst[c + 1u]), w);
        dst[a] = u.x + v.x;
        dst[a + 1u] = u.y + v.y;
        dst[c] = u.x - v.x;
        dst[c + 1u] = u.y - v.y;
      }
    }
    ts = ts >> 1u;
  }
  if ({{TWIDDLE}}) {
    for (var i = 0u; i < {{N}}u; i = i + 1u) {
      let d = 2u * db + i * es;
      let v = cmul(vec2<f32>(dst[d], dst[d + 1u]), twiddle(q * i));
      dst[d] = v.x;
      dst[d + 1u] = v.y;
    }
  }
}
