"""Seeded fuzz of lazy element-wise fusion (backends/webgpu/lazy.py): random chains of 1-30
element-wise ops over 1-12 inputs (float32, float16, int32; broadcast shapes), with casts,
comparisons, `where` and Python scalars among -0.0, NaN, +-inf, huge and subnormal values.

Two checks per chain, so that rounding differences are never amplified through a chain:
* every op, run unfused on webgpu, equals PyTorch's op on the same input values (each step's
  inputs are the unfused webgpu values);
* the fused chain (a live output and a random intermediate; the other intermediates are dead,
  so never stored) equals the unfused one bit for bit (NaN's sign and payload aside): fusion
  changes no value (no folding through NaN/inf/-0.0, no kernel WebGPU rejects)."""
import math
import os
import random

import numpy as np
import pytest

os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

torch = pytest.importorskip("torch")
import webtorch as wt  # noqa: E402
from webtorch.backends import webgpu  # noqa: E402

pytestmark = pytest.mark.usefixtures("webgpu")

SPECIAL = [0.0, -0.0, math.nan, math.inf, -math.inf, 3e38, -1e30, 1e-40, -1e-45, 1e-38, 0.5, -2.5, 7.0, 100.0,
           1e6, -3e9]
UN_F = ["neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sigmoid", "floor", "ceil", "round",
        "trunc", "relu", "sign", "reciprocal", "expm1", "log1p", "exp2", "log2", "log10", "rsqrt", "atan", "erf",
        "frac", "square", "isnan", "signbit"]
BIN_F = ["add", "sub", "mul", "div", "maximum", "minimum", "fmax", "fmin", "pow", "atan2", "fmod", "remainder",
         "hypot", "copysign"]
BIN_I = ["add", "sub", "mul", "maximum", "minimum", "bitwise_and", "bitwise_or", "bitwise_xor"]
CMP = ["eq", "ne", "lt", "le", "gt", "ge"]
SHAPES = [(3, 4), (4,), (3, 1), (1, 4), ()]
KIND = {"float32": "f", "float16": "f", "int32": "i", "int64": "i", "bool": "b", "uint8": "b"}


def chain(seed):
    """-> (steps, kept step indices). A step is ("input", shape, dtype, values) or
    (op, dtype or None, argument step indices or ("s", Python scalar), ...)."""
    r = random.Random(seed)
    steps, kinds = [], []

    def pick(kind):
        return r.choice([k for k, kd in enumerate(kinds) if kd == kind] or [None])

    def scalar(pool):
        return ("s", r.choice(pool))

    for k in range(r.randint(1, 3) if r.random() < 0.7 else r.randint(4, 12)):
        shape = (3, 4) if k == 0 else r.choice(SHAPES)
        dt = r.choice(["float32", "float32", "float16", "int32"])
        n = math.prod(shape)
        vals = [r.randint(-50, 50) for _ in range(n)] if dt == "int32" else \
            [r.choice(SPECIAL) if r.random() < 0.5 else r.uniform(-5, 5) for _ in range(n)]
        steps.append(("input", shape, dt, vals))
        kinds.append(KIND[dt])
    for _ in range(r.randint(1, 30)):
        j = r.randrange(len(kinds))
        kind, c = kinds[j], r.random()
        if kind == "f":
            if c < 0.35:
                op = r.choice(UN_F)
                st, out = (op, None, j), "b" if op in ("isnan", "signbit") else "f"
            elif c < 0.7:
                o = r.choice([k for k, kd in enumerate(kinds) if kd in "fi"] + [None])
                st, out = (r.choice(BIN_F), None, j, o if o is not None else scalar(SPECIAL + [2.0, -1.0, 0.1])), "f"
            elif c < 0.8:
                st, out = (r.choice(CMP), None, j, scalar([0.0, -0.0, 1.0, math.nan, math.inf])), "b"
            else:
                dt = r.choice(["int32", "int64", "float16", "float32", "bool"])
                st, out = ("to", dt, j), KIND[dt]
        elif kind == "i":
            if c < 0.4:
                o = pick("i")
                st, out = (r.choice(BIN_I), None, j, o if o is not None else scalar(list(range(-20, 21)))), "i"
            elif c < 0.6:
                st, out = (r.choice(["mul", "add", "div"]), None, j, scalar([1.0, -0.0, 0.5, 1e-40, math.inf])), "f"
            elif c < 0.8:
                dt = r.choice(["float32", "float16", "bool", "uint8"])
                st, out = ("to", dt, j), KIND[dt]
            else:
                st, out = (r.choice(["neg", "abs"]), None, j), "i"
        else:
            a = pick("f")
            if c < 0.5 and a is not None:
                o = pick("f")
                st, out = ("where", None, j, a, o if o is not None else scalar([-0.0, math.nan, 2.0])), "f"
            else:
                dt = r.choice(["float32", "int32", "float16"])
                st, out = ("to", dt, j), KIND[dt]
        steps.append(st)
        kinds.append(out)
    return steps, sorted({len(steps) - 1, r.randrange(len(steps))})


def apply(T, st, xs, dev):
    """step `st` on the values xs (one per index in st[2:]) in module T (torch or webtorch)"""
    op, dt = st[0], st[1]
    it = iter(xs)
    args = [a[1] if isinstance(a, tuple) else next(it) for a in st[2:]]
    x = args[0]
    if x.dtype == T.float16 and isinstance(args[-1], float):   # (which ops round it first: ops/, not fusion)
        args[-1] = float(np.float16(args[-1]))
    if op == "to":
        if dt in ("int32", "int64", "uint8") and x.is_floating_point():   # in range: no UB
            x = T.nan_to_num(x, 0.0, 1000.0, -1000.0).clamp(-1000, 1000)
        if dt == "uint8" and x.dtype != T.bool:
            x = x.abs().clamp(max=255)
        return x.to(getattr(T, dt))
    if op == "square":
        return x * x
    if op == "where":
        return T.where(x.to(T.bool), args[1], args[2])
    if len(args) == 2 and not isinstance(args[1], T.Tensor) and \
            op in ("maximum", "minimum", "fmax", "fmin", "atan2", "hypot", "copysign"):
        args[1] = T.tensor(args[1], dtype=x.dtype if x.is_floating_point() else T.float32, device=dev)
    return getattr(T, op)(*args)


def run(steps, keep):
    vals = []
    for st in steps:
        if st[0] == "input":
            vals.append(wt.tensor(np.array(st[3], dtype=np.float64).reshape(st[1]).astype(st[2]), device="webgpu"))
        else:
            vals.append(apply(wt, st, [vals[a] for a in st[2:] if not isinstance(a, tuple)], "webgpu"))
    return [vals[k].cpu().numpy() for k in keep]


def close(got, ref, what, free):
    """got equals ref to rounding, but where `free` (a NaN's sign read: PyTorch's own kernels
    disagree on it)"""
    assert got.dtype == ref.dtype and got.shape == ref.shape, (what, got.dtype, ref.dtype, got.shape, ref.shape)
    got, ref = got.reshape(-1)[~free.reshape(-1)], ref.reshape(-1)[~free.reshape(-1)]
    if ref.dtype.kind != "f":
        assert np.array_equal(got, ref), (what, got, ref)
        return
    g, r = got.astype(np.float64), ref.astype(np.float64)
    ok = np.isclose(g, r, rtol=4e-3 if ref.dtype == np.float16 else 1e-4, atol=1e-30, equal_nan=True)
    ok |= (np.abs(r) < 1e-37) & (np.abs(g) < 1e-37)   # subnormal results: PyTorch's own kernels differ
    if what[1] not in ("maximum", "minimum"):           # (their sign of zero differs with PyTorch's size)
        ok &= ~((g == 0) & (r == 0)) | (np.signbit(g) == np.signbit(r))
    assert ok.all(), (what, g[~ok][:4], r[~ok][:4])


def same_bits(a, b):
    """equal bit for bit, but for NaN's sign and payload (PyTorch leaves them unspecified)"""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind != "f":
        return a.tobytes() == b.tobytes()
    nan = np.isnan(a)
    return np.array_equal(nan, np.isnan(b)) and a[~nan].tobytes() == b[~nan].tobytes()


def check(seed):
    """chain(seed): each op vs PyTorch's on the unfused values; fused == unfused"""
    steps, keep = chain(seed)
    webgpu.set_fusion(False)
    unfused = run(steps, range(len(steps)))
    for k, st in enumerate(steps):
        if st[0] != "input":
            xs = [torch.from_numpy(unfused[a]) for a in st[2:] if not isinstance(a, tuple)]
            ref = apply(torch, st, xs, "cpu").numpy()
            sign = {"signbit": 0, "copysign": 1}.get(st[0])
            free = np.broadcast_to(xs[sign].isnan().numpy(), ref.shape) if sign is not None and sign < len(xs) \
                else np.zeros(ref.shape, bool)
            close(unfused[k], ref, (seed, *st[:2]), free)
    webgpu.set_fusion(True)
    fused = run(steps, keep)
    for k, f in zip(keep, fused):
        assert same_bits(f, unfused[k]), (seed, k, steps[k][:2], f, unfused[k])


@pytest.mark.parametrize("block", range(2))
def test_fused_chains_equal_unfused_and_pytorch(block):
    old = webgpu.set_fusion(False)
    try:
        for seed in range(block * 10, block * 10 + 10):
            check(seed)
    finally:
        webgpu.set_fusion(old)
