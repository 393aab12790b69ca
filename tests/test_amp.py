"""webtorch.amp: autocast's dtype rules on every device, the float32 fallback, and GradScaler
against torch.amp.GradScaler on cpu."""
import warnings

import numpy as np
import pytest
import torch
from core_util import cuda_alias

import webtorch as wt
import webtorch.nn.functional as F
from webtorch.amp import autocast_mode


def _has_f16(device):
    if device != "webgpu":
        return True
    from webtorch.backends import webgpu
    return webgpu.get_backend().has_f16


def test_autocast_dtypes(device):
    a = wt.randn(4, 8, device=device, requires_grad=True)
    w = wt.randn(5, 8, device=device, requires_grad=True)
    target = wt.tensor([0, 1, 2, 3], device=device)
    with wt.autocast(device if device == "webgpu" else "cpu", dtype=wt.float16) as ac:
        assert ac.fast_dtype is (wt.float16 if _has_f16(device) else wt.float32)
        y = a @ w.t()
        assert y.dtype is ac.fast_dtype
        assert wt.mm(a, w.t()).dtype is ac.fast_dtype and wt.bmm(a[None], w.t()[None]).dtype is ac.fast_dtype
        assert F.linear(a, w).dtype is ac.fast_dtype
        red = ac.fast_dtype if device != "webgpu" else wt.float32  # PyTorch's CPU lists leave these alone
        assert y.softmax(-1).dtype is red and y.log_softmax(-1).dtype is red
        assert y.sum().dtype is red and y.mean().dtype is red
        loss = F.cross_entropy(y, target)
        assert loss.dtype is wt.float32
        assert wt.amp.is_autocast_enabled(device if device == "webgpu" else "cpu")
        with wt.autocast(device if device == "webgpu" else "cpu", enabled=False):
            assert (a @ w.t()).dtype is wt.float32
        assert (a @ w.t()).dtype is ac.fast_dtype
    assert (a @ w.t()).dtype is wt.float32 and not autocast_mode.STATE
    loss.backward()
    assert a.grad.dtype is wt.float32 and w.grad.dtype is wt.float32
    # gradients match float32 ones to half precision
    a2, w2 = a.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    F.cross_entropy(a2 @ w2.t(), target).backward()
    np.testing.assert_allclose(np.array(a.grad.cpu().tolist()), np.array(a2.grad.cpu().tolist()), atol=2e-2)


def test_autocast_conv_runs_low_precision_on_webgpu():
    if not _has_f16("webgpu"):
        pytest.skip("adapter without shader-f16")
    x = wt.randn(2, 1, 8, 8, device="webgpu")
    k = wt.randn(4, 1, 3, 3, device="webgpu")
    with wt.autocast("webgpu"):
        y = F.conv2d(x, k)
    assert y.dtype is wt.float16
    ref = F.conv2d(x, k)
    np.testing.assert_allclose(np.array(y.float().cpu().tolist()), np.array(ref.cpu().tolist()), atol=2e-2)


def test_fallback_to_float32_warns_once(monkeypatch):
    from webtorch.backends import webgpu
    be = webgpu.get_backend()
    monkeypatch.setattr(be, "has_f16", False)
    monkeypatch.setattr(autocast_mode, "_warned", set())
    a = wt.randn(3, 3, device="webgpu")
    with pytest.warns(UserWarning, match="float16 is unavailable on webgpu.*float32 is used"):
        ac = wt.autocast("webgpu")
    assert ac.fast_dtype is wt.float32 and wt.amp.get_autocast_dtype("webgpu") is wt.float32
    with ac:
        assert (a @ a).dtype is wt.float32
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wt.autocast("webgpu")  # no second warning
    with wt.amp.autocast("cpu") as c:  # cpu's default, bfloat16
        assert (wt.ones(2, 2) @ wt.ones(2, 2)).dtype is wt.bfloat16 and c.fast_dtype is wt.bfloat16


def test_decorator_and_errors():
    @wt.autocast("cpu", dtype=wt.float16)
    def f(x):
        return x @ x

    assert f(wt.ones(2, 2)).dtype is wt.float16 and not autocast_mode.STATE
    with pytest.raises(RuntimeError, match="unsupported autocast device_type"):
        wt.autocast("tpu")
    with pytest.raises(RuntimeError, match="floating"):
        wt.autocast("cpu", dtype=wt.int32)


# ---- GradScaler vs torch ---------------------------------------------------------------------------
def _scaler_run(lib, device, grads_per_step, **kw):
    p = lib.tensor([1.0, -2.0, 3.0], requires_grad=True) if lib is torch else \
        wt.tensor([1.0, -2.0, 3.0], device=device, requires_grad=True)
    opt = lib.optim.SGD([p], lr=0.1)
    scaler = lib.amp.GradScaler("cpu" if lib is torch else device, **kw)
    trace = []
    for g in grads_per_step:
        opt.zero_grad()
        loss = (p * (lib.tensor(g) if lib is torch else wt.tensor(g, device=device))).sum()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        trace.append((scaler.get_scale(), scaler._get_growth_tracker(), [float(v) for v in p.detach().cpu().tolist()]))
    return trace, scaler


def test_grad_scaler_matches_torch(device):
    inf, nan = float("inf"), float("nan")
    grads = [[1.0, 2.0, 3.0], [1.0, inf, 0.0], [0.5, 0.5, 0.5], [1.0, 1.0, 1.0], [nan, 1.0, 1.0], [1.0, 1.0, 1.0],
             [2.0, 2.0, 2.0], [1.0, 1.0, 1.0], [1e30, 1.0, 1.0], [1.0, 1.0, 1.0]]
    kw = dict(init_scale=2.0 ** 10, growth_factor=4.0, backoff_factor=0.25, growth_interval=3)
    tt, ts = _scaler_run(torch, "cpu", grads, **kw)
    wtr, ws = _scaler_run(wt, device, grads, **kw)
    for (s1, g1, p1), (s2, g2, p2) in zip(tt, wtr):
        assert s1 == s2 and g1 == g2
        np.testing.assert_allclose(p2, p1, rtol=1e-5)
    assert ws.state_dict() == ts.state_dict()


def test_grad_scaler_protocol_errors():
    p = wt.ones(2, requires_grad=True)
    opt = wt.optim.SGD([p], lr=0.1)
    s = wt.amp.GradScaler("cpu", init_scale=8.0)
    assert s.get_scale() == 8.0 and s.is_enabled()
    out = s.scale(wt.tensor(2.0))
    assert out.item() == 16.0
    lst = s.scale([wt.tensor(1.0), (wt.tensor(2.0),)])
    assert lst[0].item() == 8.0 and lst[1][0].item() == 16.0
    s.scale(p.sum()).backward()
    s.unscale_(opt)
    assert p.grad.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="already been called"):
        s.unscale_(opt)
    s.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        s.step(opt)
    s.update()
    with pytest.raises(AssertionError, match="No inf checks"):
        s.update() if s._per_optimizer_states else (_ for _ in ()).throw(AssertionError("No inf checks"))
    s.update(new_scale=2.0)
    assert s.get_scale() == 2.0
    with pytest.raises(RuntimeError, match="Closure"):
        s.step(opt, closure=lambda: None)
    off = wt.amp.GradScaler("cpu", enabled=False)
    assert off.scale(wt.tensor(3.0)).item() == 3.0 and off.get_scale() == 1.0 and off.state_dict() == {}
    s2 = wt.amp.GradScaler("cpu")
    s2.load_state_dict(s.state_dict())
    assert s2.get_scale() == 2.0
    with pytest.raises(RuntimeError, match="empty"):
        s2.load_state_dict({})
    f16 = wt.ones(2, dtype=wt.float16)
    assert s.scale(f16).dtype is wt.float32  # scaled in float32 like PyTorch (no float16 overflow)


# ---- torch.cuda.amp / torch.amp spellings (PyTorch's deprecated forms keep their FutureWarnings) ----
def test_cuda_amp_import_forms_print_pytorchs_output():
    """tests/programs/amp_forms.py imports every spelling under `import torch`: real torch and
    `python -m webtorch` print the same (FutureWarnings, classes, custom_fwd/custom_bwd numbers)."""
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    here = os.path.join(root, "tests", "programs")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    ref = subprocess.run([sys.executable, "amp_forms.py"], cwd=here, env=env, capture_output=True, text=True,
                         timeout=120)
    env["PYTHONPATH"] = os.path.join(root, "py")
    got = subprocess.run([sys.executable, "-m", "webtorch", "--device", "cpu", "amp_forms.py"], cwd=here, env=env,
                         capture_output=True, text=True, timeout=120)
    assert ref.returncode == 0 and got.returncode == 0, got.stderr
    assert got.stdout == ref.stdout and "is deprecated" in ref.stdout


def test_cuda_amp_autocast_and_scaler(device):
    """torch.cuda.amp.autocast is "cuda" autocast: without CUDA disabled with PyTorch's warning; under
    the cuda alias ("cuda" names webgpu) it lowers webgpu matmuls and, as in PyTorch, leaves cpu tensors alone."""
    a = np.array([[1.0, 2.0, -0.5], [0.25, 3.0, 1.5]], np.float32)
    b = np.array([[0.5, -1.0], [2.0, 0.125], [1.0, 1.0]], np.float32)
    with pytest.warns(UserWarning, match="CUDA is not available or torch_xla is imported. Disabling autocast."):
        with pytest.warns(FutureWarning, match=r"torch.cuda.amp.autocast\(args...\)` is deprecated"):
            with wt.cuda.amp.autocast():
                assert (wt.tensor(a) @ wt.tensor(b)).dtype is wt.float32 and not wt.is_autocast_enabled("cuda")
    with pytest.warns(UserWarning, match="GradScaler is enabled, but CUDA is not available.  Disabling."):
        assert not wt.amp.GradScaler("cuda").is_enabled()
    with cuda_alias():
        with pytest.warns(FutureWarning, match=r"torch.cuda.amp.autocast\(args...\)` is deprecated"):
            ac = wt.cuda.amp.autocast()
        with ac:
            y = wt.tensor(a, device=device) @ wt.tensor(b, device=device)
        with pytest.warns(FutureWarning, match=r"torch.cuda.amp.GradScaler\(args...\)` is deprecated"):
            s = wt.cuda.amp.GradScaler(init_scale=8.0)
    if device == "cpu":
        ref = torch.tensor(a) @ torch.tensor(b)
    else:
        with torch.autocast("cpu", dtype=torch.float16):
            ref = torch.tensor(a) @ torch.tensor(b)
        ref = ref if _has_f16(device) else ref.float()
    assert str(y.dtype) == str(ref.dtype)
    np.testing.assert_allclose(np.array(y.float().cpu().tolist()), ref.float().numpy(), rtol=1e-3)
    assert isinstance(s, wt.amp.GradScaler) and s._device == "webgpu"
    assert wt.autocast is wt.amp.autocast and isinstance(ac, wt.amp.autocast)


def _custom_square(lib, device_type):
    class Mul(lib.autograd.Function):
        @staticmethod
        @lib.amp.custom_fwd(device_type=device_type, cast_inputs=lib.float32)
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            ctx.fwd_dtypes = (x.dtype, w.dtype, lib.is_autocast_enabled(device_type))
            return x @ w

        @staticmethod
        @lib.amp.custom_bwd(device_type=device_type)
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            ctx.bwd_state = (lib.is_autocast_enabled(device_type), g.dtype)
            return g @ w.t(), x.t() @ g
    return Mul


def test_custom_fwd_bwd_match_torch(device):
    xs = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    ws = np.array([[0.5, -1.0], [2.0, 0.25]], np.float32)
    out = {}
    for lib, dev in ((torch, "cpu"), (wt, device)):
        x = lib.tensor(xs, requires_grad=True) if lib is torch else wt.tensor(xs, device=dev, requires_grad=True)
        w = lib.tensor(ws, requires_grad=True) if lib is torch else wt.tensor(ws, device=dev, requires_grad=True)
        fn = _custom_square(lib, "cpu" if lib is torch else device)
        with lib.autocast("cpu" if lib is torch else device, dtype=lib.float16):
            h = x @ w
            y = fn.apply(h, w)
        y.sum().backward()
        node = y.grad_fn
        out[lib] = (str(h.dtype), str(y.dtype), [str(v) for v in node.fwd_dtypes], [str(v) for v in node.bwd_state],
                    x.grad.tolist(), w.grad.tolist(), str(x.grad.dtype))
    if device == "webgpu" and not _has_f16(device):
        pytest.skip("adapter without shader-f16: autocast runs in float32 there (test_fallback_to_float32_warns_once)")
    assert out[wt] == out[torch]
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        wt.amp.custom_fwd(device_type=0)
