"""Core tensor library vs PyTorch: dtypes and type promotion, creation, random sampling."""
import itertools

import numpy as np
import pytest
import torch

from core_util import wt, cmp, raises_like, check_same, skip_unsupported, arr, DTYPES, tdt, wdt, webgpu_has_f16

PROMO_DTYPES = ["float32", "float64", "float16", "int32", "int64", "bool", "uint8"]


# ---- dtypes & promotion ------------------------------------------------------------------------
def test_dtype_objects():
    for n in DTYPES:
        d, t = wdt(n), tdt(n)
        assert repr(d) == repr(t)
        assert d.is_floating_point == t.is_floating_point
        assert d.is_signed == t.is_signed
        assert d.itemsize == t.itemsize
    assert wt.float is wt.float32 and wt.double is wt.float64 and wt.half is wt.float16
    assert wt.long is wt.int64 and wt.int is wt.int32 and wt.bool is not bool


@pytest.mark.parametrize("a", PROMO_DTYPES)
def test_promote_types(a):
    for b in PROMO_DTYPES:
        assert repr(wt.promote_types(wdt(a), wdt(b))) == repr(torch.promote_types(tdt(a), tdt(b))), (a, b)


def test_default_dtype():
    assert wt.get_default_dtype() is wt.float32
    try:
        wt.set_default_dtype(wt.float64)
        torch.set_default_dtype(torch.float64)
        for data in ([1.5, 2.0], 3.0, [1, 2]):
            assert repr(wt.tensor(data).dtype) == repr(torch.tensor(data).dtype)
        assert wt.zeros(2).dtype is wt.float64
        assert wt.arange(3.0).dtype is wt.float64
        assert (wt.tensor([1, 2]) * 1.5).dtype is wt.float64
        assert (wt.tensor([1, 2]) / 2).dtype is wt.float64
    finally:
        wt.set_default_dtype(wt.float32)
        torch.set_default_dtype(torch.float32)
    assert wt.zeros(2).dtype is wt.float32
    with pytest.raises(TypeError):
        torch.set_default_dtype(torch.int64)
    with pytest.raises(TypeError, match="floating"):
        wt.set_default_dtype(wt.int64)


@pytest.mark.parametrize("a", PROMO_DTYPES)
def test_promotion_in_ops(device, a):
    skip_unsupported(device, a)
    x = arr((3,), a, 1, 4)
    for b in PROMO_DTYPES:
        if device == "webgpu" and b in ("float64",) or (b == "float16" and device == "webgpu" and not webgpu_has_f16()):
            continue
        y = arr((3,), b, 1, 4)
        z0 = arr((), b, 1, 4)
        cmp(device, lambda T, x, y: x + y, x, y)
        cmp(device, lambda T, x, y: x * y, x, y)
        cmp(device, lambda T, x, y: x + y, x, z0)  # dimensioned tensors win over 0-d of the same kind
        cmp(device, lambda T, x, y: x == y, x, y)


@pytest.mark.parametrize("a", PROMO_DTYPES)
def test_promotion_python_scalars(device, a):
    skip_unsupported(device, a)
    x = arr((4,), a, 1, 4)
    for s in (True, 2, 2.5):
        cmp(device, lambda T, x: x + s, x)
        cmp(device, lambda T, x: s * x, x)
        cmp(device, lambda T, x: x / s, x)
        cmp(device, lambda T, x: x > s, x)
    assert repr(wt.result_type(wt.tensor([1, 2]), 1.0)) == repr(torch.result_type(torch.tensor([1, 2]), 1.0))


def test_float64_on_webgpu_raises_type_error():
    with pytest.raises(TypeError, match="float64"):
        wt.zeros(2, dtype=wt.float64, device="webgpu")
    with pytest.raises(TypeError, match="float64"):
        wt.tensor([1.0, 2.0], dtype=wt.float64).to("webgpu")
    with pytest.raises(TypeError, match="float64"):
        wt.ones(2, device="webgpu").double()


def test_webgpu_float16_matches_adapter():
    if webgpu_has_f16():
        x = wt.tensor([1.5, 2.25], dtype=wt.float16, device="webgpu")
        assert (x + x).tolist() == [3.0, 4.5]
    else:
        with pytest.raises(TypeError, match="float16"):
            wt.zeros(2, dtype=wt.float16, device="webgpu")


# ---- creation -------------------------------------------------------------------------------
@pytest.mark.parametrize("data", [
    [1.0, 2.5], [[1, 2], [3, 4]], [True, False], 3, 2.5, True, [], [[]], [1, 2.0], [[1.0], [2.0]],
    [True, 2], (1, 2, 3),
])
def test_tensor_from_python(device, data):
    cmp(device, lambda T: T.tensor(data, device=device if T is wt else "cpu"))


@pytest.mark.parametrize("data", [[1.5, 2**70], [2**70, 1.5], [1.0, -2**64], [1j, 2**70]])
def test_tensor_from_python_ints_past_int64(device, data):
    """floats with ints past int64's range (numpy keeps such a list as objects) convert as PyTorch's: [1.5, 2**70]
    gave [1.0, 0.0] on cpu, each number wrapped as a uint64; ints alone past the range raise PyTorch's ValueError"""
    cmp(device, lambda T: T.tensor(data, device=device if T is wt else "cpu"))
    for bad in ([2**63], [-2**63 - 1], [1, 2**70], [1.5, 2**1100]):
        raises_like(device, lambda T: T.tensor(bad, device=device if T is wt else "cpu"), phrase="Overflow"
                    if isinstance(bad[0], int) else "too large")


@pytest.mark.parametrize("dt", ["float32", "float16", "int64", "uint8", "bool", "complex64"])
def test_tensor_of_python_complex(device, dt):
    """a Python complex converts to complex and bool dtypes only; to the others PyTorch raises TypeError, even for
    2+0j (which converted to [2.0, 3.0] here, and 1j raised RuntimeError)"""
    skip_unsupported(device, dt)
    for data in ([2 + 0j, 3], [[1j]], [True, 1j]):
        f = lambda T: T.tensor(data, dtype=getattr(T, dt), device=device if T is wt else "cpu")  # noqa: E731
        if dt in ("bool", "complex64"):
            cmp(device, f)
        else:
            raises_like(device, f, phrase="complex")


@pytest.mark.parametrize("dt", DTYPES)
def test_tensor_dtype_arg(device, dt):
    skip_unsupported(device, dt)
    for data in ([0, 1, 2], [1.7, -0.2, 0.0], [True, False]):
        if dt == "uint8" and data[1] < 0:
            data = [1.7, 0.2, 0.0]
        cmp(device, lambda T: T.tensor(data, dtype=getattr(T, dt), device=device if T is wt else "cpu"))


@pytest.mark.parametrize("dt", DTYPES)
def test_from_numpy_and_as_tensor(device, dt):
    skip_unsupported(device, dt)
    a = arr((2, 3), dt)
    for f in (lambda T: T.from_numpy(a.copy()), lambda T: T.as_tensor(a.copy()), lambda T: T.tensor(a.copy())):
        got = f(wt)
        check_same(got, f(torch))
        if device != "cpu":
            got = got.to(device)
            check_same(got.cpu(), f(torch))
    # a non-contiguous numpy view
    cmp(device, lambda T: T.tensor(a[:, ::2].T.copy()))
    assert wt.as_tensor(wt.ones(2)).dtype is wt.float32


def test_tensor_from_tensor_and_numpy_scalars(device):
    cmp(device, lambda T: T.tensor(np.float64(2.5)))
    cmp(device, lambda T: T.tensor([np.int64(1), np.int64(2)]))
    cmp(device, lambda T, x: T.tensor(x.tolist(), device=x.device), arr((3,)))
    cmp(device, lambda T, x: T.as_tensor(x, dtype=T.int32), arr((3,)))


@pytest.mark.parametrize("dt", [None, "float32", "float64", "float16", "int32", "int64", "bool", "uint8"])
def test_fill_creators(device, dt):
    skip_unsupported(device, dt)
    dev = lambda T: device if T is wt else "cpu"  # noqa: E731
    kw = lambda T: ({"dtype": getattr(T, dt)} if dt else {})  # noqa: E731
    cmp(device, lambda T: T.zeros(2, 3, device=dev(T), **kw(T)))
    cmp(device, lambda T: T.zeros((2, 3), device=dev(T), **kw(T)))
    cmp(device, lambda T: T.ones([4], device=dev(T), **kw(T)))
    cmp(device, lambda T: T.ones((), device=dev(T), **kw(T)))
    cmp(device, lambda T: T.zeros(0, 3, device=dev(T), **kw(T)))
    cmp(device, lambda T: T.full((2, 2), 7, device=dev(T), **kw(T)))
    cmp(device, lambda T: T.eye(3, device=dev(T), **kw(T)))
    cmp(device, lambda T: T.eye(2, 4, device=dev(T), **kw(T)))
    e = wt.empty(2, 3, device=device, **kw(wt))
    assert tuple(e.shape) == (2, 3) and e.dtype is (wdt(dt) if dt else wt.float32)


def test_full_infers_dtype(device):
    for v in (1, 1.5, True):
        cmp(device, lambda T: T.full((2,), v, device=device if T is wt else "cpu"))


@pytest.mark.parametrize("dt", ["float32", "int64", "bool", "uint8", "int32", "float64"])
def test_like_creators(device, dt):
    skip_unsupported(device, dt)
    x = arr((2, 3), dt)
    cmp(device, lambda T, x: T.zeros_like(x), x)
    cmp(device, lambda T, x: T.ones_like(x), x)
    cmp(device, lambda T, x: T.full_like(x, 1), x)
    cmp(device, lambda T, x: T.ones_like(x, dtype=T.float32), x)
    cmp(device, lambda T, x: x.new_zeros(2), x)
    cmp(device, lambda T, x: x.new_ones((1, 2)), x)
    cmp(device, lambda T, x: x.new_full((2,), 1), x)
    cmp(device, lambda T, x: x.new_tensor([1, 0]), x)
    e = wt.empty_like(wt.tensor(x).to(device))
    assert tuple(e.shape) == (2, 3) and e.dtype is wdt(dt) and e.device.type == wt.device(device).type
    assert tuple(wt.tensor(x).new_empty((4,)).shape) == (4,)


@pytest.mark.parametrize("args", [(5,), (2, 7), (1, 2, 0.5), (0.0, 1.0, 0.25), (5, 0, -1), (-3.0, 3.0, 1.5),
                                  (0,), (3, 3), (1.0, 2.0, 0.3)])
def test_arange(device, args):
    cmp(device, lambda T: T.arange(*args, device=device if T is wt else "cpu"))


def test_arange_dtype_and_errors(device):
    cmp(device, lambda T: T.arange(5, dtype=T.float32, device=device if T is wt else "cpu"))
    cmp(device, lambda T: T.arange(0, 6, 2, dtype=T.int32, device=device if T is wt else "cpu"))
    raises_like(device, lambda T: T.arange(0, 5, 0), phrase="step must be nonzero")
    raises_like(device, lambda T: T.arange(5, 0, 1), phrase="upper bound and lower bound inconsistent")


@pytest.mark.parametrize("args", [(0, 1, 5), (-2.0, 3.0, 7), (1, 1, 3), (0, 10, 1), (0, 1, 0), (3, -3, 4),
                                  (0.0, 1.0, 11)])
def test_linspace(device, args):
    cmp(device, lambda T: T.linspace(*args, device=device if T is wt else "cpu"))
    cmp(device, lambda T: T.linspace(*args, dtype=T.int64, device=device if T is wt else "cpu"))



@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_linspace_logspace_bit_for_bit(device, dtype):
    """PyTorch's CPU kernels: linspace in c10's float16 / bfloat16 arithmetic (each operation rounded) and in
    float32 / float64 fused multiply-adds, from both ends; logspace's exponents and pow in double."""
    if device == "webgpu" and (dtype == "float64" or dtype == "float16" and not webgpu_has_f16()):
        pytest.skip(f"no {dtype} on this webgpu adapter")
    dev = "webgpu" if device == "webgpu" else "cpu"
    for s, e, n in itertools.product((0, 1, -3.3, 0.1, -100), (1, 0.7, -5.5, 1000.25), (2, 7, 17, 64, 129, 1000)):
        for fn, scale in (("linspace", 1), ("logspace", 50)):
            t = getattr(torch, fn)(s / scale, e / scale, n, dtype=tdt(dtype))
            w = getattr(wt, fn)(s / scale, e / scale, n, dtype=wdt(dtype), device=dev)
            assert w.cpu().to(wt.float64).tolist() == t.double().tolist(), (fn, s, e, n)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_arange_fractional_step_half_bit_for_bit(device, dtype):
    """PyTorch's CPU arange kernel in float16 / bfloat16 with a fractional start or step: float fused multiply-adds,
    32-byte vectors each from its rounded first value on (integral ones: the backends' kernels, exact either way)."""
    if device == "webgpu" and dtype == "float16" and not webgpu_has_f16():
        pytest.skip("no float16 on this webgpu adapter")
    dev = "webgpu" if device == "webgpu" else "cpu"
    for s, e, st in itertools.product((0, 0.1, -3.3, 1), (5, 10.7, 100), (0.1, 0.3, 0.01, 1, 2)):
        t = torch.arange(s, e, st, dtype=tdt(dtype))
        w = wt.arange(s, e, st, dtype=wdt(dtype), device=dev)
        assert w.cpu().to(wt.float64).tolist() == t.double().tolist(), (s, e, st)

# ---- random -------------------------------------------------------------------------------------
def _dev(device):
    return "webgpu" if device == "webgpu" else "cpu"


def test_rand_shapes_dtypes_ranges(device):
    wt.manual_seed(0)
    for f, lo, hi in ((wt.rand, 0, 1),):
        x = f(4000, device=device)
        assert tuple(x.shape) == (4000,) and x.dtype is wt.float32 and x.device.type == _dev(device)
        a = x.cpu().numpy()
        assert a.min() >= lo and a.max() < hi
        assert abs(a.mean() - 0.5) < 0.03 and abs(a.var() - 1 / 12) < 0.01
    z = wt.randn(2, 3, 4, device=device)
    assert tuple(z.shape) == (2, 3, 4) and z.dtype is wt.float32
    n = wt.randn(5000, device=device).cpu().numpy()
    assert abs(n.mean()) < 0.06 and abs(n.std() - 1) < 0.05
    assert wt.rand((), device=device).shape == ()
    assert wt.rand(0, 3, device=device).shape == (0, 3)
    if device != "webgpu":
        assert wt.rand(3, dtype=wt.float64).dtype is wt.float64
    raises_like(device, lambda T: T.rand(3, dtype=T.int64), phrase="not implemented for 'Long'")


def test_randint_randperm(device):
    wt.manual_seed(1)
    r = wt.randint(3, 9, (3000,), device=device)
    assert r.dtype is wt.int64 and tuple(r.shape) == (3000,)
    a = r.cpu().numpy()
    assert a.min() == 3 and a.max() == 8 and set(np.unique(a)) == set(range(3, 9))
    assert abs(a.mean() - 5.5) < 0.15
    r2 = wt.randint(5, (2, 2), device=device, dtype=wt.int32)
    assert r2.dtype is wt.int32 and tuple(r2.shape) == (2, 2) and 0 <= r2.min().item() and r2.max().item() < 5
    p = wt.randperm(50, device=device)
    assert p.dtype is wt.int64 and sorted(p.tolist()) == list(range(50))
    assert p.tolist() != list(range(50))
    assert wt.randperm(0, device=device).shape == (0,)
    x = wt.zeros(3, 4, device=device, dtype=wt.int32)
    for f in (wt.rand_like, wt.randn_like):
        y = f(x.float())
        assert tuple(y.shape) == (3, 4) and y.dtype is wt.float32 and y.device == x.device
    y = wt.randint_like(x, 0, 10)
    assert y.dtype is wt.int32 and tuple(y.shape) == (3, 4)
    raises_like(device, lambda T: T.randint(5, 2, (3,)), phrase="random_ expects 'from' to be less than 'to'")


def test_same_seed_same_numbers_on_every_device(device):
    """A seed repeats its numbers on every device; the cpu device (numpy and pure Python) draws
    PyTorch's CPU numbers (mt19937), webgpu its own counter-based Philox stream."""
    def draw(dev):
        return [wt.rand(7, 5, device=dev).cpu().numpy(), wt.randn(9, device=dev).cpu().numpy(),
                wt.randint(0, 100, (11,), device=dev).cpu().numpy(), wt.randperm(13, device=dev).cpu().numpy()]
    wt.manual_seed(1234)
    a = draw(device)
    if device == "cpu":
        torch.manual_seed(1234)
        ref = [torch.rand(7, 5), torch.randn(9), torch.randint(0, 100, (11,)), torch.randperm(13)]
        for x, r in zip(a, ref):
            np.testing.assert_array_equal(x, r.numpy())
    else:  # the WGSL Philox kernel draws the words of the cpu backends' Philox primitive (webtorch/_philox.py)
        from webtorch.ops import _prims
        g = wt.Generator(device).manual_seed(99)
        u, z = wt.rand(7, 5, device=device, generator=g), wt.randn(9, device=device, generator=g)
        g.manual_seed(99)
        cpu = wt.device("cpu")
        ref = [_prims.random(shape, kind, wt.float32, cpu, g) for shape, kind in (((7, 5), "uniform"), ((9,), "normal"))]
        np.testing.assert_allclose(u.cpu().numpy(), ref[0].numpy(), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(z.cpu().numpy(), ref[1].numpy(), rtol=2e-5, atol=2e-6)
    wt.manual_seed(1234)
    for x, r in zip(draw(device), a):
        np.testing.assert_array_equal(x, r)
    wt.manual_seed(4321)
    assert not np.array_equal(wt.rand(7, 5, device=device).cpu().numpy(), a[0])


def test_generator_objects(device):
    g1 = wt.Generator(device).manual_seed(7)
    g2 = wt.Generator(device)
    g2.manual_seed(7)
    x = wt.rand(6, generator=g1, device=device)
    y = wt.rand(6, generator=g2, device=device)
    assert x.tolist() == y.tolist()
    assert wt.rand(6, generator=g1, device=device).tolist() != x.tolist()  # the stream advances
    assert g1.initial_seed() == 7
    st = g1.get_state()
    u = wt.randn(4, generator=g1, device=device).tolist()
    g1.set_state(st)
    assert wt.randn(4, generator=g1, device=device).tolist() == u
    # the global generator: get_rng_state is the CPU stream's (as torch.get_rng_state)
    wt.manual_seed(3)
    if device == "webgpu":
        return
    s = wt.get_rng_state()
    v = wt.rand(3, device=device).tolist()
    wt.set_rng_state(s)
    assert wt.rand(3, device=device).tolist() == v
    assert wt.initial_seed() == 3
    assert isinstance(torch.manual_seed(0), torch.Generator) and isinstance(wt.manual_seed(0), wt.Generator)


def test_in_place_random_fills(device):
    wt.manual_seed(5)
    x = wt.empty(2000, device=device).uniform_(-2, 3)
    a = x.cpu().numpy()
    assert a.min() >= -2 and a.max() < 3 and abs(a.mean() - 0.5) < 0.15
    n = wt.empty(2000, device=device).normal_(1.0, 2.0).cpu().numpy()
    assert abs(n.mean() - 1) < 0.2 and abs(n.std() - 2) < 0.15
    b = wt.empty(2000, device=device).bernoulli_(0.25).cpu().numpy()
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.25) < 0.05


def test_webgpu_int64_out_of_int32_range_raises():
    """WebGPU stores int64 as int32 (DESIGN.md): values that do not fit raise a clear error."""
    assert wt.tensor([2**31 - 1, -2**31], device="webgpu").tolist() == [2**31 - 1, -2**31]
    with pytest.raises(RuntimeError, match="int32"):
        wt.tensor([2**40], device="webgpu")
    with pytest.raises(RuntimeError, match="int32"):
        wt.tensor([1, -2**35]).to("webgpu")


def test_printing_widths_as_pytorch():
    """A float tensor's column width is that of its nonzero finite values (zeros, -0.0, nan and inf are padded to
    it, never widen it), in the mode the print options give, as PyTorch's _Formatter: `tensor([1., -0.])`."""
    import random
    import torch
    nan, inf = float("nan"), float("inf")
    cases = [[1.0, -0.0], [1.5, -0.0], [1 + 2j, -0.0 - 0.5j], [1.0, nan], [1.0, -inf], [-1.5, 2.25, 1e-5], [-1e9, 1.0]]
    rng = random.Random(0)
    cases += [[rng.choice([0.0, -0.0, 1.5, -2.25, 1e-6, -1e6, nan, inf, 3.0, -7.0]) for _ in range(rng.randint(1, 40))]
              for _ in range(60)]
    for sci in (None, False, True):
        torch.set_printoptions(sci_mode=sci)
        wt.set_printoptions(sci_mode=sci)
        try:
            for vals in cases:
                assert str(wt.tensor(vals)) == str(torch.tensor(vals)), vals
        finally:
            torch.set_printoptions(profile="default")
            wt.set_printoptions(profile="default")
