"""The driver protocol: the few GPU calls the WebGPU backend needs.

Two implementations exist: `native.py` (wgpu-py, CPython on Vulkan/Metal/D3D12) and
`browser.py` (JS WebGPU through `pyodide.ffi`, in a Web Worker). The backend
(`../backend.py`) is written against this class only.

Conventions every driver follows
--------------------------------
* Handles. `create_buffer` and `create_pipeline` return opaque handles (a wgpu-py object,
  a JS proxy, ...). The backend never looks inside them; it only passes them back.
* Storage buffers only. Every data buffer is created with usage
  STORAGE | COPY_SRC | COPY_DST. Shaders declare their data bindings as
  `@group(0) @binding(i) var<storage, read_write>` (read_write even for inputs, so that one
  buffer may be bound twice in a dispatch, e.g. for in-place ops).
* Parameters. Each dispatch gets a small bytes object of little-endian 32-bit words
  (shapes, strides, offsets, scalars). The driver places it in a parameter arena and binds
  it as the LAST binding, `@group(0) @binding(len(buffers))
  var<storage, read> P: array<u32>;` (a read-only storage buffer, not a uniform, to
  avoid uniform array-stride rules). An empty `params` is padded to one word; a shader
  must still declare and use P (pipelines use layout "auto", which drops unused
  bindings, so every declared binding must be used).
* Ordering and batching. `write_buffer`, `dispatch` and `copy_buffer` take effect in call
  order. Dispatches are recorded (one command encoder / compute pass) and submitted in
  batches: at `flush()`, before any `read_buffer`, and whenever the driver decides a batch
  is large (e.g. the parameter arena is full). Only `read_buffer` and `synchronize` wait.
* Errors. A lost device raises RuntimeError("WebGPU device was lost: <reason>") from the
  next call. Validation errors raise RuntimeError with the driver's message.
* Counters. `dispatches` and `submits` count dispatches recorded and queue submissions
  made, so tests can prove batching.
"""


ARENA_BYTES = 1 << 20       # per-dispatch parameter words of one batch share one buffer
MAX_BATCH = 4096            # dispatches per submit at most


class Driver:
    """Protocol (abstract). Attributes set by implementations:

    info      dict: 'vendor', 'architecture', 'device', 'description', 'backend'
              (e.g. 'Vulkan', 'WebGPU'), 'adapter_type' ('CPU', 'DiscreteGPU',
              'IntegratedGPU', 'unknown').
    limits    dict of WebGPU limits by their kebab-case names, as granted to the device,
              e.g. 'max-buffer-size', 'max-storage-buffer-binding-size',
              'max-compute-workgroups-per-dimension', 'max-compute-invocations-per-workgroup',
              'max-compute-workgroup-storage-size', 'min-storage-buffer-offset-alignment'.
    features  set of enabled feature names, e.g. {'shader-f16'}.
    dispatches, submits   int counters (see module doc).
    """
    info = None
    limits = None
    features = None
    dispatches = 0
    submits = 0

    # ---- buffers ------------------------------------------------------------------------
    def create_buffer(self, size):
        """A new storage buffer of `size` bytes (a multiple of 4, > 0), usage
        STORAGE | COPY_SRC | COPY_DST, contents zero. Returns a handle."""
        raise NotImplementedError

    def destroy_buffer(self, buf):
        """Release the buffer's GPU memory. Work already recorded that uses it must still
        run correctly. This may be called from a finalizer in the middle of recording a
        dispatch, so it must not flush or submit: when work is pending, keep the buffer
        and destroy it right after the next submit (native.py's `_graveyard`)."""
        raise NotImplementedError

    def write_buffer(self, buf, offset, data):
        """Copy bytes-like `data` (bytes, bytearray, memoryview, array.array) into `buf` at
        byte `offset` (both multiples of 4). Ordered after earlier dispatches (the driver
        flushes recorded work first if needed, e.g. wgpu's queue.write_buffer runs before
        unsubmitted commands)."""
        raise NotImplementedError

    def read_buffer(self, buf, offset, size):
        """Submit pending work, wait for it, and return `size` bytes of `buf` from byte
        `offset` as `bytes` (or a memoryview). Synchronous: the one place that waits."""
        raise NotImplementedError

    def copy_buffer(self, src, src_offset, dst, dst_offset, size):
        """Record a GPU-side copy of `size` bytes (multiples of 4), ordered with
        dispatches."""
        raise NotImplementedError

    # ---- compute ------------------------------------------------------------------------
    def create_pipeline(self, code, entry_point="main"):
        """Compile WGSL `code` into a compute pipeline (layout 'auto', bind group 0).
        Returns a handle. Raises RuntimeError with the compiler's message on error.
        The backend caches pipelines by source, so this is called once per kernel."""
        raise NotImplementedError

    def dispatch(self, pipeline, buffers, params, workgroups):
        """Record one dispatch: bind `buffers` (list of buffer handles) at bindings
        0..n-1 and the parameter words `params` (bytes) at binding n of group 0, then
        dispatchWorkgroups(*workgroups) with workgroups an (x, y, z) tuple, each
        1..max-compute-workgroups-per-dimension. Does not wait."""
        raise NotImplementedError

    def flush(self):
        """Submit everything recorded so far (no wait). No-op when nothing is pending."""
        if self._encoder is None:
            return
        self._check()
        self._end_pass()
        try:
            self._submit(self._arena, self._encoder.finish())
        except Exception as e:
            raise self._wrap(e) from None
        finally:
            self._encoder = None
            self._arena = bytearray()
            self._pending = 0
            self._submitted()
        self.submits += 1

    def synchronize(self):
        """flush() and wait until the GPU has finished all submitted work."""
        raise NotImplementedError

    # ---- capture and replay -------------------------------------------------------------
    def build_replay(self, prog, plan):
        """Prebuild a captured program (capture.py) for replay; returns an object whose
        `run(pre, post, words)` submits it ONCE: the copies `pre` (src, src_offset, dst,
        dst_offset, size), then `plan` in order — ("d", pipeline, buffers, params_offset,
        params_size, workgroups) binding the window of `prog._params`, ("c", src, so, dst, do,
        size), ("k", consts_offset, dst, dst_offset, size) copying from `prog._consts` — then the
        copies `post`. `words` is None or [(byte offset in prog._params, (w0, w1, w2))] written
        first (the random kernels' seed/offset words). Bind groups are made here, once."""
        raise NotImplementedError

    def _reserve_params(self, params):
        """Append one dispatch's parameter words to the batch's arena (`self._arena`, aligned to
        `self._align`), flushing first when the arena or the batch is full; returns the
        (offset, size) of the slot to bind."""
        a = self._align
        start = (len(self._arena) + a - 1) // a * a
        psize = max(4, len(params))
        if start + psize > ARENA_BYTES or self._pending >= MAX_BATCH:
            self.flush()
            start = 0
        arena = self._arena
        arena.extend(b"\0" * (start - len(arena)))
        arena.extend(params)
        arena.extend(b"\0" * (psize - len(params)))
        return start, psize

    # ---- the shared bookkeeping of a batch (`flush`); each driver's own calls ---------------
    def _submit(self, arena, commands):
        """Write the batch's parameter words `arena` (a bytearray, possibly empty) to the arena
        buffer, then submit the finished command buffer `commands`."""
        raise NotImplementedError

    def _submitted(self):
        """After a submit (or a failed one): destroy the buffers kept alive for the batch."""
        raise NotImplementedError

    def _check(self):
        """Raise the device's pending error (a lost device, a validation error), if any."""
        raise NotImplementedError

    def _wrap(self, e):
        """The RuntimeError to raise for the exception `e` of a GPU call."""
        raise NotImplementedError

    def _end_pass(self):
        """End the open compute pass (`self._pass`) that dispatches are recorded into, if any."""
        if self._pass is not None:
            self._pass.end()
            self._pass = None
