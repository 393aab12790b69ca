// random.wgsl: Philox4x32-10, bit for bit the recipe of webtorch/_philox.py.
// Element i uses counter (i, 0, offset, 0), key (seed lo, seed hi).
// P: [n, seed_lo, seed_hi, offset_lo, out_offset]
{{ENABLE}}
@group(0) @binding(0) var<storage, read_write> out: array<{{OT}}>;
@group(0) @binding(1) var<storage, read> P: array<u32>;

fn mulhilo(a: u32, b: u32) -> vec2<u32> {   // (hi, lo) of the 64-bit product
  let a0 = a & 0xffffu; let a1 = a >> 16u; let b0 = b & 0xffffu; let b1 = b >> 16u;
  let p00 = a0 * b0; let p01 = a0 * b1; let p10 = a1 * b0; let p11 = a1 * b1;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  let hi = p11 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);
  return vec2<u32>(hi, a * b);
}

fn philox(ctr: vec4<u32>, key: vec2<u32>) -> vec4<u32> {
  var c = ctr; var k = key;
  for (var r = 0u; r < 10u; r = r + 1u) {
    let p0 = mulhilo(0xD2511F53u, c.x);
    let p1 = mulhilo(0xCD9E8D57u, c.z);
    c = vec4<u32>(p1.x ^ c.y ^ k.x, p1.y, p0.x ^ c.w ^ k.y, p0.y);
    k = k + vec2<u32>(0x9E3779B9u, 0xBB67AE85u);
  }
  return c;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lix: u32) {
  let i = ((wid.z * nwg.y + wid.y) * nwg.x + wid.x) * 256u + lix;
  if (i >= P[0]) { return; }
  let w = philox(vec4<u32>(i, 0u, P[3], 0u), vec2<u32>(P[1], P[2]));
  var v: f32;
  {{BODY}}
  out[P[4] + i] = {{STORE}};
}
