"""WGSL code generation for the WebGPU backend: dtype maps, shader loading, expressions, indexing.

Storage: float32 -> f32, float16 -> f16 (needs 'shader-f16'), int32 -> i32, int64 -> i32
(values must fit in int32: uploads are range-checked, and every kernel whose int64 result can
leave the range sets a device flag that the next sync reads and raises, see I64_WGSL), bool,
uint8, uint16 and uint32 -> one u32 per element (uint64 is not stored), bfloat16 -> one f32 per
element holding a bfloat16 value (its 16 bits are the word's upper half, the lower half zero: a load
is the f32 itself, a store rounds to nearest even, `bf16r`). float16 and bfloat16 compute in f32,
rounded to their dtype where PyTorch stores a tensor of it (`rnd`).
Kernels count and index elements with 32-bit words (pack_words raises past them).

Kernels are generated from the templates in `shaders/*.wgsl` (`fill`), specialized per op,
dtype, collapsed rank and workgroup size. Every kernel takes shapes, strides and offsets in
its parameter words (`index_code`), so strided, broadcast and offset views run without copies.

NaN/inf: WGSL lets compilers assume finite floats, and lavapipe folds `x - x` or
`(x + y) - y`; the fused kernels hide the second operand of each float op behind an opaque
identity (lazy.py), and the prelude's helpers test NaN/inf by their bits.
"""
import functools
import math
import os
import re
import struct
from importlib.resources import files

from ..elementwise import RECORDS, follow, form

MASK = 0xFFFFFFFF
CT = {"float32": "f32", "float16": "f32", "int32": "i32", "int64": "i32", "bool": "u32", "uint8": "u32",
      "uint16": "u32", "uint32": "u32", "bfloat16": "f32"}
ST = {"float32": "f32", "float16": "f16", "int32": "i32", "int64": "i32", "bool": "u32", "uint8": "u32",
      "uint16": "u32", "uint32": "u32", "bfloat16": "f32"}
ITEM = {"float32": 4, "float16": 2, "int32": 4, "int64": 4, "bool": 4, "uint8": 4, "complex64": 8, "uint16": 4,
        "uint32": 4, "bfloat16": 4}
PACK = {"float32": "f", "float16": "e", "int32": "i", "int64": "i", "bool": "I", "uint8": "I", "uint16": "I",
        "uint32": "I", "bfloat16": "f"}
WRAP = {"uint8": 255, "uint16": 0xFFFF, "uint32": MASK}  # the unsigned types: values modulo (their mask + 1)
HALF = ("float16", "bfloat16")  # 16-bit floats: computed in f32, rounded to their dtype (`rnd`)
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
                _SRC[name] = (files("webtorch") / "shaders" / name).read_text(encoding="utf-8")
            except Exception:
                raise FileNotFoundError(f"webgpu shader {name!r} not found in {_shader_dirs()}") from None
    return _SRC[name]


_P_WORD = re.compile(r"\bP\[(\d+)u\]")


def ewise_src(k, enable, prelude, bindings, index, body, head=""):
    """An ewise.wgsl kernel doing `k` elements per thread: `index` and `body` compute element
    `i`; `head` and every constant parameter word they read (`P[<n>u]`) are evaluated once per
    thread, before its loop over its elements. Dispatch it over `ewise_groups(n, k)` workgroups."""
    words = sorted({int(w) for w in _P_WORD.findall(f"{head}\n{index}\n{body}")})
    head, index, body = (_P_WORD.sub(r"pw\1", c) for c in (head, index, body))
    hoist = "\n".join([f"  let pw{w} = P[{w}u];" for w in words] + ([head] if head else []))
    return fill("ewise.wgsl", ENABLE=enable, PRELUDE=prelude, BINDINGS=bindings, HOIST=hoist, K=k, SPAN=WG * k,
                INDEX=index, BODY=body)


def ewise_groups(n, k):
    return -(-n // (WG * k))


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
    if dst == "int64" and src == "uint32":
        return f"i64_u2i({v})"
    if dst == "uint32" and cs != "u32":  # PyTorch wraps into uint32 through int64: -1 and -1.0 give 4294967295
        return f"wf2u32({v})" if cs == "f32" else f"bitcast<u32>({v})"
    if src == "uint32" and cd == "i32":
        return f"bitcast<i32>({v})"
    if dst == "bool":
        return v if src == "bool" else f"select(0u, 1u, {_nonzero(v, cs)})"
    if dst in ("uint8", "uint16"):  # one u32 per element, wrapped
        if src in ("bool", "uint8", dst):
            return v
        return f"(u32(wf2i({v})) & {WRAP[dst]}u)" if cs == "f32" else f"(u32({v}) & {WRAP[dst]}u)"
    if dst in HALF and src != dst:      # computes in f32 on float16's / bfloat16's values
        return rnd(v if cs == "f32" else f"f32({v})", dst)
    if cd == "i32" and cs == "f32":
        return f"wf2i({v})"
    return v if cs == cd else f"{cd}({v})"


def store(v, dt):
    return f"f16({v})" if dt == "float16" else rnd(v, dt)


def rnd(v, dt):
    """f32 v rounded to float16 / bfloat16 (as if stored to dt and loaded back); v itself for another dtype"""
    return f"f32(f16({v}))" if dt == "float16" else f"bf16r({v})" if dt == "bfloat16" else v


def norm(v, dt):
    """wrap a u32 result of a uint8/uint16/bool computation back into range"""
    if dt in ("uint8", "uint16"):
        return f"(({v}) & {WRAP[dt]}u)"
    if dt == "bool":
        return f"select(0u, 1u, ({v}) != 0u)"
    return v


# f32 -> the nearest bfloat16 (ties to even; past bfloat16's max: +-inf) as an f32 whose lower 16 bits are zero,
# webgpu's bfloat16 storage; by bits (compilers may assume finite), NaN stays NaN. In every kernel that touches
# bfloat16 (Kernels.enable)
BF16_WGSL = """
fn bf16r(x: f32) -> f32 {
  let u = bitcast<u32>(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) { return bitcast<f32>((u | 0x00400000u) & 0xffff0000u); }
  return bitcast<f32>((u + 0x7fffu + ((u >> 16u) & 1u)) & 0xffff0000u);
}
"""


# int64 lives in an i32: the ops that can leave its range flag the overflow (their records' "int64"
# forms call I64_WGSL's functions); integer division and remainder by zero (any integer dtype) flag
# too, as PyTorch raises ZeroDivisionError
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
  loop {
    if ((e & 1u) != 0u) { r = i64_mul(r, base); }
    e = e >> 1u; if (e == 0u) { break; } base = i64_mul(base, base);
  }
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
fn i64_u2i(v: u32) -> i32 { if (v > 2147483647u) { i64_ovf(); } return bitcast<i32>(v); }
fn i64_f2i(v: f32) -> i32 {   // by bits (compilers may assume finite)
  let u = bitcast<u32>(v);
  // NaN, +-inf, |v| >= 2^63: outside int64, PyTorch's cast gives INT64_MIN (x86); here the i32 storage's minimum
  if ((u & 0x7fffffffu) >= 0x5f000000u) { return -2147483647 - 1; }
  if ((u & 0x7fffffffu) >= 0x4f000000u && u != 0xcf000000u) { i64_ovf(); }
  return i32(v);
}
"""
I64_MSG = ("int64 overflow on webgpu: WebGPU stores int64 as 32-bit integers and a result left the "
           "range [-2147483648, 2147483647]; compute on cpu (x.cpu()) where int64 values need 64 bits")
_P_DECL = re.compile(r"@group\(0\) @binding\((\d+)\) var<storage, read> P: array<u32>;")


# (op, cdtype) -> (WGSL template in {0}, {1}, {2}, result dtype), from the records (backends/elementwise.py)
_EXPR = {}


def _expr(rec, cdtype):
    """The template and result dtype of record rec in compute dtype cdtype (None: no WGSL form)."""
    f, own = form(rec.wgsl, cdtype)
    if f is None:  # a float function on an integer compute type: in f32, converted back
        f = form(rec.wgsl, "float32")[0]
        if f is None or CT[cdtype] == "f32":
            return None
        f = conv(f.format(*(f"f32({{{j}}})" for j in range(rec.arity))), "float32", cdtype)
    elif not own and rec.out != "bool":
        f = norm(f, cdtype)
    return (f"select(0u, 1u, {f})", "bool") if rec.out == "bool" else (f, cdtype)


follow(_EXPR, CT, _expr)


def prelude():
    """The prelude of every kernel: shaders/prelude.wgsl's shared functions and the records' helpers."""
    return shader("prelude.wgsl") + "".join(r.helpers for r in RECORDS.values())


# The prelude's top-level items (each from its `fn`/`struct`/`const` line to the next one's, comments after it
# included) and the names each uses: parsed once, then each kernel keeps only the items its own code reaches.
# A kernel's text is ~26 KB of helpers and a few hundred bytes of its own: the WGSL compilers parse and check
# them all (lavapipe: 12 ms a kernel, 5 ms without; SwiftShader in Chromium: ~25 ms less a kernel).
_ITEM = re.compile(r"^(?:fn|struct|const|alias|override)\s+(\w+)", re.M)
_WORD = re.compile(r"[A-Za-z_]\w*")
_COMMENT = re.compile(r"//[^\n]*")


@functools.lru_cache(maxsize=4)
def _items(text):
    """text's head (before its first item) and {name: (item text, the names it uses)}, in order"""
    starts = [m.start() for m in _ITEM.finditer(text)] + [len(text)]
    items = {}
    for s, e in zip(starts, starts[1:]):
        t = text[s:e]
        items[_ITEM.match(t).group(1)] = (t, frozenset(_WORD.findall(_COMMENT.sub("", t))))
    return text[:starts[0]], items


def shake(src, prelude):
    """src with its copy of `prelude` cut to the items the rest of src reaches (directly or through other
    items), in their order; src unchanged when it holds no copy"""
    at = src.find(prelude)
    if at < 0:
        return src
    rest = src[:at] + src[at + len(prelude):]
    head, items = _items(prelude)
    keep, todo = set(), [w for w in set(_WORD.findall(_COMMENT.sub("", rest))) if w in items]
    while todo:
        name = todo.pop()
        if name not in keep:
            keep.add(name)
            todo.extend(w for w in items[name][1] if w in items and w not in keep)
    return src[:at] + head + "".join(t for name, (t, _) in items.items() if name in keep) + src[at + len(prelude):]


def ewise_expr(op, cdtype, args):
    """WGSL expression for `op` in compute dtype `cdtype` -> (expr, result dtype)."""
    e = _EXPR.get((op, cdtype))
    if e is None:
        raise TypeError(f"webgpu: op {op!r} is not supported for dtype {cdtype}")
    return e[0].format(*args), e[1]


def mm_bindings(ot, at, bt, same, epi, nwords):
    """A matmul kernel's bindings: O (or a fused epilogue's outputs and leaves, lazy.py), A,
    B (left out for a product of a buffer with itself, x @ x.T: `alias_b` then reads B through
    A, bound once), then P (nwords words, then the epilogue's)."""
    names = ([] if epi else [("O", ot)]) + [("A", at)] + ([] if same else [("B", bt)])
    decl = [f"@group(0) @binding({k}) var<storage, read_write> {n}: array<{t}>;" for k, (n, t) in enumerate(names)]
    decl.append(epi.source(len(names), nwords) if epi else
                f"@group(0) @binding({len(names)}) var<storage, read> P: array<u32>;")
    return "\n".join(decl)


def alias_b(src, same):
    return re.sub(r"\bB\[", "A[", src) if same else src


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


def bind_once(bufs, views):
    """Append to `bufs` the buffer of each view not bound yet; returns each view's binding index.
    Each distinct buffer is bound once (in-place ops and x*x read through the same binding):
    browsers reject a writable buffer bound twice in one dispatch."""
    idx = []
    for v in views:
        for j, b in enumerate(bufs):
            if b is v.buf:
                idx.append(j)
                break
        else:
            idx.append(len(bufs))
            bufs.append(v.buf)
    return idx

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
    if dt in ("uint8", "uint16"):
        return v & WRAP[dt]
    if dt in ("int32", "uint32"):             # PyTorch wraps a Python int into the tensor's int32
        return v & MASK
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
