"""WebGPU capture and replay (backends/webgpu/capture.py): a captured training step replayed N
times gives the parameters N eager steps give (and PyTorch's); a replay creates no GPU buffer
and is one submit; dropout masks differ per replay and equal eager's from the same generator
offset; a host read inside a capture is a CaptureBreak; a baked Python value that changes makes
two captures not equivalent; BN running stats updated by replay are what eager code sees."""
import os

import numpy as np
import pytest

os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

import torch  # noqa: E402  (the oracle)
import webtorch as wt  # noqa: E402
from webtorch.backends import webgpu  # noqa: E402
from webtorch.backends.webgpu.capture import CaptureBreak  # noqa: E402

pytestmark = pytest.mark.usefixtures("webgpu")  # conftest: skipped only by WEBTORCH_SKIP_WEBGPU=1

STEPS = 5
SHAPES = (((32, 784), 0.03), ((32,), 0.01), ((10, 32), 0.1), ((10,), 0.01))


def _data(seed=0):
    r = np.random.default_rng(seed)
    xs = [r.standard_normal((16, 784)).astype(np.float32) for _ in range(STEPS)]
    ys = [r.integers(0, 10, 16) for _ in range(STEPS)]
    ps = [(r.standard_normal(s) * sc).astype(np.float32) for s, sc in SHAPES]
    return xs, ys, ps


def _mlp(lib, dev, ps, make_opt):
    params = [lib.tensor(p, device=dev).requires_grad_() for p in ps]
    W1, b1, W2, b2 = params
    opt = make_opt(lib, params)

    def step(x, y):
        h = (x @ W1.t() + b1).relu()
        loss = lib.nn.functional.cross_entropy(h @ W2.t() + b2, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    step.opt = opt
    return params, step


def _sgd(lib, params):
    return lib.optim.SGD(params, lr=0.1, momentum=0.9)


def _adamw(lib, params):
    return lib.optim.AdamW(params, lr=0.01, weight_decay=0.05)


def _counters():
    c = webgpu.counters()
    return c["buffers_created"], c["submits"], c["dispatches"]


@pytest.mark.parametrize("make_opt", [_sgd, _adamw], ids=["sgd_momentum", "adamw"])
def test_training_step_replay_matches_eager_and_torch(make_opt):
    xs, ys, ps = _data()
    be = webgpu.get_backend()
    X = [wt.tensor(x, device="webgpu") for x in xs]
    Y = [wt.tensor(y, device="webgpu") for y in ys]
    # eager webgpu and PyTorch, STEPS steps each
    pe, step_e = _mlp(wt, "webgpu", ps, make_opt)
    le = [step_e(x, y).item() for x, y in zip(X, Y)]
    pt, step_t = _mlp(torch, "cpu", ps, make_opt)
    lt = [step_t(torch.tensor(x), torch.tensor(y)).item() for x, y in zip(xs, ys)]
    # step 1 eager (the optimizer state appears), step 2 captured (it runs), steps 3.. replayed
    pc, step_c = _mlp(wt, "webgpu", ps, make_opt)
    lc = [step_c(X[0], Y[0]).item()]
    xin, yin = X[1].clone(), Y[1].clone()
    with be.capture() as cap:
        loss = step_c(xin, yin)
    prog = cap.program(inputs=[xin, yin], outputs=[loss])
    lc.append(loss.item())
    assert prog.submits == 1 and prog.dispatches == cap.dispatches - prog.eliminated
    for i in range(2, STEPS):
        b0, s0, d0 = _counters()
        out, = prog.replay([X[i], Y[i]])
        b1, s1, d1 = _counters()
        if i > 2:                          # after the first replay its output buffer is pooled
            assert b1 == b0, "a replay created GPU buffers"
        assert s1 - s0 == 1 and d1 - d0 == prog.dispatches
        lc.append(out.item())
    np.testing.assert_allclose(lc, le, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lc, lt, rtol=1e-4, atol=1e-5)
    for a, b, c in zip(pc, pe, pt):
        np.testing.assert_allclose(a.detach().cpu().numpy(), b.detach().cpu().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(a.detach().cpu().numpy(), c.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_two_captures_of_a_step_are_equivalent_and_replay_advances_adam_step():
    xs, ys, ps = _data(1)
    be = webgpu.get_backend()
    params, step = _mlp(wt, "webgpu", ps, _adamw)
    x, y = wt.tensor(xs[0], device="webgpu"), wt.tensor(ys[0], device="webgpu")
    step(x, y)
    caps = []
    for _ in range(2):
        with be.capture() as cap:
            step(x, y)
        caps.append(cap)
    assert caps[0].equivalent(caps[1]) and caps[1].equivalent(caps[0])
    prog = caps[1].program(inputs=[x, y])      # the latest: its gradients are the ones p.grad holds
    prog.replay([x, y])
    prog.replay([x, y])
    # the step count lives on the device (as PyTorch's capturable Adam keeps it) and the replays
    # advanced it: 1 eager + 2 captured + 2 replayed steps
    steps = {s["step"].item() for s in step.opt.state_dict()["state"].values()}
    assert steps == {5.0}


def test_baked_python_value_makes_captures_not_equivalent():
    be = webgpu.get_backend()
    x = wt.ones(8, device="webgpu")
    caps = []
    for c in (2.0, 2.0, 3.0):
        with be.capture() as cap:
            x.mul(c).add_(1)
        caps.append(cap)
    assert caps[0].equivalent(caps[1])
    assert not caps[1].equivalent(caps[2])
    # an optimizer whose per-step values are still Python numbers (ASGD's eta and mu)
    xs, ys, ps = _data(2)
    _, step = _mlp(wt, "webgpu", ps, lambda lib, p: lib.optim.ASGD(p, lr=0.01, t0=1))
    x, y = wt.tensor(xs[0], device="webgpu"), wt.tensor(ys[0], device="webgpu")
    step(x, y)
    caps = []
    for _ in range(2):
        with be.capture() as cap:
            step(x, y)
        caps.append(cap)
    assert not caps[0].equivalent(caps[1])


OPTIMS = {
    "nadam": lambda lib, p: lib.optim.NAdam(p, lr=0.05),
    "radam": lambda lib, p: lib.optim.RAdam(p, lr=0.05, weight_decay=0.01),
    "adamax": lambda lib, p: lib.optim.Adamax(p, lr=0.05),
    "adagrad": lambda lib, p: lib.optim.Adagrad(p, lr=0.1, lr_decay=0.05),
    "rmsprop": lambda lib, p: lib.optim.RMSprop(p, lr=0.01, momentum=0.5),
    "adadelta": lambda lib, p: lib.optim.Adadelta(p, lr=0.5),
    "rprop": lambda lib, p: lib.optim.Rprop(p, lr=0.01),
    "adam_amsgrad": lambda lib, p: lib.optim.Adam(p, lr=0.05, amsgrad=True),
}


@pytest.mark.parametrize("name", OPTIMS)
def test_optimizer_steps_are_capture_safe(name):
    """Two captures of a step are equivalent (the step count and NAdam's mu_product live on the
    device while capturing), and replays continue eager's (and PyTorch's) trajectory; RAdam
    crosses its rectification threshold (step 6) inside the replays."""
    r = np.random.default_rng(4)
    x0, y0 = r.standard_normal((16, 8)).astype(np.float32), r.standard_normal((16, 4)).astype(np.float32)
    w0, b0 = (r.standard_normal((4, 8)) * 0.3).astype(np.float32), np.zeros(4, np.float32)

    def make(lib, dev):
        w, b = lib.tensor(w0, device=dev).requires_grad_(), lib.tensor(b0, device=dev).requires_grad_()
        x, y = lib.tensor(x0, device=dev), lib.tensor(y0, device=dev)
        opt = OPTIMS[name](lib, [w, b])

        def step():
            opt.zero_grad()
            loss = ((x @ w.t() + b - y) ** 2).mean()
            loss.backward()
            opt.step()
        return (w, b), step
    n = 9
    pe, se = make(wt, "webgpu")
    pt, st = make(torch, "cpu")
    for _ in range(n):
        se()
        st()
    pc, sc = make(wt, "webgpu")
    sc()
    be = webgpu.get_backend()
    caps = []
    for _ in range(2):
        with be.capture() as cap:
            sc()
        caps.append(cap)
    assert caps[0].equivalent(caps[1])
    prog = caps[1].program()
    for _ in range(n - 3):
        prog.replay()
    # RAdam's rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t) cancels (1999 - 1994 near step 6): with
    # the step in a float32 tensor it carries float32's error, as PyTorch's capturable RAdam does
    tol = 3e-4 if name == "radam" else 1e-5
    for a, b, c in zip(pc, pe, pt):
        np.testing.assert_allclose(a.detach().cpu().numpy(), b.detach().cpu().numpy(), rtol=tol, atol=tol)
        np.testing.assert_allclose(a.detach().cpu().numpy(), c.detach().numpy(), rtol=max(tol, 1e-4), atol=tol)


def test_dropout_masks_differ_per_replay_and_match_eager():
    be = webgpu.get_backend()
    g = wt.Generator(device="webgpu").manual_seed(7)
    x = wt.ones(4096, device="webgpu")

    def f(x):
        return wt.nn.functional.dropout(x, 0.5, training=True) * 2 + wt.rand(16, device="webgpu", generator=g).sum()

    # the default generator draws dropout's mask; g draws the rand
    xin = x.clone()
    with be.capture() as cap:
        y = f(xin)
    prog = cap.program(inputs=[xin], outputs=[y])
    outs, states = [], []
    for _ in range(3):
        states.append((wt.random.default_generator._offset, g._offset))
        outs.append(prog.replay([x])[0].cpu().numpy())
    assert (wt.random.default_generator._offset, g._offset) == (states[-1][0] + 1, states[-1][1] + 1)
    assert not np.array_equal(outs[0], outs[1]) and not np.array_equal(outs[1], outs[2])
    for (d_off, g_off), o in zip(states, outs):
        wt.random.default_generator._offset, g._offset = d_off, g_off
        np.testing.assert_array_equal(f(x).cpu().numpy(), o)


def test_item_inside_capture_is_a_capture_break():
    be = webgpu.get_backend()
    x = wt.arange(6.0, device="webgpu")
    with pytest.raises(CaptureBreak, match="read to the host"):
        with be.capture() as cap:
            (x * 2).sum().item()
    assert isinstance(CaptureBreak("x"), RuntimeError)
    with pytest.raises(RuntimeError, match="raised"):
        cap.program()
    assert (x * 2).sum().item() == 30.0         # eager works after the break


def test_index_checks_of_every_replay_are_reported(monkeypatch):
    """A target out of range in one replay raises at the next sync (as eager's device-side check
    does), even when a later replay's targets are valid."""
    from webtorch.backends.webgpu import capture
    monkeypatch.setattr(capture, "RING", 4)        # wrap the ring of queued checks quickly
    be = webgpu.get_backend()
    logits = wt.randn(4, 10, device="webgpu")
    y = wt.tensor([1, 2, 3, 4], device="webgpu")
    yin = y.clone()
    with be.capture() as cap:
        loss = wt.nn.functional.cross_entropy(logits, yin)
    prog = cap.program(inputs=[yin], outputs=[loss])
    bad = wt.tensor([1, 2, 10, 4], device="webgpu")
    with pytest.raises(Exception) as eager:
        wt.nn.functional.cross_entropy(logits, bad).item()
    prog.replay([bad])
    out, = prog.replay([y])
    with pytest.raises(type(eager.value), match="out of bounds"):
        out.item()
    ref = wt.nn.functional.cross_entropy(logits, y).item()
    for _ in range(10):                            # more replays than the ring holds, no host read
        out, = prog.replay([y])
    assert out.item() == pytest.approx(ref, rel=1e-6)


def test_batchnorm_running_stats_updated_by_replay():
    be = webgpu.get_backend()
    r = np.random.default_rng(3)
    xs = [r.standard_normal((8, 5)).astype(np.float32) for _ in range(4)]
    bn_e, bn_c = wt.nn.BatchNorm1d(5).to("webgpu"), wt.nn.BatchNorm1d(5).to("webgpu")
    bn_t = torch.nn.BatchNorm1d(5)
    for x in xs:
        bn_e(wt.tensor(x, device="webgpu"))
        bn_t(torch.tensor(x))
    xin = wt.tensor(xs[0], device="webgpu")
    with be.capture() as cap:
        bn_c(xin)
    prog = cap.program(inputs=[xin])
    for x in xs[1:]:
        prog.replay([wt.tensor(x, device="webgpu")])
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        a, b = getattr(bn_c, name).cpu().numpy(), getattr(bn_e, name).cpu().numpy()
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(a, getattr(bn_t, name).numpy(), rtol=1e-5, atol=1e-6)


def test_dead_commands_eliminated_and_temporaries_share_buffers():
    be = webgpu.get_backend()
    r = np.random.default_rng(5)
    x = wt.tensor(r.standard_normal((32, 64)).astype(np.float32), device="webgpu")
    w = wt.tensor(r.standard_normal((64, 64)).astype(np.float32), device="webgpu")
    xin = x.clone()
    with be.capture() as cap:
        unused = (xin @ w).sum(1)                  # computed, then dropped: dead
        h = xin
        for _ in range(4):                         # a chain of matmul temporaries, one live at a time
            h = (h @ w).tanh()
        out = h.sum()
        del unused
    prog = cap.program(inputs=[xin], outputs=[out])
    assert prog.eliminated >= 2 and prog.reused >= 1
    assert prog.dispatches == cap.dispatches - prog.eliminated
    x2 = wt.tensor(r.standard_normal((32, 64)).astype(np.float32), device="webgpu")
    ref = x2
    for _ in range(4):
        ref = (ref @ w).tanh()
    np.testing.assert_allclose(prog.replay([x2])[0].item(), ref.sum().item(), rtol=1e-5)


def test_program_buffers_are_pinned_and_returned():
    be = webgpu.get_backend()
    x = wt.ones(1000, device="webgpu")
    xin = x.clone()
    with be.capture() as cap:
        y = (xin * 3).exp().sum()
    prog = cap.program(inputs=[xin], outputs=[y])
    pinned = len(be.alloc.pins)
    assert pinned >= 2
    for _ in range(3):                          # eager work meanwhile cannot take the program's buffers
        z = wt.zeros(1000, device="webgpu") + 1
    del z
    np.testing.assert_allclose(prog.replay([x * 0])[0].item(), 1000.0)
    del cap, prog, y
    assert len(be.alloc.pins) <= pinned - 2
