"""torch.compile(model) with the training loop outside it (PyTorch's usual pattern): the compiled forward returns
outputs with a graph and `loss.backward()` runs later (aot.py). On webgpu the forward and its backward replay as
two programs joined by a CompiledFunctionBackward node; losses, gradients, parameters and BN statistics equal
PyTorch's eager loop. A call whose replay would overwrite buffers a pending graph still reads runs eagerly."""
import numpy as np
import pytest
import torch

from _nn_util import wt, rng_for, randn, randomize, sync, assert_close

from webtorch._dynamo.utils import counters


pytestmark = pytest.mark.usefixtures("fresh_dynamo")
STEPS = 8  # call 1 traces, 2-3 capture, 4+ replay


def _net(T, bn=True):
    nn = T.nn
    layers = [nn.Linear(6, 16), nn.Tanh()] + ([nn.BatchNorm1d(16)] if bn else []) + [nn.Linear(16, 3)]
    return nn.Sequential(*layers)


def _pair(device, name, bn=True):
    rng = rng_for(name)
    tm = _net(torch, bn)
    randomize(tm, rng)
    return rng, tm, sync(tm, _net(wt, bn), device)


@pytest.mark.parametrize("optim", ["sgd", "adamw"])
def test_compiled_module_trained_outside(device, optim):
    """`cm = torch.compile(model)`, then zero_grad / two micro-batches of cross_entropy(cm(x), y).backward() /
    step in the user's loop (BN in training mode): every step's loss, and the final parameters, gradients (summed
    over the micro-batches) and running stats equal PyTorch's; on webgpu calls 4+ replay forward and backward, the
    output's node is CompiledFunctionBackward."""
    rng, tm, wm = _pair(device, "aot" + optim)

    def opt(T, m):
        return T.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) if optim == "sgd" else \
            T.optim.AdamW(m.parameters(), lr=0.02)
    t_opt, w_opt = opt(torch, tm), opt(wt, wm)
    cm = wt.compile(wm)
    nodes = []
    for i in range(STEPS):
        batches = [(randn(rng, 8, 6), rng.randint(0, 3, 8)) for _ in range(2)]
        for T, m, o in ((torch, tm, t_opt), (wt, cm, w_opt)):
            o.zero_grad()
            for x, y in batches:  # gradient accumulation over two micro-batches
                out = m(T.tensor(x, device="cpu" if T is torch else device))
                loss = T.nn.functional.cross_entropy(out, T.tensor(y, device="cpu" if T is torch else device)) / 2
                loss.backward()
            o.step()
            if T is torch:
                want = loss
        nodes.append(out.grad_fn.name())
        assert_close(loss, want, device, f"loss at step {i + 1}")
    ws = wm.state_dict()
    for k, v in tm.state_dict().items():
        assert_close(ws[k], v, device, k)
    wp = dict(wm.named_parameters())
    for n, p in tm.named_parameters():
        assert_close(wp[n].grad, p.grad, device, f"grad of {n}")
    if device == "webgpu":
        assert counters["webgpu"]["replays"] == 2 * STEPS - 3, (counters["webgpu"], counters["replay_refused"])
        assert nodes[2:] == ["CompiledFunctionBackward"] * (STEPS - 2), nodes


def test_forward_twice_before_backward(webgpu):
    """Two compiled forwards, then one backward of both losses (two views of a batch, as in contrastive learning):
    the second replay first copies away what the first left for its backward, whose backward copies it back;
    gradients equal PyTorch's. Only call 4 runs eagerly (call 3's graph, recorded eagerly, reads the buffers)."""
    rng, tm, wm = _pair(webgpu, "twice", bn=False)
    cm = wt.compile(wm)
    for i in range(STEPS):
        xa, xb = randn(rng, 4, 6), randn(rng, 4, 6)
        tm.zero_grad()
        wm.zero_grad()
        want = (tm(torch.tensor(xa)).square().mean() + tm(torch.tensor(xb)).sin().sum())
        got = (cm(wt.tensor(xa, device=webgpu)).square().mean() + cm(wt.tensor(xb, device=webgpu)).sin().sum())
        want.backward()
        got.backward()
        assert_close(got, want, webgpu, f"loss at step {i + 1}")
        wp = dict(wm.named_parameters())
        for n, p in tm.named_parameters():
            assert_close(wp[n].grad, p.grad, webgpu, f"grad of {n} at step {i + 1}")
    assert counters["webgpu"]["replays"] == 2 * STEPS - 4, counters["webgpu"]
    assert counters["webgpu"]["eager"] == 1, counters["webgpu"]


def test_outputs_kept_without_backward_then_backpropagated(webgpu):
    """An inference loop without no_grad keeps each output while the next call runs (`out = model(x)`): calls 5+
    replay (call 4 runs eagerly: call 3's graph, recorded eagerly, reads the buffers); backpropagating any output
    kept from them later, in any order, gives PyTorch's gradients."""
    rng, tm, wm = _pair(webgpu, "kept", bn=False)
    cm = wt.compile(wm)
    xs = [randn(rng, 4, 6) for _ in range(STEPS)]
    outs = {}
    for i, x in enumerate(xs):
        out = cm(wt.tensor(x, device=webgpu))
        assert_close(out, tm(torch.tensor(x)), webgpu, f"call {i + 1}")
        if i >= 4:
            outs[i] = out
    assert counters["webgpu"]["replays"] == STEPS - 4, counters["webgpu"]
    for k in (STEPS - 3, STEPS - 1, 4, STEPS - 2):  # replayed outputs, out of order
        wm.zero_grad()
        tm.zero_grad()
        outs[k].sin().sum().backward()
        tm(torch.tensor(xs[k])).sin().sum().backward()
        wp = dict(wm.named_parameters())
        for n, p in tm.named_parameters():
            assert_close(wp[n].grad, p.grad, webgpu, f"grad of {n} through output {k + 1}")


def test_retain_graph_and_double_backward(webgpu):
    """backward(retain_graph=True) twice through a replayed node accumulates twice, and a third time after another
    call replayed (the retained graph's values were copied away and back); create_graph=True through the node
    raises PyTorch's error."""
    rng, tm, wm = _pair(webgpu, "retain", bn=False)
    cm = wt.compile(wm)
    for _ in range(4):
        x = randn(rng, 4, 6)
        cm(wt.tensor(x, device=webgpu)).sum().backward()
        tm(torch.tensor(x)).sum().backward()
    x = randn(rng, 4, 6)
    out = cm(wt.tensor(x, device=webgpu))
    assert out.grad_fn.name() == "CompiledFunctionBackward"
    got = out.square().sum()
    want = tm(torch.tensor(x)).square().sum()
    for _ in range(2):
        got.backward(retain_graph=True)
        want.backward(retain_graph=True)
    before = counters["webgpu"]["replays"]
    x2 = randn(rng, 4, 6)
    assert_close(cm(wt.tensor(x2, device=webgpu)), tm(torch.tensor(x2)), webgpu, "call while a graph is retained")
    assert counters["webgpu"]["replays"] == before + 1  # replayed, the retained graph's values copied away
    got.backward()
    want.backward()
    wp = dict(wm.named_parameters())
    for n, p in tm.named_parameters():
        assert_close(wp[n].grad, p.grad, webgpu, f"grad of {n}")
    out = cm(wt.tensor(x, device=webgpu))
    assert out.grad_fn.name() == "CompiledFunctionBackward"
    w = next(wm.parameters())
    (g,) = wt.autograd.grad(out.square().sum(), w, create_graph=False)
    assert_close(g, torch.autograd.grad(tm(torch.tensor(x)).square().sum(), next(tm.parameters()))[0], webgpu, "grad")
    out = cm(wt.tensor(x, device=webgpu))
    with pytest.raises(RuntimeError, match="torch.compile with aot_autograd does not currently support double "
                                           "backward"):
        wt.autograd.grad(out.square().sum(), w, create_graph=True)


def test_dropout_replayed_forward_and_backward_match_eager(webgpu):
    """Dropout in the compiled forward: from the same seed, the replayed forward and backward give eager webtorch's
    losses and gradients (the masks advance per replay)."""
    def run(compiled):
        wt.manual_seed(3)
        nn = wt.nn
        m = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Dropout(0.5), nn.Linear(32, 2)).to(webgpu)
        f = wt.compile(m) if compiled else m
        x = wt.ones(5, 6, device=webgpu)
        losses = []
        for _ in range(STEPS):
            m.zero_grad()
            loss = f(x).square().mean()
            loss.backward()
            losses.append(loss.item())
        return losses, [p.grad for p in m.parameters()]
    le, ge = run(False)
    lc, gc = run(True)
    assert counters["webgpu"]["replays"] == STEPS - 3, (counters["webgpu"], counters["replay_refused"])
    np.testing.assert_allclose(lc, le, rtol=1e-5, atol=1e-6)
    assert len(set(lc)) == STEPS  # the masks differ per step
    for a, b in zip(gc, ge):
        np.testing.assert_allclose(a.cpu().numpy(), b.cpu().numpy(), rtol=1e-5, atol=1e-6)


def test_parameter_hook_stays_eager(webgpu):
    """A tensor hook on a parameter (its backward would run it at the recording) keeps the compiled module eager,
    with the reason recorded; results stay PyTorch's and the hook runs once per backward."""
    rng, tm, wm = _pair(webgpu, "hooks", bn=False)
    seen = []
    next(wm.parameters()).register_hook(lambda g: seen.append(1))
    cm = wt.compile(wm)
    for i in range(5):
        x = randn(rng, 4, 6)
        got, want = cm(wt.tensor(x, device=webgpu)), tm(torch.tensor(x))
        got.sum().backward()
        want.sum().backward()
        assert_close(got, want, webgpu, f"call {i + 1}")
    assert len(seen) == 5
    assert counters["replay_refused"]["a hook on a parameter"] == 1, counters["replay_refused"]


def test_regional_compilation_inputs_require_grad(device):
    """PyTorch's regional compilation: each block of a model compiled on its own (`block.compile()`), so a block's
    input requires grad (the previous block's output, an embedding). The replayed backward also returns the input's
    gradient to the caller's graph: losses, every gradient and the parameters equal PyTorch's over 8 steps, an
    input leaf's .grad too."""
    def make(T):
        nn = T.nn
        return nn.Sequential(nn.Linear(6, 16), nn.Sequential(nn.Linear(16, 16), nn.Tanh()),
                             nn.Sequential(nn.Linear(16, 16), nn.GELU()), nn.Linear(16, 3))
    rng = rng_for("regional")
    tm = make(torch)
    randomize(tm, rng)
    wm = sync(tm, make(wt), device)
    for block in (wm[1], wm[2]):
        block.compile()
    t_opt, w_opt = torch.optim.SGD(tm.parameters(), lr=0.1), wt.optim.SGD(wm.parameters(), lr=0.1)
    for i in range(STEPS):
        x = randn(rng, 5, 6)
        tx, wx = torch.tensor(x, requires_grad=True), wt.tensor(x, device=device, requires_grad=True)
        for T, m, o, xx in ((torch, tm, t_opt, tx), (wt, wm, w_opt, wx)):
            o.zero_grad()
            loss = m(xx).square().mean()
            loss.backward()
            o.step()
            if T is torch:
                want = loss
        assert_close(loss, want, device, f"loss at step {i + 1}")
        assert_close(wx.grad, tx.grad, device, f"input grad at step {i + 1}")
    for (n, wp), tp in zip(wm.named_parameters(), tm.parameters()):
        assert_close(wp, tp, device, n)
    if device == "webgpu":  # both blocks replay from call 4
        assert counters["webgpu"]["replays"] == 2 * (STEPS - 3), (counters["webgpu"], counters["replay_refused"])


@pytest.mark.parametrize("whole_step", [False, True])
def test_freezing_and_unfreezing_a_parameter_retraces(device, whole_step):
    """A parameter frozen, later unfrozen (fine-tuning): its requires_grad is guarded, so the compiled model (or the
    compiled whole step) retraces and the gradients and parameters follow PyTorch's instead of missing or keeping
    a stale gradient."""
    rng, tm, wm = _pair(device, f"freeze{whole_step}", bn=False)
    t_opt, w_opt = torch.optim.SGD(tm.parameters(), lr=0.1), wt.optim.SGD(wm.parameters(), lr=0.1)

    def step(T, m, o, x):
        o.zero_grad()
        m(x).square().mean().backward()
        o.step()
    w_step = wt.compile(lambda x: step(wt, wm, w_opt, x)) if whole_step else None
    cm = wt.compile(wm)
    for i in range(12):
        if i in (0, 6):
            for m in (tm, wm):
                m[0].weight.requires_grad_(i == 6)
        x = randn(rng, 4, 6)
        step(torch, tm, t_opt, torch.tensor(x))
        if whole_step:
            w_step(wt.tensor(x, device=device))
        else:
            step(wt, cm, w_opt, wt.tensor(x, device=device))
        for (n, wp), tp in zip(wm.named_parameters(), tm.parameters()):
            assert (wp.grad is None) == (tp.grad is None), (i, n)
            assert_close(wp, tp, device, f"{n} after step {i + 1}")
    reasons = [r for r in counters["recompiles"] if "requires_grad mismatch. expected False, actual True" in r]
    assert reasons, dict(counters["recompiles"])


def test_module_compile_in_place(device):
    """nn.Module.compile() as PyTorch's: returns None, the module's calls run compiled (replayed on webgpu), its
    state_dict keys stay unprefixed, a deepcopy is not compiled, torch.compile's argument checks apply."""
    import copy
    rng, tm, wm = _pair(device, "inplace", bn=False)
    assert wm.compile(dynamic=False) is None and tm.compile(dynamic=False) is None
    assert list(wm.state_dict()) == list(tm.state_dict())
    with torch.no_grad(), wt.no_grad():
        for i in range(6):
            x = randn(rng, 3, 6)
            assert_close(wm(wt.tensor(x, device=device)), tm(torch.tensor(x)), device, f"call {i + 1}")
    if device == "webgpu":
        assert counters["webgpu"]["replays"] == 3, counters["webgpu"]
    assert "_compiled_call_impl" not in copy.deepcopy(wm).__dict__
    with pytest.raises(RuntimeError, match="Unrecognized mode=fast"):
        wm.compile(mode="fast")
