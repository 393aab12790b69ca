"""complex64 on WebGPU: a complex64 buffer holds interleaved (real, imaginary) f32 pairs; a kernel reads an element
as a vec2<f32>. complex128 raises (WGSL has no f64).

`ComplexKernels`, a component of the backend, routes each primitive given a complex view:
* ewise: the records' "c" WGSL forms (backends/elementwise.py; shaders/complex.wgsl's functions), one kernel over
  strided views as the real ones; a real input is promoted (imaginary part 0), a real output takes the real part;
* reduce (sum), scan (cumsum), matmul, take and put: the float32 kernels over the parts (backends/complex_parts.py),
  matmul as four real products; prod as pairwise complex products, cumprod by doubling;
* fft: fft.py's kernels.
Other ops on complex views raise (sort, max, ...: ordering ops, which PyTorch refuses too), naming the op.
"""
from ..._geometry import contiguous_strides, numel
from ..base import Strided
from ..complex_parts import ComplexParts, unsupported
from ..elementwise import RECORDS, form
from .codegen import (
    ST,
    bind_once,
    collapse,
    conv,
    ewise_groups,
    ewise_src,
    index_code,
    load,
    scalar_bits,
    shader,
    store,
)
from .fft import FFT


def _scalar_words(x, want):
    if want == "bool":
        return [scalar_bits(x, "bool")]
    z = complex(x)
    return [scalar_bits(z.real, "float32"), scalar_bits(z.imag, "float32")]


class ComplexKernels(ComplexParts):
    def __init__(self, k, p):
        super().__init__(p, k.empty, "webgpu", self.ewise)   # p: the backend's real primitives
        self.k = k                                 # the backend (Kernels' plumbing)
        self.fft = FFT(k, self)

    # ---- element-wise -----------------------------------------------------------------
    def ewise(self, op, out, inputs, cdtype):
        n = numel(out.shape)
        if n == 0:
            return
        kinds = tuple(getattr(x, "dtype", "s") for x in inputs)   # "s": a Python scalar
        for dt in {cdtype, out.dtype, *kinds} - {"s"}:
            self.k._check_dtype(dt)
        rec = RECORDS.get(op)
        if rec is None or form(rec.wgsl, "complex64")[0] is None:
            raise unsupported(op, "webgpu")
        views = [out] + [x for x in inputs if isinstance(x, Strided)]
        shape, sts = collapse(tuple(out.shape), [v.strides for v in views])
        contig = tuple(st == contiguous_strides(shape) for st in sts)
        bufs = [out.buf]
        amap = tuple(bind_once(bufs, views[1:]))
        src = (rec, out.dtype, kinds, len(shape), contig, amap)
        pipe = self.k.kernel(("cx", op) + src[1:], lambda: self._ewise_src(*src))
        words = [n, *shape]
        for v, st in zip(views, sts):
            words += [v.offset, *st]
        for j, x in enumerate(inputs):
            if kinds[j] == "s":
                words += _scalar_words(x, "bool" if op == "where" and j == 0 else "complex64")
        self.k.run(pipe, bufs, words, ewise_groups(n, self.k.ew_k))

    def _ewise_src(self, rec, odt, kinds, R, contig, amap):
        nv = sum(1 for kd in kinds if kd != "s")
        names = [("o0", contig[0])] + [(f"o{j + 1}", contig[j + 1]) for j in range(nv)]
        binds = [f"@group(0) @binding(0) var<storage, read_write> out: array<{_st(odt)}>;"]
        body, args, vi = [], [], 0
        sc = 1 + R + (1 + nv) * (1 + R)       # first scalar word
        for j, kd in enumerate(kinds):
            cond = rec.name == "where" and j == 0
            if kd == "s":
                args.append(f"P[{sc}u]" if cond else f"vec2<f32>(bitcast<f32>(P[{sc}u]), bitcast<f32>(P[{sc + 1}u]))")
                sc += 1 if cond else 2
                continue
            vi += 1
            b = amap[vi - 1]
            if b == len(binds):
                binds.append(f"@group(0) @binding({b}) var<storage, read_write> in{b}: array<{_st(kd)}>;")
            arr, o = "out" if b == 0 else f"in{b}", f"o{vi}"
            if cond:
                v = conv(load(f"{arr}[{o}]", kd), kd, "bool")
            elif kd == "complex64":
                v = f"vec2<f32>({arr}[2 * {o}], {arr}[2 * {o} + 1])"
            else:
                v = f"vec2<f32>({conv(load(f'{arr}[{o}]', kd), kd, 'float32')}, 0.0)"
            body.append(f"  let a{j} = {v};")
            args.append(f"a{j}")
        binds.append(f"@group(0) @binding({len(binds)}) var<storage, read> P: array<u32>;")
        expr = form(rec.wgsl, "complex64")[0].format(*args)
        if rec.out == "bool":
            body.append(f"  out[o0] = {store(f'select(0u, 1u, {expr})', odt)};")
        else:
            body.append(f"  let r = {expr};")
            if odt == "complex64":
                body.append("  out[2 * o0] = r.x;\n  out[2 * o0 + 1] = r.y;")
            elif odt == "bool":  # a complex value is true where either part is nonzero
                body.append("  out[o0] = select(0u, 1u, cnz(r));")
            else:
                body.append(f"  out[o0] = {store(conv('r.x', 'float32', odt), odt)};")
        return ewise_src(self.k.ew_k, self.k.enable(odt, *kinds), self.k.prelude + shader("complex.wgsl"),
                         "\n".join(binds), index_code(R, names), "\n".join(body))



def _st(dt):
    return "f32" if dt == "complex64" else ST[dt]
