"""torch.compile graph breaks split the frame (resume.py): the function's top-level statement holding a break runs
eagerly on every call, the statements around it are compiled segments (captured and replayed on webgpu). Compiled
== PyTorch eager over calls that trace, capture and replay; every case that cannot be split falls back to running
the whole frame eagerly, with the reason recorded, and stays correct."""
import inspect
import linecache
import re
import traceback

import numpy as np
import pytest
import torch

from _nn_util import wt, rng_for, randn, randomize, sync, assert_close

from webtorch._dynamo import resume
from webtorch._dynamo.eval_frame import compiled_state
from webtorch._dynamo.utils import counters

CALLS = 8  # call 1 traces the frame; segments trace at call 2, capture at 3-4, replay at 5+


pytestmark = pytest.mark.usefixtures("fresh_dynamo")


def _line(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, s in enumerate(lines) if text in s)


def _net(T):
    nn = T.nn
    return nn.Sequential(nn.Linear(5, 12), nn.Tanh(), nn.Linear(12, 3))


def _make_step(T, kind, model, opt, log):
    """The issue's training step with a value read after opt.step(): appended to a list, printed, or branched on."""
    F = T.nn.functional
    if kind == "append":
        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            log.append(loss.item())
            return loss
    elif kind == "print":
        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            print("loss", loss.item())
            return loss
    else:
        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            if loss.item() > 1.65:
                log.append(1)
            else:
                log.append(-1)
            return loss * 2
    return step


def _webgpu_deltas(fn):
    from webtorch.backends import webgpu
    c0 = webgpu.counters()
    out = fn()
    c1 = webgpu.counters()
    return out, {k: c1[k] - c0[k] for k in ("submits", "dispatches", "buffers_created")}


@pytest.mark.parametrize("kind", ["append", "print", "branch"])
def test_step_with_break_split_equals_pytorch(device, kind, capsys):
    """forward, backward, SGD step and a value read (list append, print, a data-dependent branch) in one compiled
    function: losses, what the read produced and the parameters equal PyTorch's eager loop over 8 calls; the frame
    is split at the read, and on webgpu the statements before it replay from call 5 (a submit per replayed
    segment, one for the read, no buffer created)."""
    rng = rng_for("split" + kind)
    tm = _net(torch)
    randomize(tm, rng)
    wm = sync(tm, _net(wt), device)
    t_opt = torch.optim.SGD(tm.parameters(), lr=0.2, momentum=0.9)
    w_opt = wt.optim.SGD(wm.parameters(), lr=0.2, momentum=0.9)
    t_log, w_log = [], []
    t_step = _make_step(torch, kind, tm, t_opt, t_log)
    w_step = wt.compile(_make_step(wt, kind, wm, w_opt, w_log))
    t_out, w_out, deltas = [], [], []
    for i in range(CALLS):
        x, y = randn(rng, 8, 5), rng.randint(0, 3, 8)
        want = t_step(torch.tensor(x), torch.tensor(y))
        t_out.append(capsys.readouterr().out)
        wx, wy = wt.tensor(x, device=device), wt.tensor(y, device=device)
        if device == "webgpu":
            got, d = _webgpu_deltas(lambda: w_step(wx, wy))
            deltas.append(d)
        else:
            got = w_step(wx, wy)
        w_out.append(capsys.readouterr().out)
        assert_close(got, want, device, f"loss at call {i + 1}")
    assert w_log == pytest.approx(t_log, rel=1e-4)
    if kind == "print":
        printed = [[float(v) for v in re.findall(r"loss (\S+)", o)] for o in ("".join(t_out), "".join(w_out))]
        assert len(printed[1]) == CALLS and printed[1] == pytest.approx(printed[0], rel=1e-4)
    if kind == "branch":
        assert sorted(set(t_log)) == [-1, 1], t_log  # the branch flips between calls
    ws = wm.state_dict()
    for k, v in tm.state_dict().items():
        assert_close(ws[k], v, device, k)
    plan = compiled_state(w_step).plan
    assert [s.eager for s in plan.segments] == [False, True, False]
    assert plan.segments[0].outs == ("loss",)
    if device == "webgpu":
        seg0 = list(plan.segments[0].call.entries.values())
        assert len(seg0) == 1 and seg0[0].program is not None, seg0[0].eager_reason
        assert counters["webgpu"]["replays"] >= CALLS - 4, (counters["webgpu"], counters["replay_refused"])
        for d in deltas[5:]:  # a submit per replayed segment (the last one too for `return loss * 2`), the read's
            assert d["submits"] <= 2 + (kind == "branch") and d["buffers_created"] == 0, deltas


def _branchy(x, w):
    y = (x * w).sin()
    if y.sum().item() > 0:
        y = y * 2 + w
    else:
        y = y - 1
    return y.cos() * w


def test_data_dependent_branch_flips(device):
    """`if t.item() > 0:` as a top-level statement: that statement runs eagerly every call, so the branch taken
    follows the data when it flips between calls; the statements around it are compiled (replayed on webgpu)."""
    rng = rng_for("flip")
    w = randn(rng, 6)
    f = wt.compile(_branchy)
    signs = [1, -1, 1, 1, -1, -1, 1, -1, 1]
    for i, sign in enumerate(signs):
        x = np.abs(randn(rng, 6)) * sign * np.sign(w)
        got = f(wt.tensor(x, device=device), wt.tensor(w, device=device))
        assert_close(got, _branchy(torch.tensor(x), torch.tensor(w)), device, f"call {i + 1}")
    assert [s.eager for s in compiled_state(f).plan.segments] == [False, True, False]
    if device == "webgpu":
        assert counters["webgpu"]["replays"] >= 2 * (len(signs) - 4), (counters["webgpu"], counters["replay_refused"])


def test_print_and_disabled_call_statements(device, capsys):
    """print(t) and a torch.compiler.disable'd call, each a statement of its own: both run every call, eagerly
    (is_compiling() False inside the disabled function), and the result equals the function run uncompiled."""
    seen = []

    @wt.compiler.disable
    def record(t):
        seen.append((t.sum().item(), wt.compiler.is_compiling()))

    def f(x):
        y = x.exp() - 1
        print(y.shape, y)
        record(y)
        z = y * y + x
        return z.mean(0)
    rng = rng_for("printdis")
    xs = [randn(rng, 3, 4) for _ in range(CALLS)]
    want = [f(wt.tensor(x, device=device)) for x in xs]
    want_out, want_seen = capsys.readouterr().out, list(seen)
    seen.clear()
    cf = wt.compile(f)
    got = [cf(wt.tensor(x, device=device)) for x in xs]
    assert capsys.readouterr().out == want_out and seen == want_seen and not any(c for _, c in seen)
    for g, w in zip(got, want):
        assert_close(g, w.cpu(), device)
    assert [s.eager for s in compiled_state(cf).plan.segments] == [False, True, False]  # adjacent breaks: one
    e = wt._dynamo.explain(f)(wt.tensor(xs[0], device=device))
    capsys.readouterr()
    assert e.graph_break_count == 2 and [b.user_stack[-1].lineno for b in e.break_reasons] == [
        _line(f, "print(y.shape"), _line(f, "record(y)")]


def _item_net(T):
    class Net(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = T.nn.Linear(4, 4)

        def forward(self, x):
            h = self.fc(x)
            if h.sum().item() > 0:
                h = h.relu()
            return h
    return Net()


def _run_both(fn, make_args, calls=4):
    """fn's results, compiled vs uncompiled, over calls (make_args(i) gives a call's arguments)."""
    cf = wt.compile(fn)
    for i in range(calls):
        got, want = cf(*make_args(i)), fn(*make_args(i))
        assert_close(got, want, "cpu", f"call {i + 1}")
    return cf


def _fallback(cf):
    """The whole-frame fallback: no plan, the entry's reason (what the frame cannot be split for)."""
    state = compiled_state(cf)
    assert state.plan is None
    reasons = {e.eager_reason for e in state.entries.values()}
    assert len(reasons) == 1
    reason = reasons.pop()
    assert reason.startswith("graph break at ") and "; the frame is not split: " in reason, reason
    return reason.split("; the frame is not split: ")[1]


def _xs(i):
    return (wt.tensor(randn(rng_for(f"fb{i}"), 4)) * (1 if i % 2 else -1),)


last = None


def _uses_global(x):
    global last
    last = x
    if x.sum().item() > 0:
        x = x + 1
    return x * 2


def _returns_early(x):
    y = x.sin()
    if y.sum().item() > 0:
        return y
    return y.cos()


def _varargs(x, *rest):
    y = x.sin()
    if y.sum().item() > 0:
        y = y + 1
    return y * 2


def _varkw(x, **kw):
    y = x.sin()
    if y.sum().item() > 0:
        y = y + 1
    return y * 2


def _helper(x):
    y = x * 2
    if y.sum().item() > 0:
        y = y + 1
    return y.sin()


def _calls_helper(x):
    a = x.cos()
    b = _helper(a)
    return b * 3


def test_break_in_callee_splits_the_calling_statement(device):
    """A break inside a function the compiled frame calls: the frame's statement that made the call runs eagerly
    (the callee with it), the statements around it are compiled; the branch in the callee follows the data, the
    break's user_stack runs from the compiled frame to the callee's line, as PyTorch's."""
    f = wt.compile(_calls_helper)
    rng = rng_for("callee")
    for i, sign in enumerate([1, -1, -1, 1, 1, -1, 1, -1]):
        x = np.abs(randn(rng, 6)) * sign * 4
        got = f(wt.tensor(x, device=device))
        assert_close(got, _calls_helper(torch.tensor(x)), device, f"call {i + 1}")
    state = compiled_state(f)
    assert [s.eager for s in state.plan.segments] == [False, True, False]
    if device == "webgpu":
        assert counters["webgpu"]["replays"] >= 2 * 4, (counters["webgpu"], counters["replay_refused"])
    stacks = {}
    for T in (torch, wt):
        T._dynamo.reset()
        e = T._dynamo.explain(_calls_helper)(T.tensor(randn(rng, 6)))
        stacks[T] = [(fs.filename, fs.name, fs.lineno) for fs in e.break_reasons[0].user_stack]
    assert stacks[wt] == stacks[torch] == [(__file__, "_calls_helper", _line(_calls_helper, "_helper(a)")),
                                           (__file__, "_helper", _line(_helper, ".item()"))]


def test_break_in_module_forward_splits(device):
    """A break inside a module's forward, called from a compiled function or compiled as torch.compile(module):
    the calling statement, or forward's own statement, runs eagerly; the values follow PyTorch. A forward hook
    registered after the split runs: calls then run the module eagerly, with its hooks."""
    tnet = _item_net(torch)
    wnet = sync(tnet, _item_net(wt), device)
    f = wt.compile(_module_caller(wnet))
    cm = wt.compile(wnet)
    rng = rng_for("modsplit")
    with torch.no_grad(), wt.no_grad():
        for i in range(8):
            x = randn(rng, 3, 4) * (1 if i % 3 else -1)
            want = _module_caller(tnet)(torch.tensor(x))
            assert_close(f(wt.tensor(x, device=device)), want, device, f"caller, call {i + 1}")
            assert_close(cm(wt.tensor(x, device=device)), tnet(torch.tensor(x)), device, f"module, call {i + 1}")
        assert [s.eager for s in compiled_state(f).plan.segments] == [False, True, False]
        assert [s.eager for s in compiled_state(cm).plan.segments] == [False, True, False]
        if device == "webgpu":  # calls 5-8 replay: the caller's two segments and forward's first (its last has no op)
            assert counters["webgpu"]["replays"] >= 3 * 4, (counters["webgpu"], counters["replay_refused"])
        seen = []
        wnet.register_forward_hook(lambda m, args, out: seen.append(1) or out * 10)
        tnet.register_forward_hook(lambda m, args, out: out * 10)
        x = randn(rng, 3, 4)
        assert_close(cm(wt.tensor(x, device=device)), tnet(torch.tensor(x)), device, "module with a hook")
        assert seen == [1]


def _module_caller(net):
    def step(x):
        z = x.tanh() * 2
        h = net(z)
        return h.exp()
    return step


def test_fallback_no_source():
    """A lambda and exec'd code have no source to split."""
    cf = _run_both(lambda x: x.sin() * x.sum().item(), _xs)
    assert _fallback(cf) == "a lambda"
    ns = {}
    exec("def g(x):\n    y = x.sin()\n    if y.sum().item() > 0:\n        y = y + 1\n    return y * 2\n", ns)
    assert _fallback(_run_both(ns["g"], _xs)) == "no source"


@pytest.mark.parametrize("fn, why, text", [
    (_uses_global, "a global statement at line {}", "global last"),
    (_returns_early, "a return before the last break (line {})", "return y"),
    (_varargs, "*args or **kwargs", None),
    (_varkw, "*args or **kwargs", None),
], ids=["global", "return", "varargs", "varkw"])
def test_fallback_unsplittable_frames(fn, why, text):
    assert _fallback(_run_both(fn, _xs)) == (why.format(_line(fn, text)) if text else why)


def test_fallback_closures_written_and_cells():
    """nonlocal (a closure written to) and a local read by a nested function are not split."""
    seen = None

    def writes(x):
        nonlocal seen
        seen = x
        if x.sum().item() > 0:
            x = x + 1
        return x * 2
    assert _fallback(_run_both(writes, _xs)) == f"a nonlocal statement at line {_line(writes, 'nonlocal seen')}"
    assert seen is not None

    def cell(x):
        k = x.sum().item()
        scale = lambda t: t * k  # noqa: E731
        return scale(x)
    assert _fallback(_run_both(cell, _xs)) == "a local read by a nested function"


_PLAYGROUND = """def h(x, n):
    parts = [x * i for i in range(n)]
    s = sum(p.sum() for p in parts)
    print(s.item())
    return wt.stack([p + s for p in parts])
"""


def test_comprehensions_and_playground_source(device, capsys):
    """Comprehensions reading the frame's locals (cells in Python 3.11) do not stop the split; code whose source
    is only in linecache (the browser playground registers its cell as "<playground>") splits too."""
    linecache.cache["<playground>"] = (len(_PLAYGROUND), None, _PLAYGROUND.splitlines(True), "<playground>")
    try:
        fns = {}
        for T in (torch, wt):
            ns = {"wt": T}
            exec(compile(_PLAYGROUND, "<playground>", "exec"), ns)
            fns[T] = ns["h"]
        cf = wt.compile(fns[wt])
        for i in range(CALLS):
            x = randn(rng_for(f"pg{i}"), 3)
            assert_close(cf(wt.tensor(x, device=device), 3), fns[torch](torch.tensor(x), 3), device, f"call {i + 1}")
        plan = compiled_state(cf).plan
    finally:
        del linecache.cache["<playground>"]
    assert [s.eager for s in plan.segments] == [False, True, False] and plan.segments[0].outs == ("parts", "s")
    if device == "webgpu":
        assert counters["webgpu"]["replays"] >= 2 * (CALLS - 4), (counters["webgpu"], counters["replay_refused"])


def test_fallback_zero_arg_super():
    class Base:
        def run(self, x):
            return x * 2

    class Child(Base):
        def run(self, x):
            y = x.sin()
            if y.sum().item() > 0:
                y = y + 1
            return super().run(y)
    obj = Child()
    assert _fallback(_run_both(obj.run, _xs)) == "zero-argument super()"


def test_fallback_generator_and_coroutine():
    """resume.split refuses generators and coroutines (their body runs after the call returns)."""
    def gen(x):
        yield x.item()

    async def coro(x):
        return x.item()
    frame = traceback.FrameSummary(__file__, 1, "gen")
    assert resume.split(gen, None, [frame]) == resume.split(coro, None, [frame]) == "a generator or coroutine"


class _Scaler:
    """A bound method splits too: self's attributes (a tensor, a scale) are found by the segments."""

    def __init__(self, device):
        self.w = wt.tensor(randn(rng_for("scaler"), 4), device=device)
        self.calls = 0

    def __call__(self, x, shift=1.0):
        h = x * self.w
        self.calls += 1
        if h.sum().item() > 0:
            h = h + shift
        out = h.tanh() * self.w
        return out


def test_bound_method_and_defaults(device):
    s = _Scaler(device)
    cf = wt.compile(s.__call__)
    w = torch.tensor(s.w.tolist())
    for i in range(CALLS):
        x = randn(rng_for(f"bm{i}"), 4) * (1 if i % 3 else -1)
        h = torch.tensor(x) * w
        want = ((h + 1.0) if h.sum().item() > 0 else h).tanh() * w
        assert_close(cf(wt.tensor(x, device=device)), want, device, f"call {i + 1}")
    assert s.calls == CALLS and compiled_state(cf).plan is not None


def _raises_later(x, n):
    y = x * 2
    print(y.sum().item())
    z = y.reshape(n, 3)
    return z


def test_traceback_names_user_line(capsys):
    """An error raised in a segment after the break: the traceback names the user's file and line."""
    f = wt.compile(_raises_later)
    f(wt.ones(6), 2)
    with pytest.raises(RuntimeError, match="invalid for input of size 6") as info:
        f(wt.ones(6), 4)
    frames = traceback.extract_tb(info.tb)
    assert any(fs.filename == __file__ and fs.lineno == _line(_raises_later, "y.reshape") and
               fs.name == "_raises_later" and "y.reshape(n, 3)" in fs.line for fs in frames), frames
    assert compiled_state(f).plan is not None


def test_unbound_local_after_split():
    """A local bound only on one path of the eager statement: reading it unbound raises UnboundLocalError, as
    the uncompiled function does."""
    def f(x):
        y = x + 1
        if y.sum().item() > 0:
            z = y * 2
        return z.sum()
    cf = wt.compile(f)
    assert cf(wt.ones(2)).item() == 8.0
    assert cf(wt.ones(2)).item() == 8.0
    with pytest.raises(UnboundLocalError):
        f(-wt.ones(2) * 3)
    with pytest.raises(UnboundLocalError):
        cf(-wt.ones(2) * 3)


def test_fullgraph_still_raises_at_the_first_break():
    with pytest.raises(wt._dynamo.exc.Unsupported, match=f"line {_line(_raises_later, '.item()')}"):
        wt.compile(_raises_later, fullgraph=True)(wt.ones(6), 2)


def _either(x, first):
    if first:
        a = x * 2
    else:
        b = x * 3
    print(x.sum().item())
    try:
        r = a + 1
    except UnboundLocalError:
        r = b - 1
    return r


def test_unbound_locals_are_guarded(device, capsys):
    """Two locals bound on different paths before the break, the segment after it reads whichever is bound: it
    gets one tensor either way, and which local is unbound is part of its guards (a replay for one path never runs
    for the other)."""
    f = wt.compile(_either)
    for i in range(CALLS):
        first = i != CALLS - 2  # the other path after the replays began
        x = randn(rng_for(f"either{i}"), 4)
        assert_close(f(wt.tensor(x, device=device), first), _either(torch.tensor(x), first), device, f"call {i + 1}")
    assert len(compiled_state(f).plan.segments[-1].call.entries) == 2


def _alias_step(T, bn):
    def step(x):
        with T.no_grad():
            y = x * 2
            rm = bn.running_mean
        print(y.sum().item())
        rm.add_(y.mean(0))
        return rm * 1
    return step


def test_local_aliasing_state_is_not_replayed(device, capsys):
    """A local that is a module's buffer (the same memory), handed from a compiled segment to a later statement that
    updates it in place: that segment is never replayed (a replay hands out copies), and the buffer equals
    PyTorch's."""
    bns = {T: T.nn.BatchNorm1d(3) for T in (torch, wt)}
    for bn in bns.values():
        bn.running_mean.fill_(0.5)
    bns[wt].to(device)
    t_step, w_step = _alias_step(torch, bns[torch]), wt.compile(_alias_step(wt, bns[wt]))
    for i in range(CALLS):
        x = randn(rng_for(f"alias{i}"), 4, 3)
        assert_close(w_step(wt.tensor(x, device=device)), t_step(torch.tensor(x)), device, f"call {i + 1}")
    assert_close(bns[wt].running_mean, bns[torch].running_mean, device)
    assert [s.eager for s in compiled_state(w_step).plan.segments] == [False, True, False]
    if device == "webgpu":
        assert counters["replay_refused"][
            "an output is the memory of an input or of state (a replay would hand out a copy)"] == 1, counters


def test_explain_split_step_matches_pytorch():
    """explain on the step with `log.append(loss.item())`: PyTorch's graph and break counts (PyTorch breaks at
    backward() instead, webtorch traces through it), the break at the user's line; the first graph holds the whole
    training step."""
    rng = rng_for("explain")
    got = {}
    for T in (torch, wt):
        m = _net(T)
        step = _make_step(T, "append", m, T.optim.SGD(m.parameters(), lr=0.1), [])
        x, y = T.tensor(randn(rng, 8, 5)), T.tensor(rng.randint(0, 3, 8))
        got[T] = T._dynamo.explain(step)(x, y)
    want, e = got[torch], got[wt]
    assert (e.graph_count, e.graph_break_count) == (want.graph_count, want.graph_break_count) == (2, 1)
    assert e.break_reasons[0].reason == "Unsupported Tensor.item() call with capture_scalar_outputs=False"
    fs = e.break_reasons[0].user_stack[-1]
    assert (fs.filename, fs.lineno) == (__file__, _line(_make_step, "log.append(loss.item())"))
    assert "torch.optim.SGD.step" in [wt.fx.target_name(t) for t in e.ops_per_graph[0]]
