"""WebGPUBackend: the primitive set of `backends/base.py` as WGSL compute shaders.

Runs over any `Driver` (native wgpu-py or the browser's navigator.gpu). Pieces:

* a caching allocator (freed buffers go back to a pool by size class when the Python
  `GPUBuffer` object dies, and are reused, as PyTorch's CUDA caching allocator does);
* a pipeline cache keyed by the specialized WGSL source (and a faster memo keyed by the
  kernel's signature, so steady-state dispatches do no code generation);
* kernels generated from the templates in `shaders/*.wgsl`, specialized per op, dtype,
  collapsed rank and workgroup size. Every kernel takes shapes, strides and offsets in its
  parameter words, so strided, broadcast and offset views run without copies.

Storage: float32 -> f32, float16 -> f16 (needs 'shader-f16'), int32 -> i32, int64 -> i32
(values must fit in int32: uploads are range-checked, and every kernel whose int64 result can
leave the range sets a device flag that the next sync reads and raises, see I64_WGSL), bool
and uint8 -> one u32 per element. float16 computes in f32. Kernels count and index elements
with 32-bit words (pack_words raises past them).

NaN/inf: WGSL lets compilers assume finite floats, and lavapipe folds `x - x` or
`(x + y) - y`; the fused kernels hide the second operand of each float op behind an opaque
identity (lazy.py), and the prelude's helpers test NaN/inf by their bits.
"""
import math
import os
import re
import struct
import sys
from array import array

from ..base import Backend, View, EWISE_OPS
from ..._geometry import numel, contiguous_strides

try:
    import numpy as _np
except Exception:  # pragma: no cover - Pyodide without numpy
    _np = None

MASK = 0xFFFFFFFF
CT = {"float32": "f32", "float16": "f32", "int32": "i32", "int64": "i32", "bool": "u32", "uint8": "u32"}
ST = {"float32": "f32", "float16": "f16", "int32": "i32", "int64": "i32", "bool": "u32", "uint8": "u32"}
ITEM = {"float32": 4, "float16": 2, "int32": 4, "int64": 4, "bool": 4, "uint8": 4}
PACK = {"float32": "f", "float16": "e", "int32": "i", "int64": "i", "bool": "I", "uint8": "I"}
ZERO = {"f32": "0.0", "i32": "0", "u32": "0u"}
ONE = {"f32": "1.0", "i32": "1", "u32": "1u"}
WG = 256


# ---- shader sources ------------------------------------------------------------------------
def _shader_dirs():
    here = os.path.dirname(os.path.abspath(__file__))
    pkg = os.path.dirname(os.path.dirname(here))             # .../webtorch
    return [os.path.join(pkg, "shaders"), os.path.join(os.path.dirname(os.path.dirname(pkg)), "shaders")]


_SRC = {}


def shader(name):
    """The text of shaders/<name> (from the installed package or the repository)."""
    if name not in _SRC:
        for d in _shader_dirs():
            p = os.path.join(d, name)
            if os.path.exists(p):
                with open(p, encoding="utf-8") as f:
                    _SRC[name] = f.read()
                break
        else:
            try:
                from importlib.resources import files
                _SRC[name] = (files("webtorch") / "shaders" / name).read_text(encoding="utf-8")
            except Exception:
                raise FileNotFoundError(f"webgpu shader {name!r} not found in {_shader_dirs()}")
    return _SRC[name]


def fill(name, **parts):
    s = shader(name)
    for k, v in parts.items():
        s = s.replace("{{" + k + "}}", str(v))
    return s


# ---- WGSL expression helpers ---------------------------------------------------------------
def load(expr, dt):
    """storage value -> compute type CT[dt]"""
    return f"f32({expr})" if dt == "float16" else expr


def _nonzero(v, ct):
    """v != 0 that is true for NaN (naga compiles a float `!=` to an ordered compare)"""
    return f"!(({v}) == 0.0)" if ct == "f32" else f"(({v}) != {ZERO[ct]})"


def conv(v, src, dst):
    """value of CT[src] -> CT[dst] with PyTorch conversion semantics"""
    cs, cd = CT[src], CT[dst]
    if dst == "int64" and cs == "f32":
        return f"i64_f2i({v})"
    if dst == "bool":
        return v if src == "bool" else f"select(0u, 1u, {_nonzero(v, cs)})"
    if dst == "uint8":
        if src in ("bool", "uint8"):
            return v
        return f"(u32(i32({v})) & 255u)" if cs == "f32" else f"(u32({v}) & 255u)"
    return v if cs == cd else f"{cd}({v})"


def store(v, dt):
    return f"f16({v})" if dt == "float16" else v


def norm(v, dt):
    """wrap a u32 result of a uint8/bool computation back into range"""
    if dt == "uint8":
        return f"(({v}) & 255u)"
    if dt == "bool":
        return f"select(0u, 1u, ({v}) != 0u)"
    return v


_F_UN = {
    "copy": "{0}", "neg": "(-{0})", "abs": "abs({0})", "sign": "wsign({0})", "exp": "exp({0})",
    "exp2": "exp2({0})", "expm1": "wexpm1({0})", "log": "log({0})", "log2": "log2({0})",
    "log10": "(log2({0}) * 0.3010299956639812)", "log1p": "wlog1p({0})", "sqrt": "sqrt({0})",
    "rsqrt": "(1.0 / sqrt({0}))", "sin": "sin({0})", "cos": "cos({0})",
    "tan": "tan({0})", "asin": "wasin({0})", "acos": "wacos({0})", "atan": "watan({0})",
    "sinh": "wsinh({0})", "cosh": "wcosh({0})", "tanh": "wtanh({0})", "asinh": "wasinh({0})",
    "acosh": "wacosh({0})", "atanh": "watanh({0})", "sigmoid": "wsigmoid({0})", "erf": "werf({0})",
    "erfc": "werfc({0})", "erfinv": "werfinv({0})", "floor": "floor({0})", "ceil": "ceil({0})",
    "round": "round({0})", "trunc": "trunc({0})",
    "relu": "select({0}, 0.0, {0} < 0.0)",
}
_F_UN_B = {"logical_not": "({0} == 0.0)", "isnan": "wisnan({0})", "isinf": "wisinf({0})",
           "isfinite": "wisfinite({0})", "signbit": "wsignbit({0})"}
_F_BIN = {
    "add": "({0} + {1})", "sub": "({0} - {1})", "mul": "({0} * {1})", "div": "({0} / {1})",
    "floor_divide": "wfloordiv({0}, {1})", "remainder": "wremainder({0}, {1})",
    "fmod": "wfmod({0}, {1})", "pow": "wpow({0}, {1})", "maximum": "wmaximum({0}, {1})",
    "minimum": "wminimum({0}, {1})", "fmax": "wfmax({0}, {1})", "fmin": "wfmin({0}, {1})",
    "atan2": "watan2({0}, {1})",
}
_CMP = {"eq": "({0} == {1})", "ne": "(!({0} == {1}))", "lt": "({0} < {1})", "le": "({0} <= {1})",
        "gt": "({0} > {1})", "ge": "({0} >= {1})"}
_I_UN = {"copy": "{0}", "neg": "(-{0})", "abs": "abs({0})", "sign": "sign({0})", "floor": "{0}",
         "ceil": "{0}", "round": "{0}", "trunc": "{0}", "relu": "max({0}, 0)",
         "bitwise_not": "(~{0})"}
_I_UN_B = {"logical_not": "({0} == 0)", "isnan": "false", "isinf": "false", "isfinite": "true",
           "signbit": "({0} < 0)"}
_I_BIN = {"add": "({0} + {1})", "sub": "({0} - {1})", "mul": "({0} * {1})",
          "div": "({0} / i64_nz({1}))", "floor_divide": "ifloordiv({0}, i64_nz({1}))",
          "remainder": "iremainder({0}, i64_nz({1}))", "fmod": "({0} % i64_nz({1}))",
          "pow": "ipow({0}, {1})", "maximum": "max({0}, {1})", "minimum": "min({0}, {1})",
          "fmax": "max({0}, {1})", "fmin": "min({0}, {1})",
          "atan2": "i32(atan2(f32({0}), f32({1})))", "bitwise_and": "({0} & {1})",
          "bitwise_or": "({0} | {1})", "bitwise_xor": "({0} ^ {1})", "lshift": "ishl({0}, {1})",
          "rshift": "ishr({0}, {1})"}
_U_UN = {"copy": "{0}", "neg": "(0u - {0})", "abs": "{0}", "sign": "select(0u, 1u, {0} > 0u)",
         "floor": "{0}", "ceil": "{0}", "round": "{0}", "trunc": "{0}", "relu": "{0}",
         "bitwise_not": "(~{0})"}
_U_UN_B = {"logical_not": "({0} == 0u)", "isnan": "false", "isinf": "false", "isfinite": "true",
           "signbit": "false"}
_U_BIN = {"add": "({0} + {1})", "sub": "({0} - {1})", "mul": "({0} * {1})",
          "div": "({0} / i64_nzu({1}))", "floor_divide": "({0} / i64_nzu({1}))",
          "remainder": "({0} % i64_nzu({1}))", "fmod": "({0} % i64_nzu({1}))",
          "pow": "upow({0}, {1})", "maximum": "max({0}, {1})", "minimum": "min({0}, {1})",
          "fmax": "max({0}, {1})", "fmin": "min({0}, {1})",
          "atan2": "u32(atan2(f32({0}), f32({1})))", "bitwise_and": "({0} & {1})",
          "bitwise_or": "({0} | {1})", "bitwise_xor": "({0} ^ {1})", "lshift": "ushl({0}, {1})",
          "rshift": "ushr({0}, {1})"}


# int64 lives in an i32: the ops that can leave its range flag the overflow (I64_WGSL); integer
# division and remainder by zero (any integer dtype) flag too, as PyTorch raises ZeroDivisionError
_L_OPS = {"add": "i64_add({0}, {1})", "sub": "i64_sub({0}, {1})", "mul": "i64_mul({0}, {1})",
          "neg": "i64_sub(0, {0})", "abs": "i64_abs({0})", "pow": "i64_pow({0}, {1})",
          "div": "i64_div({0}, i64_nz({1}))", "floor_divide": "i64_floordiv({0}, i64_nz({1}))",
          "lshift": "i64_shl({0}, {1})"}

I64_WGSL = """
// int64 stored as i32 (webgpu): a result outside the i32 range sets i64_flag[0], an integer
// division by zero sets i64_flag[1]; the backend reads both at the next sync and raises
// (backend.py, `_i64_fail`)
fn i64_ovf() { i64_flag[0] = 1u; }
fn i64_nz(b: i32) -> i32 { if (b == 0) { i64_flag[1] = 1u; return 1; } return b; }
fn i64_nzu(b: u32) -> u32 { if (b == 0u) { i64_flag[1] = 1u; return 1u; } return b; }
fn i64_add(a: i32, b: i32) -> i32 { let r = a + b; if (((a ^ r) & (b ^ r)) < 0) { i64_ovf(); } return r; }
fn i64_sub(a: i32, b: i32) -> i32 { let r = a - b; if (((a ^ b) & (a ^ r)) < 0) { i64_ovf(); } return r; }
fn i64_mul(a: i32, b: i32) -> i32 {
  let r = a * b;
  if (a != 0 && (r / a != b || (a == -1 && b == (-2147483647 - 1)))) { i64_ovf(); }
  return r;
}
fn i64_abs(a: i32) -> i32 { if (a == (-2147483647 - 1)) { i64_ovf(); } return abs(a); }
fn i64_pow(a: i32, b: i32) -> i32 {
  if (b < 0) { if (a == 1) { return 1; } if (a == -1) { return select(-1, 1, (b & 1) == 0); } return 0; }
  var e = u32(b); var base = a; var r = 1;
  loop { if ((e & 1u) != 0u) { r = i64_mul(r, base); } e = e >> 1u; if (e == 0u) { break; } base = i64_mul(base, base); }
  return r;
}
fn i64_div(a: i32, b: i32) -> i32 {
  if (b == -1 && a == (-2147483647 - 1)) { i64_ovf(); }
  return a / b;
}
fn i64_floordiv(a: i32, b: i32) -> i32 {
  let q = i64_div(a, b);
  return select(q, q - 1, (a % b != 0) && ((a < 0) != (b < 0)));
}
fn i64_shl(a: i32, b: i32) -> i32 {
  if (a == 0 || b < 0 || b >= 64) { return 0; }
  if (b >= 32) { i64_ovf(); return 0; }
  let r = a << u32(b);
  if ((r >> u32(b)) != a) { i64_ovf(); }
  return r;
}
fn i64_f2i(v: f32) -> i32 {   // by bits: NaN and +-inf flag too (compilers may assume finite)
  let u = bitcast<u32>(v);
  if ((u & 0x7fffffffu) >= 0x4f000000u && u != 0xcf000000u) { i64_ovf(); }
  return i32(v);
}
"""
I64_MSG = ("int64 overflow on webgpu: WebGPU stores int64 as 32-bit integers and a result left the "
           "range [-2147483648, 2147483647]; compute on cpu (x.cpu()) where int64 values need 64 bits")
_P_DECL = re.compile(r"@group\(0\) @binding\((\d+)\) var<storage, read> P: array<u32>;")


def ewise_expr(op, cdtype, args):
    """WGSL expression for `op` in compute dtype `cdtype` -> (expr, result dtype)."""
    ct = CT[cdtype]
    if cdtype == "int64" and op in _L_OPS:
        return _L_OPS[op].format(*args), cdtype
    if op == "where":
        return f"select({args[2]}, {args[1]}, {args[0]} != 0u)", cdtype
    if op in _CMP:
        return f"select(0u, 1u, {_CMP[op].format(*args)})", "bool"
    if op in ("logical_and", "logical_or", "logical_xor"):
        j = {"logical_and": "&&", "logical_or": "||", "logical_xor": "!="}[op]
        return f"select(0u, 1u, {_nonzero(args[0], ct)} {j} {_nonzero(args[1], ct)})", "bool"
    un, unb, bi = {"f32": (_F_UN, _F_UN_B, _F_BIN), "i32": (_I_UN, _I_UN_B, _I_BIN),
                   "u32": (_U_UN, _U_UN_B, _U_BIN)}[ct]
    if cdtype == "bool" and op == "bitwise_not":
        return f"({args[0]} ^ 1u)", cdtype
    if op in unb:
        return f"select(0u, 1u, {unb[op].format(*args)})", "bool"
    if op in un:
        return norm(un[op].format(*args), cdtype), cdtype
    if op in bi:
        return norm(bi[op].format(*args), cdtype), cdtype
    if ct != "f32" and op in _F_UN:       # float function on an integer compute type
        return conv(_F_UN[op].format(f"f32({args[0]})"), "float32", cdtype), cdtype
    raise TypeError(f"webgpu: op {op!r} is not supported for dtype {cdtype}")


def _alias_b(src):
    """matmul of a buffer with itself (x @ x.T): read B through A's binding, bind it once"""
    lines = [l for l in src.split("\n") if "var<storage, read_write> B:" not in l]
    src = "\n".join(lines).replace("@binding(3) var<storage, read> P", "@binding(2) var<storage, read> P")
    return re.sub(r"\bB\[", "A[", src)


# ---- shape helpers -------------------------------------------------------------------------
def collapse(shape, strides_list):
    """Drop size-1 dims and merge dims that are contiguous for every operand."""
    dims = [d for d in range(len(shape)) if shape[d] != 1]
    sh = [shape[d] for d in dims]
    sts = [[st[d] for d in dims] for st in strides_list]
    i = len(sh) - 2
    while i >= 0:
        if all(st[i] == st[i + 1] * sh[i + 1] for st in sts):
            sh[i] *= sh[i + 1]
            for st in sts:
                st[i] = st[i + 1]
                del st[i + 1]
            del sh[i + 1]
        i -= 1
    return tuple(sh), [tuple(st) for st in sts]


def index_code(R, names_contig, var="i", pbase=None, shape_base=1):
    """WGSL that sets `let/var <name>` to the element offset of operand k for linear index
    `var`. P layout from pbase: per operand [offset, strides(R)]; shape at shape_base."""
    if pbase is None:
        pbase = shape_base + R
    code = []
    need = False
    for k, (name, contig) in enumerate(names_contig):
        pb = pbase + k * (1 + R)
        if contig:
            code.append(f"  let {name} = i32(P[{pb}u]) + i32({var});")
        else:
            code.append(f"  var {name} = i32(P[{pb}u]);")
            need = True
    if need and R > 0:
        code.append(f"  {{ var r = {var};")
        for d in reversed(range(R)):
            if d > 0:
                code.append(f"    {{ let s = P[{shape_base + d}u]; let c = i32(r % s); r = r / s;")
            else:
                code.append("    { let c = i32(r);")
            for k, (name, contig) in enumerate(names_contig):
                if not contig:
                    code.append(f"      {name} = {name} + c * i32(P[{pbase + k * (1 + R) + 1 + d}u]);")
            code.append("    }")
        code.append("  }")
    return "\n".join(code)


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def scalar_bits(x, dt):
    ct = CT[dt]
    if ct == "f32":
        try:
            return f32_bits(float(x))
        except OverflowError:
            return f32_bits(math.copysign(math.inf, x))
    if dt == "bool":
        return 1 if x else 0
    v = int(x)
    if dt == "uint8":
        return v & 255
    if not -2**31 <= v < 2**31:
        raise RuntimeError(f"webgpu stores {dt} as int32: the value {v} does not fit in int32")
    return v & MASK


def _count_error(n):
    return RuntimeError(
        f"webgpu: a kernel count or index is {n}, out of 32-bit range: WebGPU kernels count and "
        f"index elements with 32-bit integers, so an op over 2**32 or more elements (2**31 for "
        f"argmax/argmin; e.g. a sum of a large expanded view) is not supported; compute it on "
        f"cpu or in chunks")


def pack_words(words):
    try:
        return struct.pack(f"<{len(words)}I", *words)
    except struct.error:
        big = [w for w in words if not -2**31 <= w <= MASK]
        if big:
            raise _count_error(big[0]) from None
        return struct.pack(f"<{len(words)}I", *[w & MASK for w in words])


def _next_pow2(n):
    p = 1
    while p < n:
        p *= 2
    return p


# ---- buffers and the caching allocator -----------------------------------------------------
def _size_class(nbytes):
    """Round up to 256 B, then to the next of 2^k * {1, 1.25, 1.5, 1.75} (< 25% waste)."""
    n = max(256, (nbytes + 255) & ~255)
    p = 1 << (n - 1).bit_length()        # next power of two >= n
    q = p // 8                           # steps of p/8 between p/2 and p
    if p >= 2048:
        return ((n + q - 1) // q) * q
    return p


class GPUBuffer:
    """A backend `buf`: a pooled GPU buffer holding `numel` elements of `dtype`. When this
    object is garbage collected the GPU buffer returns to the allocator's pool."""
    __slots__ = ("handle", "nbytes", "numel", "dtype", "_alloc", "pend", "__weakref__")

    def __init__(self, alloc, handle, nbytes, numel, dtype):
        self._alloc, self.handle, self.nbytes, self.numel, self.dtype = alloc, handle, nbytes, numel, dtype
        self.pend = None     # the pending fused node that will write this buffer (lazy.py)

    def __del__(self):
        try:
            self._alloc.release(self.handle, self.nbytes)
        except Exception:
            pass

    def __len__(self):
        return self.numel

    def __repr__(self):
        return f"GPUBuffer({self.numel} x {self.dtype}, {self.nbytes} B)"


class CachingAllocator:
    def __init__(self, driver, max_bytes, cache_limit=None):
        self.driver = driver
        self.max_bytes = max_bytes
        self.pool = {}                   # size class -> [handles]
        self.cached_bytes = 0
        self.allocated_bytes = 0         # bytes handed out and alive
        self.reserved_bytes = 0          # bytes of all GPU buffers created and not destroyed
        self.reuses = 0
        self.creates = 0
        self.cache_limit = cache_limit if cache_limit is not None else 1 << 30
        # handles handed out, held strongly here: a GPUBuffer collected in a reference cycle
        # (an exception's traceback -> frame -> tensor) has its finalizer run together with
        # those of the cycle's other objects; were the driver's buffer object in that cycle
        # too, it could be released before GPUBuffer.__del__ returns it to the pool, and the
        # pool would then hand out a dead buffer
        self.live = {}
        self.pins = {}                   # id(handle) -> [pin count, handle, size if released]

    def pin(self, h):
        """Keep handle h out of the pool while a captured program uses it (capture.py)."""
        e = self.pins.get(id(h))
        if e is None:
            self.pins[id(h)] = [1, h, None]
        else:
            e[0] += 1

    def unpin(self, h):
        e = self.pins[id(h)]
        e[0] -= 1
        if e[0] == 0:
            del self.pins[id(h)]
            if e[2] is not None:         # its tensor died while pinned: pool it now
                self.release(h, e[2])

    def alloc(self, nbytes):
        if nbytes > self.max_bytes:
            raise RuntimeError(
                f"WebGPU out of memory: tried to allocate {nbytes} bytes, over the adapter's "
                f"largest buffer ({self.max_bytes} bytes: maxBufferSize/maxStorageBufferBindingSize)")
        size = min(_size_class(nbytes), max(self.max_bytes, 4) & ~3)
        lst = self.pool.get(size)
        if lst:
            self.reuses += 1
            self.cached_bytes -= size
            self.allocated_bytes += size
            h = lst.pop()
            self.live[id(h)] = h
            return h, size
        try:
            h = self.driver.create_buffer(size)
        except RuntimeError as e:
            if "lost" in str(e).lower():
                raise
            self.empty_cache()
            try:
                h = self.driver.create_buffer(size)
            except RuntimeError as e2:
                raise RuntimeError(f"WebGPU out of memory: tried to allocate {size} bytes ({e2})") from None
        self.creates += 1
        self.reserved_bytes += size
        self.allocated_bytes += size
        self.live[id(h)] = h
        return h, size

    def release(self, handle, size):
        e = self.pins.get(id(handle)) if self.pins else None
        if e is not None:
            e[2] = size
            return
        self.live.pop(id(handle), None)
        self.allocated_bytes -= size
        self.pool.setdefault(size, []).append(handle)
        self.cached_bytes += size
        if self.cached_bytes > self.cache_limit:
            self.empty_cache()

    def empty_cache(self):
        for size, lst in self.pool.items():
            for h in lst:
                self.driver.destroy_buffer(h)
                self.reserved_bytes -= size
        self.pool = {}
        self.cached_bytes = 0


# ---- the backend ---------------------------------------------------------------------------
class WebGPUBackend(Backend):
    name = "webgpu"

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
        self._pipes = {}        # source -> pipeline
        self._memo = {}         # kernel signature -> (pipeline, extra)
        self._prelude = shader("prelude.wgsl")
        self.pipelines_compiled = 0
        from .fused import install     # fused kernels: softmax hooks, fused SGD step
        install(self)
        from .lazy import Fusion       # lazy element-wise fusion (wraps the driver's calls)
        self.fusion = Fusion(self)
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
        n = len(values)
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
            return struct.pack(f"<{n}e", *[float(v) for v in values])
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
            self.ewise("copy", View(src, tuple(view.shape), contiguous_strides(view.shape), 0, view.dtype),
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
            self._checks.append((View(self._i64_flag, (2,), (1,), 0, "int32"), None, self._i64_fail))

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

    # ---- element-wise -----------------------------------------------------------------
    def ewise(self, op, out, inputs, cdtype):
        if op not in EWISE_OPS:
            raise ValueError(f"unknown element-wise op {op!r}")
        n = numel(out.shape)
        if n == 0:
            return
        self._check_dtype(cdtype)
        if self.fusion.defer(op, out, inputs, cdtype):
            return
        views = [x for x in inputs if isinstance(x, View)]
        shape, sts = collapse(tuple(out.shape), [out.strides] + [v.strides for v in views])
        R = len(shape)
        cst = contiguous_strides(shape)
        contig = tuple(st == cst for st in sts)
        kinds = tuple(x.dtype if isinstance(x, View) else "s" for x in inputs)
        # each distinct buffer is bound once (in-place ops and x*x read through the same
        # binding): browsers reject a writable buffer bound twice in one dispatch
        bufs = [out.buf]
        amap = []
        for v in views:
            for j, b in enumerate(bufs):
                if b is v.buf:
                    amap.append(j)
                    break
            else:
                amap.append(len(bufs))
                bufs.append(v.buf)
        amap = tuple(amap)
        key = ("ew", op, cdtype, out.dtype, kinds, R, contig, amap)
        pipe = self._memo.get(key)
        if pipe is None:
            pipe = self._memo[key] = self.pipeline(self._ewise_src(op, cdtype, out.dtype, kinds, R, contig, amap))
        words = [n, *shape, out.offset, *sts[0]]
        for v, st in zip(views, sts[1:]):
            words += [v.offset, *st]
        for k, x in enumerate(inputs):
            if not isinstance(x, View):
                words.append(scalar_bits(x, "bool" if (op == "where" and k == 0) else cdtype))
        self.run(pipe, bufs, words, -(-n // WG))

    def _ewise_src(self, op, cdtype, odt, kinds, R, contig, amap):
        nv = sum(1 for k in kinds if k != "s")
        names = [("o0", contig[0])] + [(f"o{j + 1}", contig[j + 1]) for j in range(nv)]
        binds = [f"@group(0) @binding(0) var<storage, read_write> out: array<{ST[odt]}>;"]
        body = []
        args = []
        vi = 0
        sc = 1 + R + (1 + nv) * (1 + R)       # first scalar word
        for k, kd in enumerate(kinds):
            want = "bool" if (op == "where" and k == 0) else cdtype
            if kd == "s":
                args.append(f"bitcast<{CT[want]}>(P[{sc}u])" if CT[want] != "u32" else f"P[{sc}u]")
                sc += 1
            else:
                vi += 1
                j = amap[vi - 1]
                if j == len(binds):
                    binds.append(f"@group(0) @binding({j}) var<storage, read_write> in{j}: array<{ST[kd]}>;")
                arr = "out" if j == 0 else f"in{j}"
                body.append(f"  let a{k} = {conv(load(f'{arr}[o{vi}]', kd), kd, want)};")
                args.append(f"a{k}")
        binds.append(f"@group(0) @binding({len(binds)}) var<storage, read> P: array<u32>;")
        expr, rdt = ewise_expr(op, cdtype, args)
        body.append(f"  out[o0] = {store(conv(expr, rdt, odt), odt)};")
        return fill("ewise.wgsl", ENABLE=self.enable(odt, *kinds), PRELUDE=self._prelude,
                    BINDINGS="\n".join(binds), INDEX=index_code(R, names), BODY="\n".join(body))

    # ---- reductions -------------------------------------------------------------------
    def reduce(self, op, out, inp):
        n_out = numel(out.shape)
        if n_out == 0:
            return
        ro = len(out.shape)
        inner = tuple(inp.shape[ro:])
        n_inner = numel(inner)
        accdt = {"sum": out.dtype, "prod": out.dtype, "any": "bool", "all": "bool"}.get(op, inp.dtype)
        arg = op in ("argmax", "argmin")
        if arg and n_inner > 2**31:               # the index of the last element would not fit
            raise _count_error(n_inner - 1)
        if n_inner > 8192 and n_out < 256:       # multi-pass: chunks -> temp -> final
            chunk = max(2048, -(-n_inner // 2048))
            nch = -(-n_inner // chunk)
            tdt = "float32" if accdt == "float16" else accdt
            tv = self.empty(n_out * nch, tdt)
            ti = self.empty(n_out * nch, "int32") if arg else None
            self._reduce_pass(op, accdt, None, inp, None, n_out, inner, chunk, nch, (tv, ti))
            tview = View(tv, (*out.shape, nch), (*contiguous_strides(out.shape + (nch,)),), 0, tdt)
            self._reduce_pass(op, accdt, out, tview, ti, n_out, (nch,), nch, 1, None)
            return
        self._reduce_pass(op, accdt, out, inp, None, n_out, inner, max(n_inner, 1), 1, None)

    def _reduce_pass(self, op, accdt, out, inp, idx_in, n_out, inner, chunk, nch, temp):
        arg = op in ("argmax", "argmin")
        ro = len(inp.shape) - len(inner)
        oshape = tuple(inp.shape[:ro])
        ostr = out.strides if out is not None else contiguous_strides(oshape)
        osh, (ist, ost) = collapse(oshape, [inp.strides[:ro], ostr])
        ish, (iist,) = collapse(inner, [inp.strides[ro:]])
        Ro, Ri = len(osh), len(ish)
        wg = 256 if chunk >= 2048 else 64 if chunk >= 256 else 16 if chunk >= 32 else 4
        odt = out.dtype if out is not None else None
        key = ("red", op, accdt, inp.dtype, odt, Ro, Ri, wg, idx_in is not None, temp is not None)
        pipe = self._memo.get(key)
        if pipe is None:
            pipe = self._memo[key] = self.pipeline(
                self._reduce_src(op, accdt, inp.dtype, odt, Ro, Ri, wg, idx_in is not None, temp is not None))
        words = [n_out, numel(inner), chunk, nch, *osh, inp.offset, *ist,
                 out.offset if out is not None else 0, *ost, *ish, *iist]
        if temp is not None:
            bufs = [temp[0]] + ([temp[1]] if arg else []) + [inp.buf]
        else:
            bufs = [out.buf] + [inp.buf] + ([idx_in] if idx_in is not None else [])
        self.run(pipe, bufs, words, n_out * nch)

    def _reduce_src(self, op, accdt, idt, odt, Ro, Ri, wg, has_idx_in, to_temp):
        arg = op in ("argmax", "argmin")
        act = CT[accdt]
        tdt = "float32" if accdt == "float16" else accdt
        b = []
        if to_temp:
            b.append(f"@group(0) @binding(0) var<storage, read_write> outv: array<{ST[tdt]}>;")
            if arg:
                b.append("@group(0) @binding(1) var<storage, read_write> outi: array<i32>;")
        elif arg:
            b.append("@group(0) @binding(0) var<storage, read_write> outi: array<i32>;")
        else:
            b.append(f"@group(0) @binding(0) var<storage, read_write> outv: array<{ST[odt]}>;")
        nb = len(b)
        b.append(f"@group(0) @binding({nb}) var<storage, read_write> inp: array<{ST[idt]}>;")
        nb += 1
        if has_idx_in:
            b.append(f"@group(0) @binding({nb}) var<storage, read_write> idxin: array<i32>;")
            nb += 1
        b.append(f"@group(0) @binding({nb}) var<storage, read> P: array<u32>;")
        # outer: P[4..] = oshape(Ro), in_off, in_strides(Ro), out_off, out_strides(Ro)
        p_in = 4 + Ro
        p_out = p_in + 1 + Ro
        p_ish = p_out + 1 + Ro
        p_iist = p_ish + Ri
        outer = [f"  var ibase = i32(P[{p_in}u]);", f"  var ooff = i32(P[{p_out}u]);"]
        if Ro:
            outer.append("  { var r = o;")
            for d in reversed(range(Ro)):
                outer.append(f"    {{ let s = P[{4 + d}u]; let cc = i32(r % s); r = r / s;"
                             f" ibase = ibase + cc * i32(P[{p_in + 1 + d}u]);"
                             f" ooff = ooff + cc * i32(P[{p_out + 1 + d}u]); }}")
            outer.append("  }")
        inn = ["    var ioff = ibase;"]
        if Ri:
            inn.append("    { var r = j;")
            for d in reversed(range(Ri)):
                inn.append(f"      {{ let s = P[{p_ish + d}u]; let cc = i32(r % s); r = r / s;"
                           f" ioff = ioff + cc * i32(P[{p_iist + d}u]); }}")
            inn.append("    }")
        v = conv(load("inp[ioff]", idt), idt, accdt)
        if arg:
            vi = "idxin[ioff]" if has_idx_in else "i32(j)"
            fold = f"    let v = {v}; let vi = {vi};\n    if (better(acc, acci, v, vi)) {{ acc = v; acci = vi; }}"
            tree = ("      if (better(sv[lix], si[lix], sv[lix + s], si[lix + s])) "
                    "{ sv[lix] = sv[lix + s]; si[lix] = si[lix + s]; }")
        else:
            fold = f"    acc = comb(acc, {v});"
            tree = "      sv[lix] = comb(sv[lix], sv[lix + s]);"
        if to_temp:
            st = "    outv[o * n_chunks + c] = sv[0];"
            if arg:
                st += "\n    outi[o * n_chunks + c] = si[0];"
        elif arg:
            st = "    outi[ooff] = si[0];"
        else:
            st = f"    outv[ooff] = {store(conv(norm('sv[0]', accdt), accdt, odt), odt)};"
        big = "max" in op
        if arg:
            cmp = ">" if big else "<"
            nan = ("  let an = wisnan(av); let bn = wisnan(bv);\n  if (an && bn) { return bi < ai; }\n"
                   "  if (an) { return false; }\n  if (bn) { return true; }\n") if act == "f32" else ""
            better = f"{nan}  if (bv {cmp} av) {{ return true; }}\n  return bv == av && bi < ai;"
        else:
            better = "  return false;"
        combine = {"sum": ewise_expr("add", accdt, "ab")[0] if act != "f32" else "a + b",
                   "prod": ewise_expr("mul", accdt, "ab")[0] if act != "f32" else "a * b",
                   "any": "a | b", "all": "a & b",
                   "max": "wmaximum(a, b)" if act == "f32" else "max(a, b)",
                   "min": "wminimum(a, b)" if act == "f32" else "min(a, b)"}.get(op, "a")
        lo = {"f32": "-winf()", "i32": "(-2147483647 - 1)", "u32": "0u"}[act]
        hi = {"f32": "winf()", "i32": "2147483647", "u32": "0xffffffffu"}[act]
        ident = {"sum": ZERO[act], "prod": ONE[act], "any": "0u", "all": "1u", "max": lo, "argmax": lo,
                 "min": hi, "argmin": hi}[op]
        return fill("reduce.wgsl", ENABLE=self.enable(idt, odt or ""), PRELUDE=self._prelude,
                    BINDINGS="\n".join(b), WG=wg, ACC=act, BETTER=better, COMBINE=combine,
                    OUTER="\n".join(outer), IDENT=ident, INNER="\n".join(inn), FOLD=fold, TREE=tree,
                    STORE=st)

    # ---- row kernels (scan, sort) -----------------------------------------------------
    @staticmethod
    def _rows(views, pbase):
        """Collapse the leading dims of row views; returns (n_rows, L, words, code) where code
        sets b<k> (row base offset) and ls<k> (last-dim stride) for each view."""
        shape = tuple(views[0].shape)
        L = shape[-1]
        lead = shape[:-1]
        sh, sts = collapse(lead, [v.strides[:-1] for v in views])
        R = len(sh)
        words = list(sh)
        code = []
        for k, (v, st) in enumerate(zip(views, sts)):
            p = pbase + R + k * (R + 2)
            words += [v.offset, *st, v.strides[-1]]
            code.append(f"  var b{k} = i32(P[{p}u]); let ls{k} = i32(P[{p + 1 + R}u]);")
        if R:
            code.append("  { var r = row;")
            for d in reversed(range(R)):
                code.append(f"    {{ let s = P[{pbase + d}u]; let c = i32(r % s); r = r / s;")
                for k in range(len(views)):
                    code.append(f"      b{k} = b{k} + c * i32(P[{pbase + R + k * (R + 2) + 1 + d}u]);")
                code.append("    }")
            code.append("  }")
        return numel(lead), L, words, "\n".join(code), R

    def scan(self, op, out, inp, out_idx=None):
        n = numel(out.shape)
        if n == 0:
            return
        if len(out.shape) == 0:
            out, inp = (View(v.buf, (1,), (1,), v.offset, v.dtype) for v in (out, inp))
            if out_idx is not None:
                out_idx = View(out_idx.buf, (1,), (1,), out_idx.offset, out_idx.dtype)
        views = [inp, out] + ([out_idx] if out_idx is not None else [])
        n_rows, L, words, code, R = self._rows(views, 2)
        accdt = inp.dtype if op in ("cummax", "cummin") else out.dtype
        wg = 256 if L > 64 else 64 if L > 16 else 16
        key = ("scan", op, inp.dtype, out.dtype, accdt, R, wg, out_idx is not None)
        pipe = self._memo.get(key)
        if pipe is None:
            pipe = self._memo[key] = self.pipeline(self._scan_src(op, inp.dtype, out.dtype, accdt, R, wg,
                                                                  code, out_idx is not None))
        self.run(pipe, [v.buf for v in views], [n_rows, L] + words, n_rows)

    def _scan_src(self, op, idt, odt, accdt, R, wg, code, has_idx):
        act = CT[accdt]
        b = [f"@group(0) @binding(0) var<storage, read_write> inp: array<{ST[idt]}>;",
             f"@group(0) @binding(1) var<storage, read_write> outv: array<{ST[odt]}>;"]
        if has_idx:
            b.append("@group(0) @binding(2) var<storage, read_write> outi: array<i32>;")
        b.append(f"@group(0) @binding({len(b)}) var<storage, read> P: array<u32>;")
        idxop = op in ("cummax", "cummin")
        if idxop:
            c = ">=" if op == "cummax" else "<="
            takeb = ("  if (wisnan(bv)) { return true; }\n  if (wisnan(av)) { return false; }\n"
                     if act == "f32" else "") + f"  return bv {c} av;"
            step = "        if (!take_b(pv, nv)) { nv = pv; ni = pi; }"
            cin = "      if (!take_b(carry, v)) { v = carry; vi = carryi; }"
        else:
            takeb = "  return true;"
            step = "        nv = comb(pv, nv);"
            cin = "      v = comb(carry, v);"
        combine = {"cumsum": ewise_expr("add", accdt, "ab")[0] if act != "f32" else "a + b",
                   "cumprod": ewise_expr("mul", accdt, "ab")[0] if act != "f32" else "a * b",
                   "logcumsumexp": "wlogaddexp(a, b)"}.get(op, "b")
        lo = {"f32": "-winf()", "i32": "(-2147483647 - 1)", "u32": "0u"}[act]
        hi = {"f32": "winf()", "i32": "2147483647", "u32": "0xffffffffu"}[act]
        ident = {"cumsum": ZERO[act], "cumprod": ONE[act], "cummax": lo, "cummin": hi,
                 "logcumsumexp": "-winf()"}[op]
        st = f"      outv[b1 + i32(t) * ls1] = {store(conv(norm('sv[lix]', accdt), accdt, odt), odt)};"
        if has_idx:
            st += "\n      outi[b2 + i32(t) * ls2] = si[lix];"
        return fill("scan.wgsl", ENABLE=self.enable(idt, odt), PRELUDE=self._prelude,
                    BINDINGS="\n".join(b), WG=wg, ACC=act, TAKEB=takeb, COMBINE=combine, ROW=code,
                    IDENT=ident, LOAD=conv(load("inp[b0 + i32(t) * ls0]", idt), idt, accdt),
                    CARRY_IN=cin, STEP=step, STORE=st)

    def sort(self, out_values, out_indices, inp, descending, stable):
        n = numel(inp.shape)
        if n == 0:
            return
        if len(inp.shape) == 0:
            inp, out_values, out_indices = (View(v.buf, (1,), (1,), v.offset, v.dtype)
                                            for v in (inp, out_values, out_indices))
        L = inp.shape[-1]
        N = _next_pow2(L)
        dt = inp.dtype
        ct = CT[dt]
        if ct == "f32":
            nan = "  let an = wisnan(av); let bn = wisnan(bv);\n"
            if descending:
                before = nan + "  if (an != bn) { return an; }\n  if (!an && av != bv) { return av > bv; }\n  return ai < bi;"
            else:
                before = nan + "  if (an != bn) { return bn; }\n  if (!an && av != bv) { return av < bv; }\n  return ai < bi;"
        else:
            before = f"  if (av != bv) {{ return av {'>' if descending else '<'} bv; }}\n  return ai < bi;"
        views = [inp, out_values, out_indices]
        vstore = store(conv("{v}", dt, out_values.dtype), out_values.dtype)
        if N <= 1024:
            n_rows, L, words, code, R = self._rows(views, 2)
            wg = max(1, min(256, N // 2))
            key = ("sortwg", dt, out_values.dtype, descending, R, N)
            pipe = self._memo.get(key)
            if pipe is None:
                b = [f"@group(0) @binding(0) var<storage, read_write> inp: array<{ST[dt]}>;",
                     f"@group(0) @binding(1) var<storage, read_write> outv: array<{ST[out_values.dtype]}>;",
                     "@group(0) @binding(2) var<storage, read_write> outi: array<i32>;",
                     "@group(0) @binding(3) var<storage, read> P: array<u32>;"]
                st = (f"    outv[b1 + i32(t) * ls1] = {vstore.format(v='sv[t]')};\n"
                      f"    outi[b2 + i32(t) * ls2] = i32(si[t]);")
                kern = fill("sort_wg.part.wgsl", CT=ct, N=N, WG=wg, ROW=code,
                            LOAD=load("inp[b0 + i32(t) * ls0]", dt), STORE=st)
                src = fill("sort.wgsl", ENABLE=self.enable(dt, out_values.dtype), PRELUDE=self._prelude,
                           BINDINGS="\n".join(b), CT=ct, BEFORE=before, KERNEL=kern)
                pipe = self._memo[key] = self.pipeline(src)
            self.run(pipe, [v.buf for v in views], [n_rows, L] + words, n_rows)
            return
        # global bitonic network for long rows
        n_rows, L, words, code, R = self._rows(views, 5)
        tv = self.empty(n_rows * N, {"f32": "float32", "i32": "int32", "u32": "uint8"}[ct])
        ti = self.empty(n_rows * N, "int32")
        P = [n_rows, L, N, 0, 0] + words
        pipes = self._memo.get(("sortg", dt, out_values.dtype, descending, R))
        if pipes is None:
            tb = [f"@group(0) @binding({{0}}) var<storage, read_write> tv: array<{ct}>;",
                  "@group(0) @binding({1}) var<storage, read_write> ti: array<u32>;"]
            srcs = []
            for part, pre, post in (
                    ("sort_init.part.wgsl", [f"@group(0) @binding(0) var<storage, read_write> inp: array<{ST[dt]}>;"], []),
                    ("sort_step.part.wgsl", [], []),
                    ("sort_fin.part.wgsl", [], [f"@group(0) @binding(2) var<storage, read_write> outv: array<{ST[out_values.dtype]}>;",
                                           "@group(0) @binding(3) var<storage, read_write> outi: array<i32>;"])):
                o = len(pre)
                b = pre + [tb[0].format(o), tb[1].format(o, o + 1)] + post
                b.append(f"@group(0) @binding({len(b)}) var<storage, read> P: array<u32>;")
                st = (f"  outv[b1 + i32(t) * ls1] = {vstore.format(v='sv_t')};\n"
                      f"  outi[b2 + i32(t) * ls2] = i32(si_t);")
                kern = fill(part, CT=ct, ROW=code, LOAD=load("inp[b0 + i32(t) * ls0]", dt), STORE=st)
                srcs.append(fill("sort.wgsl", ENABLE=self.enable(dt, out_values.dtype), PRELUDE=self._prelude,
                                 BINDINGS="\n".join(b), CT=ct, BEFORE=before, KERNEL=kern))
            pipes = self._memo[("sortg", dt, out_values.dtype, descending, R)] = [self.pipeline(s) for s in srcs]
        self.run(pipes[0], [inp.buf, tv, ti], P, -(-(n_rows * N) // 256))
        k = 2
        while k <= N:
            j = k // 2
            while j > 0:
                P[3], P[4] = k, j
                self.run(pipes[1], [tv, ti], P[:5], -(-(n_rows * N // 2) // 256))
                j //= 2
            k *= 2
        self.run(pipes[2], [tv, ti, out_values.buf, out_indices.buf], P, -(-(n_rows * L) // 256))

    # ---- gather / scatter -------------------------------------------------------------
    def take(self, out, src_buf, src_dtype, idx):
        n = numel(out.shape)
        if n == 0:
            return
        shape, sts = collapse(tuple(out.shape), [out.strides, idx.strides])
        R = len(shape)
        cst = contiguous_strides(shape)
        contig = tuple(st == cst for st in sts)
        key = ("take", out.dtype, src_dtype, R, contig)
        pipe = self._memo.get(key)
        if pipe is None:
            b = [f"@group(0) @binding(0) var<storage, read_write> out: array<{ST[out.dtype]}>;",
                 "@group(0) @binding(1) var<storage, read_write> idx: array<i32>;",
                 f"@group(0) @binding(2) var<storage, read_write> src: array<{ST[src_dtype]}>;",
                 "@group(0) @binding(3) var<storage, read> P: array<u32>;"]
            body = (f"  let v = {conv(load('src[idx[o1]]', src_dtype), src_dtype, out.dtype)};\n"
                    f"  out[o0] = {store('v', out.dtype)};")
            src = fill("ewise.wgsl", ENABLE=self.enable(out.dtype, src_dtype), PRELUDE="",
                       BINDINGS="\n".join(b), INDEX=index_code(R, [("o0", contig[0]), ("o1", contig[1])]),
                       BODY=body)
            pipe = self._memo[key] = self.pipeline(src)
        words = [n, *shape, out.offset, *sts[0], idx.offset, *sts[1]]
        self.run(pipe, [out.buf, idx.buf, src_buf], words, -(-n // WG))

    def put(self, dst_buf, dst_dtype, idx, values, accumulate):
        n = numel(idx.shape)
        if n == 0:
            return
        scalar = not isinstance(values, View)
        sts_in = [idx.strides] + ([] if scalar else [values.strides])
        shape, sts = collapse(tuple(idx.shape), sts_in)
        R = len(shape)
        cst = contiguous_strides(shape)
        contig = tuple(st == cst for st in sts)
        vdt = dst_dtype if scalar else values.dtype
        key = ("put", dst_dtype, vdt, scalar, bool(accumulate), R, contig)
        pipe = self._memo.get(key)
        if pipe is None:
            pipe = self._memo[key] = self.pipeline(self._put_src(dst_dtype, vdt, scalar, accumulate, R, contig))
        words = [n, *shape, idx.offset, *sts[0]]
        if not scalar:
            words += [values.offset, *sts[1]]
        else:
            words.append(scalar_bits(values, dst_dtype))
        bufs = [dst_buf, idx.buf] + ([] if scalar else [values.buf])
        self.run(pipe, bufs, words, -(-n // WG))

    def _put_src(self, ddt, vdt, scalar, accumulate, R, contig):
        ct = CT[ddt]
        if accumulate:
            b = ["@group(0) @binding(0) var<storage, read_write> dst: array<atomic<u32>>;"]
        else:
            b = [f"@group(0) @binding(0) var<storage, read_write> dst: array<{ST[ddt]}>;"]
        b.append("@group(0) @binding(1) var<storage, read_write> idx: array<i32>;")
        names = [("o0", contig[0])]
        if scalar:
            sc = 1 + R + 1 * (1 + R)
            val = f"bitcast<{ct}>(P[{sc}u])" if ct != "u32" else f"P[{sc}u]"
        else:
            b.append(f"@group(0) @binding(2) var<storage, read_write> vals: array<{ST[vdt]}>;")
            names.append(("o1", contig[1]))
            val = conv(load("vals[o1]", vdt), vdt, ddt)
        b.append(f"@group(0) @binding({len(b)}) var<storage, read> P: array<u32>;")
        body = [f"  let v = {val};", "  let k = u32(idx[o0]);"]
        extra = ""
        if not accumulate:
            body.append(f"  dst[k] = {store('v', ddt)};")
        else:
            extra = shader("atomics.wgsl")
            if ddt == "float32":
                body.append("  atomic_add_f32(k, v);")
            elif ddt == "float16":
                body.append("  atomic_add_f16(k, v);")
            elif ddt == "uint8":
                body.append("  atomic_add_u8(k, v);")
            elif ddt == "bool":
                body.append("  if (v != 0u) { atomicOr(&dst[k], 1u); }")
            elif ddt == "int64":     # the sum as it was before this add: flag an overflow
                body.append(f"  _ = {_L_OPS['add'].format('bitcast<i32>(atomicAdd(&dst[k], bitcast<u32>(v)))', 'v')};")
            else:
                body.append("  atomicAdd(&dst[k], bitcast<u32>(v));")
        return fill("ewise.wgsl", ENABLE=self.enable(ddt, vdt), PRELUDE="",
                    BINDINGS="\n".join(b) + "\n" + extra, INDEX=index_code(R, names),
                    BODY="\n".join(body))

    # ---- creation ---------------------------------------------------------------------
    def arange(self, out, start, step):
        n = numel(out.shape)
        if n == 0:
            return
        dt = out.dtype
        if dt == "int64":
            scalar_bits(start + step * (n - 1), dt)      # the last value must fit too
        key = ("arange", dt)
        pipe = self._memo.get(key)
        if pipe is None:
            ct = CT[dt]
            src = fill("arange.wgsl", ENABLE=self.enable(dt), OT=ST[dt], CT=ct,
                       STORE=store(norm("v", dt), dt))
            pipe = self._memo[key] = self.pipeline(src)
        self.run(pipe, [out.buf], [n, out.offset, scalar_bits(start, dt), scalar_bits(step, dt)], -(-n // WG))

    def random(self, out, kind, seed, offset):
        n = numel(out.shape)
        if n == 0:
            return
        dt = out.dtype
        if dt not in ("float32", "float16"):
            raise TypeError(f"webgpu random: {dt} is not a floating dtype")
        key = ("rand", kind, dt)
        pipe = self._memo.get(key)
        if pipe is None:
            if kind == "uniform":
                body = "v = f32(w.x >> 8u) * 5.9604644775390625e-08;"
            elif kind == "normal":
                body = ("let u1 = (f32(w.x >> 8u) + 1.0) * 5.9604644775390625e-08;\n"
                        "  let u2 = f32(w.y >> 8u) * 5.9604644775390625e-08;\n"
                        "  v = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);")
            else:
                raise ValueError(f"unknown random kind {kind!r}")
            pipe = self._memo[key] = self.pipeline(fill("random.wgsl", ENABLE=self.enable(dt), OT=ST[dt], BODY=body))
        self.run(pipe, [out.buf], [n, seed & MASK, (seed >> 32) & MASK, offset & MASK, out.offset], -(-n // WG))

    # ---- matmul -----------------------------------------------------------------------
    def matmul(self, out, a, b):
        B, M, N = out.shape
        K = a.shape[2]
        if B * M * N == 0:
            return

        def fix(v):   # zero the strides of size-1 dims (irrelevant, and helps alignment)
            return View(v.buf, v.shape, tuple(0 if s == 1 else st for s, st in zip(v.shape, v.strides)),
                        v.offset, v.dtype)
        a, b, out = fix(a), fix(b), fix(out)
        f32 = out.dtype == a.dtype == b.dtype == "float32"
        if f32 and self.is_cpu_adapter and K % 4 == 0 and K > 0:
            # the register-block kernel reads A and B as vec4 along a contiguous dim: rows of A
            # ("n") or columns of A ("t": a transposed operand such as g.mT in a weight
            # gradient), rows of B ("n") or columns of B ("t": x @ W.t() in nn.Linear). A
            # transposed operand costs no copy; only odd strides fall back to a copy.
            la, lb = self._mm_layout(a, M, 0), self._mm_layout(b, N, 1)
            vout = N % 4 == 0 and out.strides[2] == 1 and out.strides[1] % 4 == 0 and \
                out.strides[0] % 4 == 0 and out.offset % 4 == 0
            sout = out.strides[2] == 1 or N == 1
            if (vout or sout) and M * N * K >= 1 << 18:
                if la is None:
                    a, la = self._contig(a), "n"
                if lb is None and N % 4 == 0:
                    b, lb = self._contig(b), "n"
            if (vout or sout) and la is not None and lb is not None:
                return self._matmul_reg(out, a, b, B, M, N, K, la, lb, vout)
        self._matmul_tiled(out, a, b, B, M, N, K)

    @staticmethod
    def _mm_layout(v, mn, which):
        """'n' when the operand's rows (A: [M,K] rows; B: [K,N] rows) are contiguous, 'n'/'t'
        as read by _matmul_reg, or None. All strides and the offset must be multiples of 4
        elements (16-byte vec4 reads)."""
        s0, s1, s2 = v.strides
        if s0 % 4 or v.offset % 4:
            return None
        if which == 0:          # A [M, K]
            if s2 == 1 and s1 % 4 == 0:
                return "n"
            if s1 == 1 and s2 % 4 == 0 and mn % 4 == 0:
                return "t"
        else:                   # B [K, N]
            if s2 == 1 and s1 % 4 == 0 and mn % 4 == 0:
                return "n"
            if s1 == 1 and s2 % 4 == 0:
                return "t"
        return None

    def _contig(self, v):
        t = self.empty(numel(v.shape), v.dtype)
        cv = View(t, v.shape, contiguous_strides(v.shape), 0, v.dtype)
        self.ewise("copy", cv, [v], v.dtype)
        return View(t, v.shape, tuple(0 if s == 1 else st for s, st in zip(v.shape, cv.strides)), 0, v.dtype)

    # register block per thread (TM rows x TN cols) and workgroup (WX x WY threads); measured on
    # lavapipe at 1024: 8x16 in 8x8 is as fast as larger blocks (26 GFLOP/s on an idle machine)
    REG = dict(TM=8, TN=16, WX=8, WY=8)

    def _matmul_reg(self, out, a, b, B, M, N, K, la="n", lb="n", vout=True):
        TM, TN, WX, WY = (self.REG[k] for k in ("TM", "TN", "WX", "WY"))
        # small products: shrink the workgroup so that both lavapipe threads get work
        while B * -(-(-(-N // TN)) // WX) * -(-(-(-M // TM)) // WY) < 4 and WX * WY > 8:
            if WY >= WX:
                WY //= 2
            else:
                WX //= 2
        same = a.buf is b.buf
        key = ("mmreg", TM, TN, WX, WY, la, lb, vout, same)
        pipe = self._memo.get(key)
        if pipe is None:
            src = _mm_reg_src(TM, TN, WX, WY, la, lb, vout)
            pipe = self._memo[key] = self.pipeline(_alias_b(src) if same else src)
        gx = -(-(-(-N // TN)) // WX)
        gy = -(-(-(-M // TM)) // WY)
        ou = 4 if vout else 1
        for b0 in range(0, B, self.max_wg):
            nb = min(self.max_wg, B - b0)
            words = [M, N, K // 4, b0, a.offset // 4, a.strides[0] // 4, a.strides[1 if la == "n" else 2] // 4,
                     b.offset // 4, b.strides[0] // 4, b.strides[1 if lb == "n" else 2] // 4,
                     out.offset // ou, out.strides[0] // ou, out.strides[1] // ou]
            bufs = [out.buf.handle, a.buf.handle] + ([] if same else [b.buf.handle])
            self.driver.dispatch(pipe, bufs, pack_words(words), (gx, gy, nb))

    def _matmul_tiled(self, out, a, b, B, M, N, K):
        cd = out.dtype if out.dtype in ("int32", "int64", "uint8", "bool") else "float32"
        same = a.buf is b.buf
        key = ("mmtiled", a.dtype, b.dtype, out.dtype, same)
        pipe = self._memo.get(key)
        if pipe is None:
            src = fill("matmul_tiled.wgsl", ENABLE=self.enable(a.dtype, b.dtype, out.dtype), OS=ST[out.dtype],
                       AS=ST[a.dtype], BS=ST[b.dtype], CT=CT[cd], BM=64, BN=64, BK=16,
                       ALOAD=conv(load("x", a.dtype), a.dtype, cd), BLOAD=conv(load("x", b.dtype), b.dtype, cd),
                       OSTORE=store(conv(norm("v", cd), cd, out.dtype), out.dtype),
                       MAC=ewise_expr("add", cd, ["acc[r][c]", ewise_expr("mul", cd, ["a[r]", "b[c]"])[0]])[0])
            pipe = self._memo[key] = self.pipeline(_alias_b(src) if same else src)
        gx, gy = -(-N // 64), -(-M // 64)
        for b0 in range(0, B, self.max_wg):
            nb = min(self.max_wg, B - b0)
            words = [M, N, K, b0, a.offset, a.strides[0], a.strides[1], a.strides[2],
                     b.offset, b.strides[0], b.strides[1], b.strides[2],
                     out.offset, out.strides[0], out.strides[1], out.strides[2]]
            bufs = [out.buf.handle, a.buf.handle] + ([] if same else [b.buf.handle])
            self.driver.dispatch(pipe, self._bind(pipe, bufs), pack_words(words), (gx, gy, nb))


def _mm_reg_src(TM, TN, WX, WY, la, lb, vout):
    """WGSL of the register-block matmul for operand layouts la/lb ('n' or 't', see
    shaders/matmul_reg.wgsl) and a vec4 (vout) or scalar output."""
    TN4, TM4 = TN // 4, TM // 4
    xyzw = "xyzw"
    setup, body, st = [], [], []
    if la == "n":
        setup += [f"  let ra{r} = abase + min(r0 + {r}u, M - 1u) * as1;" for r in range(TM)]
        body += [f"    let a{r} = A[ra{r} + k];" for r in range(TM)]
        aval = lambda r, kk: f"a{r}.{xyzw[kk]}"                                   # noqa: E731
    else:
        setup += [f"  let ra{q} = abase + min(r0 / 4u + {q}u, M / 4u - 1u);" for q in range(TM4)]
        aval = lambda r, kk: f"t{kk}_{r // 4}.{xyzw[r % 4]}"                      # noqa: E731
    if lb == "n":
        setup += [f"  let cb{j} = min(c0 / 4u + {j}u, N / 4u - 1u);" for j in range(TN4)]
    else:
        setup += [f"  let cb{n} = bbase + min(c0 + {n}u, N - 1u) * bs1;" for n in range(TN)]
        body += [f"    let u{n} = B[cb{n} + k];" for n in range(TN)]
    for kk in range(4):
        body.append("    {")
        if la == "t":
            body += [f"      let t{kk}_{q} = A[ra{q} + (k * 4u + {kk}u) * as1];" for q in range(TM4)]
        if lb == "n":
            body.append(f"      let kr = bbase + (k * 4u + {kk}u) * bs1;")
            body += [f"      let b{j} = B[kr + cb{j}];" for j in range(TN4)]
        else:
            c = xyzw[kk]
            body += [f"      let b{j} = vec4<f32>(u{4 * j}.{c}, u{4 * j + 1}.{c}, u{4 * j + 2}.{c}, u{4 * j + 3}.{c});"
                     for j in range(TN4)]
        body += [f"      acc{r}_{j} = acc{r}_{j} + {aval(r, kk)} * b{j};" for r in range(TM) for j in range(TN4)]
        body.append("    }")
    decl = [f"  var acc{r}_{j} = vec4<f32>(0.0);" for r in range(TM) for j in range(TN4)]
    for r in range(TM):
        st.append(f"  if (r0 + {r}u < M) {{ let orow = obase + (r0 + {r}u) * ors;")
        for j in range(TN4):
            if vout:
                st.append(f"    if (c0 / 4u + {j}u < N / 4u) {{ O[orow + c0 / 4u + {j}u] = acc{r}_{j}; }}")
            else:
                st += [f"    if (c0 + {4 * j + c}u < N) {{ O[orow + c0 + {4 * j + c}u] = acc{r}_{j}.{xyzw[c]}; }}"
                       for c in range(4)]
        st.append("  }")
    return fill("matmul_reg.wgsl", OT="vec4<f32>" if vout else "f32", TM=TM, TN=TN, WX=WX, WY=WY,
                SETUP="\n".join(setup), DECL="\n".join(decl), BODY="\n".join(body), STORE="\n".join(st))
