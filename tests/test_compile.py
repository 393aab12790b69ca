"""torch.compile: compiled == PyTorch eager (values and gradients) for an nn zoo and whole training steps on every
device; guards and retracing; graph breaks, explain and fullgraph; reset; the recompile limit; OptimizedModule;
the captured graph's printout."""
import inspect
import io
import logging

import numpy as np
import pytest
import torch

from _nn_util import wt, rng_for, randn, randomize, sync, assert_close

from webtorch._dynamo.eval_frame import compiled_state
from webtorch._dynamo.utils import counters


pytestmark = pytest.mark.usefixtures("fresh_dynamo")


def entries(fn):
    return list(compiled_state(fn).entries.values())


def mlp(T):
    nn = T.nn
    return nn.Sequential(nn.Linear(6, 16), nn.GELU(), nn.Linear(16, 3))


def cnn(T):
    nn = T.nn
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.Dropout(0.5),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16, 3))


class _LSTMHead:
    def __new__(cls, T):
        nn = T.nn

        class LSTMHead(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = nn.LSTM(4, 6, batch_first=True)
                self.fc = nn.Linear(6, 2)

            def forward(self, x):
                out, _ = self.lstm(x)
                return self.fc(out[:, -1])
        return LSTMHead()


def encoder(T):
    return T.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.1, batch_first=True)


ZOO = {"mlp": (mlp, (3, 6)), "cnn": (cnn, (2, 2, 4, 4)), "lstm": (_LSTMHead, (2, 5, 4)),
       "encoder": (encoder, (2, 5, 8))}


@pytest.mark.parametrize("name", list(ZOO))
def test_zoo_compiled_equals_pytorch(device, name):
    """Calls 1-5 of a compiled module under no_grad (eval mode: BN running stats, dropout off; on webgpu calls 4-5
    replay) equal PyTorch eager; gradients through a compiled forward equal PyTorch's."""
    make, shape = ZOO[name]
    rng = rng_for(name)
    tm = make(torch)
    randomize(tm, rng, buffers=True)
    tm.eval()
    wm = sync(tm, make(wt), device).eval()
    cm = wt.compile(wm)
    for call in range(5):
        x = randn(rng, *shape)
        with torch.no_grad(), wt.no_grad():
            assert_close(cm(wt.tensor(x, device=device)), tm(torch.tensor(x)), device, f"{name} call {call + 1}")
    if device == "webgpu":
        assert counters["webgpu"] == {"captures": 2, "replays": 2}, (counters["webgpu"], counters["replay_refused"])
    want, got = tm(torch.tensor(x)), cm(wt.tensor(x, device=device))
    cot = randn(rng, *want.shape)
    (want * torch.tensor(cot)).sum().backward()
    (got * wt.tensor(cot, device=device)).sum().backward()
    wp = dict(wm.named_parameters())
    for n, p in tm.named_parameters():
        assert_close(wp[n].grad, p.grad, device, f"grad of {n}")
    assert len(entries(cm)) == 2


@pytest.mark.parametrize("opt", ["sgd", "adamw"])
def test_training_step_compiled_equals_pytorch(device, opt):
    """forward + loss.backward() + optimizer.step() + zero_grad() inside the compiled function, 6 steps (BN in
    training mode; on webgpu steps 4-6 replay): losses, parameters and running stats equal PyTorch's eager loop."""
    def make(T):
        nn = T.nn
        return nn.Sequential(nn.Linear(5, 12), nn.Tanh(), nn.BatchNorm1d(12), nn.Linear(12, 2))

    def optim(T, m):
        if opt == "sgd":
            return T.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-3)
        return T.optim.AdamW(m.parameters(), lr=0.02, weight_decay=0.05)
    rng = rng_for("step" + opt)
    tm = make(torch)
    randomize(tm, rng)
    wm = sync(tm, make(wt), device)
    t_opt, w_opt = optim(torch, tm), optim(wt, wm)

    def step(T, m, o, x, y):
        loss = T.nn.functional.mse_loss(m(x), y)
        loss.backward()
        o.step()
        o.zero_grad()
        return loss

    @wt.compile
    def w_step(x, y):
        return step(wt, wm, w_opt, x, y)
    for i in range(6):
        x, y = randn(rng, 8, 5), randn(rng, 8, 2)
        want = step(torch, tm, t_opt, torch.tensor(x), torch.tensor(y))
        got = w_step(wt.tensor(x, device=device), wt.tensor(y, device=device))
        assert_close(got, want, device, f"loss at step {i}")
    ws = wm.state_dict()
    for k, v in tm.state_dict().items():
        assert_close(ws[k], v, device, k)
    assert len(entries(w_step)) == 1
    if device == "webgpu":  # calls 2-3 captured, 4-6 replayed
        assert counters["webgpu"] == {"captures": 2, "replays": 3}, (counters["webgpu"], counters["replay_refused"])
    graph = str(entries(w_step)[0].graph)
    assert f"torch.optim.{type(w_opt).__name__}.step" in graph and "torch.nn.functional.batch_norm" in graph


def test_graph_print_shows_ops_shapes_dtypes():
    m = wt.nn.Linear(4, 3)

    @wt.compile
    def f(x):
        return wt.relu(m(x)).sum(dim=1)
    f(wt.randn(2, 4))
    text = str(entries(f)[0].graph)
    assert '%x: "f32[2, 4]" = placeholder[target=x]' in text
    assert '%p_m_weight: "f32[3, 4]" = placeholder[target=p_m_weight]' in text
    assert '%relu: "f32[2, 3]" = torch.relu(' in text
    assert '%sum: "f32[2]" = torch.sum(%relu, dim=1)' in text
    shown = str(wt._dynamo.explain(f)(wt.randn(2, 4)).graphs[0])   # what a user prints: explain's graphs
    assert '%relu: "f32[2, 3]" = torch.relu(' in shown and "placeholder[target=p_m_weight]" in shown


def _line(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, s in enumerate(lines) if text in s)


def _with_item(x):
    y = x.sin() * 2
    if y.sum().item() > 0:
        y = y + 1
    return y.cos()


def test_graph_break_item_correct_and_explained(device):
    f = wt.compile(_with_item)
    for sign in (1, -1, 1):
        x = np.abs(randn(rng_for("brk"), 4)) * sign
        assert_close(f(wt.tensor(x, device=device)), _with_item(torch.tensor(x)), device)
    e = wt._dynamo.explain(_with_item)(wt.tensor(np.ones(4, np.float32), device=device))
    assert (e.graph_count, e.graph_break_count) == (2, 1)
    assert e.break_reasons[0].reason == "Unsupported Tensor.item() call with capture_scalar_outputs=False"
    fs = e.break_reasons[0].user_stack[-1]
    assert (fs.filename, fs.lineno) == (__file__, _line(_with_item, ".item()"))
    assert [wt.fx.target_name(t) for t in e.ops_per_graph[0]] == ["torch.sin", "torch.mul", "torch.sum"]
    text = str(e)
    assert "Graph Count: 2\nGraph Break Count: 1\n" in text and f"line {fs.lineno} in _with_item" in text
    assert counters["graph_break"]["Unsupported Tensor.item() call with capture_scalar_outputs=False"] >= 1


def test_fullgraph_raises_unsupported_naming_the_line():
    f = wt.compile(_with_item, fullgraph=True)
    with pytest.raises(wt._dynamo.exc.Unsupported) as info:
        f(wt.ones(4))
    assert isinstance(info.value, RuntimeError)
    assert f'File "{__file__}", line {_line(_with_item, ".item()")}, in _with_item' in str(info.value)
    assert "y.sum().item()" in str(info.value)

    def prints(x):
        print(x)
        return x + 1
    with pytest.raises(wt._dynamo.exc.Unsupported, match="printing a tensor"):
        wt.compile(prints, fullgraph=True)(wt.ones(2))
    assert wt.compile(lambda x: (x * 2).tolist())(wt.ones(2)) == [2.0, 2.0]


def test_guards_retrace():
    m = wt.nn.Sequential(wt.nn.Linear(3, 3), wt.nn.Dropout(0.5))
    opt = wt.optim.SGD(m.parameters(), lr=0.1)
    scale = [2.0]

    @wt.compile
    def f(x, k=1):
        y = m(x) * k * scale[0]
        if y.requires_grad:
            y.sum().backward()
            opt.step()
        return y
    x, x5 = wt.randn(2, 3), wt.randn(5, 3)
    f(x, 1)
    f(x, 1)
    assert len(entries(f)) == 1 and counters["frames"]["total"] == 1
    f(x5, 1)                                # a new shape
    m.eval()
    f(x5, 1)                                # a module's training flag
    opt.param_groups[0]["lr"] = 0.05
    f(x5, 1)                                # an optimizer's lr
    f(x5, 3)                                # a Python scalar argument
    scale[0] = 3.0
    f(x5, 3)                                # a float in a list the closure holds
    f(x5.clone().requires_grad_(), 3)       # requires_grad
    with wt.no_grad():
        f(x5, 3)                            # grad mode
    assert len(entries(f)) == 8 and counters["frames"]["total"] == 8
    f(x5, 3)
    assert len(entries(f)) == 8
    assert dict(counters["recompiles"]) == {
        "tensor 'x' size mismatch at index 0. expected 2, actual 5": 1, "L['m'].training == True": 1,
        "L['opt'].param_groups[0]['lr'] == 0.1": 1, "L['k'] == 1": 1,
        "L['scale'][0] == 2.0": 1, "tensor 'x' requires_grad mismatch. expected False, actual True": 1,
        "GLOBAL_STATE changed: grad_mode ": 1}


def test_module_guards_and_optimized_module():
    """OptimizedModule: PyTorch's state_dict keys, attribute forwarding, train()/eval() retrace."""
    tm, wm = mlp(torch), mlp(wt)
    ctm, cwm = torch.compile(tm), wt.compile(wm)
    assert type(cwm).__name__ == "OptimizedModule" and cwm._orig_mod is wm
    assert list(cwm.state_dict()) == list(ctm.state_dict()) == ["_orig_mod.0.weight", "_orig_mod.0.bias",
                                                                "_orig_mod.2.weight", "_orig_mod.2.bias"]
    assert getattr(cwm, "0") is wm[0] and len(cwm) == 3 and cwm.training
    for m in (ctm, cwm):
        with pytest.raises(TypeError, match="'OptimizedModule' object is not subscriptable"):
            m[0]
    cwm.eval()
    assert not wm.training and not cwm.training
    cwm.extra = 5
    assert wm.extra == 5
    sd = {k: v + 1 for k, v in cwm.state_dict().items()}
    cwm.load_state_dict(sd)
    assert_close(wm[0].bias, torch.tensor(sd["_orig_mod.0.bias"].tolist()), "cpu")
    x = wt.randn(2, 6)
    cwm(x)
    cwm.train()
    cwm(x)
    cwm(x)
    assert len(entries(cwm)) == 2
    assert counters["recompiles"]["L['self'].training == False"] == 1


def test_reset_and_recompile_limit(caplog):
    f = wt.compile(lambda x: x * 2, dynamic=False)  # every new shape a recompile, as PyTorch's dynamic=False
    for n in range(1, 9):
        f(wt.ones(n))
    assert len(entries(f)) == 8 and wt._dynamo.config.cache_size_limit == 8
    with caplog.at_level(logging.WARNING):
        assert f(wt.ones(9)).tolist() == [2.0] * 9
        f(wt.ones(10))
    msgs = [r.getMessage() for r in caplog.records if "hit config" in r.getMessage()]
    assert len(msgs) == 1
    assert msgs[0].startswith("torch._dynamo hit config.recompile_limit (8)\n   function: '<lambda>' (")
    assert "last reason: 0/7: tensor 'x' size mismatch at index 0. expected 8, actual 9" in msgs[0]
    assert len(entries(f)) == 8
    wt.compiler.reset()
    assert entries(f) == []
    f(wt.ones(9))
    assert len(entries(f)) == 1
    g = wt.compile(lambda x: x + 1, fullgraph=True, recompile_limit=1)
    g(wt.ones(1))
    with pytest.raises(wt._dynamo.exc.FailOnRecompileLimitHit, match="Hard failure due to fullgraph=True"):
        g(wt.ones(2))


@pytest.mark.parametrize("dynamic", [None, True])
def test_new_shapes_do_not_hit_the_recompile_limit(device, dynamic, caplog):
    """dynamic=None (automatic dynamic shapes: one recompile at the first new size) or True: PyTorch compiles the
    sizes as dynamic, so 20 sequence lengths never reach the recompile limit; webtorch compiles per shape (the 16
    newest kept) without counting them toward it: every call equals PyTorch's, no warning; another rank is a set
    of guards of its own."""
    rng = rng_for(f"dyn{dynamic}")
    w = randn(rng, 8)
    f = wt.compile(lambda x, k: (x * wt.tensor(w, device=device)).sum(-1) * k, dynamic=dynamic)
    with caplog.at_level(logging.WARNING):
        for i in range(40):
            n = 1 + (i * 7) % 20
            x = randn(rng, n, 8)
            got = f(wt.tensor(x, device=device), 2)
            assert_close(got, (torch.tensor(x) * torch.tensor(w)).sum(-1) * 2, device, f"length {n}")
    assert not [r for r in caplog.records if "hit config" in r.getMessage()]
    state = compiled_state(f)
    assert len(state.entries) == 16 and len(state.families) == 1
    assert sum(counters["recompiles"].values()) == (dynamic is None)  # PyTorch's one recompile to dynamic sizes
    x = randn(rng, 2, 3, 8)  # another rank: a set of guards of its own, as PyTorch recompiles for it
    assert_close(f(wt.tensor(x, device=device), 2), (torch.tensor(x) * torch.tensor(w)).sum(-1) * 2, device, "3-d")
    assert len(state.families) == 2


def test_disable_is_compiling_and_arguments():
    seen = []

    @wt.compiler.disable
    def helper(x):
        seen.append(wt.compiler.is_compiling())
        return x + 1

    def f(x):
        seen.append(wt.compiler.is_compiling())
        return helper(x) * 2
    cf = wt.compile(f)
    assert cf(wt.ones(2)).tolist() == [4.0, 4.0] and seen == [True, False]
    assert not wt.compiler.is_compiling()
    e = wt._dynamo.explain(f)(wt.ones(2))
    assert e.graph_break_count == 1
    assert e.break_reasons[0].reason == "Skip calling `torch.compiler.disable()`d function"
    assert wt.compile(f, disable=True) is f
    with pytest.raises(wt._dynamo.exc.InvalidBackend) as info:
        wt.compile(f, backend="nope")
    with pytest.raises(torch._dynamo.exc.InvalidBackend) as want:
        torch.compile(f, backend="nope")
    assert str(info.value) == str(want.value)
    for kw in ({"mode": "fast"}, {"mode": "default", "options": {}}):
        with pytest.raises(RuntimeError) as want:
            torch.compile(f, **kw)
        with pytest.raises(RuntimeError) as info:
            wt.compile(f, **kw)
        assert str(info.value) == str(want.value)
    deco = wt.compile(fullgraph=True)
    assert deco(lambda x: x * 3)(wt.ones(1)).tolist() == [3.0]
    with pytest.raises(wt._dynamo.exc.Unsupported, match="Skip calling `torch.compiler.disable"):
        deco(f)(wt.ones(1))
    x = wt.ones(2, 3)
    wt._dynamo.mark_dynamic(x, 0)
    assert x._dynamo_dynamic_indices == {0} and wt.compile(f, dynamic=True)(x).shape == (2, 3)


# ---- webgpu: capture (calls 2-3) and replay (calls 4+) ----------------------------------------------------------
def _dropout_net(T):
    nn = T.nn
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 4))


def _train(webgpu_dev, compiled, steps=7):
    """steps of an AdamW training step with dropout (zero_grad first, so .grad holds the last step's gradients)
    from seed 0; per step the loss, the dropout mask's effect and the webgpu counters' deltas."""
    from webtorch.backends import webgpu
    rng = rng_for("replay")
    wt.manual_seed(0)
    m = _dropout_net(wt).to(webgpu_dev)
    opt = wt.optim.AdamW(m.parameters(), lr=0.01, weight_decay=0.01)

    def step(x, y):
        opt.zero_grad()
        loss = wt.nn.functional.cross_entropy(m(x), y)
        loss.backward()
        opt.step()
        return loss
    fn = wt.compile(step) if compiled else step
    losses, deltas = [], []
    for i in range(steps):
        x = wt.tensor(randn(rng, 8, 16), device=webgpu_dev)
        y = wt.tensor(rng.randint(0, 4, 8), device=webgpu_dev)
        c0 = webgpu.counters()
        loss = fn(x, y)
        c1 = webgpu.counters()
        deltas.append({k: c1[k] - c0[k] for k in ("buffers_created", "submits", "dispatches")})
        losses.append(loss.item())
    return m, losses, deltas


def test_replay_training_step_equals_eager(webgpu):
    """A compiled AdamW step with dropout: losses, parameters and gradients equal eager webtorch from the same seed
    (the dropout masks drawn from the same Philox offsets); a replay is one submit and creates no GPU buffer."""
    me, le, _ = _train(webgpu, False)
    mc, lc, deltas = _train(webgpu, True)
    assert counters["webgpu"] == {"captures": 2, "replays": 4}, counters["replay_refused"]
    np.testing.assert_allclose(lc, le, rtol=1e-5, atol=1e-6)
    for (n, pc), pe in zip(mc.named_parameters(), me.parameters()):
        assert_close(pc, pe, webgpu, n, rtol=1e-5, atol=1e-6)
        assert_close(pc.grad, pe.grad, webgpu, f"grad of {n}", rtol=1e-5, atol=1e-6)
    for d in deltas[4:]:   # replays after the first: outputs come from pooled buffers
        assert d["buffers_created"] == 0 and d["submits"] == 1, deltas


def test_replay_closure_tensors_only(webgpu):
    """A step without arguments or modules (its parameters and data are closure tensors, as in a polynomial fit)
    is replayed on webgpu too, and equals eager."""
    def fit(compiled):
        x = wt.linspace(-1, 1, 64).to(webgpu)
        y = 0.5 - 2 * x + 3 * x * x
        a, b, c = (wt.zeros((), device=webgpu, requires_grad=True) for _ in range(3))
        opt = wt.optim.SGD([a, b, c], lr=0.1)

        def step():
            loss = (a + b * x + c * x * x - y).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss
        fn = wt.compile(step) if compiled else step
        return [fn().item() for _ in range(6)], [a.item(), b.item(), c.item()]
    le, pe = fit(False)
    lc, pc = fit(True)
    assert counters["webgpu"] == {"captures": 2, "replays": 3}, (counters["webgpu"], counters["replay_refused"])
    np.testing.assert_allclose(lc, le, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(pc, pe, rtol=1e-5, atol=1e-6)


def test_replay_dropout_masks_differ_and_match_eager(webgpu):
    def f(x):
        return wt.nn.functional.dropout(x, 0.5, training=True) * 2
    x = wt.ones(4, 64, device=webgpu)
    outs = {}
    for compiled in (False, True):
        wt.manual_seed(7)
        g = wt.compile(f) if compiled else f
        outs[compiled] = [g(x).tolist() for _ in range(6)]
    assert counters["webgpu"] == {"captures": 2, "replays": 3}
    assert outs[True] == outs[False]
    masks = {str(o) for o in outs[True]}
    assert len(masks) == 6


def test_replay_refused_stays_eager_and_correct(webgpu):
    """What a replay could not reproduce runs eagerly: Python state the function changes (every call from the
    first, without a retrace per call). (An output whose backward runs outside the compiled function replays with
    its backward: test_compile_aot.py.)"""
    lin = wt.nn.Linear(3, 2).to(webgpu)
    cm = wt.compile(lin)
    for _ in range(5):
        cm(wt.ones(1, 3, device=webgpu)).sum().backward()
    assert_close(lin.bias.grad, torch.full((2,), 5.0), webgpu)
    assert counters["webgpu"]["replays"] == 2
    calls = [0]

    def counted(x):
        calls[0] += 1
        return x * 2
    f = wt.compile(counted)

    class Box:
        pass
    box = Box()
    box.inner = Box()
    box.inner.k = 1

    def baked(x):
        box.inner.k += 1
        return x * box.inner.k
    g = wt.compile(baked)
    x = wt.ones(2, device=webgpu)
    got = [g(x).tolist() for _ in range(5)]
    assert got == [[k, k] for k in (2.0, 3.0, 4.0, 5.0, 6.0)]
    for _ in range(5):
        f(x)
    assert counters["webgpu"]["replays"] == 2
    assert dict(counters["replay_refused"]) == {
        "the function changes Python state it reads (L['box'].inner.k == 1)": 1,
        "the function changes Python state it reads (L['calls'][0] == 0)": 1}
    assert calls[0] == 5 and len(entries(f)) == 1


def _data_dependent(x):
    idx = wt.nonzero(x > 0)
    return idx.sum() + x.sum()


def test_host_read_inside_an_op_is_a_graph_break(webgpu):
    """nonzero reads the GPU to size its result: on webgpu that is a graph break at the user's line (that statement
    runs eagerly, the frame is split there: the statement after it is captured at calls 3-4 and replayed at call 5;
    fullgraph=True raises there)."""
    x = wt.tensor([1.0, -1.0, 2.0], device=webgpu)
    f = wt.compile(_data_dependent)
    assert [f(x).item() for _ in range(5)] == [4.0] * 5
    assert counters["webgpu"] == {"captures": 2, "replays": 1}
    e = wt._dynamo.explain(_data_dependent)(x)
    assert e.graph_break_count == 1 and e.break_reasons[0].user_stack[-1].lineno == _line(_data_dependent, "nonzero")
    with pytest.raises(wt._dynamo.exc.Unsupported, match="a read to the host inside an op"):
        wt.compile(_data_dependent, fullgraph=True)(x)


def test_replay_keeps_earlier_outputs(webgpu):
    """The tensors a compiled function returned at its captures keep their values while later calls replay (the
    program writes its outputs into the last capture's memory: that call hands out copies)."""
    def f(x):
        return (x.exp() - 1).mean(0)
    xs = [randn(rng_for(f"keep{i}"), 3, 4) for i in range(7)]
    cf = wt.compile(f)
    got = [cf(wt.tensor(x, device=webgpu)) for x in xs]
    assert counters["webgpu"] == {"captures": 2, "replays": 4}
    for i, (g, x) in enumerate(zip(got, xs)):
        assert_close(g, f(torch.tensor(x)), webgpu, f"call {i + 1}")


@pytest.mark.parametrize("change", ["optimizer.load_state_dict", "p.data = t"])
def test_replaced_memory_recaptures(device, change):
    """Between replays the user replaces memory the program reads and writes: an optimizer state loaded from a
    checkpoint (new state tensors), a parameter's .data assigned. The next call captures again instead of replaying
    into the old memory; losses and parameters equal PyTorch's."""
    rng = rng_for("moved" + change)

    def make(T):
        return T.nn.Sequential(T.nn.Linear(4, 8), T.nn.Tanh(), T.nn.Linear(8, 2))
    tm = make(torch)
    randomize(tm, rng)
    wm = sync(tm, make(wt), device)
    t_opt, w_opt = torch.optim.Adam(tm.parameters(), lr=0.05), wt.optim.Adam(wm.parameters(), lr=0.05)

    def step(m, o, x):
        o.zero_grad()
        loss = m(x).square().mean()
        loss.backward()
        o.step()
        return loss
    w_step = wt.compile(lambda x: step(wm, w_opt, x))
    saved = None
    new_w = randn(rng, 8, 4)
    for i in range(10):
        if i == 3:  # a checkpoint of the optimizers, through save/load
            saved = (torch.load(_roundtrip(torch, t_opt.state_dict()), weights_only=False),
                     wt.load(_roundtrip(wt, w_opt.state_dict())))
        if i == 6:
            if change == "p.data = t":
                tm[0].weight.data = torch.tensor(new_w)
                wm[0].weight.data = wt.tensor(new_w, device=device)
            else:
                t_opt.load_state_dict(saved[0])
                w_opt.load_state_dict(saved[1])
        x = randn(rng, 3, 4)
        assert_close(w_step(wt.tensor(x, device=device)), step(tm, t_opt, torch.tensor(x)), device, f"loss {i + 1}")
    for (n, wp), tp in zip(wm.named_parameters(), tm.parameters()):
        assert_close(wp, tp, device, n)
    if device == "webgpu":
        assert counters["webgpu"]["stale"] == 1 and counters["webgpu"]["replays"] >= 4, counters["webgpu"]


def _roundtrip(T, obj):
    buf = io.BytesIO()
    T.save(obj, buf)
    buf.seek(0)
    return buf
