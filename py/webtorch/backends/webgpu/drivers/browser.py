"""Browser driver: the Driver protocol over the page's WebGPU (`navigator.gpu`), from Pyodide.

Runs in a Web Worker (or a page) under Pyodide. The playground's worker asks for the adapter
and device in JavaScript before Python starts and registers them as the JS module
`webtorch_gpu_host` (attributes `available`, `reason`, `adapter`, `device`, `info_json`,
`jspi`, and the helpers `writeBuffer`, `dispatch`, `wait`, `readMapped`); elsewhere the driver
asks `navigator.gpu` itself, through `pyodide.ffi.run_sync`, and does without the helpers.
torch.compile's replay is `replay.js` (shipped beside this module): the worker bundles it, so
the page needs no eval; a bare Pyodide evaluates it here.

Pyodide rules followed here:
* Descriptors are plain JS objects: `to_js(d, dict_converter=js.Object.fromEntries)`.
* The only waits are `run_sync(promise)` (JSPI): reads, `synchronize`, pipeline compile
  checks. They need the Python entry to be `runPythonAsync`/`callPromising` (the playground
  runs user code that way); without JSPI a read raises a clear RuntimeError.
* ONE wait per read or `synchronize` (each `run_sync` costs ~0.2-0.5 ms on SwiftShader).
  One validation error scope stays open over all work recorded since the last wait (opened
  by the first command encoder, spanning any number of submits); the read's copy goes into
  the same command encoder as the pending work (one submit), and the scope's pop is awaited
  together with the staging buffer's `mapAsync` (or `onSubmittedWorkDone`) as one promise:
  the host's `wait` helper, or `asyncio.gather` without the host (JS promises returned to
  Python are futures, which JS's `Promise.all` cannot take back). A validation error in any of
  that work raises RuntimeError from that wait. A `synchronize` with nothing submitted since
  the last wait returns without waiting.
* Every JS object held from Python is a JsProxy released by reference counting (CPython frees
  them deterministically when the backend drops a handle); the one `create_proxy`
  (the device-lost callback) is destroyed by `close()`. The read staging buffer is created
  once and reused (grown by doubling; reads above 16 MiB use a one-off buffer, destroyed).
* Uploads pass the Python buffer to JS as a borrowed PyProxy, whose `getBuffer()` is a view
  onto the WebAssembly heap: `queue.writeBuffer` copies straight from it (no extra copy).
"""
import asyncio
import json
import re
from pathlib import Path

from .driver import ARENA_BYTES, Driver

_LIMIT_NAMES = (
    "maxBufferSize", "maxStorageBufferBindingSize", "maxStorageBuffersPerShaderStage",
    "maxComputeWorkgroupStorageSize", "maxComputeInvocationsPerWorkgroup",
    "maxComputeWorkgroupSizeX", "maxComputeWorkgroupSizeY", "maxComputeWorkgroupSizeZ",
    "maxComputeWorkgroupsPerDimension", "maxBindGroups", "maxBindingsPerBindGroup",
    "maxUniformBufferBindingSize", "minStorageBufferOffsetAlignment",
    "minUniformBufferOffsetAlignment",
)
_STAGING_KEEP = 16 << 20     # largest read staging buffer kept for reuse

# GPUBufferUsage / GPUMapMode bits (fixed by the WebGPU spec)
_MAP_READ, _COPY_SRC, _COPY_DST, _STORAGE = 0x0001, 0x0004, 0x0008, 0x0080
_MODE_READ = 0x0001


def _kebab(name):
    return re.sub(r"([A-Z])", r"-\1", name).lower()


def _null(x):
    """JS null/undefined arrive as None or as pyodide's JsNull."""
    return x is None or type(x).__name__ == "JsNull"


def _host():
    try:
        import webtorch_gpu_host
        return webtorch_gpu_host
    except ImportError:
        return None


def can_wait():
    """True when synchronous waits (`run_sync`, JSPI) are possible right now."""
    try:
        from pyodide.ffi import can_run_sync
        return bool(can_run_sync())
    except ImportError:
        return False


def unavailable_reason():
    """None when a browser WebGPU device can be used, else why not (a short sentence)."""
    try:
        import js  # noqa: F401
    except ImportError:
        return "not running in a browser (no Pyodide `js` module)"
    host = _host()
    if host is not None:
        if not host.available:
            return str(host.reason) or "WebGPU is not available"
        return None
    import js
    if not hasattr(js, "navigator") or not hasattr(js.navigator, "gpu") or _null(js.navigator.gpu):
        return "WebGPU is not available (navigator.gpu is missing)"
    try:
        import pyodide.ffi
        if not hasattr(pyodide.ffi, "run_sync"):
            return "this Pyodide has no run_sync (JSPI)"
    except ImportError:
        return "no pyodide.ffi"
    return None


def is_available():
    return unavailable_reason() is None


class _Pipeline:
    """A compute pipeline and its bind group layout (group 0)."""
    __slots__ = ("pipeline", "layout", "entry_point")

    def __init__(self, pipeline, layout, entry_point):
        self.pipeline, self.layout, self.entry_point = pipeline, layout, entry_point


class BrowserDriver(Driver):
    def __init__(self, device=None, adapter=None):
        import js
        from pyodide.ffi import to_js
        self._js = js
        self._to_js = to_js
        host = _host()
        self._host_write = getattr(host, "writeBuffer", None) if host is not None else None
        self._host_dispatch = getattr(host, "dispatch", None) if host is not None else None
        self._host_wait = getattr(host, "wait", None) if host is not None else None
        self._host_read = getattr(host, "readMapped", None) if host is not None else None
        info_json = None
        if _null(device) and host is not None:
            if not host.available:
                raise RuntimeError(f"WebGPU is not available: {host.reason}")
            device, adapter, info_json = host.device, host.adapter, host.info_json
        if _null(device):
            device, adapter = self._request_device()
        self.device = device
        self.queue = device.queue
        self.info = self._make_info(adapter, info_json)
        lim = device.limits
        self.limits = {}
        for name in _LIMIT_NAMES:
            v = getattr(lim, name, None)
            if v is not None:
                self.limits[_kebab(name)] = int(v)
        self.features = set(js.Array.from_(device.features).to_py())
        self._align = max(4, int(self.limits.get("min-storage-buffer-offset-alignment", 256)))
        self._arena_buf = self._create(ARENA_BYTES, _STORAGE | _COPY_DST)
        self._arena = bytearray()
        self._encoder = None
        self._pass = None
        self._pending = 0
        self._scope_open = False   # a validation error scope is open over unwaited work
        self._unwaited = False     # work submitted (or written) since the last wait
        self._staging = None       # MAP_READ buffer reused by read_buffer
        self._staging_size = 0
        self._graveyard = []       # buffers to destroy right after the next submit
        self.lost = None
        self.dispatches = 0
        self.submits = 0
        from pyodide.ffi import create_proxy
        self._on_lost = create_proxy(self._lost_cb)
        self._lost_promise = device.lost.then(self._on_lost)

    # ---- setup ---------------------------------------------------------------------------
    def _request_device(self):
        from pyodide.ffi import run_sync
        js = self._js
        gpu = getattr(js.navigator, "gpu", None)
        if _null(gpu):
            raise RuntimeError("WebGPU is not available (navigator.gpu is missing)")
        adapter = run_sync(gpu.requestAdapter(self._obj({"powerPreference": "high-performance"})))
        if _null(adapter):
            raise RuntimeError("WebGPU found no adapter")
        req = {}
        for name in _LIMIT_NAMES:
            if name.startswith("max"):
                v = getattr(adapter.limits, name, None)
                if v is not None:
                    req[name] = v
        feats = [f for f in ("shader-f16",) if adapter.features.has(f)]
        device = run_sync(adapter.requestDevice(self._obj({"requiredFeatures": feats,
                                                            "requiredLimits": req})))
        return device, adapter

    def _make_info(self, adapter, info_json):
        d = {}
        if info_json:
            d = json.loads(str(info_json)) or {}
        else:
            ai = getattr(adapter, "info", None) if not _null(adapter) else None
            if _null(ai):
                ai = getattr(self.device, "adapterInfo", None)
            if not _null(ai):
                d = {k: str(getattr(ai, k, "") or "") for k in ("vendor", "architecture", "device", "description")}
                d["isFallbackAdapter"] = bool(getattr(ai, "isFallbackAdapter", False))
        text = " ".join(str(d.get(k, "")) for k in ("vendor", "architecture", "description")).lower()
        cpu = d.get("isFallbackAdapter") or "swiftshader" in text or "llvmpipe" in text
        return {
            "vendor": d.get("vendor", ""), "architecture": d.get("architecture", ""),
            "device": d.get("device", ""), "description": d.get("description", ""),
            "backend": "WebGPU", "adapter_type": "CPU" if cpu else "unknown",
        }

    def _lost_cb(self, info):
        try:
            self.lost = f"{info.reason}: {info.message}"
        except Exception:
            self.lost = "unknown reason"

    def close(self):
        """Release the driver's own GPU objects and its JS callback proxy."""
        if self._on_lost is not None:
            self._on_lost.destroy()
            self._on_lost = None
        for b in [self._arena_buf, self._staging] + self._graveyard:
            if b is not None:
                b.destroy()
        self._arena_buf = self._staging = None
        self._graveyard = []
        self._lost_promise = None

    # ---- helpers -------------------------------------------------------------------------
    def _obj(self, d):
        return self._to_js(d, dict_converter=self._js.Object.fromEntries)

    def _create(self, size, usage):
        return self.device.createBuffer(self._obj({"size": size, "usage": usage}))

    def _check(self):
        if self.lost is not None:
            raise RuntimeError(f"WebGPU device was lost: {self.lost}")

    def _wrap(self, e):
        msg = getattr(e, "message", None) or str(e)
        if self.lost is not None or "lost" in msg.lower():
            self.lost = self.lost or msg
            return RuntimeError(f"WebGPU device was lost: {self.lost}")
        return RuntimeError(f"WebGPU error: {msg}")

    def _wait(self, promise):
        from pyodide.ffi import run_sync
        try:
            return run_sync(promise)
        except RuntimeError as e:
            if "run_sync" in str(e) or "stack switching" in str(e).lower():
                raise RuntimeError(
                    "waiting for the GPU needs JSPI: run this code with pyodide.runPythonAsync "
                    f"(the playground does) in a browser with JSPI ({e})") from None
            raise

    def _wait_once(self, staging=None, size=0):
        """The one wait of a read (`staging` given: wait for it to map for reading, `size`
        bytes) or of a synchronize (wait for the queue): pops the open error scope in the same
        promise. Raises RuntimeError for a validation error or a failed wait; on success the
        staging buffer is left mapped."""
        pop, self._scope_open = self._scope_open, False
        try:
            if self._host_wait is not None:
                err = self._wait(self._host_wait(self.device, pop, staging, size))
            else:
                err = self._wait_all(pop, staging, size)
        except RuntimeError:
            raise                       # e.g. _wait's "needs JSPI"
        except Exception as e:
            raise self._wrap(e) from None
        if not _null(err):
            err = str(err)
            if self.lost is not None or "lost" in err.lower():
                self.lost = self.lost or err
                raise RuntimeError(f"WebGPU device was lost: {self.lost}")
            raise RuntimeError(err)
        self._unwaited = False

    def _wait_all(self, pop, staging, size):
        """The host's `wait` helper in Python (the JS promises arrive as futures here):
        asyncio.gather in one run_sync, a little slower than the helper."""
        aws = [self.device.popErrorScope()] if pop else []
        aws.append(self.queue.onSubmittedWorkDone() if staging is None
                   else staging.mapAsync(_MODE_READ, 0, size))
        res = self._wait(asyncio.gather(*aws, return_exceptions=True))
        err = None
        if pop:
            if isinstance(res[0], BaseException):
                err = f"WebGPU error: {res[0]}"
            elif not _null(res[0]):
                err = f"WebGPU validation error: {res[0].message}"
        if isinstance(res[-1], BaseException):
            return err or f"WebGPU error: {res[-1]}"
        if err and staging is not None:
            staging.unmap()
        return err

    def _enc(self):
        if self._encoder is None:
            if not self._scope_open:
                self.device.pushErrorScope("validation")
                self._scope_open = True
            self._encoder = self.device.createCommandEncoder()
        return self._encoder

    def _write(self, buf, offset, mv):
        """queue.writeBuffer from a contiguous byte memoryview (length a multiple of 4)."""
        if self._host_write is not None:
            self._host_write(self.queue, buf, offset, mv)   # zero-copy view of the wasm heap
        else:
            self.queue.writeBuffer(buf, offset, self._to_js(mv))

    # ---- buffers -------------------------------------------------------------------------
    def create_buffer(self, size):
        self._check()
        try:
            return self._create(max(4, (int(size) + 3) & ~3), _STORAGE | _COPY_SRC | _COPY_DST)
        except Exception as e:
            raise self._wrap(e) from None

    def destroy_buffer(self, buf):
        # may run from a finalizer in the middle of recording (driver.py): never flush here;
        # a buffer that recorded work may use is destroyed right after that work's submit
        if self._encoder is not None:
            self._graveyard.append(buf)
        else:
            buf.destroy()

    def write_buffer(self, buf, offset, data):
        self._check()
        mv = memoryview(data)
        if not mv.c_contiguous:
            mv = memoryview(mv.tobytes())
        mv = mv.cast("B")
        n = mv.nbytes
        if n == 0:
            return
        if n % 4:
            mv = memoryview(bytes(mv) + b"\0" * (-n % 4))
        # queue.writeBuffer runs before command buffers not yet submitted: submit them first
        if self._pending:
            self.flush()
        try:
            self._write(buf, int(offset), mv)
        except Exception as e:
            raise self._wrap(e) from None
        self._unwaited = True

    def read_buffer(self, buf, offset, size):
        self._check()
        size, offset = int(size), int(offset)
        if size == 0:
            self.synchronize()
            return b""
        delta = offset & 3            # copies need 4-byte aligned offsets and sizes
        offset -= delta
        padded = (delta + size + 3) & ~3
        st = self._staging_buffer(padded)
        try:
            try:   # the copy joins the pending work: one submit, then one wait
                self._end_pass()
                self._enc().copyBufferToBuffer(buf, offset, st, 0, padded)
                self._pending += 1
                self.flush()
            except RuntimeError:
                raise
            except Exception as e:
                raise self._wrap(e) from None
            try:
                self._wait_once(st, padded)
            except BaseException:      # the map may still be pending: use a fresh buffer next time
                if st is self._staging:
                    self._staging, self._staging_size = None, 0
                raise
            out = bytearray(padded)
            if self._host_read is not None:
                self._host_read(st, padded, out)     # copies into `out` and unmaps
            else:
                try:
                    self._js.Uint8Array.new(st.getMappedRange(0, padded)).assign_to(out)
                finally:
                    st.unmap()
        finally:
            if st is not self._staging:
                st.destroy()
        return out if padded == size else memoryview(out)[delta:delta + size]

    def _staging_buffer(self, size):
        """The reused MAP_READ buffer (grown by doubling); a one-off buffer past
        _STAGING_KEEP, which read_buffer destroys after the read."""
        if size > _STAGING_KEEP:
            return self._create(size, _MAP_READ | _COPY_DST)
        if self._staging is None or self._staging_size < size:
            if self._staging is not None:
                self._staging.destroy()
            cap = 256
            while cap < size:
                cap *= 2
            self._staging = self._create(cap, _MAP_READ | _COPY_DST)
            self._staging_size = cap
        return self._staging

    def copy_buffer(self, src, src_offset, dst, dst_offset, size):
        self._check()
        if size == 0:
            return
        self._end_pass()
        self._enc().copyBufferToBuffer(src, int(src_offset), dst, int(dst_offset), int(size))
        self._pending += 1

    # ---- compute -------------------------------------------------------------------------
    def create_pipeline(self, code, entry_point="main"):
        self._check()
        dev = self.device
        waits = can_wait()
        dev.pushErrorScope("validation")
        try:
            module = dev.createShaderModule(self._obj({"code": code}))
            info = module.getCompilationInfo() if waits else None
            pipe = dev.createComputePipeline(self._obj({
                "layout": "auto", "compute": {"module": module, "entryPoint": entry_point}}))
        finally:
            scope = dev.popErrorScope()
        if waits:   # one wait for both: the compiler's messages and the scope
            info, err = self._wait(asyncio.gather(info, scope))
            errors = [f"{m.lineNum}:{m.linePos}: {m.message}" for m in info.messages
                      if m.type == "error"]
            if errors:
                raise RuntimeError("WGSL compilation failed:\n" + "\n".join(errors))
            if not _null(err):
                raise RuntimeError(f"WebGPU pipeline creation failed: {err.message}")
        return _Pipeline(pipe, pipe.getBindGroupLayout(0), entry_point)

    def dispatch(self, pipeline, buffers, params, workgroups):
        self._check()
        start, psize = self._reserve_params(params)
        bound = self._dealias(buffers)
        x, y, z = (tuple(workgroups) + (1, 1))[:3]
        try:
            self._enc()
            if self._pass is None:
                self._pass = self._encoder.beginComputePass()
            if self._host_dispatch is not None:   # one JS call, descriptors built in JS
                self._host_dispatch(self.device, self._pass, pipeline.pipeline, pipeline.layout,
                                    self._arena_buf, start, psize, int(x), int(y), int(z), *bound)
            else:
                entries = [{"binding": i, "resource": {"buffer": b}} for i, b in enumerate(bound)]
                entries.append({"binding": len(bound),
                                "resource": {"buffer": self._arena_buf, "offset": start, "size": psize}})
                bg = self.device.createBindGroup(self._obj({"layout": pipeline.layout, "entries": entries}))
                p = self._pass
                p.setPipeline(pipeline.pipeline)
                p.setBindGroup(0, bg)
                p.dispatchWorkgroups(int(x), int(y), int(z))
        except Exception as e:
            raise self._wrap(e) from None
        self._pending += 1
        self.dispatches += 1

    def _dealias(self, buffers):
        """Browsers (Dawn) reject a buffer bound twice in one dispatch when a binding is
        writable, and every binding here is read_write. The FIRST occurrence of a buffer is
        bound as is; each later occurrence gets a snapshot copy taken just before the
        dispatch. Correct for the in-place element-wise case with the output first (binding
        0): the other bindings read the old values, as they would without aliasing."""
        if len(buffers) < 2 or len(set(map(id, buffers))) == len(buffers):
            return buffers   # the common case; aliasing is detected by handle identity
        out = list(buffers)
        for j in range(1, len(out)):
            b = out[j]
            if any(b is a for a in buffers[:j]):
                size = int(b.size)
                snap = self._create(size, _STORAGE | _COPY_SRC | _COPY_DST)
                self._end_pass()
                self._enc().copyBufferToBuffer(b, 0, snap, 0, size)
                self._graveyard.append(snap)
                out[j] = snap
        return out

    def _submit(self, arena, commands):
        if arena:
            if len(arena) % 4:
                arena.extend(b"\0" * (-len(arena) % 4))
            self._write(self._arena_buf, 0, memoryview(arena))
        self.queue.submit(self._js.Array.of(commands))

    def _submitted(self):
        self._unwaited = True
        for b in self._graveyard:
            b.destroy()      # after submit: the GPU keeps it until the work is done
        self._graveyard = []

    def synchronize(self):
        self.flush()
        if self._scope_open or self._unwaited:
            self._wait_once()
        self._check()

    # ---- capture and replay (capture.py) -------------------------------------------------
    def build_replay(self, prog, plan):
        """A captured program's command list kept in JavaScript: a replay is one JS call."""
        return _BrowserReplay(self, prog, plan)


def _replay_function(js):
    """replay.js's function: the page's global `webtorchReplay` (the playground's worker bundles
    the file, so its CSP allows no eval), else the file evaluated here (a bare Pyodide)."""
    fn = getattr(js, "webtorchReplay", None)
    if _null(fn):
        from pyodide.code import run_js
        fn = run_js((Path(__file__).parent / "replay.js").read_text())
    return fn


class _BrowserReplay:
    def __init__(self, d, prog, plan):
        self.d = d
        ops = []
        for c in plan:
            if c[0] == "d":
                _, pipe, bufs, start, size, wg = c
                bound = list(bufs)
                for j in range(1, len(bufs)):       # aliased bindings: a snapshot, as _dealias
                    if any(bufs[j] is a for a in bufs[:j]):
                        n = int(bufs[j].size)
                        snap = d._create(n, _STORAGE | _COPY_SRC | _COPY_DST)
                        prog._own.append(snap)
                        ops.append([1, bufs[j], 0, snap, 0, n])
                        bound[j] = snap
                entries = [{"binding": i, "resource": {"buffer": b}} for i, b in enumerate(bound)]
                entries.append({"binding": len(bound), "resource": {"buffer": prog._params, "offset": start,
                                                                    "size": size}})
                bg = d.device.createBindGroup(d._obj({"layout": pipe.layout, "entries": entries}))
                ops.append([0, pipe.pipeline, bg, *(tuple(wg) + (1, 1))[:3]])
            elif c[0] == "c":
                ops.append([1, *c[1:]])
            else:
                ops.append([1, prog._consts, *c[1:]])
        self.ops = d._to_js(ops)
        self.params = prog._params
        self.fn = _replay_function(d._js)

    def run(self, pre, post, words):
        d = self.d
        scope = not d._scope_open
        patches = [x for off, w in words for x in (off, *w)] if words else None
        self.fn(d.device, scope, self.params, patches, self.ops,
                [x for c in pre for x in c], [x for c in post for x in c])
        d._scope_open = True
        d._unwaited = True
