"""Fused WGSL kernels on top of the WebGPU backend's primitive set (tensor-level: they allocate
outputs and read tensors' storages; `install` attaches them to the backend through
`backends.webgpu.extend`, and the backend never imports this module).

The front end asks for them through optional backend hooks (a backend without them falls
back to compositions of primitives):

* `softmax(x, dim, log) -> (out, handled)` and `softmax_backward(g, y, dim, log) -> (gx,
  handled)`: one row kernel each (shaders/softmax.wgsl) instead of 7 and 4-5 dispatches;
* `fused_step(name, p, g, state, **hyper) -> handled`, which `optim.functional` asks (the
  backend never imports optim): an SGD, Adam/AdamW, RMSprop or Adagrad step, every option, in
  one dispatch per parameter (instead of 3-12), two when the step count is a device tensor.

On lavapipe a dispatch costs ~50 us whatever it does, so a training step is mostly a count
of dispatches; these keep that count down.
"""

from .._geometry import contiguous_strides
from .._tensor import Tensor
from ..backends.base import Strided
from ..backends.webgpu.codegen import (
    HALF,
    ST,
    collapse,
    ewise_groups,
    ewise_src,
    f32_bits,
    fill,
    index_code,
    load,
    rnd,
    store,
)
from ..backends.webgpu.primitives import rows
from ..ops import _prims

FLOATS = ("float32", "float16", "bfloat16")


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


def _softmax_src(be, mode, dts, R, wg, code, s0="0.0"):
    """mode 0/1 forward (x -> out), 2/3 backward ((g, y) -> out); s0 starts the backward's row sum."""
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
        k = [f"  var s = {s0};", f"  {loop} {{ {acc} }}", "  s = wg_reduce(s, lix, false);",
             f"  {loop} {{", f"    {out}", st("r"), "  }"]
    return fill("softmax.wgsl", ENABLE=be.enable(*dts), PRELUDE=be.prelude, BINDINGS="\n".join(b),
                WG=wg, ROW=code, KERNEL="\n".join(k))


def _run_rows(be, mode, views, s0="0.0"):
    n_rows, L, words, code, R = rows(views, 2)
    wg = _wg_for(L)
    dts = tuple(v.dtype for v in views)
    pipe = be.kernel(("softmax", mode, dts, R, wg, s0), lambda: _softmax_src(be, mode, dts, R, wg, code, s0))
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
    # PyTorch's CPU kernel sums a last-dim row from its first element (all -0.0: -0.0), other dims from +0.0
    _run_rows(be, 3 if log else 2, views, "-0.0" if d % y.dim() == y.dim() - 1 else "0.0")
    return out, True


# ---- fused optimizer steps ---------------------------------------------------------------
# Each is one element-wise kernel over the parameter, its gradient and its state tensors (any
# strides, e.g. a transposed gradient stolen by AccumulateGrad), in optim.functional's order of
# float operations. `rnd` rounds where PyTorch stores a float16 / bfloat16 intermediate tensor (nothing for
# float32). A step count on the device (PyTorch's capturable form, Optimizer._capture_prologue)
# is advanced by its own 1-element dispatch first: every thread of the update then reads the same
# value (`t`).
def _ax(prod, dt):
    """alpha * b of PyTorch's float16 / bfloat16 add(a, b, alpha=): in float32, but rounded to the dtype in its
    scalar loop, which takes the last numel % 32 elements of contiguous operands (from `ts` on, see _update_src;
    _prims.alpha_product on the other backends)."""
    return f"select({prod}, {rnd(prod, dt)}, i >= ts)" if dt in HALF else prod


def _alpha(v, dt):
    """An `alpha=` scalar as PyTorch's float16 / bfloat16 add uses it: rounded to the dtype (then a + alpha * b
    in float32, rounded once, as its vectorized kernel)."""
    return _prims._half(v, dt) if dt in HALF else v


def _update_src(be, dt, names, scalars, has_step, body, R, contig):
    b = [f"@group(0) @binding({k}) var<storage, read_write> {n}: array<{ST[dt]}>;" for k, n in enumerate(names)]
    if has_step:
        b.append(f"@group(0) @binding({len(b)}) var<storage, read_write> S: array<f32>;")
    b.append(f"@group(0) @binding({len(b)}) var<storage, read> P: array<u32>;")
    sc = 1 + R + len(names) * (1 + R)          # P: [n, shape, per operand (off, strides), scalars, step offset]
    head = [f"  let {s} = bitcast<f32>(P[{sc + k}u]);" for k, s in enumerate(scalars)]
    if has_step:
        head.append(f"  let t = S[P[{sc + len(scalars)}u]];")
    if dt in HALF:
        head.append("  let ts = P[0u] - P[0u] % 32u;" if all(contig) else "  let ts = P[0u];")
    idx = index_code(R, [(f"o{k}", c) for k, c in enumerate(contig)])
    return ewise_src(be.ew_k, be.enable(dt), be.prelude, "\n".join(b), idx, "\n".join(body(dt)), "\n".join(head))


def _usable(p, g, step=None):
    """The fused kernels cover float parameters with an equally shaped gradient of their dtype
    (and a step count that is a Python number or a float32 one-element tensor on p's device)."""
    return (p.dtype.name in FLOATS and g.dtype == p.dtype and p.numel() != 0 and tuple(g.shape) == tuple(p.shape)
            and (not isinstance(step, Tensor)
                 or (step.dtype.name == "float32" and step.numel() == 1 and step.device == p.device)))


def _update(be, key, ops, scalars, body, step=None):
    """One dispatch of the update `body(dt) -> WGSL lines` over ops = [param, grad, *state] (bound
    as p, g, then the state's names in `key[1]`, element offsets o0, o1, ...), `scalars` a dict of
    f32 words by name, `step` a device step count (read as `t`); False where buffers alias."""
    bufs = [t._storage.buf for t in ops] + ([step._storage.buf] if step is not None else [])
    if len({id(b) for b in bufs}) != len(bufs):
        return False
    shape, sts = collapse(tuple(ops[0].shape), [t._stride for t in ops])
    R = len(shape)
    cst = contiguous_strides(shape)
    contig = tuple(st == cst for st in sts)
    dt = ops[0].dtype.name
    has_step = step is not None
    pipe = be.kernel(key + (dt, R, contig, has_step),
                     lambda: _update_src(be, dt, ["p", "g", *key[1]], list(scalars), has_step, body, R, contig))
    n = ops[0].numel()
    words = [n, *shape]
    for t, st in zip(ops, sts):
        words += [t._offset, *st]
    words += [f32_bits(v) for v in scalars.values()]
    if has_step:
        _tick(step)
        words.append(step._offset)
    be.run(pipe, bufs, words, ewise_groups(n, be.ew_k))
    for t in ops:
        if t is not ops[1]:
            t._bump()
    return True


def _decay(dt, wd, maximize, decoupled=False):
    """WGSL: pv (the parameter), d (the gradient as used): maximize, then weight decay (L2: d + wd
    * p; decoupled: p * (1 - lr * wd) as word `dec`)."""
    code = ["  var pv = " + load("p[o0]", dt) + ";", "  var d = " + load("g[o1]", dt) + ";"]
    if maximize:
        code.append("  d = -d;")
    if wd:
        code.append(f"  pv = {rnd('pv * dec', dt)};" if decoupled else f"  d = {rnd('d + ' + _ax('pv * wd', dt), dt)};")
    return code


def fused_sgd(be, p, g, state, *, lr, momentum, dampening, weight_decay, nesterov, maximize):
    """optim.functional.sgd in one dispatch per parameter -> handled."""
    if not _usable(p, g):
        return False
    has_buf = momentum != 0
    first = has_buf and state.get("momentum_buffer") is None
    mb = _prims.empty(p.shape, p.dtype, p.device) if first else state.get("momentum_buffer")
    wd = weight_decay != 0

    def body(dt):
        code = _decay(dt, wd, maximize)
        if has_buf:
            mb = load("mb[o2]", dt)
            code.append("  let bv = d;" if first else
                        f"  let bv = {rnd(rnd(f'{mb} * mom', dt) + ' + ' + _ax('d * damp1', dt), dt)};")
            code.append(f"  mb[o2] = {store('bv', dt)};")
            code.append(f"  d = {rnd('d + ' + _ax('bv * amom', dt), dt)};" if nesterov else "  d = bv;")
        return code + [f"  p[o0] = {store('pv + ' + _ax('d * nlr', dt), dt)};"]
    key = ("sgd", ("mb",) if has_buf else (), first, bool(nesterov), bool(maximize), wd)
    ops = [p, g] + ([mb] if has_buf else [])
    dt = p.dtype.name
    sc = dict(nlr=_alpha(-lr, dt), wd=_alpha(weight_decay, dt), mom=momentum, amom=_alpha(momentum, dt),
              damp1=_alpha(1 - dampening, dt))
    if not _update(be, key, ops, sc, body):
        return False
    if first:
        state["momentum_buffer"] = mb
    return True


def _advance(state):
    """(the step count if it is a device tensor, else None; the next count if it is a number)."""
    step = state["step"]
    if isinstance(step, Tensor):
        return step, None
    return None, step + 1


def _tick(step):
    """A device step count += 1 (one 1-element dispatch)."""
    _prims.ewise_into("add", step, [step, 1], step.dtype)


def _count(state, dstep, step):
    """Advance the step count of an update that does not read it."""
    if dstep is None:
        state["step"] = step
    else:
        _tick(dstep)


def fused_adam(be, p, g, state, *, lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, decoupled_weight_decay):
    """optim.functional.adam (Adam, AdamW) in one dispatch per parameter (two with the step count
    on the device) -> handled."""
    if not _usable(p, g, state["step"]):
        return False
    dstep, step = _advance(state)
    wd = weight_decay != 0
    w = 1 - beta1
    low = w < 0.5                   # K.lerp_'s two forms

    def body(dt):
        code = _decay(dt, wd, maximize, decoupled_weight_decay)
        mo = load("m[o2]", dt)
        code += [f"  let df = d - {mo};",
                 f"  let mn = {rnd(f'{mo} + df * lw' if low else 'd - df * lw', dt)};",
                 f"  m[o2] = {store('mn', dt)};",
                 f"  let vn = {rnd(rnd(load('v[o3]', dt) + ' * beta2', dt) + ' + (d * omb2) * d', dt)};",
                 f"  v[o3] = {store('vn', dt)};"]
        if amsgrad:
            code += [f"  let vm = wmaximum({load('vx[o4]', dt)}, vn);", f"  vx[o4] = {store('vm', dt)};"]
        else:
            code.append("  let vm = vn;")
        if dstep is None:
            code += [f"  let den = {rnd(rnd(rnd('sqrt(vm)', dt) + ' / bc2s', dt) + ' + eps', dt)};",
                     f"  p[o0] = {store('pv + (mn * nss) / den', dt)};"]
        else:
            code += ["  let ssn = -(lr / (1.0 - wpow(beta1, t)));",
                     "  let scale = sqrt(1.0 - wpow(beta2, t)) * ssn;",
                     f"  let den = {rnd(rnd(rnd('sqrt(vm)', dt) + ' / scale', dt) + ' + eps / ssn', dt)};",
                     f"  p[o0] = {store('pv + mn / den', dt)};"]
        return code
    sc = dict(dec=1 - lr * weight_decay if decoupled_weight_decay else weight_decay, lw=w if low else 1 - w,
              beta2=beta2, omb2=1 - beta2)
    if dstep is None:
        sc.update(bc2s=(1 - beta2 ** step) ** 0.5, eps=eps, nss=-(lr / (1 - beta1 ** step)))
    else:
        sc.update(lr=lr, beta1=beta1, eps=eps)
    if not decoupled_weight_decay:
        sc["wd"] = _alpha(sc.pop("dec"), p.dtype.name)
    names = ("m", "v", "vx") if amsgrad else ("m", "v")
    key = ("adam", names, wd, bool(maximize), bool(decoupled_weight_decay), low)
    ops = [p, g, state["exp_avg"], state["exp_avg_sq"]] + ([state["max_exp_avg_sq"]] if amsgrad else [])
    if not _update(be, key, ops, sc, body, dstep):
        return False
    if dstep is None:
        state["step"] = step
    return True


def fused_rmsprop(be, p, g, state, *, lr, alpha, eps, weight_decay, momentum, centered, maximize):
    """optim.functional.rmsprop in one dispatch per parameter (and one to count a device step)."""
    if not _usable(p, g, state["step"]):
        return False
    wd, mom = weight_decay != 0, momentum > 0
    w = 1 - alpha
    low = w < 0.5

    def body(dt):
        code = _decay(dt, wd, maximize)
        code += [f"  let sn = {rnd(rnd(load('sq[o2]', dt) + ' * alpha', dt) + ' + (d * oma) * d', dt)};",
                 f"  sq[o2] = {store('sn', dt)};"]
        if centered:
            go = load("ga[o3]", dt)
            code += [f"  let df = d - {go};",
                     f"  let gn = {rnd(f'{go} + df * lw' if low else 'd - df * lw', dt)};",
                     f"  ga[o3] = {store('gn', dt)};",
                     f"  let avg = {rnd(rnd('sqrt(' + rnd('sn - gn * gn', dt) + ')', dt) + ' + eps', dt)};"]
        else:
            code.append(f"  let avg = {rnd(rnd('sqrt(sn)', dt) + ' + eps', dt)};")
        if mom:
            o = f"o{3 + centered}"
            code += [f"  let bn = {rnd(rnd(load(f'mb[{o}]', dt) + ' * mom', dt) + ' + d / avg', dt)};",
                     f"  mb[{o}] = {store('bn', dt)};",
                     f"  p[o0] = {store('pv + ' + _ax('bn * alr', dt), dt)};"]
        else:
            code.append(f"  p[o0] = {store('pv + (d * nlr) / avg', dt)};")
        return code
    names = ("sq",) + (("ga",) if centered else ()) + (("mb",) if mom else ())
    key = ("rmsprop", names, wd, bool(maximize), low)
    ops = [p, g, state["square_avg"]] + ([state["grad_avg"]] if centered else []) \
        + ([state["momentum_buffer"]] if mom else [])
    dt = p.dtype.name
    sc = dict(wd=_alpha(weight_decay, dt), alpha=alpha, oma=1 - alpha, lw=w if low else 1 - w, eps=eps, mom=momentum,
              nlr=-lr, alr=_alpha(-lr, dt))
    if not _update(be, key, ops, sc, body):
        return False
    _count(state, *_advance(state))
    return True


def fused_adagrad(be, p, g, state, *, lr, lr_decay, weight_decay, eps, maximize):
    """optim.functional.adagrad in one dispatch per parameter (two with a device step count)."""
    if not _usable(p, g, state["step"]):
        return False
    dstep, step = _advance(state)
    wd = weight_decay != 0
    reads = dstep is not None and lr_decay != 0         # the decayed lr from the device step

    def body(dt):
        code = _decay(dt, wd, maximize)
        code += [f"  let sn = {rnd(load('s[o2]', dt) + ' + d * d', dt)};", f"  s[o2] = {store('sn', dt)};",
                 f"  let sd = {rnd(rnd('sqrt(sn)', dt) + ' + eps', dt)};"]
        if reads:
            code += ["  let clr = lr / ((t - 1.0) * lrd + 1.0);",
                     f"  p[o0] = {store('pv - ' + rnd(rnd('d / sd', dt) + ' * clr', dt), dt)};"]
        else:
            code.append(f"  p[o0] = {store('pv + (d * nlr) / sd', dt)};")
        return code
    sc = dict(wd=_alpha(weight_decay, p.dtype.name), eps=eps)
    if reads:
        sc.update(lr=lr, lrd=lr_decay)
    else:
        sc["nlr"] = -lr if lr_decay == 0 else -(lr / (1 + (step - 1) * lr_decay))
    key = ("adagrad", ("s",), wd, bool(maximize), reads)
    if not _update(be, key, [p, g, state["sum"]], sc, body, dstep if reads else None):
        return False
    if not reads:
        _count(state, dstep, step)
    return True


# optimizer name -> fused per-parameter update
STEPS = {"sgd": fused_sgd, "adam": fused_adam, "rmsprop": fused_rmsprop, "adagrad": fused_adagrad}


def install(backend):
    """Attach the hooks to a WebGPUBackend instance."""
    backend.softmax = lambda x, d, log: softmax(backend, x, d, log)
    backend.softmax_backward = lambda g, y, d, log: softmax_backward(backend, g, y, d, log)

    def fused_step(name, p, g, state, **hyper):
        step = STEPS.get(name)
        return step is not None and step(backend, p, g, state, **hyper)
    backend.fused_step = fused_step
