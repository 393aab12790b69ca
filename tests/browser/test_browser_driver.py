"""py/webtorch/backends/webgpu/drivers/browser.py: the Driver protocol over the page's WebGPU,
exercised directly in the playground's worker (needs only the driver module from the wheel)."""
import struct

import pytest

from pwutil import py_json

PRELUDE = r'''
import array, json, struct
from webtorch.backends.webgpu.drivers import browser
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


WAITS = r'''
import pyodide.ffi
_run_sync = pyodide.ffi.run_sync
waits = [0]
def _counting(p):
    waits[0] += 1
    return _run_sync(p)
def count_waits(fn):
    """(result, run_sync calls, queue submits) of fn()"""
    pyodide.ffi.run_sync = _counting
    w0, s0 = waits[0], d.submits
    try:
        r = fn()
    finally:
        pyodide.ffi.run_sync = _run_sync
    return r, waits[0] - w0, d.submits - s0
'''


def test_driver_one_wait_per_read(playground):
    # each run_sync (JSPI) costs ~0.2-0.5 ms on SwiftShader: a read or a synchronize waits once
    # (the error scope's pop and the map together), whatever was recorded or submitted before
    r = playground.run_ok(PRELUDE + WAITS + r'''
n = 256
a, b, c = d.create_buffer(4 * n), d.create_buffer(4 * n), d.create_buffer(4 * n)
d.write_buffer(a, 0, f32(range(n)))
d.write_buffer(b, 0, f32([1.0] * n))
pipe = d.create_pipeline(AXPY)
out = {}
def chain(k):
    for _ in range(k):
        d.dispatch(pipe, [c, a, b], struct.pack("<If", n, 2.0), (4, 1, 1))
out["idle_read"] = count_waits(lambda: read_f32(c, 2))[1:]
chain(3)
out["read"] = count_waits(lambda: read_f32(c, 2))
def batches():   # three submits before the read (a write flushes recorded work)
    chain(1); d.write_buffer(b, 0, f32([1.0] * n)); chain(1); d.flush(); chain(1)
    return read_f32(c, 2)
out["read_after_batches"] = count_waits(batches)
chain(2)
out["sync"] = count_waits(d.synchronize)[1:]
out["sync_idle"] = count_waits(d.synchronize)[1:]
d.write_buffer(b, 0, f32([1.0] * n))
out["sync_after_write"] = count_waits(d.synchronize)[1:]
st = d._staging
read_f32(a, 64); read_f32(a, 1)
out["staging_reused"] = d._staging is st
browser._STAGING_KEEP = 512      # a read larger than this uses a one-off staging buffer
try:
    big = read_f32(a, n)
finally:
    browser._STAGING_KEEP = 16 << 20
out["staging_kept_after_big"] = d._staging is st
out["big"] = big[:3] + big[-1:]
out["pipeline_waits"] = count_waits(lambda: d.create_pipeline(AXPY.replace("* bitcast", "- bitcast")))[1]
print(json.dumps(out))
''')
    j = py_json(r)
    assert j["idle_read"] == [1, 1]
    assert j["read"] == [[1.0, 3.0], 1, 1]               # 3 dispatches + the copy: one submit
    assert j["read_after_batches"] == [[1.0, 3.0], 1, 3]
    assert j["sync"] == [1, 1]
    assert j["sync_idle"] == [0, 0]                      # nothing submitted since the last wait
    assert j["sync_after_write"] == [1, 0]
    assert j["staging_reused"] and j["staging_kept_after_big"]
    assert j["big"] == [0.0, 1.0, 2.0, 255.0]
    assert j["pipeline_waits"] == 1                      # compile messages + error scope together


@pytest.mark.parametrize("host_helpers", [True, False])
def test_driver_validation_error_surfaces_at_next_read(playground, host_helpers):
    # an invalid dispatch in a batch submitted earlier (a write flushed it) raises from the
    # next read, once; with and without the host's JS helpers (outside the playground)
    r = playground.run_ok(PRELUDE + WAITS + f"HOST = {host_helpers}\n" + r'''
if not HOST:
    d._host_wait = d._host_read = None
ok = d.create_pipeline(AXPY)
a, b = d.create_buffer(16), d.create_buffer(16)
out = {}
d.write_buffer(b, 0, f32([1, 2, 3, 4]))
d.dispatch(ok, [a, a], b"\0" * 8, (1, 1, 1))   # a binding missing
d.write_buffer(a, 0, f32([5, 6, 7, 8]))          # submits the invalid batch
d.dispatch(ok, [a, b, b], struct.pack("<If", 4, 1.0), (1, 1, 1))
try:
    count_waits(lambda: read_f32(b, 4))
except RuntimeError as e:
    out["read"] = str(e)
out["waits"] = waits[0]
out["after"] = read_f32(b, 4)
out["after_a"] = read_f32(a, 4)
d.dispatch(ok, [a, a], b"\0" * 8, (1, 1, 1))
try:
    d.synchronize()
except RuntimeError as e:
    out["sync"] = str(e)
d.synchronize()
out["partial"] = list(d.read_buffer(b, 5, 2))
print(json.dumps(out))
''')
    j = py_json(r)
    assert "WebGPU validation error" in j["read"]
    assert j["waits"] == 1
    assert j["after"] == [1.0, 2.0, 3.0, 4.0]
    assert j["after_a"] == [2.0, 4.0, 6.0, 8.0]   # the valid batch after the invalid one ran: a = b + b
    assert "WebGPU validation error" in j["sync"]
    assert bytes(j["partial"]) == struct.pack("<f", 2.0)[1:3]


def test_driver_destroy_while_recording_does_not_submit(playground):
    # destroy_buffer may run from a finalizer mid-recording: it defers, never flushes
    r = playground.run_ok(PRELUDE + r'''
n = 64
a, b, c, tmp = (d.create_buffer(4 * n) for _ in range(4))
d.write_buffer(a, 0, f32(range(n)))
d.write_buffer(b, 0, f32([1.0] * n))
pipe = d.create_pipeline(AXPY)
s0 = d.submits
d.dispatch(pipe, [c, a, b], struct.pack("<If", n, 2.0), (1, 1, 1))
d.destroy_buffer(tmp)
submits = d.submits - s0
print(json.dumps({"submits": submits, "graveyard": len(d._graveyard), "c": read_f32(c, 3),
                  "graveyard_after": len(d._graveyard)}))
''')
    assert py_json(r) == {"submits": 0, "graveyard": 1, "c": [1.0, 3.0, 5.0], "graveyard_after": 0}
