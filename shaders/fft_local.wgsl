// fft_local.wgsl: the whole radix-2 Stockham FFT of one row of N (a power of two, <= 2048) points in
// workgroup memory, one workgroup per row (backends/webgpu/fft.py). Rows are complex64: interleaved f32 pairs.
//   N, H = N / 2, WG threads, PER = H / WG butterflies per thread and pass; SIGN: 1.0 forward, -1.0 inverse
//   (the twiddle table holds exp(-2 pi i t / N), t < H, as f32 pairs; the inverse conjugates it)
// P: [rows, src offset, dst offset] (offsets in floats). Pass ns (1, 2, 4, ..., H): butterfly j reads j and
// j + H, writes (j - k) * 2 + k and that + ns (k = j mod ns): the output in natural order, no bit reversal.
@group(0) @binding(0) var<storage, read_write> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<storage, read_write> tw: array<f32>;
@group(0) @binding(3) var<storage, read> P: array<u32>;

var<workgroup> s: array<vec2<f32>, {{N}}>;

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lix: u32) {
  let row = (wid.z * nwg.y + wid.y) * nwg.x + wid.x;
  let live = row < P[0];                      // a folded grid's rest: no loads or stores, same barriers
  let sb = P[1] + row * {{N2}}u;
  let db = P[2] + row * {{N2}}u;
  if (live) {
    for (var i = lix; i < {{N}}u; i = i + {{WG}}u) { s[i] = vec2<f32>(src[sb + 2u * i], src[sb + 2u * i + 1u]); }
  }
  workgroupBarrier();
  var a: array<vec2<f32>, {{PER}}>;
  var b: array<vec2<f32>, {{PER}}>;
  var o: array<u32, {{PER}}>;
  var ns = 1u;
  var ts = {{H}}u;                             // twiddle stride N / (2 ns)
  loop {
    if (ns >= {{N}}u) { break; }
    for (var r = 0u; r < {{PER}}u; r = r + 1u) {
      let j = lix + r * {{WG}}u;
      let k = j & (ns - 1u);
      let w = vec2<f32>(tw[2u * k * ts], {{SIGN}} * tw[2u * k * ts + 1u]);
      let x = s[j];
      let y = s[j + {{H}}u];
      let yw = vec2<f32>(y.x * w.x - y.y * w.y, y.x * w.y + y.y * w.x);
      a[r] = x + yw;
      b[r] = x - yw;
      o[r] = ((j - k) << 1u) + k;
    }
    workgroupBarrier();
    for (var r = 0u; r < {{PER}}u; r = r + 1u) {
      s[o[r]] = a[r];
      s[o[r] + ns] = b[r];
    }
    workgroupBarrier();
    ns = ns << 1u;
    ts = ts >> 1u;
  }
  if (live) {
    for (var i = lix; i < {{N}}u; i = i + {{WG}}u) {
      dst[db + 2u * i] = s[i].x;
      dst[db + 2u * i + 1u] = s[i].y;
    }
  }
}
