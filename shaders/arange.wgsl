// arange.wgsl: out[off + i] = start + i * step in the compute type.  P: [n, off, start, step]
{{ENABLE}}
@group(0) @binding(0) var<storage, read_write> out: array<{{OT}}>;
@group(0) @binding(1) var<storage, read> P: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lix: u32) {
  let i = ((wid.z * nwg.y + wid.y) * nwg.x + wid.x) * 256u + lix;
  if (i >= P[0]) { return; }
  let start = bitcast<{{CT}}>(P[2]);
  let step = bitcast<{{CT}}>(P[3]);
  let v = start + {{CT}}(i) * step;
  out[P[1] + i] = {{STORE}};
}
