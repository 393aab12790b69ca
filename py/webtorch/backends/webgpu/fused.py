"""Fused WGSL kernels the WebGPU backend offers on top of the primitive set.

The front end asks for them through optional backend hooks (a backend without them falls
back to compositions of primitives):

* `softmax(x, dim, log) -> (out, handled)` and `softmax_backward(g, y, dim, log) -> (gx,
  handled)`: one row kernel each (shaders/softmax.wgsl) instead of 7 and 4-5 dispatches;
* `fused_step(name, p, g, state, **hyper) -> handled`, which `optim.functional` asks (the
  backend never imports optim): an SGD step (weight decay, momentum, dampening, nesterov,
  maximize) in one dispatch per parameter.

On lavapipe a dispatch costs ~50 us whatever it does, so a training step is mostly a count
of dispatches; these keep that count down.
"""
from ...ops import _prims
from ..base import Strided
from ..._geometry import contiguous_strides
from .codegen import ST, fill, load, store, f32_bits, collapse, index_code

FLOATS = ("float32", "float16")


def _row_view(t, d):
    """The Strided window of tensor t with dim d moved last."""
    nd = t.dim()
    perm = [i for i in range(nd) if i != d] + [d]
    return Strided(t._storage.buf, tuple(t._shape[i] for i in perm), tuple(t._stride[i] for i in perm),
                t._offset, t.dtype.name)


def _wg_for(L):
    return 256 if L > 512 else 64 if L > 64 else 16 if L > 8 else 4


_FWD = {
    0: ("  let y = exp(v - m) * inv;", "  let inv = 1.0 / s;"),
    1: ("  let y = v - m - ls;", "  let ls = log(s);"),
}


def _softmax_src(be, mode, dts, R, wg, code):
    """mode 0/1 forward (x -> out), 2/3 backward ((g, y) -> out)."""
    names = ["x", "out"] if mode < 2 else ["g", "y", "out"]
    b = [f"@group(0) @binding({i}) var<storage, read_write> {n}: array<{ST[dt]}>;"
         for i, (n, dt) in enumerate(zip(names, dts))]
    b.append(f"@group(0) @binding({len(b)}) var<storage, read> P: array<u32>;")
    ld = lambda n, k: load(f"{n}[b{k} + i32(j) * ls{k}]", dts[k])                     # noqa: E731
    ob = len(names) - 1
    st = lambda v: f"    out[b{ob} + i32(j) * ls{ob}] = {store(v, dts[ob])};"          # noqa: E731
    loop = f"for (var j = lix; j < L; j = j + {wg}u)"
    if mode < 2:
        y, pre = _FWD[mode]
        k = ["  var m = -winf();",
             f"  {loop} {{ m = wmaximum(m, {ld('x', 0)}); }}",
             "  m = wg_reduce(m, lix, true);",
             "  if (m == -winf()) { m = 0.0; }      // a row of -inf: NaN, as in PyTorch",
             "  var s = 0.0;",
             f"  {loop} {{ s = s + exp({ld('x', 0)} - m); }}",
             "  s = wg_reduce(s, lix, false);",
             pre,
             f"  {loop} {{",
             f"    let v = {ld('x', 0)};",
             "  " + y,
             st("y"),
             "  }"]
    else:
        if mode == 2:
            acc = f"s = s + {ld('g', 0)} * {ld('y', 1)};"
            out = f"let yv = {ld('y', 1)}; let r = yv * ({ld('g', 0)} - s);"
        else:
            acc = f"s = s + {ld('g', 0)};"
            out = f"let r = {ld('g', 0)} - exp({ld('y', 1)}) * s;"
        k = ["  var s = 0.0;", f"  {loop} {{ {acc} }}", "  s = wg_reduce(s, lix, false);",
             f"  {loop} {{", f"    {out}", st("r"), "  }"]
    return fill("softmax.wgsl", ENABLE=be.enable(*dts), PRELUDE=be._prelude, BINDINGS="\n".join(b),
                WG=wg, ROW=code, KERNEL="\n".join(k))


def _run_rows(be, mode, views):
    n_rows, L, words, code, R = be._rows(views, 2)
    wg = _wg_for(L)
    dts = tuple(v.dtype for v in views)
    key = ("softmax", mode, dts, R, wg)
    pipe = be._memo.get(key)
    if pipe is None:
        pipe = be._memo[key] = be.pipeline(_softmax_src(be, mode, dts, R, wg, code))
    be.run(pipe, [v.buf for v in views], [n_rows, L] + words, n_rows)


def _aliased(views):
    bufs = [v.buf for v in views]
    return len({id(b) for b in bufs}) != len(bufs)


def softmax(be, x, d, log):
    """Fused (log_)softmax of tensor x along dim d -> (out, handled)."""
    if x.dtype.name not in FLOATS or x.dim() == 0 or x.numel() == 0:
        return None, False
    out = _prims.empty(x.shape, x.dtype, x.device)
    views = [_row_view(x, d), _row_view(out, d)]
    _run_rows(be, 1 if log else 0, views)
    return out, True


def softmax_backward(be, g, y, d, log):
    """Gradient of (log_)softmax given the output gradient g and the forward output y."""
    if y.dtype.name not in FLOATS or g.dtype != y.dtype or y.dim() == 0 or y.numel() == 0 \
            or tuple(g.shape) != tuple(y.shape) or g.device != y.device:
        return None, False
    out = _prims.empty(y.shape, y.dtype, y.device)
    views = [_row_view(g, d), _row_view(y, d), _row_view(out, d)]
    if _aliased(views):
        return None, False
    _run_rows(be, 3 if log else 2, views)
    return out, True


# ---- fused SGD --------------------------------------------------------------------------
def _sgd_src(be, dt, has_buf, first, nesterov, maximize, wd, R, contig):
    names = ["p", "g"] + (["mb"] if has_buf else [])
    b = [f"@group(0) @binding({k}) var<storage, read_write> {n}: array<{ST[dt]}>;" for k, n in enumerate(names)]
    b.append(f"@group(0) @binding({len(b)}) var<storage, read> P: array<u32>;")
    sc = 1 + R + len(names) * (1 + R)          # P: [n, shape, per operand (off, strides), scalars]
    body = [f"  let lr = bitcast<f32>(P[{sc}u]); let wd = bitcast<f32>(P[{sc + 1}u]);",
            f"  let mom = bitcast<f32>(P[{sc + 2}u]); let damp1 = bitcast<f32>(P[{sc + 3}u]);",
            f"  let pv = {load('p[o0]', dt)};",
            f"  var d = {load('g[o1]', dt)};"]
    if maximize:
        body.append("  d = -d;")
    if wd:
        body.append("  d = d + wd * pv;")
    if has_buf:
        body.append("  let bv = d;" if first else f"  let bv = mom * {load('mb[o2]', dt)} + damp1 * d;")
        body.append(f"  mb[o2] = {store('bv', dt)};")
        body.append("  d = d + mom * bv;" if nesterov else "  d = bv;")
    body.append(f"  p[o0] = {store('pv - lr * d', dt)};")
    idx = index_code(R, [(f"o{k}", c) for k, c in enumerate(contig)])
    return fill("ewise.wgsl", ENABLE=be.enable(dt), PRELUDE="", BINDINGS="\n".join(b), INDEX=idx,
                BODY="\n".join(body))


def fused_sgd(be, p, g, state, *, lr, momentum, dampening, weight_decay, nesterov, maximize):
    """optim.functional.sgd in one dispatch per parameter (any strides, e.g. a transposed
    gradient stolen by AccumulateGrad) -> handled."""
    dt = p.dtype.name
    if dt not in FLOATS or g.dtype != p.dtype or p.numel() == 0 or p._storage.buf is g._storage.buf \
            or tuple(g.shape) != tuple(p.shape):
        return False
    has_buf = momentum != 0
    first = False
    mb = None
    if has_buf:
        mb = state.get("momentum_buffer")
        if mb is None:
            mb = _prims.empty(p.shape, p.dtype, p.device)
            state["momentum_buffer"] = mb
            first = True
    ops = [p, g] + ([mb] if has_buf else [])
    shape, sts = collapse(tuple(p.shape), [t._stride for t in ops])
    R = len(shape)
    cst = contiguous_strides(shape)
    contig = tuple(st == cst for st in sts)
    key = ("sgd", dt, has_buf, first, bool(nesterov), bool(maximize), weight_decay != 0, R, contig)
    pipe = be._memo.get(key)
    if pipe is None:
        pipe = be._memo[key] = be.pipeline(_sgd_src(be, dt, has_buf, first, nesterov, maximize,
                                                    weight_decay != 0, R, contig))
    n = p.numel()
    words = [n, *shape]
    for t, st in zip(ops, sts):
        words += [t._offset, *st]
    words += [f32_bits(lr), f32_bits(weight_decay), f32_bits(momentum), f32_bits(1 - dampening)]
    be.run(pipe, [t._storage.buf for t in ops], words, -(-n // 256))
    p._bump()
    if mb is not None:
        mb._bump()
    return True


STEPS = {"sgd": fused_sgd}     # optimizer name -> fused per-parameter update


def install(backend):
    """Attach the hooks to a WebGPUBackend instance."""
    backend.softmax = lambda x, d, log: softmax(backend, x, d, log)
    backend.softmax_backward = lambda g, y, d, log: softmax_backward(backend, g, y, d, log)

    def fused_step(name, p, g, state, **hyper):
        step = STEPS.get(name)
        return step is not None and step(backend, p, g, state, **hyper)
    backend.fused_step = fused_step
