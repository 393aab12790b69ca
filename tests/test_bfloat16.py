"""bfloat16 tensors against PyTorch's CPU kernels: casts, arithmetic, unary math, reductions, matmul, softmax,
layer_norm, linear, conv2d, embedding and an AdamW step (values and gradients bit-exact, compared as float32
values, where PyTorch's kernel is exact), printing, promotion, save/load interop and cpu autocast, on cpu and
cpu-pure (webgpu: test_bfloat16_webgpu.py)."""
import io
import math

import pytest
import torch

import webtorch as wt
import webtorch.nn.functional as F

BF = wt.bfloat16
CPU = pytest.mark.parametrize("device", ["cpu", "cpu-pure"], indirect=True)  # the `device` fixture, cpu only


def _data(shape, seed, lo=-3.0, hi=3.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g) * (hi - lo) + lo).tolist()


def _same(w, t, what="result", ulps=0):
    """webtorch's w and PyTorch's t hold the same dtype and values (NaN as NaN), or, where PyTorch's kernel
    sums or approximates in an order of its own, values `ulps` bfloat16 steps of t's largest apart."""
    assert str(w.dtype) == str(t.dtype), (what, w.dtype, t.dtype)
    assert tuple(w.shape) == tuple(t.shape), what
    wv = w.detach().cpu().float().reshape(-1).tolist()
    tv = t.detach().float().reshape(-1).tolist()
    top = max([abs(b) for b in tv if math.isfinite(b)], default=0.0)
    for a, b in zip(wv, tv, strict=True):
        if math.isnan(b):
            assert math.isnan(a), (what, wv, tv)
        elif a != b:
            assert ulps and abs(a - b) <= ulps * 2.0 ** (math.frexp(top)[1] - 8), (what, wv, tv)


def _pair(shape, seed, device, lo=-3.0, hi=3.0, grad=True):
    d = _data(shape, seed, lo, hi)
    t = torch.tensor(d).bfloat16().requires_grad_(grad)
    w = wt.tensor(d, device=device).bfloat16().requires_grad_(grad)
    return w, t


def _check(device, fn, shapes, ulps=0, gulps=0, lo=-3.0, hi=3.0, **kw):
    ws, ts = zip(*[_pair(s, i, device, lo, hi) for i, s in enumerate(shapes)], strict=True)
    y = fn(wt, F, *ws, **kw)
    r = fn(torch, torch.nn.functional, *ts, **kw)
    _same(y, r, "forward", ulps)
    g = _pair(tuple(r.shape), 99, device, grad=False)
    y.backward(g[0])
    r.backward(g[1])
    for i, (a, b) in enumerate(zip(ws, ts, strict=True)):
        _same(a.grad, b.grad, f"grad {i}", gulps)


CASTS = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.0, 1.00390625, 1.01171875, -2.5, 3.4e38, 1e-40,
         65504.0, 300.7, -129.9, 1e20]


@CPU
@pytest.mark.parametrize("dst", ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"])
def test_casts(device, dst):
    t = torch.tensor(CASTS).bfloat16()
    w = wt.tensor(CASTS, device=device).bfloat16()
    _same(w, t, "float32 -> bfloat16")
    if dst in ("int32", "int64", "int16", "int8", "uint8"):  # out-of-range float -> int is undefined in C++
        t, w = t[3:11], w[3:11]
    _same(w.to(getattr(wt, dst)), t.to(getattr(torch, dst)), f"bfloat16 -> {dst}")
    back = t.to(getattr(torch, dst)).tolist()
    _same(wt.tensor(back, dtype=getattr(wt, dst), device=device).bfloat16(),
          torch.tensor(back, dtype=getattr(torch, dst)).bfloat16(), f"{dst} -> bfloat16")


UNARY = ["exp", "log", "sin", "tanh", "sigmoid", "sqrt", "rsqrt", "neg", "abs", "reciprocal", "relu", "erf"]


@CPU
@pytest.mark.parametrize("op", UNARY)
def test_unary(device, op):
    lo = 0.1 if op in ("log", "sqrt", "rsqrt") else -3.0
    ulps = 1 if op in ("rsqrt", "erf") else 0  # PyTorch's vectorized rsqrt is approximate; erf's grad sums exp
    _check(device, lambda m, f, x: getattr(m, op)(x), [(2, 5)], ulps=ulps, gulps=ulps, lo=lo, hi=3.0)


BINARY = {"add": lambda m, f, a, b: a + b, "sub": lambda m, f, a, b: a - b, "mul": lambda m, f, a, b: a * b,
          "div": lambda m, f, a, b: a / b, "pow": lambda m, f, a, b: a.abs() ** b,
          "maximum": lambda m, f, a, b: m.maximum(a, b), "add_alpha": lambda m, f, a, b: m.add(a, b, alpha=0.3),
          "scalar": lambda m, f, a, b: (a * 1.1 + 0.7) / 3 - b * 2, "where": lambda m, f, a, b: m.where(a > b, a, b)}


@CPU
@pytest.mark.parametrize("op", list(BINARY))
def test_binary(device, op):
    ulps = 1 if op == "add_alpha" else 0  # PyTorch's vectorized loop rounds alpha, its scalar loop does not
    _check(device, BINARY[op], [(3, 4), (4,)], ulps=ulps)


NN = {"sum": (lambda m, f, x: x.sum(), [(4, 33)], 0), "sum_dim": (lambda m, f, x: x.sum(1), [(4, 33)], 0),
      "mean": (lambda m, f, x: x.mean(0), [(5, 6)], 0), "amax": (lambda m, f, x: x.amax(1), [(4, 7)], 0),
      "cumsum": (lambda m, f, x: x.cumsum(1), [(3, 6)], 0), "var": (lambda m, f, x: x.var(1), [(3, 6)], 1),
      "matmul": (lambda m, f, a, b: a @ b, [(3, 8), (8, 5)], 1),
      "softmax": (lambda m, f, x: x.softmax(-1), [(3, 7)], 1),
      "log_softmax": (lambda m, f, x: f.log_softmax(x, -1), [(3, 7)], 1),
      "layer_norm": (lambda m, f, x, w, b: f.layer_norm(x, (6,), w, b), [(3, 6), (6,), (6,)], 2),
      "linear": (lambda m, f, x, w, b: f.linear(x, w, b), [(3, 6), (4, 6), (4,)], 1),
      "conv2d": (lambda m, f, x, w: f.conv2d(x, w, padding=1), [(1, 2, 5, 5), (3, 2, 3, 3)], 1),
      "gelu": (lambda m, f, x: f.gelu(x), [(3, 7)], 1), "silu": (lambda m, f, x: f.silu(x), [(3, 7)], 1)}


@CPU
@pytest.mark.parametrize("op", list(NN))
def test_nn(device, op):
    fn, shapes, ulps = NN[op]
    _check(device, fn, shapes, ulps=ulps, gulps=ulps)


@CPU
def test_embedding(device):
    wv = _data((6, 3), 0)
    idx = [[0, 2, 2], [5, 0, 2]]
    w = wt.tensor(wv, device=device).bfloat16().requires_grad_()
    t = torch.tensor(wv).bfloat16().requires_grad_()
    y, r = F.embedding(wt.tensor(idx, device=device), w), torch.nn.functional.embedding(torch.tensor(idx), t)
    _same(y, r)
    g = _data(tuple(r.shape), 1)
    y.backward(wt.tensor(g, device=device).bfloat16())
    r.backward(torch.tensor(g).bfloat16())
    _same(w.grad, t.grad, "grad")


@CPU
def test_adamw_step(device):
    w, t = _pair((4, 5), 0, device)
    ws, ts = wt.optim.AdamW([w], lr=0.01), torch.optim.AdamW([t], lr=0.01)
    for i in range(2):
        ((w * w).sum() * (i + 1)).backward()
        ((t * t).sum() * (i + 1)).backward()
        ws.step()
        ts.step()
    # webtorch's optimizer steps round each primitive (lerp: sub, mul, add) where PyTorch's lerp/addcmul/addcdiv
    # kernels compute in float32 and round once: a bfloat16 step apart
    _same(w, t, "param", ulps=1)
    _same(ws.state[w]["exp_avg_sq"], ts.state[t]["exp_avg_sq"], "exp_avg_sq", ulps=1)


@CPU
def test_promotion_and_creation(device):
    x = wt.ones(2, dtype=BF, device=device)
    assert (x + wt.ones(2, dtype=wt.float16, device=device)).dtype is wt.float32
    assert (x + 1).dtype is BF and (x + 1.5).dtype is BF and (x * wt.ones(2, dtype=wt.int64, device=device)).dtype is BF
    assert (x + wt.ones(2, device=device)).dtype is wt.float32 and x.element_size() == 2
    assert x.is_floating_point() and wt.zeros(3, device=device).bfloat16().dtype is BF
    assert wt.arange(3, dtype=BF, device=device).tolist() == [0.0, 1.0, 2.0]
    _same(wt.full((2,), 1.1, dtype=BF, device=device), torch.full((2,), 1.1, dtype=torch.bfloat16))
    _same(wt.tensor([0.1, 300.3], dtype=BF, device=device), torch.tensor([0.1, 300.3], dtype=torch.bfloat16))


@CPU
def test_printing_and_finfo(device):
    x = wt.tensor([1.5, -0.1, 1e-3, 300.0], device=device).bfloat16()
    t = torch.tensor([1.5, -0.1, 1e-3, 300.0]).bfloat16()
    assert repr(x.cpu()) == repr(t)
    assert repr(x.cpu()[0]) == repr(t[0])
    f, g = wt.finfo(BF), torch.finfo(torch.bfloat16)
    assert (f.eps, f.max, f.tiny, f.bits) == (g.eps, g.max, g.tiny, g.bits)


@CPU
def test_numpy_refused(device):
    with pytest.raises(TypeError, match="Got unsupported ScalarType BFloat16"):
        wt.ones(2, dtype=BF, device=device).numpy()


def test_save_load_interop(tmp_path):
    t = torch.tensor(CASTS).bfloat16()
    w = wt.tensor(CASTS).bfloat16()
    buf = io.BytesIO()
    wt.save({"w": w}, buf)
    buf.seek(0)
    _same(torch.load(buf)["w"], t, "webtorch -> torch")
    buf = io.BytesIO()
    torch.save({"w": t}, buf)
    buf.seek(0)
    _same(wt.load(buf)["w"], t, "torch -> webtorch")


def test_safetensors(tmp_path):
    st = pytest.importorskip("safetensors.torch")
    t = torch.tensor(CASTS).bfloat16()
    st.save_file({"w": t}, str(tmp_path / "a.safetensors"))
    _same(wt.serialization.load_safetensors(str(tmp_path / "a.safetensors"))["w"], t, "read")
    wt.serialization.save_safetensors({"w": wt.tensor(CASTS).bfloat16()}, str(tmp_path / "b.safetensors"))
    _same(wt.tensor(st.load_file(str(tmp_path / "b.safetensors"))["w"].float().tolist()).bfloat16(), t, "written")


def test_autocast_cpu():
    """PyTorch's CPU lists: the matmul family in bfloat16, reductions and softmax in their input's dtype, the
    losses of its fp32 list in float32."""
    a, w, target = wt.randn(4, 8), wt.randn(5, 8), wt.tensor([0, 1, 2, 3])
    ta, tw, tt = (torch.tensor(v.tolist()) for v in (a, w, target))
    outs = []
    for m, f, args in ((wt, F, (a, w, target)), (torch, torch.nn.functional, (ta, tw, tt))):
        x, y, t = args
        with m.autocast("cpu"):
            assert m.get_autocast_dtype("cpu") is m.bfloat16
            z = x @ y.t()
            outs.append((z, f.linear(x, y), f.log_softmax(z, -1), z.sum(), f.cross_entropy(z, t), f.mse_loss(z, z)))
    for got, want in zip(*outs, strict=True):
        _same(got, want, ulps=1)


OPINFO = ("abs exp log sin tanh sigmoid sqrt rsqrt add sub mul div.no_rounding_mode div.floor_rounding pow "
          "maximum clamp where sum mean amax prod cumsum var std matmul mm bmm addmm baddbmm addbmm softmax "
          "log_softmax cat stack index_select gather scatter_add nn.functional.layer_norm nn.functional.group_norm "
          "nn.functional.batch_norm nn.functional.linear nn.functional.conv2d nn.functional.embedding "
          "nn.functional.gelu nn.functional.silu nn.functional.relu nn.functional.max_pool2d nn.functional.avg_pool2d "
          "nn.functional.cross_entropy nn.functional.mse_loss").split()


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("op", OPINFO)
def test_opinfo_bfloat16_forward(op):
    """PyTorch's own bfloat16 samples (OpInfo, the first two) give PyTorch's values within bfloat16's tolerance."""
    opinfo_forward(op, "cpu", 2)


def opinfo_forward(op, device, n):
    """The first n of PyTorch's bfloat16 OpInfo samples of op, run on device, compared with PyTorch's CPU."""
    from opinfo import opinfo_harness as H
    o = H.op_db()[op]
    torch.manual_seed(0)
    for _, s in zip(range(n), o.sample_inputs("cpu", torch.bfloat16), strict=False):
        expected = o.op(s.input, *s.args, **s.kwargs)
        with wt.no_grad():
            actual, _ = H.call(H.resolve(op), s, device)
        H.compare(actual, expected, device)
