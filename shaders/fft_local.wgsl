// fft_local.wgsl: the whole radix-2 Stockham FFT of one row of N (a power of two, <= 2048) points in
// workgroup memory, one workgroup per row (backends/webgpu/fft.py; GPUs). complex64: interleaved f32 pairs.
//   N, H = N / 2, WG threads, PER = H / WG butterflies per thread and pass; SIGN: 1.0 forward, -1.0 inverse
//   TWIDDLE: `true` to multiply output k of row q by tw[q * k] (the four-step FFT's middle step)
// tw: exp(-2 pi i t / M), t < M, as f32 pairs; this transform reads tw[t * G] (G = M / N).
// P (in complex elements): [rows, rows per batch Q, G, src offset, batch, row and element strides, dst the same];
// row r is (b, q) = (r / Q, r % Q). Pass ns (1, 2, 4, ..., H): butterfly j reads j and j + H, writes
// (j - k) * 2 + k and that + ns (k = j mod ns): the output in natural order, no bit reversal.
@group(0) @binding(0) var<storage, read_write> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<storage, read_write> tw: array<f32>;
@group(0) @binding(3) var<storage, read> P: array<u32>;

var<workgroup> s: array<vec2<f32>, {{N}}>;

fn twiddle(t: u32) -> vec2<f32> { return vec2<f32>(tw[2u * t], {{SIGN}} * tw[2u * t + 1u]); }
fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> { return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lix: u32) {
  let row = (wid.z * nwg.y + wid.y) * nwg.x + wid.x;
  let live = row < P[0];                      // a folded grid's rest: no loads or stores, same barriers
  let b = row / P[1];
  let q = row % P[1];
  let sb = P[3] + b * P[4] + q * P[5];
  let db = P[7] + b * P[8] + q * P[9];
  if (live) {
    for (var i = lix; i < {{N}}u; i = i + {{WG}}u) {
      let e = 2u * (sb + i * P[6]);
      s[i] = vec2<f32>(src[e], src[e + 1u]);
    }
  }
  workgroupBarrier();
  var x: array<vec2<f32>, {{PER}}>;
  var y: array<vec2<f32>, {{PER}}>;
  var o: array<u32, {{PER}}>;
  var ns = 1u;
  var ts = {{H}}u * P[2];                      // twiddle stride M / (2 ns)
  loop {
    if (ns >= {{N}}u) { break; }
    for (var r = 0u; r < {{PER}}u; r = r + 1u) {
      let j = lix + r * {{WG}}u;
      let k = j & (ns - 1u);
      let u = s[j];
      let v = cmul(s[j + {{H}}u], twiddle(k * ts));
      x[r] = u + v;
      y[r] = u - v;
      o[r] = ((j - k) << 1u) + k;
    }
    workgroupBarrier();
    for (var r = 0u; r < {{PER}}u; r = r + 1u) {
      s[o[r]] = x[r];
      s[o[r] + ns] = y[r];
    }
    workgroupBarrier();
    ns = ns << 1u;
    ts = ts >> 1u;
  }
  if (live) {
    for (var i = lix; i < {{N}}u; i = i + {{WG}}u) {
      var v = s[i];
      if ({{TWIDDLE}}) { v = cmul(v, twiddle(q * i)); }
      let e = 2u * (db + i * P[10]);
      dst[e] = v.x;
      dst[e + 1u] = v.y;
    }
  }
}
