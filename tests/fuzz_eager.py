"""A seeded differential fuzzer of eager programs: PyTorch against webtorch.

A program is a short list of Python source lines over variables v0, v1, ... and a module `m`
(`torch` or `webtorch`), `F = m.nn.functional` and the device string `dev`. The generator builds
it from a seeded `random.Random`, running each candidate line on PyTorch to learn its result
(shape, dtype, values, whether it raises) so that most programs run and each step fits the
values it gets. The one interpreter `run` executes the same lines against either module; `diff`
compares the two runs: the exception (one side only is a mismatch, both sides must agree on its
type), then every variable (dtype, shape, requires_grad, NaN and inf positions, zero signs, exact
integers and bools, floats within a tolerance of the dtype widened by order-dependent
accumulation) and every leaf's gradient (each float program ends with a backward).

    python tests/fuzz_eager.py --device webgpu --n 5000 --seed 1   # a long run, minimized failures
"""
import math
import random
import sys
from pathlib import Path

NAN, INF = float("nan"), float("inf")
FLOATS, INTS = ("float32", "float16"), ("int32", "int64")
EPS = {"float32": 2.0 ** -23, "float16": 2.0 ** -10, "float64": 2.0 ** -52}
RTOL = {"float32": 1e-4, "float16": 4e-3, "float64": 1e-9}
ATOL = {"float32": 1e-6, "float16": 1e-4, "float64": 1e-12}
FMAX = {"float32": 3.4028234663852886e38, "float16": 65504.0, "float64": 1.7976931348623157e308}
# Results a device cannot hold, refused with these messages (a documented limit, not a mismatch).
LIMITS = ("int64 overflow on webgpu", "webgpu stores int64 as int32")


# ---------------------------------------------------------------- values and leaves

def _float_value(rng, dtype, special):
    if rng.random() >= special:
        return rng.randint(-16, 16) / 4
    huge = 60000.0 if dtype == "float16" else rng.choice([3e38, 1e30, 1e5])
    sub = 3e-8 if dtype == "float16" else 1e-40
    return rng.choice([NAN, INF, -INF, -0.0, 0.0, huge, -huge, sub, -sub,
                       round(rng.uniform(-3, 3), 3), 0.5, -1.0, 100.0])


def _int_value(rng, dtype, special, webgpu):
    if rng.random() >= special:
        return rng.randint(-10, 10)
    if dtype == "int64" and not webgpu:  # webgpu holds int64 as int32 (a documented limit)
        return rng.choice([2 ** 63 - 1, -2 ** 63, 2 ** 31, 0, -1])
    return rng.choice([2 ** 31 - 1, -2 ** 31, 0, -1, 1])


SHAPES = [(), (1,), (3,), (4,), (2, 3), (3, 1), (1, 3), (3, 3), (2, 2, 3), (2, 3, 4)]


def _fmt(v):
    if isinstance(v, list):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    if isinstance(v, float):
        return "nan" if v != v else ("inf" if v == INF else ("-inf" if v == -INF else repr(v)))
    return repr(v)


def _values(rng, shape, fn):
    if not shape:
        return fn()
    return [_values(rng, shape[1:], fn) for _ in range(shape[0])]


def leaf_line(rng, name, dtype, shape, webgpu, requires_grad=None):
    special = rng.choice([0.0, 0.0, 0.15, 0.4])
    if dtype in FLOATS:
        vals = _values(rng, shape, lambda: _float_value(rng, dtype, special))
        rg = rng.random() < 0.7 if requires_grad is None else requires_grad
    elif dtype == "bool":
        vals, rg = _values(rng, shape, lambda: rng.random() < 0.5), False
    else:
        vals, rg = _values(rng, shape, lambda: _int_value(rng, dtype, special, webgpu)), False
    extra = ", requires_grad=True" if rg else ""
    return f"{name} = m.tensor({_fmt(vals)}, dtype=m.{dtype}, device=dev{extra})"


# ---------------------------------------------------------------- the steps
# Each maker takes (rng, a, b, info) with a, b variable names and info(name) -> (dtype, shape)
# of PyTorch's value, and returns (expression, kind); kind "acc" marks an order-dependent
# accumulation (its tolerance grows with the inputs' magnitude), "inplace" an in-place op on a.

def _scalar(rng):
    return rng.choice(["2", "-1", "0", "3", "0.5", "-2.5", "1e30", "-0.0", "inf", "nan", "True", "65504.0"])


def _dim(rng, shape):
    return rng.randrange(-len(shape), len(shape)) if shape else rng.choice([0, -1])


UNARY = ["neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "floor", "ceil",
         "round", "trunc", "sign", "reciprocal", "rsqrt", "exp2", "expm1", "log1p", "erf", "square",
         "atan", "frac", "isnan", "isinf", "isfinite", "signbit", "logical_not", "nan_to_num", "sinh",
         "log2", "asinh", "atanh", "erfinv", "sgn", "positive"]
ACTS = ["gelu", "silu", "softplus", "elu", "leaky_relu", "hardtanh", "relu6", "mish", "hardswish",
        "hardsigmoid", "logsigmoid", "selu", "celu", "softsign", "tanhshrink", "hardshrink"]
BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "fmax", "fmin", "remainder", "fmod",
          "atan2", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
          "floor_divide", "copysign", "xlogy", "ldexp"]
BITWISE = ["bitwise_and", "bitwise_or", "bitwise_xor"]
OPS_SCALAR = ["+", "-", "*", "/", "**", "//", "%", "<", "==", "!="]
REDUCE = ["sum", "mean", "prod", "amax", "amin", "std", "var", "logsumexp", "nansum", "norm", "all", "any",
          "count_nonzero", "argmax", "argmin", "cumsum", "cumprod", "logcumsumexp", "cummax"]
CASTS = ["float32", "float16", "int32", "int64", "bool"]
OPTIMS = ["SGD([{p}], lr=0.1)", "SGD([{p}], lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)",
          "Adam([{p}], lr=0.01)", "AdamW([{p}], lr=0.01, weight_decay=0.1)", "Adam([{p}], lr=0.01, amsgrad=True)",
          "RMSprop([{p}], lr=0.01)", "RMSprop([{p}], lr=0.01, momentum=0.5, centered=True)",
          "Adagrad([{p}], lr=0.1)", "Adamax([{p}], lr=0.01)", "NAdam([{p}], lr=0.01)", "Adadelta([{p}])"]


def s_unary(rng, a, b, info):
    return f"m.{rng.choice(UNARY)}({a})", "ew"


def s_act(rng, a, b, info):
    return f"F.{rng.choice(ACTS)}({a})", "ew"


def s_clamp(rng, a, b, info):
    lo, hi = rng.choice([("-1", "1"), ("0", "None"), ("None", "0.5"), ("2", "-2"), ("-inf", "nan")])
    return f"m.clamp({a}, {lo}, {hi})", "ew"


def s_binary(rng, a, b, info):
    op = rng.choice(BINARY + BITWISE if info(a)[0] in INTS + ("bool",) else BINARY)
    return f"m.{op}({a}, {b})", "ew"


def s_scalar(rng, a, b, info):
    op, s = rng.choice(OPS_SCALAR), _scalar(rng)
    return (f"({a} {op} {s})" if rng.random() < 0.7 else f"({s} {op} {a})"), "ew"


def s_where(rng, a, b, info):
    return f"m.where({a} > 0, {a}, {b})", "ew"


def s_lerp(rng, a, b, info):
    return rng.choice([f"m.lerp({a}, {b}, 0.25)", f"m.addcmul({a}, {b}, {b}, value=-0.5)",
                       f"m.addcdiv({a}, {b}, {a}, value=2)"]), "ew"


def _castable(b, dtype, info):
    """b, made finite and small where it is a float written into an integer dtype: PyTorch leaves
    the conversion of NaN, inf and out-of-range floats to integers undefined (C++'s)."""
    return f"{b}.clamp(-1e4, 1e4).nan_to_num()" if dtype in INTS and info(b)[0] in FLOATS else b


def s_cast(rng, a, b, info):
    tgt = rng.choice(CASTS)
    return f"{_castable(a, tgt, info)}.to(m.{tgt})", "ew"


def s_view(rng, a, b, info):
    _, shape = info(a)
    n = len(shape)
    opts = [f"{a}.reshape(-1)", f"{a}.unsqueeze({rng.randint(-n - 1, n)})", f"{a}.flatten()"]
    if n >= 1:
        d = _dim(rng, shape)
        opts += [f"{a}[{rng.randrange(shape[0]) if shape[0] else 0}]", f"{a}[::2]", f"{a}[1:]",
                 f"{a}.narrow({d}, 0, 1)", f"{a}.select({d}, -1)", f"{a}.flip({d})", f"{a}.squeeze()",
                 f"{a}.expand(2, *{a}.shape)", f"{a}.chunk(2, {d})[0]", f"{a}.split(1, {d})[-1]"]
    if n >= 2:
        opts += [f"{a}.t()", f"{a}.transpose(0, -1)", f"{a}.permute(*reversed(range({n})))", f"{a}.diagonal()",
                 f"{a}.view({shape[0]}, -1)", f"{a}.mT.contiguous()", f"{a}[..., 1:]",
                 f"{a}.unflatten(0, (1, {shape[0]}))", f"{a}.roll(1, 0)", f"{a}.tril()", f"{a}.triu(1)"]
    return rng.choice(opts), "view"


def s_inplace(rng, a, b, info):
    op = rng.choice([f"{a}.add_({b})", f"{a}.mul_({_scalar(rng)})", f"{a}.clamp_(-1, 1)", f"{a}.zero_()",
                     f"{a}.fill_({_scalar(rng)})", f"{a}.copy_({_castable(b, info(a)[0], info)})", f"{a}.relu_()", f"{a}.neg_()",
                     f"{a}.masked_fill_({a} != {a}, 0.0)", f"{a}.sub_({b}, alpha=2)", f"{a}.div_(2)",
                     f"{a}.exp_()", f"{a}.sigmoid_()", f"{a}.abs_()", f"{a}.pow_(2)", f"{a}.floor_()"])
    return op, "inplace"


def s_inplace_view(rng, a, b, info):
    _, shape = info(a)
    if not shape:
        return s_inplace(rng, a, b, info)
    view = rng.choice([f"{a}[0]", f"{a}[1:]", f"{a}.t()" if len(shape) == 2 else f"{a}[..., :1]", f"{a}.view(-1)"])
    op = rng.choice([f".mul_({_scalar(rng)})", ".zero_()", f".add_({_scalar(rng)})", ".clamp_(min=0)",
                     ".copy_(m.tensor(1.5))", ".fill_(-0.0)"])
    return f"{view}{op}", "inplace_view"


SCANS = ("cumsum", "cumprod", "logcumsumexp", "cummax")
ACCUMULATING = ("sum", "mean", "std", "var", "logsumexp", "nansum", "norm", "prod") + SCANS[:3]


def s_reduce(rng, a, b, info):
    _, shape = info(a)
    r = rng.choice(REDUCE)
    kind = "acc" if r in ACCUMULATING else "ew"
    if r in SCANS:
        return f"m.{r}({a}, {_dim(rng, shape)}){'[0]' if r == 'cummax' else ''}", kind
    if r == "logsumexp" or rng.random() < 0.5:  # over one dim
        keep = ", keepdim=True" if r != "count_nonzero" and rng.random() < 0.3 else ""
        return f"m.{r}({a}, {_dim(rng, shape)}{keep})", kind
    if r in ("std", "var"):
        return f"m.{r}({a}, correction={rng.choice([0, 1])})", kind
    return f"m.{r}({a})", kind


def s_minmax(rng, a, b, info):
    _, shape = info(a)
    f = rng.choice(["max", "min", "median", "nanmedian", "mode", "sort", "topk", "kthvalue"])
    d = _dim(rng, shape)
    i = rng.randint(0, 1)  # indices where PyTorch specifies them: the first extreme, a stable sort
    if f == "topk":
        return f"m.topk({a}, 1, {d})[0]", "ew"
    if f == "kthvalue":
        return f"m.kthvalue({a}, 1, {d})[0]", "ew"
    if f == "sort":
        return f"m.sort({a}, dim={d}, stable=True)[{i}]", "ew"
    if f in ("median", "nanmedian"):
        return (f"m.{f}({a})" if rng.random() < 0.3 else f"m.{f}({a}, {d})[0]"), "ew"
    if f == "mode":
        return f"m.mode({a}, {d})[{i}]", "ew"
    return (f"m.{f}({a})" if rng.random() < 0.3 else f"m.{f}({a}, {d})[{i}]"), "ew"


def s_index(rng, a, b, info):
    _, shape = info(a)
    if not shape:
        return f"{a}[None]", "view"
    n0 = shape[0]
    idx = [rng.randrange(-n0, n0) if n0 else 0 for _ in range(rng.randint(1, 3))]
    d = _dim(rng, shape)
    opts = [f"{a}[m.tensor({idx}, device=dev)]", f"{a}[{a} > 0]" if rng.random() < 0.5 else f"{a}[{a} == {a}]",
            f"m.index_select({a}, 0, m.tensor({idx}, device=dev))", f"m.masked_select({a}, {a} < 1)",
            f"{a}.index_fill(0, m.tensor({idx}, device=dev), -1)", f"m.take({a}, m.tensor({idx}, device=dev))",
            f"m.gather({a}, {d}, m.zeros_like({a}, dtype=m.int64))",
            f"m.scatter_add(m.zeros_like({a}), {d}, m.zeros_like({a}, dtype=m.int64), {a})",
            f"m.scatter({a}, {d}, m.zeros_like({a}, dtype=m.int64), {b})",
            f"{a}.index_add(0, m.tensor({idx}, device=dev), {a}[:{len(idx)}] if {a}.shape[0] >= {len(idx)} else {a}[m.tensor({idx}, device=dev)])",
            f"m.index_put({a}, (m.tensor({idx}, device=dev),), m.tensor(7, dtype={a}.dtype, device=dev), accumulate=True)",
            f"{a}.masked_fill({a} > 1, {_scalar(rng)})",
            f"m.nonzero({a})", f"m.argsort({a}, dim={d}, stable=True)", f"m.unique({a})"]
    return rng.choice(opts), "idx"


def s_setitem(rng, a, b, info):
    _, shape = info(a)
    if not shape:
        return s_inplace(rng, a, b, info)
    # a 0-d value that requires grad, filled into an integer tensor, gives it history in PyTorch: a broken
    # state (its next op raises "Autograd not support dtype", backward an internal assert); webtorch's stays a plain tensor
    value = _castable(b, info(a)[0], info) + (".detach()" if info(a)[0] not in FLOATS else "")
    return rng.choice([f"{a}.__setitem__({a} > 0, {_scalar(rng)})", f"{a}.__setitem__(0, {value}.flatten()[0])",
                       f"{a}.__setitem__(m.tensor([0, 0], device=dev), {_scalar(rng)})",
                       f"{a}.index_put_((m.tensor([0, 0], device=dev),), m.tensor(1.0, dtype={a}.dtype, device=dev), accumulate=True)",
                       f"{a}.scatter_add_(0, m.zeros_like({a}, dtype=m.int64), {a}.detach().clone())"]), "inplace"


def s_matmul(rng, a, b, info):
    _, sa = info(a)
    if not sa:
        return f"({a} * {b})", "ew"
    k = sa[-1]
    w = f"m.tensor({_fmt(_values(rng, (k, 3), lambda: rng.randint(-8, 8) / 4))}, dtype={a}.dtype, device=dev)"
    bias = f"m.tensor({_fmt([rng.choice([0.5, -1.0, 0.0, -0.0, INF]) for _ in range(3)])}, dtype={a}.dtype, device=dev)"
    epi = rng.choice(["", ".relu()", " + 1", ".sigmoid()", ".tanh()", " * 2", ".clamp(min=0)"])
    if len(sa) == 1:
        forms = [f"({a} @ {w}){epi}", f"m.matmul({a}, {w}){epi}"]
    else:
        forms = [f"({a} @ {w}){epi}", f"F.linear({a}, {w}.t(), {bias}){epi}", f"m.matmul({a}, {w}){epi}"]
        if len(sa) == 2:
            forms += [f"m.addmm({bias}, {a}, {w}, beta={rng.choice([0, 1, 0.5])}, alpha={rng.choice([1, 2, -1])}){epi}",
                      f"m.mm({a}, {w}){epi}", f"m.addmv(m.zeros({sa[0]}, dtype={a}.dtype, device=dev), {a}, {w}[:, 0])"]
        if len(sa) == 3:
            forms += [f"m.bmm({a}, {w}.expand({sa[0]}, {k}, 3)){epi}", f"m.baddbmm(m.ones(1, dtype={a}.dtype, device=dev), {a}, {w}.expand({sa[0]}, {k}, 3), beta=0.5)"]
    return rng.choice(forms), "acc"


def s_softmax(rng, a, b, info):
    _, shape = info(a)
    d = _dim(rng, shape)
    f = rng.choice(["softmax", "log_softmax", "softmin"])
    dt = rng.choice(["", "", ", dtype=m.float32"])
    return f"F.{f}({a}, {d}{dt})", "acc"


def s_loss(rng, a, b, info):
    f = rng.choice([f"F.mse_loss({a}, {b})", f"F.l1_loss({a}, {b})", f"F.smooth_l1_loss({a}, {b})",
                    f"F.huber_loss({a}, {b}, delta=0.5)", f"F.binary_cross_entropy_with_logits({a}, ({b} > 0).to({a}.dtype))",
                    f"F.normalize({a}, dim=-1)", f"F.layer_norm({a}, {a}.shape[-1:])", f"F.cosine_similarity({a}, {b}, dim=-1)"])
    return f, "acc"


def s_shape(rng, a, b, info):
    _, shape = info(a)
    return rng.choice([f"m.cat([{a}, {b}])", f"m.stack([{a}, {b}])", f"{a}.repeat(2, *[1] * {a}.dim())",
                       f"m.broadcast_tensors({a}, {b})[0]", f"{a}.clone()", f"{a}.contiguous()", f"{a}.detach()",
                       f"m.flatten({a}, 0)", f"{a}.item() if {a}.numel() == 1 else {a}.tolist()"]), "view"


STEPS = [(s_unary, 8), (s_act, 4), (s_clamp, 2), (s_binary, 7), (s_scalar, 7), (s_where, 2), (s_lerp, 1),
         (s_cast, 4), (s_view, 6), (s_inplace, 3), (s_inplace_view, 3), (s_reduce, 6), (s_minmax, 3),
         (s_index, 4), (s_setitem, 2), (s_matmul, 3), (s_softmax, 3), (s_loss, 2), (s_shape, 2)]
_MAKERS, _WEIGHTS = zip(*STEPS)


# ---------------------------------------------------------------- running a program

def _namespace(m, device):
    return {"m": m, "F": m.nn.functional, "dev": device, "nan": NAN, "inf": INF}


def _is_tensor(v):
    # `backward`, a method: reading grad_fn raises for a view PyTorch has invalidated (an in-place op on a split)
    return hasattr(v, "dtype") and hasattr(v, "shape") and hasattr(v, "backward")


def run(lines, m, device, after=None):
    """Execute the program on module m: (namespace, the exception raised or None, its line index);
    after(line, namespace) is called after each line that ran."""
    ns = _namespace(m, device)
    for i, line in enumerate(lines):
        try:
            exec(line, ns)
        except Exception as e:  # noqa: BLE001 - an exception is a result to compare
            return ns, e, i
        if after:
            after(line, ns)
    return ns, None, None


def _dt(t):
    return str(t.dtype).replace("torch.", "")


def _tolist(v):
    if not _is_tensor(v):
        return v
    if getattr(v, "_is_zerotensor", lambda: False)():  # PyTorch's unallocated zeros of some gradients
        return v.new_zeros(v.shape).tolist()
    return v.detach().cpu().tolist()


def _flat(x):
    if isinstance(x, list):
        return [y for e in x for y in _flat(e)]
    return [x]


def _absmax(t):
    if not _is_tensor(t) or _dt(t) not in EPS:
        return 0.0
    vals = [abs(x) for x in _flat(_tolist(t)) if math.isfinite(x)]
    return max(vals, default=0.0)


class Tol:
    """Tolerances from PyTorch's run: each accumulation widens the absolute tolerance of its result
    by eps * n * |largest finite input|, and a result that may overflow depending on the order of
    the sum is compared only in dtype, shape and requires_grad ("loose")."""

    def __init__(self):
        self.atol, self.loose = {}, set()

    def note(self, line, ns):
        out, ins = _io(line)
        if not out:
            return
        kind = _kind(line)
        vals = [ns[n] for n in ins if n in ns]
        atol = max([self.atol.get(n, 0.0) for n in ins] or [0.0])
        loose = any(n in self.loose for n in ins)
        t = ns.get(out)
        if kind == "acc" and _is_tensor(t):
            dt = _dt(t) if _dt(t) in EPS else "float32"
            n = max((v.numel() for v in vals if _is_tensor(v)), default=1)
            big = max((_absmax(v) for v in vals), default=0.0) * max(n, 1) * 4
            atol = max(atol, EPS[dt] * big)
            loose = loose or big * 4 > FMAX[dt]
        self.atol[out] = atol
        if loose:
            self.loose.add(out)
        else:
            self.loose.discard(out)


def _cmp_value(e, g, dtype, atol, where):
    if isinstance(e, list) or isinstance(g, list):
        if not (isinstance(e, list) and isinstance(g, list)) or len(e) != len(g):
            return f"{where}: structure {e!r} vs {g!r}"
        for i, (x, y) in enumerate(zip(e, g)):
            r = _cmp_value(x, y, dtype, atol, f"{where}[{i}]")
            if r:
                return r
        return None
    if type(e) is not type(g):
        return f"{where}: python type {type(e).__name__} vs {type(g).__name__} ({e!r} vs {g!r})"
    if not isinstance(e, float):
        return None if e == g else f"{where}: {e!r} (torch) vs {g!r} (webtorch)"
    if math.isnan(e) or math.isnan(g):
        return None if math.isnan(e) and math.isnan(g) else f"{where}: {e!r} (torch) vs {g!r} (webtorch)"
    if math.isinf(e) or math.isinf(g):
        return None if e == g else f"{where}: {e!r} (torch) vs {g!r} (webtorch)"
    if e == 0 and g == 0:
        return None if math.copysign(1, e) == math.copysign(1, g) else f"{where}: zero sign {e!r} (torch) vs {g!r} (webtorch)"
    dt = dtype if dtype in RTOL else "float32"
    if abs(e - g) <= ATOL[dt] + atol + RTOL[dt] * abs(e):
        return None
    return f"{where}: {e!r} (torch) vs {g!r} (webtorch)"


def compare(e, g, atol, loose, where, half=False):
    """None when webtorch's value g matches PyTorch's e, else a description of the difference; half:
    float16 took part (PyTorch's opmath and webtorch's may round intermediates differently)."""
    if isinstance(e, (tuple, list)) and not isinstance(e, str) and not (isinstance(e, list) and not e or isinstance(e[0], (int, float, list))):
        if not isinstance(g, (tuple, list)) or len(e) != len(g):
            return f"{where}: {type(e).__name__} of {len(e)} vs {g!r}"
        for i, (x, y) in enumerate(zip(e, g)):
            r = compare(x, y, atol, loose, f"{where}[{i}]", half)
            if r:
                return r
        return None
    if _is_tensor(e) != _is_tensor(g):
        return f"{where}: {type(e).__name__} vs {type(g).__name__}"
    if not _is_tensor(e):
        if isinstance(e, (int, float, bool, list)) or e is None:
            return _cmp_value(e, g, "float32", atol, where) if not loose else None
        return None
    if _dt(e) != _dt(g):
        return f"{where}: dtype {_dt(e)} vs {_dt(g)}"
    if tuple(e.shape) != tuple(g.shape):
        return f"{where}: shape {tuple(e.shape)} vs {tuple(g.shape)}"
    if e.requires_grad != g.requires_grad:
        return f"{where}: requires_grad {e.requires_grad} vs {g.requires_grad}"
    if loose:
        return None
    return _cmp_value(_tolist(e), _tolist(g), "float16" if half and _dt(e) in EPS else _dt(e), atol, where)


def _compatible(e, g):
    """Both exceptions of one family: the same type, or g a PyTorch-style subtype of e's builtin base."""
    if type(e).__name__ == type(g).__name__:
        return True
    for base in (IndexError, TypeError, ValueError, NotImplementedError, RuntimeError):
        if isinstance(e, base) and isinstance(g, base):
            return True
    return False


def _limit(exc):
    return exc is not None and any(s in str(exc) for s in LIMITS)


def _leaves(ns):
    def leaf(v):
        try:
            return v.is_leaf and v.requires_grad
        except RuntimeError:  # a view PyTorch invalidated (an in-place op on a split's base): no leaf
            return False
    return [k for k, v in ns.items() if k.startswith("v") and _is_tensor(v) and leaf(v)]


def _settle(ns):
    """Read every variable back (webgpu reports deferred errors here): the exception or None."""
    try:
        for k, v in ns.items():
            if _is_tensor(v):
                v.tolist()
                if v.is_leaf and v.grad is not None:
                    v.grad.tolist()
    except Exception as e:  # noqa: BLE001
        return e
    return None


def diff(lines, wt, device, torch):
    """None when the program gives the same results under webtorch on device as under PyTorch; else
    a description. "limit: ..." when webtorch refused with a documented device limit."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tol = Tol()
        ens, eexc, eline = run(lines, torch, "cpu", tol.note)
        gns, gexc, gline = run(lines, wt, device)
        gexc = gexc or _settle(gns)
    if _limit(gexc):
        return f"limit: {gexc}"
    if (eexc is None) != (gexc is None):
        e = eexc or gexc
        side = "torch" if eexc else "webtorch"
        at = eline if eexc else gline
        return f"only {side} raised{'' if at is None else f' at line {at}'}: {type(e).__name__}: {str(e)[:300]}"
    if eexc is not None:
        if not _compatible(eexc, gexc):
            return f"exception types: torch {type(eexc).__name__}: {str(eexc)[:200]} vs webtorch {type(gexc).__name__}: {str(gexc)[:200]}"
        return None
    grad_atol = max(tol.atol.values(), default=0.0)
    grad_loose = bool(tol.loose)
    half = any("float16" in line for line in lines)
    for k, ev in ens.items():
        if not k.startswith("v"):
            continue
        try:
            r = compare(ev, gns.get(k), tol.atol.get(k, 0.0), k in tol.loose, k, half)
        except RuntimeError as e:  # PyTorch refuses to read a view it invalidated (an in-place op on a split's base)
            if "is a view and its base" not in str(e):
                raise
            continue
        if r:
            return r
    for k in _leaves(ens):
        eg, g = ens[k].grad, gns[k]
        gg = g.grad if _is_tensor(g) and g.is_leaf else None
        if (eg is None) != (gg is None):
            return f"{k}.grad: {'None' if eg is None else 'a tensor'} (torch) vs {'None' if gg is None else 'a tensor'} (webtorch)"
        if eg is not None:
            r = compare(eg, gg, grad_atol * 4, grad_loose, f"{k}.grad", half)
            if r:
                return r
    return None


def _safe_diff(lines, wt, device, torch):
    try:
        return diff(lines, wt, device, torch)
    except Exception as e:  # noqa: BLE001 - a result that cannot be read back or compared
        return f"comparison failed: {type(e).__name__}: {str(e)[:300]}"


def _io(line):
    """The variable a line assigns and the variables it reads, from its text."""
    import re
    lhs, _, rhs = line.partition(" = ") if re.match(r"^v\d+ = ", line) else ("", "", line)
    ins = re.findall(r"\bv\d+\b", rhs.split("  #")[0])
    out = lhs or (ins[0] if ins else "")
    return out, ins


def _kind(line):
    return line.rsplit("  # ", 1)[1] if "  # " in line else "ew"


# ---------------------------------------------------------------- generating a program

def generate(seed, device="cpu"):
    """One program from seed, as a list of source lines (each step's kind as a trailing comment)."""
    import torch
    rng = random.Random(seed)
    webgpu = device == "webgpu"
    ns = _namespace(torch, "cpu")
    lines = []

    def add(line):
        try:
            with _quiet():
                exec(line, ns)
        except Exception:  # noqa: BLE001
            return False
        lines.append(line)
        return True

    def info(name):
        v = ns[name]
        return _dt(v), tuple(v.shape)

    nleaf = rng.randint(1, 3)
    dtypes = [rng.choice(["float32"] * 5 + ["float16"] * 2 + ["int32", "int64", "bool"]) for _ in range(nleaf)]
    shape = rng.choice(SHAPES)
    for i, dt in enumerate(dtypes):
        s = shape if rng.random() < 0.8 else rng.choice(SHAPES)
        add(leaf_line(rng, f"v{i}", dt, s, webgpu))
    if rng.random() < 0.12:
        return _optim_program(rng, lines, ns, webgpu)
    nxt = nleaf
    for _ in range(rng.randint(1, 6)):
        tensors = [k for k, v in ns.items() if k.startswith("v") and _is_tensor(v)]
        for _attempt in range(8):
            a, b = rng.choice(tensors), rng.choice(tensors)
            maker = rng.choices(_MAKERS, _WEIGHTS)[0]
            expr, kind = maker(rng, a, b, info)
            line = f"v{nxt} = {expr}  # {kind}"
            if add(line):
                nxt += 1
                break
            if rng.random() < 0.08:  # keep a line PyTorch refuses: webtorch must refuse it too
                lines.append(line)
                return lines
    wants = [k for k, v in ns.items() if k.startswith("v") and _is_tensor(v) and v.requires_grad
             and _dt(v) in FLOATS]
    if wants:
        outs = rng.sample(wants, min(len(wants), rng.randint(1, 2)))
        gs = []
        for o in outs:
            gv = _values(rng, tuple(ns[o].shape), lambda: rng.choice([1.0, -0.5, 2.0, 0.0, 0.25]))
            gs.append(f"m.tensor({_fmt(gv)}, dtype={o}.dtype, device=dev)")
        add(f"m.autograd.backward([{', '.join(outs)}], [{', '.join(gs)}])")
    return lines


def _optim_program(rng, lines, ns, webgpu):
    p = "v0"
    if not (_is_tensor(ns.get(p)) and _dt(ns[p]) in FLOATS):
        lines[0] = leaf_line(rng, "v0", "float32", tuple(ns[p].shape) if _is_tensor(ns.get(p)) else (3,), webgpu, True)
        exec(lines[0], ns)
    if not ns[p].requires_grad:
        lines[0] = lines[0][:-1] + ", requires_grad=True)"
        exec(lines[0], ns)
    lines.append(f"opt = m.optim.{rng.choice(OPTIMS).format(p=p)}")
    loss = rng.choice([f"({p} * {p}).sum()", f"({p} - 1).abs().sum()", f"m.exp({p} / 4).mean()",
                       f"F.softmax({p}.reshape(-1), 0)[0]", f"({p}.sin() * 3).sum()"])
    for it in range(rng.randint(1, 3)):
        lines += ["opt.zero_grad()", f"loss{it} = {loss}", f"loss{it}.backward()", "opt.step()"]
    lines.append(f"v9 = {p}.detach().clone()")
    return lines


class _quiet:
    def __enter__(self):
        import warnings
        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *a):
        self._w.__exit__(*a)


# ---------------------------------------------------------------- minimizing and printing

def minimize(lines, still_fails):
    """Drop steps (one at a time, repeatedly) while still_fails(lines) holds."""
    lines = list(lines)
    changed = True
    while changed:
        changed = False
        for i in range(len(lines) - 1, -1, -1):
            cand = lines[:i] + lines[i + 1:]
            if cand and still_fails(cand):
                lines, changed = cand, True
    return lines


def source(lines, device):
    """The program as a Python script that runs on PyTorch (swap the import for webtorch)."""
    head = ["import torch as m  # or: import webtorch as m", "F = m.nn.functional",
            f"dev = {'cpu'!r}  # webtorch: {device!r}", "nan, inf = float('nan'), float('inf')"]
    return "\n".join(head + lines)


def setup(device):
    """(webtorch, the device string) with 'cpu-pure' meaning the pure-Python CPU backend."""
    import webtorch
    if device == "cpu-pure":
        from webtorch import _device
        from webtorch.backends.cpu import PureBackend
        _device._backends["cpu"] = PureBackend()
        return webtorch, "cpu"
    return webtorch, device


def fuzz(wt, device, seeds, on_failure=None):
    """Run the programs of seeds on webtorch's device: ([(seed, message, minimized lines)], how many
    webtorch refused at a documented device limit)."""
    import torch
    bad, limits = [], 0
    for seed in seeds:
        lines = generate(seed, device)
        msg = _safe_diff(lines, wt, device, torch)
        if msg is None:
            continue
        if msg.startswith("limit:"):
            limits += 1
            continue

        def still(c):
            r = _safe_diff(c, wt, device, torch)
            return r is not None and not r.startswith("limit:") and "NameError" not in r
        small = minimize(lines, still)
        item = (seed, _safe_diff(small, wt, device, torch), small)
        bad.append(item)
        if on_failure:
            on_failure(item)
    return bad, limits


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cpu-pure", "webgpu"])
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    def show(item):
        seed, msg, small = item
        print(f"# seed {seed}: {msg}\n{source(small, args.device)}\n", flush=True)
    wt, dev = setup(args.device)
    bad, limits = fuzz(wt, dev, range(args.seed * 1_000_000, args.seed * 1_000_000 + args.n), show)
    print(f"{args.n} programs on {args.device}: {len(bad)} mismatches, {limits} refused at documented device limits")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "py"))  # this checkout's webtorch
    sys.exit(main())
