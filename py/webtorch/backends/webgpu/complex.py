"""complex64 on WebGPU: a complex64 buffer holds interleaved (real, imaginary) f32 pairs; a kernel reads an element
as a vec2<f32>. complex128 raises (WGSL has no f64).

`ComplexKernels`, a component of the backend, routes each primitive given a complex view:
* ewise: the records' "c" WGSL forms (backends/elementwise.py; shaders/complex.wgsl's functions), one kernel over
  strided views as the real ones; a real input is promoted (imaginary part 0), a real output takes the real part;
* reduce (sum), scan (cumsum), matmul, take and put: the float32 kernels over the parts (`parts`: a complex view
  as float32 views of the same memory), matmul as four real products;
* fft: fft.py's Stockham / Bluestein kernels.
Other ops on complex views raise (sort, max, prod, ...), naming the op.
"""
from ..._geometry import contiguous_strides, numel
from ..base import Strided
from ..elementwise import RECORDS, form
from .codegen import (
    COMPLEX,
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

_ORDERED = ("max", "min", "argmax", "argmin", "cummax", "cummin", "logcumsumexp")


def parts(v, k=None):
    """A complex64 view as float32: its (real, imaginary) pairs as a trailing dim of 2, or part k (0 real, 1
    imaginary) alone."""
    if k is None:
        return Strided(v.buf, (*v.shape, 2), (*(2 * s for s in v.strides), 1), 2 * v.offset, "float32")
    return Strided(v.buf, tuple(v.shape), tuple(2 * s for s in v.strides), 2 * v.offset + k, "float32")


def _split(v):
    return (parts(v, 0), parts(v, 1)) if v.dtype in COMPLEX else (v, None)


def _unsupported(op, exc=TypeError):
    if op in _ORDERED:  # as PyTorch: complex numbers have no order
        return NotImplementedError(f"\"{op}\" not implemented for complex tensors")
    return exc(f"webgpu: {op} is not supported for complex tensors (complex64 on webgpu computes element-wise math, "
               "sum/mean, cumsum, matmul, indexing and torch.fft); compute it on cpu")


def _scalar_words(x, want):
    if want == "bool":
        return [scalar_bits(x, "bool")]
    z = complex(x)
    return [scalar_bits(z.real, "float32"), scalar_bits(z.imag, "float32")]


class ComplexKernels:
    def __init__(self, k, p):
        self.k, self.p = k, p          # the backend (Kernels' plumbing) and its real primitives
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
            raise _unsupported(op)
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

    # ---- the other primitives: the float32 kernels on the parts ------------------------
    def reduce(self, op, out, inp):
        if inp.dtype not in COMPLEX:
            return self.p.reduce(op, out, inp)
        if op != "sum":
            raise _unsupported(op)
        ro = len(out.shape)  # the parts' dim of 2 goes between the kept and the reduced dims
        st = tuple(2 * s for s in inp.strides)
        fin = Strided(inp.buf, (*inp.shape[:ro], 2, *inp.shape[ro:]), (*st[:ro], 1, *st[ro:]), 2 * inp.offset,
                      "float32")
        self.p.reduce("sum", parts(out), fin)

    def scan(self, op, out, inp, out_idx=None):
        if inp.dtype not in COMPLEX:
            return self.p.scan(op, out, inp, out_idx)
        if op != "cumsum":
            raise _unsupported(op)
        self.p.scan("cumsum", _rows(out), _rows(inp))

    def matmul(self, out, a, b):
        if out.dtype not in COMPLEX:
            return self.p.matmul(out, a, b)
        (ar, ai), (br, bi), (o_re, o_im) = _split(a), _split(b), _split(out)
        tmp = Strided(self.k.empty(numel(out.shape), "float32"), tuple(out.shape), contiguous_strides(out.shape), 0,
                      "float32")
        for o, first, second, sign in ((o_re, (ar, br), (ai, bi), "sub"), (o_im, (ar, bi), (ai, br), "add")):
            terms = [t for t in (first, second) if t[0] is not None and t[1] is not None]
            if terms:
                self.p.matmul(o, *terms[0])
            else:
                self.p.ewise("copy", o, [0.0], "float32")
            if len(terms) == 2:
                self.p.matmul(tmp, *terms[1])
                self.p.ewise(sign, o, [o, tmp], "float32")

    def _pair_index(self, idx):
        """idx (flat complex offsets) as the offsets of the real parts: 2 * idx, int64, contiguous."""
        i2 = Strided(self.k.empty(numel(idx.shape), "int64"), tuple(idx.shape), contiguous_strides(idx.shape), 0,
                     "int64")
        self.p.ewise("mul", i2, [idx, 2], "int64")
        return i2

    def take(self, out, src_buf, src_dtype, idx):
        if src_dtype not in COMPLEX:
            return self.p.take(out, src_buf, src_dtype, idx)
        i2 = self._pair_index(idx)
        self.p.take(parts(out, 0), src_buf, "float32", i2)
        self.p.ewise("add", i2, [i2, 1], "int64")
        self.p.take(parts(out, 1), src_buf, "float32", i2)

    def put(self, dst_buf, dst_dtype, idx, values, accumulate):
        if dst_dtype not in COMPLEX:
            return self.p.put(dst_buf, dst_dtype, idx, values, accumulate)
        if isinstance(values, Strided):
            re, im = _split(values)
        else:
            re, im = complex(values).real, complex(values).imag
        i2 = self._pair_index(idx)
        self.p.put(dst_buf, "float32", i2, re, accumulate)
        self.p.ewise("add", i2, [i2, 1], "int64")
        if im is not None or not accumulate:
            self.p.put(dst_buf, "float32", i2, 0.0 if im is None else im, accumulate)

    def sort(self, out_values, out_indices, inp, descending, stable):
        if inp.dtype in COMPLEX:
            raise RuntimeError("Sort does not support complex dtypes on webgpu")
        return self.p.sort(out_values, out_indices, inp, descending, stable)

    def arange(self, out, start, step):
        if out.dtype in COMPLEX:
            raise _unsupported("arange")
        return self.p.arange(out, start, step)

    def random(self, out, kind, seed, offset):
        if out.dtype in COMPLEX:
            raise _unsupported(f"random ({kind})")
        return self.p.random(out, kind, seed, offset)


def _st(dt):
    return "f32" if dt == "complex64" else ST[dt]


def _rows(v):
    """A complex view's rows along its last dim as float32 rows: (..., 2, n)."""
    if not v.shape:
        v = Strided(v.buf, (1,), (1,), v.offset, v.dtype)
    st = tuple(2 * s for s in v.strides)
    return Strided(v.buf, (*v.shape[:-1], 2, v.shape[-1]), (*st[:-1], 1, st[-1]), 2 * v.offset, "float32")
