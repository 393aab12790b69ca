"""fmod, remainder, floor_divide, div(rounding_mode=...), `%` and `//` on floats, bit for bit against
PyTorch CPU on every backend. WGSL's float `%` rounds (a - b * trunc(a / b)); webgpu's prelude has
C's exact fmod (wfmod), which remainder and floor_divide build on as PyTorch's kernels do.

The oracle is PyTorch CPU on strided tensors, i.e. its scalar kernels (std::fmod, c10's
div_floor_floating). Its vectorized AVX kernel for contiguous float32 (Sleef's fmodf) answers NaN
where |a / b| is huge (fmod(3.4e38, 0.5) is NaN in 16-element blocks, 0.0 in the tail), so
contiguous PyTorch disagrees with itself there; webtorch gives the exact value everywhere.
float16 is compared on fmod and remainder, whose results do not depend on intermediate rounding:
PyTorch's float16 floor_divide and div(rounding_mode=...) differ between its own kernels (the
scalar one keeps c10::Half intermediates, the vectorized one float: fp16 5.3 // 1e-3 is 5296
contiguous and 5300 strided; div(5.3, 1e-3, rounding_mode='trunc') 5300 for 40 elements and 5296
for one), so there is no single PyTorch answer to match bit for bit."""
import math

import numpy as np
import pytest
import torch

from core_util import fusion, webgpu_has_f16, wt

BUG_A = [5.3, 1.0, 123.456, -7.77, 1e6, 3.0e7]       # the WGSL `%` answers here were 0.0, 0.0, ..., 2.0
BUG_B = [1e-3, 0.1, 0.7, 0.3, 1e-3, 7.1]
SPECIALS = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1e-45, -1e-45, 1.1754942e-38, 1.1754944e-38,
            3e-39, 3.4028235e38, -3.4028235e38, 1.0, -1.0, 0.5, -2.5, 7.0, 1e30, -1e-30]

OPS = {
    "fmod": lambda T, a, b: T.fmod(a, b),
    "remainder": lambda T, a, b: T.remainder(a, b),
    "floor_divide": lambda T, a, b: T.floor_divide(a, b),
    "div_floor": lambda T, a, b: T.div(a, b, rounding_mode="floor"),
    "div_trunc": lambda T, a, b: T.div(a, b, rounding_mode="trunc"),
    "%": lambda T, a, b: a % b,
    "//": lambda T, a, b: a // b,
}


def _wide(n, seed):
    """random signed values with exponents over (nearly) all of float32's range, ratios 1e-30..1e30"""
    rng = np.random.RandomState(seed)
    ea = rng.uniform(-37, 37, n)
    eb = np.clip(ea + rng.uniform(-30, 30, n), -44, 38)
    a = rng.uniform(1, 3, n) * 10.0 ** ea * rng.choice([-1, 1], n)
    b = rng.uniform(1, 3, n) * 10.0 ** eb * rng.choice([-1, 1], n)
    return a.astype(np.float32), b.astype(np.float32)


def _cases():
    s = np.array(SPECIALS, np.float32)
    wa, wb = _wide(4000, 0)
    na, nb = _wide(2000, 1)       # ratios of moderate size: the quotient's digits matter
    nb = (na / np.random.RandomState(2).uniform(-300, 300, 2000)).astype(np.float32)
    return {"bug": (np.array(BUG_A, np.float32), np.array(BUG_B, np.float32)),
            "specials": (np.repeat(s, len(s)), np.tile(s, len(s))),
            "wide": (wa, wb), "moderate": (na, nb)}


CASES = _cases()


def _same_bits(w, t, what):
    a, b = w.cpu().numpy(), t.numpy()
    assert a.dtype == b.dtype and a.shape == b.shape, what
    nan = np.isnan(b)
    assert np.array_equal(np.isnan(a), nan), f"{what}: NaN positions differ"
    bits = {np.float32: np.uint32, np.float16: np.uint16}[b.dtype.type]
    bad = np.flatnonzero((a.view(bits) != b.view(bits)) & ~nan)
    assert bad.size == 0, f"{what}: {bad.size} differ, e.g. at {bad[:5]}: {a[bad[:5]]} vs torch {b[bad[:5]]}"


def _scalar_kernel(x):
    """x as a stride-2 view: PyTorch's CPU loops take their scalar kernel, not the vectorized one"""
    return torch.stack([x, x], 1)[:, 0]


def _check(device, name, a, b, dtype, what):
    fn = OPS[name]
    t = fn(torch, _scalar_kernel(torch.from_numpy(a).to(dtype)), _scalar_kernel(torch.from_numpy(b).to(dtype)))
    for on in (True, False) if device == "webgpu" else (True,):
        with fusion(device, on):
            wd = getattr(wt, str(dtype).split(".")[-1])
            w = fn(wt, wt.tensor(a, device=device).to(wd), wt.tensor(b, device=device).to(wd))
            _same_bits(w, t, f"{what} {name} (fusion={on})")


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_float32_tensor_tensor(device, name, case):
    a, b = CASES[case]
    _check(device, name, a, b, torch.float32, case)


@pytest.mark.parametrize("name", ["fmod", "remainder", "%"])
def test_float16_tensor_tensor(device, name):
    if device == "webgpu" and not webgpu_has_f16():
        pytest.skip("the adapter lacks shader-f16: webgpu has no float16 storage")
    s = np.array([x for x in SPECIALS if abs(x) < 6e4 and (x == 0 or abs(x) > 6e-8) or not np.isfinite(x)]
                 + [5.3, 1e-3, 123.456, 0.3, 6e4, 2e-5], np.float32)
    a, b = np.repeat(s, len(s)), np.tile(s, len(s))
    _check(device, name, a, b, torch.float16, "float16")


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("scalar", [1e-3, 0.1, -0.3, 7.1, 1e-30, 1e30, math.inf, -math.inf, 0.0, -0.0, math.nan])
def test_float32_tensor_scalar(device, name, scalar):
    a = np.concatenate([CASES["bug"][0], CASES["wide"][0][:500], np.array(SPECIALS, np.float32)])
    t = OPS[name](torch, _scalar_kernel(torch.from_numpy(a)), scalar)
    for on in (True, False) if device == "webgpu" else (True,):
        with fusion(device, on):
            _same_bits(OPS[name](wt, wt.tensor(a, device=device), scalar), t, f"{name} scalar={scalar} (fusion={on})")


@pytest.mark.parametrize("name", ["fmod", "remainder"])
def test_gradient(device, name):
    a, b = CASES["bug"]
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    OPS[name](torch, _scalar_kernel(ta), _scalar_kernel(tb)).sum().backward()
    wa, wb = (wt.tensor(x, device=device, requires_grad=True) for x in (a, b))
    OPS[name](wt, wa, wb).sum().backward()
    _same_bits(wa.grad, ta.grad, f"{name} grad a")
    _same_bits(wb.grad, tb.grad, f"{name} grad b")
