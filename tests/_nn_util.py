"""Helpers for the nn differential tests: build the same module in torch.nn and webtorch.nn, copy
torch's (randomized) state into webtorch's, run both on the same inputs and compare outputs, input
gradients, parameter gradients and buffers.

    check(device, lambda nn, T: nn.Conv2d(2, 3, 3), [x])

`make(nn, T)` is called once with (torch.nn, torch) and once with (webtorch.nn, webtorch). Inputs are
numpy arrays (float arrays get gradients unless wrapped in `NoGrad(...)`); `call(m, T, *xs)` runs the
module (default `m(*xs)`).
"""
import zlib

import numpy as np
import torch


import webtorch as wt  # noqa: E402


class NoGrad:
    def __init__(self, a):
        self.a = a


def rng_for(name):
    return np.random.RandomState(zlib.crc32(name.encode()) & 0x7FFFFFFF)


def randn(rng, *shape, scale=1.0):
    return np.asarray(rng.standard_normal(shape) * scale, dtype=np.float32)


def tol(device):
    return (2e-3, 2e-4) if device == "webgpu" else (2e-4, 2e-5)


def to_np(t):
    t = t.detach()
    if isinstance(t, torch.Tensor):
        return t.numpy()
    return np.array(t.cpu().tolist(), dtype=np.float64 if t.dtype.is_floating_point else np.int64)


def assert_close(got, want, device, what="", rtol=None, atol=None):
    r, a = tol(device)
    r, a = rtol or r, atol or a
    g, w = to_np(got), to_np(want)
    assert g.shape == w.shape, f"{what}: shape {g.shape} != {w.shape}"
    np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=r, atol=a, err_msg=what)


def randomize(tm, rng, buffers=False):
    """Give torch module tm random parameters (and positive random running stats when asked)."""
    with torch.no_grad():
        for _, p in tm.named_parameters():
            p.copy_(torch.from_numpy(randn(rng, *p.shape, scale=0.5)))
        if buffers:
            for name, b in tm.named_buffers():
                if name.endswith("running_mean"):
                    b.copy_(torch.from_numpy(randn(rng, *b.shape, scale=0.5)))
                elif name.endswith("running_var"):
                    b.copy_(torch.from_numpy(rng.uniform(0.5, 1.5, b.shape).astype(np.float32)))


def sync(tm, wm, device):
    sd = {k: wt.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()}
    wm.load_state_dict(sd)
    return wm.to(device)


def _inputs(T, arrays, device):
    out = []
    for a in arrays:
        grad = True
        if isinstance(a, NoGrad):
            a, grad = a.a, False
        if a is None:
            out.append(None)
            continue
        if T is torch:
            t = torch.tensor(a)
        else:
            a = np.asarray(a)
            t = wt.tensor(a, device=device)
        if grad and a.dtype.kind == "f":
            t.requires_grad_(True)
        out.append(t)
    return out


def _flat(out):
    if isinstance(out, (tuple, list)):
        r = []
        for o in out:
            r.extend(_flat(o))
        return r
    if out is None:
        return []
    return [out]


def check(device, make, arrays, *, call=None, train=True, rand_params=True, rand_buffers=False, name="case",
          rtol=None, atol=None, steps=1):
    """Run make(torch.nn, torch) and make(webtorch.nn, webtorch) on the same inputs; compare."""
    rng = rng_for(name)
    torch.manual_seed(0)
    tm = make(torch.nn, torch)
    if rand_params:
        randomize(tm, rng, rand_buffers)
    wm = sync(tm, make(wt.nn, wt), device)
    tm.train(train)
    wm.train(train)
    call = call or (lambda m, T, *xs: m(*xs))
    for step in range(steps):
        t_in = _inputs(torch, arrays, device)
        w_in = _inputs(wt, arrays, device)
        t_out = [o for o in _flat(call(tm, torch, *t_in)) if o.dtype.is_floating_point]
        w_out = [o for o in _flat(call(wm, wt, *w_in)) if o.dtype.is_floating_point]
        assert len(t_out) == len(w_out)
        for k, (w, t) in enumerate(zip(w_out, t_out)):
            assert w.device.type == wt.device(device).type
            assert_close(w, t, device, f"output {k}", rtol, atol)
        cots = [randn(rng, *o.shape) for o in t_out]
        if any(o.requires_grad for o in t_out):
            t_loss = sum((o * torch.from_numpy(c)).sum() for o, c in zip(t_out, cots) if o.requires_grad)
            w_loss = sum((o * wt.tensor(c, device=device)).sum() for o, c in zip(w_out, cots) if o.requires_grad)
            t_loss.backward()
            w_loss.backward()
        for k, (w, t) in enumerate(zip(w_in, t_in)):
            if t is not None and t.requires_grad:
                assert w.grad is not None, f"input {k}: no gradient"
                assert_close(w.grad, t.grad, device, f"grad of input {k}", rtol, atol)
    wp = dict(wm.named_parameters())
    for n, p in tm.named_parameters():
        if p.grad is None:
            assert wp[n].grad is None or not np.any(to_np(wp[n].grad)), n
        else:
            assert wp[n].grad is not None, f"{n}: no gradient"
            assert_close(wp[n].grad, p.grad, device, f"grad of {n}", rtol, atol)
    wb = dict(wm.named_buffers())
    for n, b in tm.named_buffers():
        assert_close(wb[n], b, device, f"buffer {n}", rtol, atol)
    return tm, wm


def same_error(fn):
    """fn(torch) raises; fn(webtorch) raises the same exception type with the same message."""
    import pytest
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(type(te.value)) as we:
        fn(wt)
    assert str(we.value) == str(te.value)
