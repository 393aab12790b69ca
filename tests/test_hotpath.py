"""The element-wise hot path (ops/_hotpath.py) against the general path: the same random op sequences run
with the hot path on and off must give the same bits, dtypes, requires_grad, grad_fn names, version
counters, errors and gradients, on every device (webgpu: lazy fusion included)."""
import math
import random

import pytest

import webtorch as torch
from webtorch.ops import _hotpath

BINARY = [
    lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / b, lambda a, b: b + a,
    lambda a, b: b * a, lambda a, b: torch.add(a, b), lambda a, b: torch.sub(a, b), lambda a, b: a.mul(b),
    lambda a, b: a.div(b), lambda a, b: torch.div(a, b, rounding_mode="floor"), lambda a, b: a.add(b, alpha=2),
    lambda a, b: torch.maximum(a, b), lambda a, b: torch.atan2(a, b), lambda a, b: a.true_divide(b),
]
UNARY = ["exp", "sigmoid", "relu", "tanh", "neg", "abs", "sin", "floor", "reciprocal", "rsqrt", "log1p", "erf",
         "frac", "sign", "isnan", "logical_not", "sqrt"]
NUMBERS = [2, -1, 0.5, -0.0, math.inf, math.nan, True, 3 << 60, 1e30]


def _pool(rng, dev):
    """Tensors of the kinds the hot path takes and the kinds it must leave to the general path."""
    g = torch.Generator().manual_seed(rng.randrange(1 << 30))
    f = torch.randn(4, 3, generator=g).to(dev)
    ts = [f, torch.randn(4, 3, generator=g).to(dev), torch.randn(1, 3, generator=g).to(dev),
          torch.randn(3, generator=g).to(dev), torch.randn((), generator=g).to(dev), f.t().contiguous().t(),
          torch.randn(3, 4, generator=g).to(dev).t(), f[1:3], torch.randint(-3, 4, (4, 3), generator=g).to(dev),
          torch.randint(0, 2, (4, 3), generator=g).to(dev).bool(),
          torch.randn(4, 3, generator=g).to(dev).requires_grad_(), torch.randn(4, 3, generator=g).to(dev) * 0,
          torch.empty(0, 3, device=dev)]
    ts.append(ts[10] * 2)  # a non-leaf with a graph
    ts.append(ts[10][0])   # a view of a leaf that requires grad
    if dev == "cpu":
        ts += [torch.randn(4, 3, generator=g).double(), torch.randn(4, 3, generator=g).half()]
    return ts


def _run(seed, dev, steps=40):
    """A random op sequence; -> what each step gave (value bits, dtype, requires_grad, grad_fn, version)
    or its error, and the gradients of the leaves."""
    rng = random.Random(seed)
    ts = _pool(rng, dev)
    out = []
    for _ in range(steps):
        a = rng.choice(ts)
        try:
            with torch.no_grad() if rng.random() < 0.2 else torch.enable_grad():
                if rng.random() < 0.5:
                    r = rng.choice(BINARY)(a, rng.choice(ts + NUMBERS))
                else:
                    r = getattr(a, rng.choice(UNARY))()
        except Exception as e:  # the same error either way
            out.append((type(e).__name__, str(e)))
            continue
        out.append((r.detach().cpu().tolist(), r.dtype, r.shape, r.requires_grad,
                    r.grad_fn and r.grad_fn.name(), r._version, a._version))
        if r.shape and r.numel() and r.dtype.is_floating_point and rng.random() < 0.5:
            ts.append(r)
    loss = sum(t.float().sum() for t in ts if t.requires_grad)
    loss.backward()
    out.append([t.grad.cpu().tolist() if t.grad is not None else None for t in ts if t.is_leaf])
    return out


def _same(x, y):
    """Equal, NaN included, -0.0 told from 0.0."""
    if isinstance(x, (list, tuple)):
        return type(x) is type(y) and len(x) == len(y) and all(_same(a, b) for a, b in zip(x, y))
    if isinstance(x, float) and isinstance(y, float):
        return (math.isnan(x) and math.isnan(y)) or (x == y and math.copysign(1, x) == math.copysign(1, y))
    return x == y


@pytest.fixture
def general_path():
    yield lambda on: _hotpath.set_enabled(on)
    _hotpath.set_enabled(True)


@pytest.mark.parametrize("seed", range(3))
def test_hot_path_matches_general_path(device, seed, general_path):
    fast = _run(seed, device)
    general_path(False)
    slow = _run(seed, device)
    assert len(fast) == len(slow)
    for i, (f, s) in enumerate(zip(fast, slow)):
        assert _same(f, s), f"step {i}: hot path {f} vs general path {s}"


def test_hot_path_is_taken(device):
    """x + y, x * 2, x / y, x.exp() of plain float tensors take it (no general path's checks)."""
    x, y = torch.rand(16, device=device), torch.rand(16, device=device)
    for f in (lambda: x + y, lambda: x * 2, lambda: x / y, lambda: x.exp(), lambda: x - 1.5, lambda: x.sigmoid()):
        assert _fast_calls(f) == 1
    w = torch.rand(16, device=device, requires_grad=True)
    assert _fast_calls(lambda: w * y) == 0  # a graph to record
    assert (w * y).grad_fn.name() == "MulBackward0"


def _fast_calls(f):
    calls = []
    real = _hotpath._compute
    _hotpath._compute = lambda *a: calls.append(1) or real(*a)
    try:
        f()
    finally:
        _hotpath._compute = real
    return len(calls)
