"""Schedulers vs torch.optim.lr_scheduler: the lr (and momentum) of every group, step by step."""
import math
import warnings

import pytest
import torch

import webtorch as wt

S = [
    ("StepLR", dict(step_size=3, gamma=0.5), "SGD"),
    ("MultiStepLR", dict(milestones=[2, 5, 5, 9], gamma=0.3), "SGD"),
    ("ExponentialLR", dict(gamma=0.9), "SGD"),
    ("CosineAnnealingLR", dict(T_max=7, eta_min=0.001), "SGD"),
    ("CosineAnnealingLR", dict(T_max=3), "Adam"),
    ("LambdaLR", dict(lr_lambda=lambda e: 1.0 / (e + 1)), "SGD"),
    ("MultiplicativeLR", dict(lr_lambda=lambda e: 0.95), "SGD"),
    ("LinearLR", dict(start_factor=0.25, end_factor=0.9, total_iters=6), "SGD"),
    ("LinearLR", dict(), "Adam"),
    ("ConstantLR", dict(factor=0.5, total_iters=4), "SGD"),
    ("PolynomialLR", dict(total_iters=8, power=2.0), "SGD"),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=20), "SGD"),
    ("OneCycleLR", dict(max_lr=[0.5, 0.2], total_steps=20, anneal_strategy="linear", three_phase=True), "SGD"),
    ("OneCycleLR", dict(max_lr=0.01, epochs=4, steps_per_epoch=5, pct_start=0.25), "Adam"),
    ("OneCycleLR", dict(max_lr=0.01, total_steps=20, cycle_momentum=False, div_factor=10.0), "AdamW"),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=4, mode="triangular2"), "SGD"),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=3, step_size_down=5, mode="exp_range",
                      gamma=0.9), "SGD"),
    ("CosineAnnealingWarmRestarts", dict(T_0=4, T_mult=2, eta_min=0.01), "SGD"),
    ("CosineAnnealingWarmRestarts", dict(T_0=3), "Adam"),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=5), "SGD"),
    ("CyclicLR", dict(base_lr=[0.01, 0.02], max_lr=[0.1, 0.2], step_size_up=3, mode="triangular2"), "Adam"),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=4, scale_fn=lambda x: 0.5 ** x,
                      scale_mode="iterations", cycle_momentum=False), "Adam"),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=4, scale_fn=lambda x: 1 / x), "RMSprop"),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=2, mode="exp_range", gamma=0.95, base_momentum=0.7,
                      max_momentum=[0.9, 0.95]), "SGD"),
    ("PolynomialLR", dict(total_iters=30, power=0.5), "Adam"),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=60, three_phase=True), "RMSprop"),
    ("LambdaLR", dict(lr_lambda=[lambda e: 0.9 ** e, lambda e: 1 / (1 + e)]), "SGD"),
]


def _opts(lib, optname):
    p1 = lib.zeros(2, requires_grad=True)
    p2 = lib.zeros(3, requires_grad=True)
    kw = {"momentum": 0.9} if optname in ("SGD", "RMSprop") else {}
    return getattr(lib.optim, optname)([{"params": [p1]}, {"params": [p2], "lr": 0.3}], lr=0.1, **kw)


def _state(opt):
    out = []
    for g in opt.param_groups:
        out.append((g["lr"], g.get("momentum"), tuple(g["betas"]) if "betas" in g else None))
    return out


def _close(a, b):
    for ga, gb in zip(a, b):
        for x, y in zip(ga, gb):
            if x is None or isinstance(x, tuple):
                assert (x is None and y is None) or all(math.isclose(u, v, rel_tol=1e-12, abs_tol=1e-15)
                                                        for u, v in zip(x, y))
            else:
                assert math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-15), (x, y)


def _same(a, b, path="state_dict"):
    """Scheduler state dicts equal (floats to 1e-12), nested lists and dicts included."""
    if isinstance(b, dict):
        assert isinstance(a, dict) and sorted(a) == sorted(b), (path, sorted(a), sorted(b))
        for k in b:
            _same(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(b, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15), (path, a, b)
    else:
        assert a == b, (path, a, b)


@pytest.mark.parametrize("name,kw,optname", S, ids=[f"{s[0]}-{i}" for i, s in enumerate(S)])
def test_schedule_matches_torch(name, kw, optname):
    """The lr (and momentum / beta1) sequence over up to 50 steps; halfway, the run continues in a
    fresh webtorch optimizer and scheduler loaded from torch's scheduler state dict."""
    warnings.simplefilter("ignore")
    to, wo = _opts(torch, optname), _opts(wt, optname)
    ts = getattr(torch.optim.lr_scheduler, name)(to, **kw)
    ws = getattr(wt.optim.lr_scheduler, name)(wo, **kw)
    _close(_state(wo), _state(to))
    steps = min(50, ts.total_steps - 1) if name == "OneCycleLR" else 50
    for i in range(steps):
        to.step()
        wo.step()
        ts.step()
        ws.step()
        _close(_state(wo), _state(to))
        _close([tuple(ws.get_last_lr())], [tuple(ts.get_last_lr())])
        if i == steps // 2:
            _same(ws.state_dict(), ts.state_dict())
            wo2 = _opts(wt, optname)
            ws2 = getattr(wt.optim.lr_scheduler, name)(wo2, **kw)
            wo2.load_state_dict(wo.state_dict())
            ws2.load_state_dict(ts.state_dict())
            wo, ws = wo2, ws2
    _same(ws.state_dict(), ts.state_dict())


@pytest.mark.parametrize("name,kw", [("StepLR", dict(step_size=2)), ("MultiStepLR", dict(milestones=[1, 3])),
                                     ("ExponentialLR", dict(gamma=0.8)), ("CosineAnnealingLR", dict(T_max=5)),
                                     ("LinearLR", dict(total_iters=4)), ("PolynomialLR", dict(total_iters=4))])
def test_closed_form_epoch_argument(name, kw):
    warnings.simplefilter("ignore")
    to, wo = _opts(torch, "SGD"), _opts(wt, "SGD")
    ts = getattr(torch.optim.lr_scheduler, name)(to, **kw)
    ws = getattr(wt.optim.lr_scheduler, name)(wo, **kw)
    for e in [3, 1, 6, 2]:
        ts.step(e)
        ws.step(e)
        _close(_state(wo), _state(to))


@pytest.mark.parametrize("kw", [dict(), dict(mode="max", factor=0.5, patience=1, threshold=0.1, cooldown=2),
                                dict(threshold_mode="abs", threshold=0.05, patience=0, min_lr=[0.02, 0.05]),
                                dict(factor=0.2, patience=2, min_lr=0.01, eps=1e-3)])
def test_reduce_on_plateau(kw):
    to, wo = _opts(torch, "SGD"), _opts(wt, "SGD")
    ts = torch.optim.lr_scheduler.ReduceLROnPlateau(to, **kw)
    ws = wt.optim.lr_scheduler.ReduceLROnPlateau(wo, **kw)
    metrics = [1.0, 0.9, 0.95, 0.95, 0.96, 0.97, 0.5, 0.51, 0.52, 0.53, 0.54, 0.55, 0.56, 0.4, 0.41, 0.42,
               0.43, 0.44, 0.45, 0.46, 0.47, 0.48, 0.49, 0.5, 0.51]
    for m in metrics:
        ts.step(m)
        ws.step(wt.tensor(m))
        _close(_state(wo), _state(to))
        assert ws.num_bad_epochs == ts.num_bad_epochs and ws.cooldown_counter == ts.cooldown_counter
    ws2 = wt.optim.lr_scheduler.ReduceLROnPlateau(_opts(wt, "SGD"), **kw)
    ws2.load_state_dict(ws.state_dict())
    assert ws2.best == ws.best and ws2.last_epoch == ws.last_epoch


def test_sequential_and_chained():
    warnings.simplefilter("ignore")
    res = []
    for lib in (torch, wt):
        o = _opts(lib, "SGD")
        L = lib.optim.lr_scheduler
        s = L.SequentialLR(o, [L.LinearLR(o, start_factor=0.1, total_iters=3), L.ExponentialLR(o, gamma=0.9)],
                           milestones=[3])
        o2 = _opts(lib, "SGD")
        c = L.ChainedScheduler([L.ConstantLR(o2, factor=0.5, total_iters=2), L.ExponentialLR(o2, gamma=0.8)])
        seq = []
        for _ in range(8):
            o.step()
            o2.step()
            s.step()
            c.step()
            seq.append(tuple(s.get_last_lr()) + tuple(c.get_last_lr()))
        res.append(seq)
    for a, b in zip(*res):
        for x, y in zip(a, b):
            assert math.isclose(x, y, rel_tol=1e-12)


def test_sequential_and_chained_state_dicts():
    """SequentialLR / ChainedScheduler over 50 steps, state dicts as torch's, resumed from torch's."""
    warnings.simplefilter("ignore")

    def build(lib):
        o = _opts(lib, "Adam")
        L = lib.optim.lr_scheduler
        seq = L.SequentialLR(o, [L.LinearLR(o, start_factor=0.2, total_iters=5),
                                 L.CosineAnnealingLR(o, T_max=10, eta_min=0.001), L.StepLR(o, 4, gamma=0.7)],
                             milestones=[5, 20])
        o2 = _opts(lib, "SGD")
        ch = L.ChainedScheduler([L.CyclicLR(o2, 0.01, 0.1, step_size_up=3), L.ExponentialLR(o2, gamma=0.97)])
        return o, seq, o2, ch

    t, w = build(torch), build(wt)
    for i in range(50):
        for o in (t[0], t[2], w[0], w[2]):
            o.step()
        for s in (t[1], t[3], w[1], w[3]):
            s.step()
        _close(_state(w[0]) + _state(w[2]), _state(t[0]) + _state(t[2]))
        _close([tuple(w[1].get_last_lr() + w[3].get_last_lr())], [tuple(t[1].get_last_lr() + t[3].get_last_lr())])
        if i == 24:
            _same(w[1].state_dict(), t[1].state_dict())
            _same(w[3].state_dict(), t[3].state_dict())
            w2 = build(wt)
            for k in (0, 2):
                w2[k].load_state_dict(w[k].state_dict())
            w2[1].load_state_dict(t[1].state_dict())
            w2[3].load_state_dict(t[3].state_dict())
            w = w2


@pytest.mark.parametrize("T_mult", [1, 2])
def test_warm_restarts_fractional_epochs(T_mult):
    warnings.simplefilter("ignore")
    to, wo = _opts(torch, "SGD"), _opts(wt, "SGD")
    ts = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(to, T_0=3, T_mult=T_mult, eta_min=0.01)
    ws = wt.optim.lr_scheduler.CosineAnnealingWarmRestarts(wo, T_0=3, T_mult=T_mult, eta_min=0.01)
    for e in [0.5, 1.25, 2.9, 3.0, 3.7, 10.2, 20.5, 4.1, 0, 7]:
        ts.step(e)
        ws.step(e)
        _close(_state(wo), _state(to))
        _same(ws.state_dict(), ts.state_dict())
    with pytest.raises(ValueError, match="Expected non-negative epoch, but got -1"):
        ws.step(-1)


def test_state_dict_resume_and_warnings():
    o = _opts(wt, "SGD")
    s = wt.optim.lr_scheduler.StepLR(o, step_size=2, gamma=0.5)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        s.step()
    sd = s.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 1 and sd["base_lrs"] == [0.1, 0.3]
    o2 = _opts(wt, "SGD")
    s2 = wt.optim.lr_scheduler.StepLR(o2, step_size=2, gamma=0.5)
    s2.load_state_dict(sd)
    assert s2.last_epoch == 1
    with pytest.raises(KeyError, match="initial_lr"):
        wt.optim.lr_scheduler.StepLR(_opts(wt, "SGD"), step_size=2, last_epoch=3)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        wt.optim.lr_scheduler.StepLR(object(), step_size=2)
