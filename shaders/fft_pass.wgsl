// fft_pass.wgsl: one radix-2 Stockham pass over rows of N = 2H points (a power of two), a thread per butterfly
// (backends/webgpu/fft.py dispatches log2(N) of them, ping-ponging between two buffers). complex64 rows:
// interleaved f32 pairs. SIGN: 1.0 forward, -1.0 inverse (conjugated twiddles exp(-2 pi i t / N), t < H).
// P: [rows * H, log2(H), ns, twiddle stride N / (2 ns), src offset, dst offset] (offsets in floats).
// Butterfly j of a row reads j and j + H, writes (j - k) * 2 + k and that + ns (k = j mod ns).
@group(0) @binding(0) var<storage, read_write> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<storage, read_write> tw: array<f32>;
@group(0) @binding(3) var<storage, read> P: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lix: u32) {
  let t = ((wid.z * nwg.y + wid.y) * nwg.x + wid.x) * 256u + lix;
  if (t >= P[0]) { return; }
  let lh = P[1];
  let h = 1u << lh;
  let j = t & (h - 1u);
  let base = (t >> lh) << (lh + 1u);           // the row's first point
  let ns = P[2];
  let k = j & (ns - 1u);
  let ti = 2u * k * P[3];
  let w = vec2<f32>(tw[ti], {{SIGN}} * tw[ti + 1u]);
  let sa = P[4] + 2u * (base + j);
  let sb = sa + 2u * h;
  let x = vec2<f32>(src[sa], src[sa + 1u]);
  let y = vec2<f32>(src[sb], src[sb + 1u]);
  let yw = vec2<f32>(y.x * w.x - y.y * w.y, y.x * w.y + y.y * w.x);
  let o = P[5] + 2u * (base + ((j - k) << 1u) + k);
  let o2 = o + 2u * ns;
  dst[o] = x.x + yw.x;
  dst[o + 1u] = x.y + yw.y;
  dst[o2] = x.x - yw.x;
  dst[o2 + 1u] = x.y - yw.y;
}
