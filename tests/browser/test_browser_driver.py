"""py/webtorch/backends/webgpu/browser.py: the Driver protocol over the page's WebGPU,
exercised directly in the playground's worker (needs only the driver module from the wheel)."""
import struct

from pwutil import py_json

PRELUDE = r'''
import array, json, struct
from webtorch.backends.webgpu import browser
d = browser.BrowserDriver()
AXPY = """
@group(0) @binding(0) var<storage, read_write> C: array<f32>;
@group(0) @binding(1) var<storage, read_write> A: array<f32>;
@group(0) @binding(2) var<storage, read_write> B: array<f32>;
@group(0) @binding(3) var<storage, read> P: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
  let i = g.x + g.y * nw.x * 64u;
  if (i >= P[0]) { return; }
  C[i] = A[i] * bitcast<f32>(P[1]) + B[i];
}
"""
def f32(xs):
    return array.array("f", xs)
def read_f32(buf, n):
    out = array.array("f")
    out.frombytes(d.read_buffer(buf, 0, 4 * n))
    return out.tolist()
'''


def test_driver_info_limits_features(playground):
    r = playground.run_ok(PRELUDE + r'''
print(json.dumps({"available": browser.is_available(), "info": d.info, "limits": d.limits,
                  "features": sorted(d.features)}))
''')
    j = py_json(r)
    assert j["available"] is True
    assert j["info"]["backend"] == "WebGPU"
    assert set(j["info"]) >= {"vendor", "architecture", "device", "description", "adapter_type"}
    assert j["limits"]["max-compute-workgroups-per-dimension"] >= 65535
    assert j["limits"]["max-storage-buffer-binding-size"] >= 128 << 20
    assert j["limits"]["min-storage-buffer-offset-alignment"] in (32, 64, 128, 256)


def test_driver_dispatch_batching_and_readback(playground):
    r = playground.run_ok(PRELUDE + r'''
n = 1000
a, b, c = d.create_buffer(4 * n), d.create_buffer(4 * n), d.create_buffer(4 * n)
d.write_buffer(a, 0, f32(range(n)))
d.write_buffer(b, 0, f32([1.0] * n))
pipe = d.create_pipeline(AXPY)
s0 = d.submits
# c = 2a + b; then b = 3c + b (a chain: each dispatch sees the previous one's output)
d.dispatch(pipe, [c, a, b], struct.pack("<If", n, 2.0), ((n + 63) // 64, 1, 1))
# in place (b bound twice, output first): browsers reject writable aliasing, the driver copes
d.dispatch(pipe, [b, c, b], struct.pack("<If", n, 3.0), ((n + 63) // 64, 1, 1))
d.copy_buffer(b, 0, a, 0, 4 * n)
recorded_submits = d.submits - s0
got_a = read_f32(a, n)
got_c = read_f32(c, n)
# writes are ordered after recorded work
d.dispatch(pipe, [c, a, b], struct.pack("<If", n, 0.0), ((n + 63) // 64, 1, 1))
d.write_buffer(b, 0, f32([5.0] * n))
got_c2 = read_f32(c, n)
# partial reads at an offset, sizes not a multiple of 4 bytes
part = d.read_buffer(c, 8, 6)
odd = d.read_buffer(c, 9, 3)
print(json.dumps({"recorded_submits": recorded_submits, "dispatches": d.dispatches,
                  "a": got_a[:4] + got_a[-1:], "c": got_c[:4], "c2": got_c2[:3], "part": list(part), "odd": list(odd)}))
''')
    j = py_json(r)
    assert j["recorded_submits"] == 0  # nothing submitted until a read
    assert j["dispatches"] == 3
    # c = 2i + 1; b = 3c + 1 = 6i + 4
    assert j["c"] == [1.0, 3.0, 5.0, 7.0]
    assert j["a"] == [4.0, 10.0, 16.0, 22.0, 6 * 999 + 4.0]
    assert j["c2"] == [6 * 0 + 4.0, 6 * 1 + 4.0, 6 * 2 + 4.0]  # 0*a + b before the write of 5s
    assert bytes(j["part"]) == struct.pack("<f", 16.0) + struct.pack("<f", 22.0)[:2]
    assert bytes(j["odd"]) == struct.pack("<f", 16.0)[1:]


def test_driver_2d_grid_past_65535_workgroups(playground):
    # 65,535 workgroups per dimension at most: a large 1-D problem folds into a 2-D grid
    r = playground.run_ok(PRELUDE + r'''
n = 64 * 65535 + 1000
a, b, c = d.create_buffer(4 * n), d.create_buffer(4 * n), d.create_buffer(4 * n)
d.write_buffer(a, 0, f32([1.0]) * n)
d.write_buffer(b, 0, f32([0.5]) * n)
pipe = d.create_pipeline(AXPY)
groups = (n + 63) // 64
gx = 4096
d.dispatch(pipe, [c, a, b], struct.pack("<If", n, 2.0), (gx, (groups + gx - 1) // gx, 1))
tail = array.array("f"); tail.frombytes(d.read_buffer(c, 4 * (n - 3), 12))
d.synchronize()
for buf in (a, b, c):
    d.destroy_buffer(buf)
print(json.dumps(tail.tolist()))
''')
    assert py_json(r) == [2.5, 2.5, 2.5]


def test_driver_errors_are_python_exceptions(playground):
    r = playground.run_ok(PRELUDE + r'''
out = {}
try:
    d.create_pipeline("@compute @workgroup_size(1) fn main() { let x: f32 = 1u; }")
except RuntimeError as e:
    out["compile"] = str(e)
ok = d.create_pipeline(AXPY)
a = d.create_buffer(16)
try:
    d.dispatch(ok, [a, a], b"\0" * 8, (1, 1, 1))   # a binding missing
    d.synchronize()
except RuntimeError as e:
    out["validation"] = str(e)
# the driver stays usable
b = d.create_buffer(16)
d.write_buffer(b, 0, f32([1, 2, 3, 4]))
out["after"] = read_f32(b, 4)
print(json.dumps(out))
''')
    j = py_json(r)
    assert "WGSL compilation failed" in j["compile"]
    assert "WebGPU" in j["validation"]
    assert j["after"] == [1.0, 2.0, 3.0, 4.0]
