"""Native driver: the Driver protocol over wgpu-py (Vulkan / Metal / D3D12, or lavapipe).

Dispatches are recorded into one command encoder / compute pass and submitted in batches
(on read, on synchronize, when the parameter arena fills or a batch grows long). Data
uploads go through a mapped staging buffer and a recorded copy, so they stay ordered with
the recorded dispatches without forcing a submit. wgpu 0.32's
`on_submitted_work_done_sync` is broken, so the wait is a small `queue.read_buffer`.
"""
import os
import struct
import tempfile

from .driver import ARENA_BYTES, Driver

_WANTED_LIMITS = (
    "max-buffer-size", "max-storage-buffer-binding-size", "max-storage-buffers-per-shader-stage",
    "max-compute-workgroup-storage-size", "max-compute-invocations-per-workgroup",
    "max-compute-workgroup-size-x", "max-compute-workgroup-size-y",
    "max-compute-workgroup-size-z", "max-compute-workgroups-per-dimension",
    "max-bind-groups", "max-bindings-per-bind-group",
)
_MAX_BIND_GROUPS = 8192      # cached bind groups (cleared when full or a buffer is destroyed)


def _lost(e):
    return RuntimeError(f"WebGPU device was lost: {e}")


def _quiet_mesa():
    """Mesa's Vulkan loader prints "XDG_RUNTIME_DIR is invalid" on headless machines (CI, servers)
    where the variable is unset; give it a private directory so user output stays clean."""
    if os.name == "posix" and not os.environ.get("XDG_RUNTIME_DIR"):
        d = os.path.join(tempfile.gettempdir(), f"webtorch-xdg-{os.getuid()}")
        os.makedirs(d, mode=0o700, exist_ok=True)
        os.environ["XDG_RUNTIME_DIR"] = d


class NativeDriver(Driver):
    def __init__(self, power_preference="high-performance"):
        _quiet_mesa()
        import wgpu
        self._wgpu = wgpu
        adapter = wgpu.gpu.request_adapter_sync(power_preference=power_preference)
        if adapter is None:
            raise RuntimeError("no WebGPU adapter found")
        ai = adapter.info
        alim = dict(adapter.limits)
        feats = ["shader-f16"] if "shader-f16" in adapter.features else []
        req = {k: alim[k] for k in _WANTED_LIMITS if k in alim}
        self.device = adapter.request_device_sync(required_features=feats, required_limits=req)
        self.queue = self.device.queue
        self.info = {
            "vendor": ai.get("vendor", ""), "architecture": ai.get("architecture", ""),
            "device": ai.get("device", ""), "description": ai.get("description", ""),
            "backend": ai.get("backend_type", ""), "adapter_type": ai.get("adapter_type", "unknown"),
        }
        self.limits = dict(self.device.limits)
        self.features = set(self.device.features)
        self._align = max(4, int(self.limits.get("min-storage-buffer-offset-alignment", 256)))
        U = wgpu.BufferUsage
        self._usage = U.STORAGE | U.COPY_SRC | U.COPY_DST
        self._arena_buf = self.device.create_buffer(size=ARENA_BYTES, usage=U.STORAGE | U.COPY_DST)
        self._arena = bytearray()
        self._encoder = None
        self._pass = None
        self._staging = []        # staging buffers alive until the batch is submitted
        self._graveyard = []      # buffers destroyed while work using them was unsubmitted
        self._bind_groups = {}
        self._pending = 0         # dispatches + copies recorded since the last submit
        self._layouts = {}
        self._sync_buf = self.device.create_buffer(size=16, usage=self._usage)
        self.lost = None
        self.dispatches = 0
        self.submits = 0

    # ---- helpers -------------------------------------------------------------------------
    def _check(self):
        if self.lost is not None:
            raise _lost(self.lost)

    def _wrap(self, e):
        msg = str(e)
        if "lost" in msg.lower():
            self.lost = msg
            return _lost(msg)
        return RuntimeError(f"WebGPU error: {msg}")

    def _enc(self):
        if self._encoder is None:
            self._encoder = self.device.create_command_encoder()
        return self._encoder

    # ---- buffers -------------------------------------------------------------------------
    def create_buffer(self, size):
        self._check()
        try:
            return self.device.create_buffer(size=max(4, (size + 3) & ~3), usage=self._usage)
        except Exception as e:
            raise self._wrap(e) from None

    def destroy_buffer(self, buf):
        # may run from a finalizer in the middle of recording: never flush here; a buffer
        # used by recorded work is destroyed once that work is submitted
        self._bind_groups.clear()
        if self._pending:
            self._graveyard.append(buf)
        else:
            buf.destroy()

    def write_buffer(self, buf, offset, data):
        self._check()
        mv = memoryview(data).cast("B")
        n = mv.nbytes
        if n == 0:
            return
        if self._pending == 0:
            self.queue.write_buffer(buf, offset, mv)   # ordered before the next submit
            return
        # work is recorded but not submitted: a recorded copy keeps call order
        st = self.device.create_buffer(size=(n + 3) & ~3, usage=self._wgpu.BufferUsage.COPY_SRC,
                                       mapped_at_creation=True)
        st.write_mapped(mv if n % 4 == 0 else bytes(mv) + b"\0" * (-n % 4))
        st.unmap()
        self._end_pass()
        self._enc().copy_buffer_to_buffer(st, 0, buf, offset, (n + 3) & ~3)
        self._staging.append(st)
        self._pending += 1

    def read_buffer(self, buf, offset, size):
        self.flush()
        if size == 0:
            return b""
        try:
            return self.queue.read_buffer(buf, offset, size)
        except Exception as e:
            raise self._wrap(e) from None

    def copy_buffer(self, src, src_offset, dst, dst_offset, size):
        self._check()
        if size == 0:
            return
        self._end_pass()
        self._enc().copy_buffer_to_buffer(src, src_offset, dst, dst_offset, size)
        self._pending += 1

    # ---- compute -------------------------------------------------------------------------
    def create_pipeline(self, code, entry_point="main"):
        self._check()
        try:
            mod = self.device.create_shader_module(code=code)
            pipe = self.device.create_compute_pipeline(
                layout="auto", compute={"module": mod, "entry_point": entry_point})
        except Exception as e:
            raise self._wrap(e) from None
        self._layouts[id(pipe)] = pipe.get_bind_group_layout(0)
        return pipe

    def dispatch(self, pipeline, buffers, params, workgroups):
        self._check()
        start, psize = self._reserve_params(params)
        # bind groups are cached by (pipeline, buffers, arena slot): loops that repeat the
        # same ops on the same (pooled) buffers skip their creation, the bulk of the
        # per-dispatch CPU cost in wgpu-py
        key = (id(pipeline), start, psize, *map(id, buffers))
        bg = self._bind_groups.get(key)
        try:
            if bg is None:
                entries = [{"binding": i, "resource": {"buffer": b, "offset": 0, "size": b.size}}
                           for i, b in enumerate(buffers)]
                entries.append({"binding": len(buffers),
                                "resource": {"buffer": self._arena_buf, "offset": start, "size": psize}})
                bg = self.device.create_bind_group(layout=self._layouts[id(pipeline)], entries=entries)
                if len(self._bind_groups) >= _MAX_BIND_GROUPS:
                    self._bind_groups.clear()
                self._bind_groups[key] = (bg, buffers)
            else:
                bg = bg[0]
            if self._pass is None:
                self._pass = self._enc().begin_compute_pass()
            self._pass.set_pipeline(pipeline)
            self._pass.set_bind_group(0, bg)
            self._pass.dispatch_workgroups(*workgroups)
        except Exception as e:
            raise self._wrap(e) from None
        self._pending += 1
        self.dispatches += 1

    def _submit(self, arena, commands):
        if arena:
            self.queue.write_buffer(self._arena_buf, 0, bytes(arena))
        self.queue.submit([commands])

    def _submitted(self):
        for st in self._staging + self._graveyard:
            st.destroy()
        self._staging, self._graveyard = [], []

    def synchronize(self):
        self.flush()
        try:
            self.queue.read_buffer(self._sync_buf, 0, 4)
        except Exception as e:
            raise self._wrap(e) from None

    # ---- capture and replay (capture.py) -------------------------------------------------
    def build_replay(self, prog, plan):
        """A captured program's command list with its bind groups made once (`_Replay`)."""
        return _Replay(self, prog, plan)


class _Replay:
    """wgpu-py: bind groups built once; a replay encodes the list into one command buffer. The
    compute-pass calls go straight to wgpu-native's C functions (wgpu-py's wrappers cost ~10 us
    per call; the bind groups were validated when built, and the encoder's errors still raise
    at finish/submit)."""

    def __init__(self, d, prog, plan):
        from wgpu.backends.wgpu_native._ffi import ffi, lib
        dev = d.device
        self.d = d
        self.keep = []                      # the wgpu objects whose C handles the list holds
        self.ops = []
        self.fns = (lib.wgpuComputePassEncoderSetPipeline, lib.wgpuComputePassEncoderSetBindGroup,
                    lib.wgpuComputePassEncoderDispatchWorkgroups, ffi.NULL, lib.wgpuCommandEncoderCopyBufferToBuffer)
        cur = None
        for c in plan:
            if c[0] == "d":
                _, pipe, bufs, start, size, wg = c
                entries = [{"binding": i, "resource": {"buffer": b, "offset": 0, "size": b.size}}
                           for i, b in enumerate(bufs)]
                entries.append({"binding": len(bufs),
                                "resource": {"buffer": prog._params, "offset": start, "size": size}})
                bg = dev.create_bind_group(layout=d._layouts[id(pipe)], entries=entries)
                self.keep.append(bg)
                if cur is None:
                    cur = []
                    self.ops.append((True, cur))
                cur.append((pipe._internal, bg._internal, *(tuple(wg) + (1, 1))[:3]))
            else:
                cur = None
                src, so, dst, do, n = c[1:] if c[0] == "c" else (prog._consts, *c[1:])
                self.ops.append((False, (src._internal, so, dst._internal, do, n)))
        self.params = prog._params

    def run(self, pre, post, words):
        d = self.d
        q = d.queue
        if words:
            for off, w in words:
                q.write_buffer(self.params, off, struct.pack("<3I", *w))
        set_pipeline, set_bind_group, dispatch, null, copy = self.fns
        enc = d.device.create_command_encoder()
        ei = enc._internal
        for src, so, dst, do, n in pre:
            copy(ei, src._internal, so, dst._internal, do, n)
        for is_pass, items in self.ops:
            if is_pass:
                p = enc.begin_compute_pass()
                pi = p._internal
                last = None
                for pipe, bg, x, y, z in items:
                    if pipe != last:
                        set_pipeline(pi, pipe)
                        last = pipe
                    set_bind_group(pi, 0, bg, 0, null)
                    dispatch(pi, x, y, z)
                p.end()
            else:
                copy(ei, *items)
        for src, so, dst, do, n in post:
            copy(ei, src._internal, so, dst._internal, do, n)
        q.submit([enc.finish()])
