"""WebGPUBackend: the primitive set of `backends/base.py` as WGSL compute shaders.

Runs over any `Driver` (`drivers/`: native wgpu-py or the browser's navigator.gpu). Layers:

* `codegen.py`: dtype maps, shader templates, WGSL expressions and index code;
* `allocator.py`: the caching allocator (`GPUBuffer`, `CachingAllocator`);
* `kernels.py`: the plumbing (`Kernels`: pipeline cache and signature memo, dispatch, allocation, the
  command sink) this backend is built on;
* `primitives.py`: the kernels of the primitive set (`Primitives`, a component this backend owns);
* `lazy.py` (element-wise fusion) and `capture.py` (capture and replay) on the command sink;
* this module: host encoding and reads, and deferred device-side checks.

Tensor-level kernels (`webtorch/webgpu/fused.py`: softmax, fused optimizer steps) attach through
`backends.webgpu.extend`.
"""
import math
import struct
import sys
from array import array

from ..._geometry import contiguous_strides, numel
from ..base import Backend, Strided
from ..cpu.pure import to_bfloat16
from .capture import Capture
from .codegen import I64_MSG, ITEM, PACK, WRAP
from .complex import ComplexKernels
from .kernels import Kernels
from .primitives import Primitives


def _f16_bytes(v):
    """v rounded to float16 (past its range: +-inf, as PyTorch's conversion)"""
    try:
        return struct.pack("<e", v)
    except OverflowError:
        return struct.pack("<e", math.copysign(math.inf, v))


def _bf16_bytes(values, np):
    """Values -> webgpu's bfloat16 words (codegen.py: little-endian f32s holding bfloat16 values): through float32
    (as c10's conversions), rounded to nearest even on the upper 16 bits (NaN stays NaN)."""
    if np is None or not isinstance(values, np.ndarray):
        return array("f", to_bfloat16([float(v.real if type(v) is complex else v) for v in values])).tobytes()
    a = values.reshape(-1)
    with np.errstate(over="ignore", invalid="ignore"):
        u = (a.real if a.dtype.kind == "c" else a).astype("<f4").view("<u4")
    r = u + np.uint32(0x7FFF) + ((u >> 16) & np.uint32(1))
    return (np.where((u & np.uint32(0x7FFFFFFF)) > 0x7F800000, u | np.uint32(0x400000), r)
            & np.uint32(0xFFFF0000)).tobytes()


class WebGPUBackend(Kernels, Backend):
    name = "webgpu"
    fast_paths = Primitives.fast_paths

    def __init__(self, driver):
        super().__init__(driver)
        self._checks = []       # pending device-side checks: (view, keep-alive, fail)
        # the kernels of the primitive set: a component over this backend's plumbing (Kernels)
        p = self.prims = Primitives(self)
        self.ewise, self.ewise_new = p.ewise, p.ewise_new      # ewise routes a complex op to cx itself
        # complex64 views (complex.py): each of these takes the real kernels for real views
        c = self.cx = ComplexKernels(self, p)
        self.reduce, self.scan, self.sort, self.fft = c.reduce, c.scan, c.sort, c.fft
        self.take, self.put, self.arange, self.random, self.matmul = c.take, c.put, c.arange, c.random, c.matmul

    def capture(self, on_read=None):
        """`with backend.capture() as cap:` records the driver commands of a step for replay
        (capture.py); `on_read()` is called on each read to the host, which then runs (else it raises
        CaptureBreak)."""
        return Capture(self, on_read)

    def _encode(self, values, dtype):
        _np = sys.modules.get("numpy")     # values is an ndarray only where numpy was imported
        if dtype == "bfloat16":
            return _bf16_bytes(values, _np)
        if dtype == "complex64":           # interleaved f32 pairs
            if _np is not None and isinstance(values, _np.ndarray):
                return values.reshape(-1).astype("<c8").tobytes()
            return array("f", [p for v in values for p in (complex(v).real, complex(v).imag)]).tobytes()
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
                   "bool": "<u4", "uint8": "<u4", "uint16": "<u4", "uint32": "<u4"}[dtype]
            if dtype in WRAP:  # wrap (a numpy array of the cpu's unsigned dtype arrives as is)
                a = a.astype(_np.int64) & WRAP[dtype]
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
        if dtype in WRAP:
            return array("I", [int(v) & WRAP[dtype] for v in values]).tobytes()
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
            self.commands.write_buffer(buf.handle, 0, data)
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
            raw = bytes(self.commands.read_buffer(src.handle, a0, end - a0))
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
            self.commands.write_buffer(self._i64_flag.handle, 0, bytes(8))
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
            self.commands.copy_buffer(src.handle, a0, tmp.handle, 0, size)
        off = size
        for (v, _, _), nb in zip(checks, sizes):
            if nb:
                self.commands.copy_buffer(v.buf.handle, v.offset * 4, tmp.handle, off, nb)
            off += nb
        raw = bytes(self.commands.read_buffer(tmp.handle, 0, size + sum(sizes)))
        del tmp
        off, err = size, None
        for (_, _, fail), nb in zip(checks, sizes):
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
        if dt == "complex64":
            f = struct.unpack(f"<{2 * n}f", raw)
            return [complex(f[j], f[j + 1]) for j in range(0, 2 * n, 2)]
        a = array({"f": "f", "i": "i", "I": "I"}[PACK[dt]])
        a.frombytes(raw)
        if sys.byteorder != "little":
            a.byteswap()
        if dt == "bool":
            return [bool(v) for v in a]
        return a.tolist()

    def to_numpy(self, view):
        import numpy as np
        raw = self._read_contiguous(view)
        dt = view.dtype
        a = np.frombuffer(raw, dtype={"float32": "<f4", "float16": "<f2", "int32": "<i4", "int64": "<i4",
                                      "bool": "<u4", "uint8": "<u4", "uint16": "<u4", "uint32": "<u4",
                                      "complex64": "<c8", "bfloat16": "<f4"}[dt])
        a = a.astype({"float32": np.float32, "float16": np.float16, "int32": np.int32, "int64": np.int64,
                      "bool": np.bool_, "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32,
                      "complex64": np.complex64, "bfloat16": np.float32}[dt])  # (bfloat16: its values, as on cpu)
        return a.reshape(view.shape)

    def reinterpret(self, buf, dtype):
        """complex64 <-> float32: the same buffer (WGSL arrays are typed by the kernel, not the buffer)."""
        self._check_dtype(dtype)
        return buf

    def synchronize(self):
        self._check_i64()
        if self._checks:      # the read waits for all submitted work
            self._read_checked(None, 0, 0)
            return
        self.commands.synchronize()
