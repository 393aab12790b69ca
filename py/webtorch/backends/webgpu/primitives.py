"""The kernels of the primitive set (`backends/base.py`) on WebGPU.

`Primitives` is a component `WebGPUBackend` (backend.py) owns; it generates WGSL and dispatches
through the plumbing it is given (`Kernels`, kernels.py): `kernel`/`_memo`, `pipeline`, `run`,
`_bind`, `empty`, `enable`, `prelude`, `fusion`, `commands`, `ew_k`, `max_wg`, `is_lavapipe`.
"""
from math import prod

from ..._geometry import contiguous_strides, numel
from ..base import EWISE_OPS, Strided, fast_paths_of
from ..complex_parts import COMPLEX
from .codegen import (
    CT,
    HALF,
    MASK,
    ONE,
    ST,
    WG,
    WRAP,
    ZERO,
    _count_error,
    alias_b,
    bind_once,
    collapse,
    conv,
    ewise_expr,
    ewise_groups,
    ewise_src,
    fill,
    index_code,
    load,
    mm_bindings,
    norm,
    pack_words,
    scalar_bits,
    shader,
    store,
)

# llvmpipe (lavapipe, CPU adapters) ends a shader's loops after 65,535 iterations, silently: a product's K
# runs in slices of this length there (the tiled kernel stopped short from K ~ 32,768, the register-block
# kernel from 262,140)
K_CHUNK = 1 << 14
# and a scan's row in slices of this length (a 256-thread workgroup loops over its chunks and their steps)
SCAN_CHUNK = 1 << 19
_SCAN_CARRY = {"cumsum": "add", "cumprod": "mul"}


def _next_pow2(n):
    p = 1
    while p < n:
        p *= 2
    return p


def rows(views, pbase):
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


class Primitives:
    """ewise, reduce, scan, sort, take, put, arange, random and matmul as WGSL kernels, generated and
    dispatched through `k` (kernels.py: pipeline memo, run, allocation, fusion, adapter facts)."""
    # one host call instead of the decomposition's 2 to 8 (sigmoid's four, rsqrt's two); isnan, isinf,
    # isfinite look at the bits, where a shader compiler may assume finite floats and fold `x != x`
    fast_paths = fast_paths_of("wgsl")

    def __init__(self, k):
        self.k = k

    # ---- element-wise -----------------------------------------------------------------
    def ewise(self, op, out, inputs, cdtype):
        if op not in EWISE_OPS and op not in self.fast_paths:
            raise ValueError(f"unknown element-wise op {op!r}")
        if cdtype in COMPLEX or op == "copy" and getattr(inputs[0], "dtype", None) in COMPLEX:
            return self.k.cx.ewise(op, out, inputs, cdtype)
        n = numel(out.shape)
        if n == 0:
            return
        self.k._check_dtype(cdtype)
        if self.k.fusion.defer(op, out, inputs, cdtype):
            return
        views = [x for x in inputs if isinstance(x, Strided)]
        shape, sts = collapse(tuple(out.shape), [out.strides] + [v.strides for v in views])
        R = len(shape)
        cst = contiguous_strides(shape)
        contig = tuple(st == cst for st in sts)
        kinds = tuple(x.dtype if isinstance(x, Strided) else "s" for x in inputs)
        bufs = [out.buf]
        amap = tuple(bind_once(bufs, views))
        key = ("ew", op, cdtype, out.dtype, kinds, R, contig, amap)
        pipe = self.k._memo.get(key)
        if pipe is None:
            pipe = self.k._memo[key] = self.k.pipeline(self._ewise_src(op, cdtype, out.dtype, kinds, R, contig, amap))
        words = [n, *shape, out.offset, *sts[0]]
        for v, st in zip(views, sts[1:]):
            words += [v.offset, *st]
        for k, x in enumerate(inputs):
            if not isinstance(x, Strided):
                words.append(scalar_bits(x, "bool" if (op == "where" and k == 0) else cdtype))
        self.k.run(pipe, bufs, words, ewise_groups(n, self.k.ew_k))

    def ewise_new(self, op, shape, inputs, cdtype):
        """Backend.ewise_new: the new buffer joins the pending fused group at once (`Fusion.record`)."""
        n = prod(shape)
        buf = self.k.empty(n, cdtype)
        if n and (op not in EWISE_OPS and op not in self.fast_paths or  # (ewise raises)
                  not self.k.fusion.record(op, buf, shape, n, inputs, cdtype)):
            self.ewise(op, Strided(buf, shape, contiguous_strides(shape), 0, cdtype), inputs, cdtype)
        return buf

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
        return ewise_src(self.k.ew_k, self.k.enable(odt, *kinds), self.k.prelude, "\n".join(binds),
                         index_code(R, names), "\n".join(body))

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
            tdt = "float32" if accdt in HALF else accdt
            tv = self.k.empty(n_out * nch, tdt)
            ti = self.k.empty(n_out * nch, "int32") if arg else None
            self._reduce_pass(op, accdt, None, inp, None, n_out, inner, chunk, nch, (tv, ti))
            tview = Strided(tv, (*out.shape, nch), (*contiguous_strides(out.shape + (nch,)),), 0, tdt)
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
        pipe = self.k._memo.get(key)
        if pipe is None:
            pipe = self.k._memo[key] = self.k.pipeline(
                self._reduce_src(op, accdt, inp.dtype, odt, Ro, Ri, wg, idx_in is not None, temp is not None))
        words = [n_out, numel(inner), chunk, nch, *osh, inp.offset, *ist,
                 out.offset if out is not None else 0, *ost, *ish, *iist]
        if temp is not None:
            bufs = [temp[0]] + ([temp[1]] if arg else []) + [inp.buf]
        else:
            bufs = [out.buf] + [inp.buf] + ([idx_in] if idx_in is not None else [])
        self.k.run(pipe, bufs, words, n_out * nch)

    def _reduce_src(self, op, accdt, idt, odt, Ro, Ri, wg, has_idx_in, to_temp):
        arg = op in ("argmax", "argmin")
        act = CT[accdt]
        tdt = "float32" if accdt in HALF else accdt
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
        return fill("reduce.wgsl", ENABLE=self.k.enable(idt, odt or ""), PRELUDE=self.k.prelude,
                    BINDINGS="\n".join(b), WG=wg, ACC=act, BETTER=better, COMBINE=combine,
                    OUTER="\n".join(outer), IDENT=ident, INNER="\n".join(inn), FOLD=fold, TREE=tree,
                    STORE=st)

    # ---- row kernels (scan, sort: their rows through `rows`) -------------------------

    def scan(self, op, out, inp, out_idx=None):
        n = numel(out.shape)
        if n == 0:
            return
        if self.k.is_cpu_adapter and out.shape and out.shape[-1] > SCAN_CHUNK:
            return self._scan_chunked(op, out, inp)
        if len(out.shape) == 0:
            out, inp = (Strided(v.buf, (1,), (1,), v.offset, v.dtype) for v in (out, inp))
            if out_idx is not None:
                out_idx = Strided(out_idx.buf, (1,), (1,), out_idx.offset, out_idx.dtype)
        views = [inp, out] + ([out_idx] if out_idx is not None else [])
        n_rows, L, words, code, R = rows(views, 2)
        accdt = inp.dtype if op in ("cummax", "cummin") else out.dtype
        wg = 256 if L > 64 else 64 if L > 16 else 16
        key = ("scan", op, inp.dtype, out.dtype, accdt, R, wg, out_idx is not None)
        pipe = self.k._memo.get(key)
        if pipe is None:
            pipe = self.k._memo[key] = self.k.pipeline(self._scan_src(op, inp.dtype, out.dtype, accdt, R, wg,
                                                                  code, out_idx is not None))
        self.k.run(pipe, [v.buf for v in views], [n_rows, L] + words, n_rows)

    def _scan_chunked(self, op, out, inp):
        """A scan of rows longer than SCAN_CHUNK on llvmpipe (which ends a shader loop after 65,535 iterations,
        silently): scans of SCAN_CHUNK-long slices, each then combined with the running value before it."""
        if op not in _SCAN_CARRY:
            raise RuntimeError(f"{op} over rows longer than {SCAN_CHUNK} elements is not supported on a CPU WebGPU "
                               f"adapter (its shaders stop loops early); compute it on the cpu device")
        if out.dtype in HALF:  # float16 / bfloat16: the running values in float32, each result rounded once
            acc = self._f32_like(out)
            self._scan_chunked(op, acc, inp)
            return self.ewise("copy", out, [acc], out.dtype)
        L = out.shape[-1]
        for k0 in range(0, L, SCAN_CHUNK):
            kc = min(SCAN_CHUNK, L - k0)
            o, i = (Strided(v.buf, v.shape[:-1] + (kc,), v.strides, v.offset + k0 * v.strides[-1], v.dtype)
                    for v in (out, inp))
            self.scan(op, o, i)
            if k0:
                carry = Strided(out.buf, o.shape, out.strides[:-1] + (0,), out.offset + (k0 - 1) * out.strides[-1],
                                out.dtype)
                self.ewise(_SCAN_CARRY[op], o, [carry, o], out.dtype)

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
        return fill("scan.wgsl", ENABLE=self.k.enable(idt, odt), PRELUDE=self.k.prelude,
                    BINDINGS="\n".join(b), WG=wg, ACC=act, TAKEB=takeb, COMBINE=combine, ROW=code,
                    IDENT=ident, LOAD=conv(load("inp[b0 + i32(t) * ls0]", idt), idt, accdt),
                    CARRY_IN=cin, STEP=step, STORE=st)

    def sort(self, out_values, out_indices, inp, descending, stable):
        n = numel(inp.shape)
        if n == 0:
            return
        if len(inp.shape) == 0:
            inp, out_values, out_indices = (Strided(v.buf, (1,), (1,), v.offset, v.dtype)
                                            for v in (inp, out_values, out_indices))
        L = inp.shape[-1]
        N = _next_pow2(L)
        dt = inp.dtype
        ct = CT[dt]
        if ct == "f32":
            nan = "  let an = wisnan(av); let bn = wisnan(bv);\n"
            if descending:
                before = nan + "  if (an != bn) { return an; }\n  if (!an && av != bv) { return av > bv; }\n"
            else:
                before = nan + "  if (an != bn) { return bn; }\n  if (!an && av != bv) { return av < bv; }\n"
            before += "  return ai < bi;"
        else:
            before = f"  if (av != bv) {{ return av {'>' if descending else '<'} bv; }}\n  return ai < bi;"
        views = [inp, out_values, out_indices]
        vstore = store(conv("{v}", dt, out_values.dtype), out_values.dtype)
        if N <= 1024:
            n_rows, L, words, code, R = rows(views, 2)
            wg = max(1, min(256, N // 2))
            key = ("sortwg", dt, out_values.dtype, descending, R, N)
            pipe = self.k._memo.get(key)
            if pipe is None:
                b = [f"@group(0) @binding(0) var<storage, read_write> inp: array<{ST[dt]}>;",
                     f"@group(0) @binding(1) var<storage, read_write> outv: array<{ST[out_values.dtype]}>;",
                     "@group(0) @binding(2) var<storage, read_write> outi: array<i32>;",
                     "@group(0) @binding(3) var<storage, read> P: array<u32>;"]
                st = (f"    outv[b1 + i32(t) * ls1] = {vstore.format(v='sv[t]')};\n"
                      f"    outi[b2 + i32(t) * ls2] = i32(si[t]);")
                kern = fill("sort_wg.part.wgsl", CT=ct, N=N, WG=wg, ROW=code,
                            LOAD=load("inp[b0 + i32(t) * ls0]", dt), STORE=st)
                src = fill("sort.wgsl", ENABLE=self.k.enable(dt, out_values.dtype), PRELUDE=self.k.prelude,
                           BINDINGS="\n".join(b), CT=ct, BEFORE=before, KERNEL=kern)
                pipe = self.k._memo[key] = self.k.pipeline(src)
            self.k.run(pipe, [v.buf for v in views], [n_rows, L] + words, n_rows)
            return
        # global bitonic network for long rows
        n_rows, L, words, code, R = rows(views, 5)
        tv = self.k.empty(n_rows * N, {"f32": "float32", "i32": "int32", "u32": "uint8"}[ct])
        ti = self.k.empty(n_rows * N, "int32")
        P = [n_rows, L, N, 0, 0] + words
        pipes = self.k._memo.get(("sortg", dt, out_values.dtype, descending, R))
        if pipes is None:
            tb = [f"@group(0) @binding({{0}}) var<storage, read_write> tv: array<{ct}>;",
                  "@group(0) @binding({1}) var<storage, read_write> ti: array<u32>;"]
            srcs = []
            inp_decl = f"@group(0) @binding(0) var<storage, read_write> inp: array<{ST[dt]}>;"
            out_decls = [f"@group(0) @binding(2) var<storage, read_write> outv: array<{ST[out_values.dtype]}>;",
                         "@group(0) @binding(3) var<storage, read_write> outi: array<i32>;"]
            for part, pre, post in (("sort_init.part.wgsl", [inp_decl], []),
                                    ("sort_step.part.wgsl", [], []),
                                    ("sort_fin.part.wgsl", [], out_decls)):
                o = len(pre)
                b = pre + [tb[0].format(o), tb[1].format(o, o + 1)] + post
                b.append(f"@group(0) @binding({len(b)}) var<storage, read> P: array<u32>;")
                st = (f"  outv[b1 + i32(t) * ls1] = {vstore.format(v='sv_t')};\n"
                      f"  outi[b2 + i32(t) * ls2] = i32(si_t);")
                kern = fill(part, CT=ct, ROW=code, LOAD=load("inp[b0 + i32(t) * ls0]", dt), STORE=st)
                srcs.append(fill("sort.wgsl", ENABLE=self.k.enable(dt, out_values.dtype), PRELUDE=self.k.prelude,
                                 BINDINGS="\n".join(b), CT=ct, BEFORE=before, KERNEL=kern))
            pipes = self.k._memo[("sortg", dt, out_values.dtype, descending, R)] = [self.k.pipeline(s) for s in srcs]
        self.k.run(pipes[0], [inp.buf, tv, ti], P, -(-(n_rows * N) // 256))
        k = 2
        while k <= N:
            j = k // 2
            while j > 0:
                P[3], P[4] = k, j
                self.k.run(pipes[1], [tv, ti], P[:5], -(-(n_rows * N // 2) // 256))
                j //= 2
            k *= 2
        self.k.run(pipes[2], [tv, ti, out_values.buf, out_indices.buf], P, -(-(n_rows * L) // 256))

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
        pipe = self.k._memo.get(key)
        if pipe is None:
            b = [f"@group(0) @binding(0) var<storage, read_write> out: array<{ST[out.dtype]}>;",
                 "@group(0) @binding(1) var<storage, read_write> idx: array<i32>;",
                 f"@group(0) @binding(2) var<storage, read_write> src: array<{ST[src_dtype]}>;",
                 "@group(0) @binding(3) var<storage, read> P: array<u32>;"]
            body = (f"  let v = {conv(load('src[idx[o1]]', src_dtype), src_dtype, out.dtype)};\n"
                    f"  out[o0] = {store('v', out.dtype)};")
            src = ewise_src(self.k.ew_k, self.k.enable(out.dtype, src_dtype), "", "\n".join(b),
                            index_code(R, [("o0", contig[0]), ("o1", contig[1])]), body)
            pipe = self.k._memo[key] = self.k.pipeline(src)
        words = [n, *shape, out.offset, *sts[0], idx.offset, *sts[1]]
        self.k.run(pipe, [out.buf, idx.buf, src_buf], words, ewise_groups(n, self.k.ew_k))

    def put(self, dst_buf, dst_dtype, idx, values, accumulate):
        n = numel(idx.shape)
        if n == 0:
            return
        scalar = not isinstance(values, Strided)
        sts_in = [idx.strides] + ([] if scalar else [values.strides])
        shape, sts = collapse(tuple(idx.shape), sts_in)
        R = len(shape)
        cst = contiguous_strides(shape)
        contig = tuple(st == cst for st in sts)
        vdt = dst_dtype if scalar else values.dtype
        key = ("put", dst_dtype, vdt, scalar, bool(accumulate), R, contig)
        pipe = self.k._memo.get(key)
        if pipe is None:
            pipe = self.k._memo[key] = self.k.pipeline(self._put_src(dst_dtype, vdt, scalar, accumulate, R, contig))
        words = [n, *shape, idx.offset, *sts[0]]
        if not scalar:
            words += [values.offset, *sts[1]]
        else:
            words.append(scalar_bits(values, dst_dtype))
        bufs = [dst_buf, idx.buf] + ([] if scalar else [values.buf])
        self.k.run(pipe, bufs, words, ewise_groups(n, self.k.ew_k))

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
            elif ddt == "bfloat16":
                body.append("  atomic_add_bf16(k, v);")
            elif ddt in ("uint8", "uint16"):
                body.append(f"  atomic_add_wrap(k, v, {WRAP[ddt]}u);")
            elif ddt == "bool":
                body.append("  if (v != 0u) { atomicOr(&dst[k], 1u); }")
            elif ddt == "int64":     # the sum as it was before this add: flag an overflow
                old = "bitcast<i32>(atomicAdd(&dst[k], bitcast<u32>(v)))"
                body.append(f"  _ = {ewise_expr('add', 'int64', [old, 'v'])[0]};")
            else:
                body.append("  atomicAdd(&dst[k], bitcast<u32>(v));")
        # (atomics.wgsl's bfloat16 add calls bf16r, which `enable` defines)
        enable = self.k.enable(ddt, vdt, "bfloat16" if accumulate else "")
        return ewise_src(self.k.ew_k, enable, "", "\n".join(b) + "\n" + extra, index_code(R, names), "\n".join(body))

    # ---- creation ---------------------------------------------------------------------
    def arange(self, out, start, step):
        n = numel(out.shape)
        if n == 0:
            return
        dt = out.dtype
        if dt == "int64":
            scalar_bits(start + step * (n - 1), dt)      # the last value must fit too
        key = ("arange", dt)
        pipe = self.k._memo.get(key)
        if pipe is None:
            ct = CT[dt]
            src = fill("arange.wgsl", ENABLE=self.k.enable(dt), OT=ST[dt], CT=ct,
                       STORE=store(norm("v", dt), dt))
            pipe = self.k._memo[key] = self.k.pipeline(src)
        self.k.run(pipe, [out.buf], [n, out.offset, scalar_bits(start, dt), scalar_bits(step, dt)], -(-n // WG))

    def random(self, out, kind, seed, offset):
        n = numel(out.shape)
        if n == 0:
            return
        dt = out.dtype
        if dt not in ("float32", "float16", "bfloat16"):
            raise TypeError(f"webgpu random: {dt} is not a floating dtype")
        key = ("rand", kind, dt)
        pipe = self.k._memo.get(key)
        if pipe is None:
            if kind == "uniform" and dt == "bfloat16":    # bfloat16's 8 significant bits (1.0 is out of range)
                body = "v = f32(w.x >> 24u) * 0.00390625;"
            elif kind == "uniform":
                body = "v = f32(w.x >> 8u) * 5.9604644775390625e-08;"
            elif kind == "normal":
                body = ("let u1 = (f32(w.x >> 8u) + 1.0) * 5.9604644775390625e-08;\n"
                        "  let u2 = f32(w.y >> 8u) * 5.9604644775390625e-08;\n"
                        "  v = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);")
            else:
                raise ValueError(f"unknown random kind {kind!r}")
            src = fill("random.wgsl", ENABLE=self.k.enable(dt), OT=ST[dt], BODY=body, STORE=store("v", dt))
            pipe = self.k._memo[key] = self.k.pipeline(src)
        self.k.run(pipe, [out.buf], [n, seed & MASK, (seed >> 32) & MASK, offset & MASK, out.offset], -(-n // WG))

    # ---- matmul -----------------------------------------------------------------------
    def matmul(self, out, a, b):
        B, M, N = out.shape
        K = a.shape[2]
        if B * M * N == 0:
            return
        if K > K_CHUNK and self.k.is_cpu_adapter:
            return self._matmul_chunked(out, a, b, K)

        def fix(v):   # zero the strides of size-1 dims (irrelevant, and helps alignment)
            return Strided(v.buf, v.shape, tuple(0 if s == 1 else st for s, st in zip(v.shape, v.strides)),
                        v.offset, v.dtype)
        a, b, out = fix(a), fix(b), fix(out)
        # bfloat16 is stored as f32 words too (codegen.py): the register-block kernel reads it as is, rounds its
        # store, and a fused epilogue (lazy.py) takes a bfloat16 product as float32's
        f32 = out.dtype == a.dtype == b.dtype and out.dtype in ("float32", "bfloat16")
        if {out.dtype, a.dtype, b.dtype} <= {"float32", "bfloat16"} and self.k.is_cpu_adapter and K % 4 == 0 and K > 0:
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
            if (vout or sout) and la is not None and lb is None and M * N * K >= 1 << 16:
                # B read as columns after one transposing copy: the tiled kernel's 256-thread tiles
                # cost milliseconds on lavapipe for products as small as a weight gradient's
                # 128x64 @ 64x10 (tiny ones stay one dispatch)
                bt = self._contig(Strided(b.buf, (b.shape[0], N, K), (b.strides[0], b.strides[2], b.strides[1]),
                                          b.offset, b.dtype))
                b, lb = Strided(bt.buf, b.shape, (bt.strides[0], bt.strides[2], bt.strides[1]), 0, b.dtype), "t"
            if (vout or sout) and la is not None and lb is not None:
                return self._matmul(out, a, b, f32, self._matmul_reg, B, M, N, K, la, lb, vout)
        self._matmul(out, a, b, f32, self._matmul_general, B, M, N, K)

    def _matmul(self, out, a, b, f32, kernel, *args):
        """run kernel(out, a, b, *args, epi=...) now, or later with the element-wise ops that
        consume the product fused into its store (lazy.py)"""
        shape, strides, offset, dtype = out.shape, out.strides, out.offset, out.dtype

        def launch(buf, epi):     # holds no reference to out's buffer: it may die pending
            kernel(Strided(buf, shape, strides, offset, dtype), a, b, *args, epi=epi)
        # on lavapipe a large product runs now as the plain kernel with REG_LARGE's block (a fused store of that
        # block compiles for 24 s; the plain product plus one element-wise kernel beats the fused 8x16 block)
        large = self.k.is_lavapipe and kernel == self._matmul_reg and args[1] * args[2] * args[3] >= self.LARGE_FMAS
        if not (f32 and not large and self.k.fusion.defer_matmul(out, (a, b), launch)):
            launch(out.buf, None)

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

    def _matmul_chunked(self, out, a, b, K):
        """out = a @ b as products over K_CHUNK-long slices of K added into out: llvmpipe (lavapipe) ends a
        shader loop after 65,535 iterations, so one dispatch over a longer K would stop short (silently)."""
        if out.dtype in HALF:  # float16 / bfloat16: the partial sums in float32, the product rounded once
            acc = self._f32_like(out)
            self._matmul_chunked(acc, a, b, K)
            return self.ewise("copy", out, [acc], out.dtype)
        B, M, N = out.shape
        part = Strided(self.k.empty(B * M * N, out.dtype), out.shape, contiguous_strides(out.shape), 0, out.dtype)
        for k0 in range(0, K, K_CHUNK):
            kc = min(K_CHUNK, K - k0)
            ak = Strided(a.buf, (B, M, kc), a.strides, a.offset + k0 * a.strides[2], a.dtype)
            bk = Strided(b.buf, (B, kc, N), b.strides, b.offset + k0 * b.strides[1], b.dtype)
            if k0 == 0:
                self.matmul(out, ak, bk)
            else:
                self.matmul(part, ak, bk)
                self.ewise("add", out, [out, part], out.dtype)

    def _f32_like(self, v):
        """A new contiguous float32 view of v's shape"""
        return Strided(self.k.empty(numel(v.shape), "float32"), v.shape, contiguous_strides(v.shape), 0, "float32")

    def _contig(self, v):
        t = self.k.empty(numel(v.shape), v.dtype)
        cv = Strided(t, v.shape, contiguous_strides(v.shape), 0, v.dtype)
        self.ewise("copy", cv, [v], v.dtype)
        return Strided(t, v.shape, tuple(0 if s == 1 else st for s, st in zip(v.shape, cv.strides)), 0, v.dtype)

    # register block per thread (TM rows x TN cols) and workgroup (WX x WY threads); measured on
    # lavapipe at 1024: 8x16 in 8x8 is as fast as larger blocks (26 GFLOP/s on an idle machine).
    # On some lavapipe hosts every buffer load costs per lane and per component
    # (bench/profile_step.py's machine: ~23 cycles per f32 loaded, FMAs nearly free), so there a
    # plain product takes REG_LARGE: (TM + TN) / (TM * TN) loads per FMA, half of 8x16's. The fused
    # store (an epilogue) of a block that large compiles for 24 s on lavapipe, so fused products keep REG.
    # On other CPU adapters (SwiftShader: Chromium's, where the playground runs without a GPU) compiling a kernel
    # costs more than running a small product: 8x16's compiles in ~300 ms there (fused: ~500), 4x8's in ~90
    # (~150), and both run a product of up to ~300^3 as fast; from 512^3 8x16 is 1.4x faster. So there a product
    # under SMALL_FMAS multiply-adds takes REG_SMALL (measured in the page, 2026-12-04).
    REG = dict(TM=8, TN=16, WX=8, WY=8)
    REG_LARGE = dict(TM=16, TN=32, WX=4, WY=4)
    REG_SMALL = dict(TM=4, TN=8, WX=8, WY=8)
    LARGE_FMAS = 1 << 21
    SMALL_FMAS = 1 << 25

    def _matmul_reg(self, out, a, b, B, M, N, K, la="n", lb="n", vout=True, epi=None):
        if self.k.is_lavapipe:
            reg = self.REG_LARGE if epi is None else self.REG
        else:
            reg = self.REG_SMALL if B * M * N * K < self.SMALL_FMAS else self.REG
        TM, TN, WX, WY = (reg[k] for k in ("TM", "TN", "WX", "WY"))
        # no wider than the product: threads past its edge would run the whole K loop on clamped
        # loads for nothing (a batched 32x32 attention product used 8 of 64); then, for small
        # products, shrink the workgroup so that both lavapipe threads get work
        cols, rows = -(-N // TN), -(-M // TM)      # the product's register tiles across and down
        WX = min(WX, 1 << (cols - 1).bit_length())
        WY = min(WY, 1 << (rows - 1).bit_length())
        while B * -(-cols // WX) * -(-rows // WY) < 4 and WX * WY > 8:
            if WY >= WX:
                WY //= 2
            else:
                WX //= 2
        same = a.buf is b.buf
        key = ("mmreg", TM, TN, WX, WY, la, lb, vout, same, epi and epi.key, out.dtype)
        pipe = self.k._memo.get(key)
        if pipe is None:
            v4 = "vec4<f32>"
            src = _mm_reg_src(TM, TN, WX, WY, la, lb, vout, epi is not None, out.dtype,
                              ENABLE=self.k.enable(out.dtype, *(epi.dtypes if epi else ())),
                              BINDINGS=mm_bindings(v4 if vout else "f32", v4, v4, same, epi, 13))
            pipe = self.k._memo[key] = self.k.pipeline(alias_b(src, same))
        gx = -(-cols // WX)
        gy = -(-rows // WY)
        ou = 4 if vout else 1
        for b0 in range(0, B, self.k.max_wg):
            nb = min(self.k.max_wg, B - b0)
            words = [M, N, K // 4, b0, a.offset // 4, a.strides[0] // 4, a.strides[1 if la == "n" else 2] // 4,
                     b.offset // 4, b.strides[0] // 4, b.strides[1 if lb == "n" else 2] // 4,
                     out.offset // ou, out.strides[0] // ou, out.strides[1] // ou]
            self._mm_dispatch(pipe, out, a, b, same, epi, words, (gx, gy, nb))

    def _mm_dispatch(self, pipe, out, a, b, same, epi, words, grid):
        """bind the buffers as mm_bindings declares them; dispatch"""
        ab = [a.buf.handle] + ([] if same else [b.buf.handle])
        if epi:
            bufs, words = ab + [x.handle for x in epi.bufs], words + epi.words
        else:
            bufs = [out.buf.handle] + ab
        self.k.commands.dispatch(pipe, self.k._bind(pipe, bufs), pack_words(words), grid)

    def _matmul_general(self, out, a, b, B, M, N, K, epi=None):
        """any strides and dtypes: matmul_tiled.wgsl (workgroup tiles) on GPUs, matmul_block.wgsl (the same parts,
        no workgroup memory) on CPU adapters"""
        cd = out.dtype if out.dtype in ("int32", "int64", "uint8", "bool") else "float32"
        same = a.buf is b.buf
        template = "matmul_block.wgsl" if self.k.is_cpu_adapter else "matmul_tiled.wgsl"
        key = (template, a.dtype, b.dtype, out.dtype, same, epi and epi.key)
        pipe = self.k._memo.get(key)
        if pipe is None:
            st = "epilogue((u32(bt) * M + gm) * N + gn, v);" if epi else \
                f"O[obase + i32(gm) * oms + i32(gn) * ons] = {store(conv(norm('v', cd), cd, out.dtype), out.dtype)};"
            enable = self.k.enable(a.dtype, b.dtype, out.dtype, *(epi.dtypes if epi else ()))
            src = fill(template, ENABLE=enable,
                       BINDINGS=mm_bindings(ST[out.dtype], ST[a.dtype], ST[b.dtype], same, epi, 16), STORE=st,
                       CT=CT[cd], BM=64, BN=64, BK=16,
                       ALOAD=conv(load("x", a.dtype), a.dtype, cd), BLOAD=conv(load("x", b.dtype), b.dtype, cd),
                       MAC=ewise_expr("add", cd, ["acc[r][c]", ewise_expr("mul", cd, ["a[r]", "b[c]"])[0]])[0])
            pipe = self.k._memo[key] = self.k.pipeline(alias_b(src, same))
        tile = 32 if template == "matmul_block.wgsl" else 64     # the output tile of a workgroup
        gx, gy = -(-N // tile), -(-M // tile)
        for b0 in range(0, B, self.k.max_wg):
            nb = min(self.k.max_wg, B - b0)
            words = [M, N, K, b0, a.offset, a.strides[0], a.strides[1], a.strides[2],
                     b.offset, b.strides[0], b.strides[1], b.strides[2],
                     out.offset, out.strides[0], out.strides[1], out.strides[2]]
            self._mm_dispatch(pipe, out, a, b, same, epi, words, (gx, gy, nb))


def _mm_reg_src(TM, TN, WX, WY, la, lb, vout, fused, odt, **parts):
    """WGSL of the register-block matmul for operand layouts la/lb ('n' or 't', see
    shaders/matmul_reg.wgsl) and a vec4 (vout) or scalar output of dtype odt (float32 or bfloat16), or each
    element handed to a fused `epilogue` (lazy.py) from ONE call site in a loop (lavapipe inlines every call: one
    per element would multiply its compile time); parts: the template's ENABLE and BINDINGS."""
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
    if fused:
        accs = ", ".join(f"acc{r}_{j}" for r in range(TM) for j in range(TN4))
        st = [f"  var accs = array<vec4<f32>, {TM * TN4}>({accs});",
              f"  for (var q = 0u; q < {TM * TN}u; q = q + 1u) {{",
              f"    let r = r0 + q / {TN}u; let c = c0 + q % {TN}u;",
              "    if (r < M && c < N) { epilogue((bt * M + r) * N + c, accs[q / 4u][q % 4u]); }",
              "  }"]
    for r in range(TM if not fused else 0):
        st.append(f"  if (r0 + {r}u < M) {{ let orow = obase + (r0 + {r}u) * ors;")
        for j in range(TN4):
            if vout:
                v = f"vec4<f32>({', '.join(store(f'acc{r}_{j}.{c}', odt) for c in xyzw)})" if odt != "float32" \
                    else f"acc{r}_{j}"
                st.append(f"    if (c0 / 4u + {j}u < N / 4u) {{ O[orow + c0 / 4u + {j}u] = {v}; }}")
            else:
                st += [f"    if (c0 + {4 * j + c}u < N) {{ O[orow + c0 + {4 * j + c}u] = "
                       f"{store(f'acc{r}_{j}.{xyzw[c]}', odt)}; }}" for c in range(4)]
        st.append("  }")
    return fill("matmul_reg.wgsl", TM=TM, TN=TN, WX=WX, WY=WY, SETUP="\n".join(setup), DECL="\n".join(decl),
                BODY="\n".join(body), STORE="\n".join(st), **parts)
