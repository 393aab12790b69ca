"""WebGPUBackend: the primitive set of `backends/base.py` as WGSL compute shaders.

Runs over any `Driver` (`drivers/`: native wgpu-py or the browser's navigator.gpu). Layers:

* `codegen.py`: dtype maps, shader templates, WGSL expressions and index code;
* `allocator.py`: the caching allocator (`GPUBuffer`, `CachingAllocator`);
* this module: a pipeline cache keyed by the specialized WGSL source (and a faster memo keyed
  by the kernel's signature, so steady-state dispatches do no code generation), host
  encoding and reads, and deferred device-side checks;
* `primitives.py`: the kernels of the primitive set (`Primitives`, mixed in here);
* `lazy.py` (element-wise fusion) and `fused.py` (softmax, fused optimizer steps) on top.
"""
import math
import struct
import sys
from array import array

from ..base import Backend, Strided, fast_paths_of
from ..._geometry import numel, contiguous_strides
from .allocator import GPUBuffer, CachingAllocator
from .codegen import ST, ITEM, PACK, I64_WGSL, I64_MSG, _P_DECL, prelude, pack_words
from .fused import install as install_fused
from .lazy import Fusion
from .primitives import Primitives

try:
    import numpy as _np
except Exception:  # pragma: no cover - Pyodide without numpy
    _np = None


def _f16_bytes(v):
    """v rounded to float16 (past its range: +-inf, as PyTorch's conversion)"""
    try:
        return struct.pack("<e", v)
    except OverflowError:
        return struct.pack("<e", math.copysign(math.inf, v))


class WebGPUBackend(Primitives, Backend):
    name = "webgpu"
    # one host call instead of the decomposition's 2 to 8 (sigmoid's four, rsqrt's two); isnan, isinf,
    # isfinite look at the bits, where a shader compiler may assume finite floats and fold `x != x`
    fast_paths = fast_paths_of("wgsl")

    def __init__(self, driver):
        self.driver = driver
        lim = driver.limits
        self.max_wg = int(lim.get("max-compute-workgroups-per-dimension", 65535))
        maxbuf = int(lim.get("max-buffer-size", 1 << 28))
        maxbind = int(lim.get("max-storage-buffer-binding-size", 1 << 27))
        self.max_bytes = min(maxbuf, maxbind)
        self.has_f16 = "shader-f16" in driver.features
        self.alloc = CachingAllocator(driver, self.max_bytes)
        self.is_cpu_adapter = str(driver.info.get("adapter_type", "")).lower() == "cpu"
        self.is_lavapipe = "llvmpipe" in str(driver.info.get("device", "")).lower()
        # elements per thread of the ewise.wgsl kernels: on CPU adapters a thread's loads and
        # parameter words cost per element, 16 is 2-5x faster (bench/README.md); GPUs keep one
        self.ew_k = 16 if self.is_cpu_adapter else 1
        self._pipes = {}        # source -> pipeline
        self._memo = {}         # kernel signature -> (pipeline, extra)
        self._prelude = prelude()
        self.pipelines_compiled = 0
        install_fused(self)            # fused kernels: softmax hooks, fused optimizer steps
        self.fusion = Fusion(self)     # lazy element-wise fusion (wraps the driver's calls)
        self._checks = []       # pending device-side checks: (view, keep-alive, fail)
        self._i64_pipes = set()  # id() of pipelines that flag int64 overflow (bind i64_flag)
        self._i64_flag = None    # GPUBuffer: 1 u32, set by a kernel on int64 overflow
        self._i64_armed = False  # a flagging kernel ran since the flag was last read

    def capture(self):
        """`with backend.capture() as cap:` records the driver commands of a step for replay
        (capture.py)."""
        from .capture import Capture
        return Capture(self)

    # ---- plumbing ---------------------------------------------------------------------
    def pipeline(self, src):
        p = self._pipes.get(src)
        if p is None:
            code = src
            i64 = "i64_" in src
            if i64:     # bind the overflow flag just before P (P moves up one binding)
                m = _P_DECL.search(src)
                n = int(m.group(1))
                code = (f"{src[:m.start()]}@group(0) @binding({n}) var<storage, read_write> i64_flag: "
                       f"array<u32>;\n@group(0) @binding({n + 1}) var<storage, read> P: array<u32>;\n"
                       f"{I64_WGSL}{src[m.end():]}")
            p = self._pipes[src] = self.driver.create_pipeline(code, "main")
            if i64:
                self._i64_pipes.add(id(p))
            self.pipelines_compiled += 1
        return p

    def _bind(self, pipe, handles):
        """the buffer handles of a dispatch, plus the int64 overflow flag where the kernel sets it"""
        if id(pipe) in self._i64_pipes:
            if self._i64_flag is None:
                self._i64_flag = self.from_flat([0, 0], "int32")
            self._i64_armed = True
            handles = handles + [self._i64_flag.handle]
        return handles

    def grid(self, ngroups):
        m = self.max_wg
        if ngroups <= m:
            return (max(ngroups, 1), 1, 1)
        y = -(-ngroups // m)
        if y <= m:
            return (m, y, 1)
        return (m, m, -(-y // m))

    def run(self, pipe, bufs, words, ngroups):
        self.driver.dispatch(pipe, self._bind(pipe, [b.handle if isinstance(b, GPUBuffer) else b for b in bufs]),
                             pack_words(words), self.grid(ngroups))

    def _check_dtype(self, dtype):
        if dtype == "float64":
            raise TypeError("float64 is not supported on webgpu; use float32 or compute on cpu")
        if dtype == "float16" and not self.has_f16:
            raise TypeError("float16 on webgpu needs the adapter feature 'shader-f16', which this "
                            "adapter lacks; use float32")
        if dtype not in ST:
            raise TypeError(f"{dtype} is not supported on webgpu")

    def enable(self, *dtypes):
        return "enable f16;" if "float16" in dtypes else ""

    # ---- memory -----------------------------------------------------------------------
    def empty(self, numel, dtype):
        self._check_dtype(dtype)
        nbytes = max(4, (numel * ITEM[dtype] + 3) & ~3)
        if numel * ITEM[dtype] > self.max_bytes:
            self.alloc.alloc(numel * ITEM[dtype])     # raises the out-of-memory error
        h, size = self.alloc.alloc(nbytes)
        return GPUBuffer(self.alloc, h, size, numel, dtype)

    def _encode(self, values, dtype):
        if _np is not None and isinstance(values, _np.ndarray):
            a = values.reshape(-1)
            if dtype == "int64" and a.size and a.dtype.kind in "iu":
                lo, hi = int(a.min()), int(a.max())
                if lo < -2**31 or hi >= 2**31:
                    bad = lo if lo < -2**31 else hi
                    raise RuntimeError(f"webgpu stores int64 as int32: the value {bad} does not fit "
                                       f"in int32 (range [-2147483648, 2147483647])")
            if dtype == "bool":
                a = a.astype(bool)
            npt = {"float32": "<f4", "float16": "<f2", "int32": "<i4", "int64": "<i4",
                   "bool": "<u4", "uint8": "<u4"}[dtype]
            if dtype == "uint8" and a.dtype.kind == "f":
                a = a.astype(_np.int64)
            if dtype == "uint8":
                a = a.astype(_np.int64) & 255
            return a.astype(npt).tobytes()
        if isinstance(values, (bytes, bytearray, memoryview)):
            values = list(values)
        if dtype in ("float32",):
            return array("f", [float(v) for v in values]).tobytes() if not isinstance(values, array) \
                else array("f", values).tobytes()
        if dtype == "float16":
            return b"".join(_f16_bytes(float(v)) for v in values)
        if dtype == "bool":
            return array("I", [1 if v else 0 for v in values]).tobytes()
        if dtype == "uint8":
            return array("I", [int(v) & 255 for v in values]).tobytes()
        out = array("i")
        try:
            out.extend(int(v) for v in values)
        except OverflowError:
            bad = next(int(v) for v in values if not -2**31 <= int(v) < 2**31)
            raise RuntimeError(f"webgpu stores {dtype} as int32: the value {bad} does not fit in "
                               f"int32 (range [-2147483648, 2147483647])") from None
        return out.tobytes()

    def from_flat(self, values, dtype):
        self._check_dtype(dtype)
        data = self._encode(values, dtype)
        buf = self.empty(len(values) if not hasattr(values, "size") else int(values.size), dtype)
        if data:
            if len(data) % 4:
                data = data + b"\0" * (-len(data) % 4)
            self.driver.write_buffer(buf.handle, 0, data)
        return buf

    def _read_contiguous(self, view):
        """bytes of the view's elements in row-major order (a host read: pending checks are
        resolved by the same wait)"""
        n = numel(view.shape)
        if n == 0:
            return b""
        it = ITEM[view.dtype]
        if tuple(view.strides) == contiguous_strides(view.shape) or n == 1:
            src, off = view.buf, view.offset
        else:
            src = self.empty(n, view.dtype)
            self.ewise("copy", Strided(src, tuple(view.shape), contiguous_strides(view.shape), 0, view.dtype),
                       [view], view.dtype)
            off = 0
        start = off * it
        a0 = start & ~3
        end = (start + n * it + 3) & ~3
        self._check_i64()
        if self._checks:
            raw = self._read_checked(src, a0, end - a0)
        else:
            raw = bytes(self.driver.read_buffer(src.handle, a0, end - a0))
        return raw[start - a0:start - a0 + n * it]

    # ---- deferred checks (device-side asserts) ----------------------------------------
    # Bounds checks of index tensors (gather, index_select, x[idx], nll_loss targets) are not
    # read back when the op is queued, which would wait mid-step: the op computes the values
    # a check needs on the device (e.g. min and max of the index), registers them here, and
    # the next host read or synchronize() fetches them with the same single wait and raises
    # the first failed check's error there, as CUDA reports device-side asserts.
    CHECKS_MAX = 256      # resolved early (one wait) beyond this many pending checks

    ASYNC_NOTE = ("\n(webgpu: detected asynchronously at this synchronization point; index bounds, "
                  "int64 overflow and integer division by zero are checked on the device and reported at the next "
                  "item()/tolist()/numpy()/cpu()/print/bool()/synchronize(), so the failing op was queued before "
                  "this call)")

    def defer_check(self, view, keep, fail):
        """Register a pending check: `view` (contiguous, int32/int64) holds values computed on
        the device; `keep` is kept alive until resolution; `fail(values)` returns the exception
        to raise (or None) once the values are read."""
        assert view.dtype in ("int32", "int64") and tuple(view.strides) == contiguous_strides(view.shape)
        self._checks.append((view, keep, fail))
        if len(self._checks) >= self.CHECKS_MAX:
            self._read_checked(None, 0, 0)

    def _check_i64(self):
        """a kernel that flags int64 overflow ran: read the flag with the next wait"""
        self.fusion.flush()
        if self._i64_armed:
            self._i64_armed = False
            self._checks.append((Strided(self._i64_flag, (2,), (1,), 0, "int32"), None, self._i64_fail))

    def _i64_fail(self, vals):
        if vals[0] or vals[1]:
            self.driver.write_buffer(self._i64_flag.handle, 0, bytes(8))
            return RuntimeError("ZeroDivisionError" if vals[1] else I64_MSG)
        return None

    def _read_checked(self, src, a0, size):
        """`size` bytes of buffer src from byte a0, read together with every pending check's
        values (one wait); raises the first failed check's error (all pending checks are
        consumed either way)."""
        checks, self._checks = self._checks, []
        sizes = [numel(v.shape) * 4 for v, _, _ in checks]
        tmp = self.empty((size + sum(sizes)) // 4, "int32")
        if size:
            self.driver.copy_buffer(src.handle, a0, tmp.handle, 0, size)
        off = size
        for (v, _, _), nb in zip(checks, sizes):
            if nb:
                self.driver.copy_buffer(v.buf.handle, v.offset * 4, tmp.handle, off, nb)
            off += nb
        raw = bytes(self.driver.read_buffer(tmp.handle, 0, size + sum(sizes)))
        del tmp
        off, err = size, None
        for (v, _, fail), nb in zip(checks, sizes):
            vals = list(struct.unpack_from(f"<{nb // 4}i", raw, off))
            off += nb
            e = fail(vals)
            if e is not None and err is None:
                err = e
        if err is not None:
            raise type(err)(f"{err}{self.ASYNC_NOTE}")
        return raw[:size]

    def to_flat(self, view):
        raw = self._read_contiguous(view)
        n = numel(view.shape)
        if n == 0:
            return []
        dt = view.dtype
        if dt == "float16":
            return list(struct.unpack(f"<{n}e", raw))
        a = array({"f": "f", "i": "i", "I": "I"}[PACK[dt]])
        a.frombytes(raw)
        if sys.byteorder != "little":
            a.byteswap()
        if dt == "bool":
            return [bool(v) for v in a]
        return a.tolist()

    def to_numpy(self, view):
        np = _np
        raw = self._read_contiguous(view)
        dt = view.dtype
        a = np.frombuffer(raw, dtype={"float32": "<f4", "float16": "<f2", "int32": "<i4", "int64": "<i4",
                                      "bool": "<u4", "uint8": "<u4"}[dt])
        a = a.astype({"float32": np.float32, "float16": np.float16, "int32": np.int32, "int64": np.int64,
                      "bool": np.bool_, "uint8": np.uint8}[dt])
        return a.reshape(view.shape)

    def synchronize(self):
        self._check_i64()
        if self._checks:      # the read waits for all submitted work
            self._read_checked(None, 0, 0)
            return
        self.driver.synchronize()
