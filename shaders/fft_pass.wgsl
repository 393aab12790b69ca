// fft_pass.wgsl: one radix-R (2 or 4) Stockham pass over rows of N points (a power of two), a thread per butterfly
// (backends/webgpu/fft.py dispatches them, ping-ponging between two buffers: log2(N) / 2 radix-4 passes, a radix-2
// one first where log2(N) is odd). complex64 rows: interleaved f32 pairs. SIGN: 1.0 forward, -1.0 inverse
// (conjugated twiddles: the table holds exp(-2 pi i t / N), t < N, as f32 pairs).
// P: [rows * N / R, log2(N / R), ns (the points already combined), twiddle unit N / (R ns), src offset, dst offset]
// (offsets in floats). Butterfly j of a row reads j + r N / R (r < R), multiplies point r by the twiddle of
// k r / (R ns) (k = j mod ns), transforms the R points and writes them to (j - k) R + k + r ns.
@group(0) @binding(0) var<storage, read_write> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<storage, read_write> tw: array<f32>;
@group(0) @binding(3) var<storage, read> P: array<u32>;

fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> { return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
fn ld(i: u32) -> vec2<f32> { return vec2<f32>(src[i], src[i + 1u]); }
fn st(i: u32, v: vec2<f32>) { dst[i] = v.x; dst[i + 1u] = v.y; }
fn twiddle(t: u32) -> vec2<f32> { return vec2<f32>(tw[2u * t], {{SIGN}} * tw[2u * t + 1u]); }

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lix: u32) {
  let t = ((wid.z * nwg.y + wid.y) * nwg.x + wid.x) * 256u + lix;
  if (t >= P[0]) { return; }
  let lq = P[1];
  let q = 1u << lq;                             // N / R: the stride between a butterfly's points
  let j = t & (q - 1u);
  let base = (t >> lq) * q * {{R}}u;            // the row's first point
  let ns = P[2];
  let k = j & (ns - 1u);
  let s0 = P[4] + 2u * (base + j);
  let o0 = P[5] + 2u * (base + ((j - k) * {{R}}u) + k);
  let u = k * P[3];
  if ({{R}}u == 2u) {
    let a = ld(s0);
    let b = cmul(ld(s0 + 2u * q), twiddle(u));
    st(o0, a + b);
    st(o0 + 2u * ns, a - b);
  } else {
    let v0 = ld(s0);
    let v1 = cmul(ld(s0 + 2u * q), twiddle(u));
    let v2 = cmul(ld(s0 + 4u * q), twiddle(2u * u));
    let v3 = cmul(ld(s0 + 6u * q), twiddle(3u * u));
    let a = v0 + v2;
    let b = v0 - v2;
    let c = v1 + v3;
    let e = v1 - v3;
    let d = vec2<f32>({{SIGN}} * e.y, {{SIGN}} * -e.x);   // -i (v1 - v3) forward, +i inverse
    st(o0, a + c);
    st(o0 + 2u * ns, b + d);
    st(o0 + 4u * ns, a - c);
    st(o0 + 6u * ns, b - d);
  }
}
