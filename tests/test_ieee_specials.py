"""NaN, ±inf and -0.0 through every element-wise op, every reduction and fused chains, against
PyTorch on cpu, cpu-pure and webgpu. On webgpu each case runs twice: with lazy element-wise
fusion (the generated kernel chains ops in one shader, where a compiler that assumes finite
floats would fold `x - x` or `(x + y) - y`) and without it."""
import functools
import math

import numpy as np
import torch

from _records import kernels
from core_util import fusion, skip_unsupported, to_torch, to_wt, wt
from webtorch.ops import registry

S = [math.nan, math.inf, -math.inf, -0.0, 0.0, 0.5, -2.0]
X = np.array(S, np.float32)
XC, YR = X.reshape(-1, 1), X.reshape(1, -1)               # all pairs by broadcasting
ROWS = np.array([[1, math.nan, 2], [math.inf, 1, 2], [math.inf, -math.inf, 1], [-0.0, -0.0, -0.0],
                 [1, 2, 3], [-math.inf, -math.inf, -math.inf]], np.float32)

# every declared element-wise unary op (bitwise_not takes integers only), and composites
UNARY = [op for op, d in registry.ELEMENTWISE.items() if d.kind == "unary" and op != "bitwise_not"] + [
    "square", "nan_to_num"]
# every binary kernel on floats (the records: primitives and fast paths), and decomposed binary ops
BINARY = kernels(2, "f", "wgsl") + ["le", "gt", "hypot"]
CHAINS = {
    "x - x": lambda T, x, y: x - x,
    "x + (-x)": lambda T, x, y: x + (-x),
    "(x + y) - y": lambda T, x, y: (x + y) - y,
    "(x * y) / y": lambda T, x, y: (x * y) / y,
    "x * 0": lambda T, x, y: x * 0,
    "0 * x + 1": lambda T, x, y: 0 * x + 1,
    "exp(x) - exp(x)": lambda T, x, y: x.exp() - x.exp(),
    "x / x": lambda T, x, y: x / x,
    "x == x": lambda T, x, y: x == x,
    "x != x": lambda T, x, y: x != x,
    "x < x": lambda T, x, y: (x < x) | (x >= x),
    "max(x, x) - x": lambda T, x, y: T.maximum(x, x) - x,
    "where(x == x, x - x, y)": lambda T, x, y: T.where(x == x, x - x, y),
    "relu(x) * 1 - x": lambda T, x, y: (x.relu() * 1) - x,
    "-(-x) + 0": lambda T, x, y: -(-x) + 0,
    "(x - y) + y": lambda T, x, y: (x - y) + y,
    "x*y - y*x": lambda T, x, y: x * y - y * x,
}


# which of two equal zeros max/min/clamp return, and whether a running sum of -0.0 starts
# from +0.0 (PyTorch's CPU cumsum), is not specified by IEEE or PyTorch's docs and differs
# between PyTorch's own kernels: for these the sign of a zero is not compared
ZERO_SIGN_FREE = ("maximum", "minimum", "fmax", "fmin", "clamp", "max(", "cumsum")


def same(w, t, what):
    """NaN where torch has NaN, equal infinities, the sign of zero, finite values close."""
    a = w.detach().cpu().numpy().astype("float64")
    b = t.detach().numpy().astype("float64")
    assert a.shape == b.shape and str(w.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], what
    assert np.array_equal(np.isnan(a), np.isnan(b)), f"{what}: NaN at {np.isnan(a)} vs torch {np.isnan(b)}\n{a}\n{b}"
    ok = ~np.isnan(b)
    assert np.array_equal(a[ok & np.isinf(b)], b[ok & np.isinf(b)]), f"{what}: infinities differ\n{a}\n{b}"
    z = ok & (b == 0)
    assert what.startswith(ZERO_SIGN_FREE) or \
         np.array_equal(np.signbit(a[z]), np.signbit(b[z])), f"{what}: sign of zero differs\n{a}\n{b}"
    np.testing.assert_allclose(a[ok], b[ok], rtol=3e-4, atol=1e-5, err_msg=what)


def modes(device):
    return (True, False) if device == "webgpu" else (True,)


def run(device, fn, *arrays, what):
    t = fn(torch, *[to_torch(a) for a in arrays])
    for on in modes(device):
        with fusion(device, on):
            w = fn(wt, *[to_wt(a, device) for a in arrays])
            for k, (wi, ti) in enumerate(zip(w, t) if isinstance(t, tuple) else [(w, t)]):
                same(wi, ti, f"{what} (fusion={on}) [{k}]")


def test_unary_specials(device):
    for op in UNARY:  # a torch.special-only op is declared as special_<name>
        run(device, lambda T, x: (getattr(T.special, op[8:]) if op.startswith("special_") else getattr(T, op))(x), X,
            what=op)


def test_binary_specials(device):
    for op in BINARY:  # (special_zeta: torch.special.zeta)
        run(device, lambda T, x, y: (getattr(T.special, op[8:]) if op.startswith("special_") else getattr(T, op))(x, y),
            XC, YR, what=op)
    for s in (0.0, -0.0, math.nan, math.inf):          # python scalars travel as parameters
        run(device, lambda T, x: (x * s, x + s, x - s, s / x), X, what=f"scalar {s}")


def test_ternary_specials(device):
    b = np.array([math.nan, -1.0, 0.0, math.inf], np.float32).reshape(1, -1, 1)
    c = XC.reshape(1, 1, -1)
    cases = {
        "where": lambda T, x, y, z: T.where(x > 0, y, z),
        "clamp": lambda T, x, y, z: T.clamp(x, min=y, max=z),
        "scalar-bound clamp (x kept at a tie)": lambda T, x, y, z: (x.clamp(-1, 1), x.clamp(min=0.0), x.clamp(max=math.nan)),
        "lerp": lambda T, x, y, z: T.lerp(x, y, z),
        "lerp scalar": lambda T, x, y, z: T.lerp(x, y, 0.5),
        "addcmul": lambda T, x, y, z: T.addcmul(x, y, z, value=2.0),
        "addcdiv": lambda T, x, y, z: T.addcdiv(x, y, z, value=-1.0),
    }
    for name, fn in cases.items():
        run(device, fn, XC.reshape(-1, 1, 1), b, c, what=name)


def test_reductions_specials(device):
    for name in ("sum", "mean", "prod", "amax", "amin", "argmax", "argmin", "logsumexp", "nansum",
                 "var", "std", "norm"):
        def fn(T, x, name=name):
            g = getattr(T, name)
            if name == "norm":
                return g(x, dim=1), g(x, p=1, dim=1), g(x, p=math.inf, dim=1)
            if name in ("argmax", "argmin"):
                return g(x, dim=1), g(x)
            return g(x, dim=1), g(x) if name != "logsumexp" else g(x, dim=0)
        run(device, fn, ROWS, what=name)
    run(device, lambda T, x: (x.max(), x.min(), x.max(dim=1)[0], x.min(dim=1)[0], x.max(dim=1)[1],
                              x.min(dim=1)[1]), ROWS, what="max/min")
    for name in ("cumsum", "cumprod", "logcumsumexp"):
        run(device, lambda T, x, name=name: getattr(T, name)(x, dim=1), ROWS, what=name)
    run(device, lambda T, x: (T.cummax(x, dim=1)[0], T.cummax(x, dim=1)[1], T.cummin(x, dim=1)[0],
                              T.cummin(x, dim=1)[1]), ROWS, what="cummax/cummin")
    for name in ("softmax", "log_softmax"):
        run(device, lambda T, x, name=name: getattr(T.nn.functional, name)(x, dim=1), ROWS, what=name)


ACTIVATIONS = ["relu6", "hardtanh", "elu", "selu", "celu", "gelu", "softshrink", "hardshrink", "leaky_relu", "silu",
               "mish", "hardswish", "hardsigmoid", "softplus", "logsigmoid"]


def test_activation_specials(device):  # the sign of zero included: elu(-0.0) is -0.0, gelu(-0.0) 0.0
    for name in ACTIVATIONS:
        run(device, lambda T, x: getattr(T.nn.functional, name)(x), X, what=name)
    # float16 decompositions computed in float32 and rounded once, as PyTorch's kernels (sinc(-1) is -0.0,
    # hardswish(60000) is 60000, not inf)
    skip_unsupported(device, "float16")
    h = np.array([-1.0, -2.0, 60000.0, 0.5, 2.5, -3.5, math.inf, math.nan], np.float16)
    for name in ("sinc", "nn.functional.hardswish", "nn.functional.elu", "nn.functional.silu", "nn.functional.mish",
                 "nn.functional.softplus", "nn.functional.logsigmoid", "nn.functional.hardsigmoid"):
        run(device, lambda T, x: functools.reduce(getattr, name.split("."), T)(x), h, what="float16 " + name)


def test_fused_chains_keep_specials(device):
    for name, fn in CHAINS.items():
        run(device, fn, XC, YR, what=name)


def test_long_fused_chain_keeps_nan(device):
    def fn(T, x, y):
        z = x
        for k in range(20):
            z = (z + y) - y if k % 2 else z * 1.0 - x + x
        return z
    run(device, fn, XC, YR, what="20-step chain")


# gradients at special points, under an upstream gradient of 1, -1 and inf: a zero gradient is an
# exact 0.0 where PyTorch masks (where / masked_fill), never g * 0 (-0.0 under -1, NaN under inf),
# and NaN where PyTorch's formula gives NaN (amax over a NaN)
GRADS = {
    "floor/ceil/round/trunc/sign": lambda T, x: x.floor() + x.ceil() + x.round() + x.trunc() + x.sign(),
    "relu": lambda T, x: x.relu(),
    "relu6/hardtanh": lambda T, x: (T.nn.functional.relu6(x), T.nn.functional.hardtanh(x)),
    "softshrink/hardshrink": lambda T, x: (T.nn.functional.softshrink(x), T.nn.functional.hardshrink(x)),
    "clamp": lambda T, x: (x.clamp(-1, 1), x.clamp(min=0.5)),
    "asin(clamp(x, 1, 2) - 3)": lambda T, x: T.asin(T.clamp(x, 1, 2) - 3),
    "pow": lambda T, x: (x.pow(0), T.pow(0.0, x)),
    "amax/amin": lambda T, x: (x.reshape(-1, 1).expand(-1, 2).amax(1), x.amin(), x.reshape(-1, 1).amin(0)),
    "max()/min()": lambda T, x: (x.max(), x.min(), x[3:].max()),
    "std/norm at zeros": lambda T, x: (x[3:5].std(), x[3:5].norm()),
    "nansum": lambda T, x: T.nansum(x),
    "prod": lambda T, x: (x.prod(), x[3:].prod(), x.reshape(-1, 1).expand(-1, 2).prod(1), x[5:].prod(0)),
}
GRADS2 = {
    "maximum/minimum": lambda T, x, y: (T.maximum(x, y), T.minimum(x, y)),
    "fmax/fmin": lambda T, x, y: (T.fmax(x, y), T.fmin(x, y)),
    "atan2": lambda T, x, y: T.atan2(x, y),
    "copysign": lambda T, x, y: T.copysign(x, y),
    "pow(x, y)": lambda T, x, y: T.pow(x, y),
    "div": lambda T, x, y: x / y,
    "xlogy/logaddexp": lambda T, x, y: (T.xlogy(x, y), T.logaddexp(x, y)),
}


def grad_run(device, fn, *arrays, what):
    for g in (1.0, -1.0, math.inf):
        def grads(T, xs):
            out = fn(T, *xs)
            out = out if isinstance(out, tuple) else (out,)
            return T.autograd.grad(out, xs, [T.full_like(o, g) for o in out], allow_unused=True)
        tx = [to_torch(a).requires_grad_() for a in arrays]
        t = grads(torch, tx)
        for on in modes(device):
            with fusion(device, on):
                w = grads(wt, [to_wt(a, device).requires_grad_() for a in arrays])
                for k, (wi, ti) in enumerate(zip(w, t)):
                    same(wi, ti, f"d {what} / d input {k} (g={g}, fusion={on})")


def test_gradient_specials(device):
    for name, fn in GRADS.items():
        grad_run(device, fn, X, what=name)
    for name, fn in GRADS2.items():
        grad_run(device, fn, XC, YR, what=name)


def test_edge_values(device):
    """hypot without overflow or underflow in its squares (float16 in float32, as PyTorch's), logaddexp of
    equal infinities, xlogy with a negative number, logcumsumexp through -inf; std/var of huge finite values
    (PyTorch's CPU kernel accumulates in double: finite std, inf var; webgpu has no float64 to do so)."""
    big = np.array([3e38, 1e-30, 0.0, 1e-40, math.inf, math.nan, -3.0, -0.0], np.float32)
    run(device, lambda T, a, b: (T.hypot(a, b), T.logaddexp(a, b)), big.reshape(-1, 1), big.reshape(1, -1),
        what="hypot/logaddexp")
    run(device, lambda T, x: (T.xlogy(x, -1.0), T.xlogy(x, 0.5), T.logcumsumexp(x, 0)), big, what="xlogy/logcumsumexp")
    skip_unsupported(device, "float16")
    h = np.array([1e-4, 60000.0, 0.0, 3.0], np.float16)
    run(device, lambda T, a: T.hypot(a, a.flip(0)), h, what="hypot float16")
    if device != "webgpu":
        rows = np.array([[3e38, -3e38, 1e38], [1.0, 2.0, 4.0]], np.float32)
        run(device, lambda T, x: (x.std(1), x.var(1), x.std(), T.std_mean(x, 1)[0]), rows, what="std/var")
