"""Native driver: the Driver protocol over wgpu-py (Vulkan / Metal / D3D12, or lavapipe).

Dispatches are recorded into one command encoder / compute pass and submitted in batches
(on read, on synchronize, when the parameter arena fills or a batch grows long). Data
uploads go through a mapped staging buffer and a recorded copy, so they stay ordered with
the recorded dispatches without forcing a submit. wgpu 0.32's
`on_submitted_work_done_sync` is broken, so the wait is a small `queue.read_buffer`.
"""
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
    import os
    import tempfile
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

    def flush(self):
        if self._encoder is None:
            return
        self._check()
        self._end_pass()
        try:
            if self._arena:
                self.queue.write_buffer(self._arena_buf, 0, bytes(self._arena))
            self.queue.submit([self._encoder.finish()])
        except Exception as e:
            raise self._wrap(e) from None
        finally:
            self._encoder = None
            self._arena = bytearray()
            self._pending = 0
        for st in self._staging + self._graveyard:
            st.destroy()
        self._staging, self._graveyard = [], []
        self.submits += 1

    def synchronize(self):
        self.flush()
        try:
            self.queue.read_buffer(self._sync_buf, 0, 4)
        except Exception as e:
            raise self._wrap(e) from None
