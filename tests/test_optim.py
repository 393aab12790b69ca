"""Optimizers vs torch.optim: same params, same gradients, several steps, every option."""
import numpy as np
import pytest
import torch

import webtorch as wt

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.5, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1)),
    ("Adam", dict(lr=0.02, amsgrad=True)),
    ("Adam", dict(lr=0.01, amsgrad=True, maximize=True, weight_decay=0.05)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.3, amsgrad=True)),
    ("AdamW", dict(lr=0.01, maximize=True, betas=(0.5, 0.9))),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, eps=1e-6, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, momentum=0.9)),
    ("RMSprop", dict(lr=0.01, centered=True)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, maximize=True, weight_decay=0.01)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.5, eps=1e-6)),
    ("Adagrad", dict(lr=0.1, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1, maximize=True)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, maximize=True)),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, momentum_decay=0.05)),
    ("NAdam", dict(lr=0.01, weight_decay=0.2, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict()),  # the rectified branch (rho_t > 5) from step 6
    ("RAdam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.2, decoupled_weight_decay=True, maximize=True)),
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.1, lambd=0.01, alpha=0.5, t0=3, weight_decay=0.1, maximize=True)),  # averaging from step 4
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.1, etas=(0.3, 1.5), step_sizes=(0.01, 0.2), maximize=True)),
    ("Adafactor", dict()),
    ("Adafactor", dict(lr=0.1, beta2_decay=-0.5, eps=(1e-20, 1e-2), d=1.5, weight_decay=0.1, maximize=True)),
]

SHAPES = [(4, 3), (5,)]
STEPS = 7


def _data(seed=0):
    rng = np.random.default_rng(seed)
    params = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(STEPS)]
    # a sign flip and a zero keep Rprop's three cases (and ASGD's averaging) busy
    grads[2][0][0] = -grads[1][0][0]
    grads[3][1][:2] = 0
    return params, grads


def _np(t):
    return np.array(t.detach().cpu().tolist(), dtype=np.float32)


def _run(lib, name, kw, params, grads, device=None):
    """The parameters after every step, and the optimizer."""
    dev = {} if device is None else {"device": device}
    ps = [lib.tensor(p, requires_grad=True, **dev) for p in params]
    opt = getattr(lib.optim, name)(ps, **kw)
    traj = []
    for gs in grads:
        for p, g in zip(ps, gs):
            p.grad = lib.tensor(g, **dev)
        opt.step()
        traj.append([_np(p) for p in ps])
    return traj, opt


def _assert_state_dicts_match(wsd, tsd):
    """Same entries as PyTorch's (dtype and shape too), same values, same param_groups."""
    assert sorted(tsd["state"]) == sorted(wsd["state"])
    for i in tsd["state"]:
        assert sorted(tsd["state"][i]) == sorted(wsd["state"][i])
        for k, v in tsd["state"][i].items():
            w = wsd["state"][i][k]
            if v is None:
                assert w is None
                continue
            assert isinstance(w, wt.Tensor) and str(w.dtype) == str(v.dtype) and tuple(w.shape) == tuple(v.shape), k
            np.testing.assert_allclose(_np(w), v.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
    for tg, wg in zip(tsd["param_groups"], wsd["param_groups"]):
        assert set(tg) == set(wg)
        for k in tg:
            assert tg[k] == (list(wg[k]) if isinstance(tg[k], list) else wg[k]), k


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_matches_torch(name, kw, device):
    params, grads = _data()
    want, topt = _run(torch, name, kw, params, grads)
    got, wopt = _run(wt, name, kw, params, grads, device)
    for step, (ws, ts) in enumerate(zip(got, want)):
        for a, b in zip(ws, ts):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=f"after step {step + 1}")
    _assert_state_dicts_match(wopt.state_dict(), topt.state_dict())


def _to_torch_state_dict(sd):
    def conv(v):
        if isinstance(v, wt.Tensor):
            return torch.tensor(_np(v)) if str(v.dtype) == "torch.float32" else torch.tensor(v.tolist())
        if isinstance(v, list):
            return [conv(x) for x in v]
        return v
    return {"state": {i: {k: conv(v) for k, v in st.items()} for i, st in sd["state"].items()},
            "param_groups": sd["param_groups"]}


@pytest.mark.parametrize("name,kw", [("Adadelta", dict(weight_decay=0.1)), ("Adamax", dict()),
                                     ("NAdam", dict(decoupled_weight_decay=True, weight_decay=0.1)),
                                     ("RAdam", dict(betas=(0.9, 0.9))), ("ASGD", dict(t0=1)),
                                     ("Rprop", dict(lr=0.1)), ("Adam", dict(amsgrad=True)), ("Adafactor", dict()),
                                     ("RMSprop", dict(centered=True, momentum=0.5))])
def test_state_dict_both_ways(name, kw):
    """torch's state_dict() loads here as it is, and ours (as torch tensors) loads into torch: both
    optimizers then continue exactly as the original."""
    params, grads = _data(2)
    tps = [torch.tensor(p, requires_grad=True) for p in params]
    topt = getattr(torch.optim, name)(tps, **kw)
    wps = [wt.tensor(p, requires_grad=True) for p in params]
    wopt = getattr(wt.optim, name)(wps, **kw)

    def step(opts_and_params, gs):
        for opt, ps, lib in opts_and_params:
            for p, g in zip(ps, gs):
                p.grad = lib.tensor(g)
            opt.step()

    for gs in grads[:3]:
        step([(topt, tps, torch), (wopt, wps, wt)], gs)
    wps2 = [wt.tensor(p.detach().numpy(), requires_grad=True) for p in tps]
    wopt2 = getattr(wt.optim, name)(wps2, **kw)
    wopt2.load_state_dict(topt.state_dict())
    tps2 = [torch.tensor(_np(p), requires_grad=True) for p in wps]
    topt2 = getattr(torch.optim, name)(tps2, **kw)
    topt2.load_state_dict(_to_torch_state_dict(wopt.state_dict()))
    for gs in grads[3:]:
        step([(topt, tps, torch), (topt2, tps2, torch), (wopt2, wps2, wt)], gs)
    for a, b, c in zip(tps, tps2, wps2):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(_np(c), a.detach().numpy(), rtol=1e-5, atol=1e-6)
    _assert_state_dicts_match(wopt2.state_dict(), topt.state_dict())


def test_closure_backward_and_zero_grad(device):
    x = wt.tensor([1.0, -2.0, 3.0], device=device, requires_grad=True)
    opt = wt.optim.SGD([x], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (x * x).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert abs(loss.item() - 14.0) < 1e-5
    np.testing.assert_allclose(x.detach().cpu().tolist(), [0.8, -1.6, 2.4], rtol=1e-6)
    opt.zero_grad(set_to_none=False)
    assert x.grad is not None and x.grad.cpu().tolist() == [0.0, 0.0, 0.0]
    opt.zero_grad()
    assert x.grad is None


def test_param_groups_and_state_dict_roundtrip_with_torch():
    params, grads = _data(1)
    tps = [torch.tensor(p, requires_grad=True) for p in params]
    wps = [wt.tensor(p, requires_grad=True) for p in params]
    topt = torch.optim.Adam([{"params": [tps[0]]}, {"params": [tps[1]], "lr": 0.05}], lr=0.01, amsgrad=True)
    wopt = wt.optim.Adam([{"params": [wps[0]]}, {"params": [wps[1]], "lr": 0.05}], lr=0.01, amsgrad=True)
    for gs in grads[:2]:
        for tp, wp, g in zip(tps, wps, gs):
            tp.grad, wp.grad = torch.tensor(g), wt.tensor(g)
        topt.step()
        wopt.step()
    # webtorch state dict -> torch optimizer, continue stepping there; compare with torch's own run
    sd = wopt.state_dict()
    conv = {"state": {i: {k: (torch.tensor(v.tolist()) if isinstance(v, wt.Tensor) else v) for k, v in st.items()}
                      for i, st in sd["state"].items()}, "param_groups": sd["param_groups"]}
    tps2 = [torch.tensor(np.array(p.detach().tolist(), dtype=np.float32), requires_grad=True) for p in wps]
    topt2 = torch.optim.Adam([{"params": [tps2[0]]}, {"params": [tps2[1]], "lr": 0.05}], lr=0.01, amsgrad=True)
    topt2.load_state_dict(conv)
    # and torch's state dict -> a fresh webtorch optimizer
    tsd = topt.state_dict()
    wps3 = [wt.tensor(p.detach().numpy(), requires_grad=True) for p in tps]
    wopt3 = wt.optim.Adam([{"params": [wps3[0]]}, {"params": [wps3[1]], "lr": 0.05}], lr=0.01, amsgrad=True)
    wopt3.load_state_dict({"state": {i: {k: wt.tensor(v.numpy()) for k, v in st.items()} for i, st in
                                     tsd["state"].items()}, "param_groups": tsd["param_groups"]})
    assert wopt3.state[wps3[0]]["step"] == 2.0
    for gs in grads[2:]:
        for tp, tp2, wp3, g in zip(tps, tps2, wps3, gs):
            tp.grad, tp2.grad, wp3.grad = torch.tensor(g), torch.tensor(g), wt.tensor(g)
        topt.step()
        topt2.step()
        wopt3.step()
    for tp, tp2, wp3 in zip(tps, tps2, wps3):
        np.testing.assert_allclose(tp2.detach().numpy(), tp.detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.array(wp3.detach().tolist()), tp.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_errors():
    p = wt.zeros(2, requires_grad=True)
    with pytest.raises(TypeError, match="iterable of Tensors"):
        wt.optim.SGD(p, lr=0.1)
    with pytest.raises(ValueError, match="empty parameter list"):
        wt.optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        wt.optim.SGD([p * 2], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        wt.optim.Adam([p], lr=-1)
    with pytest.raises(ValueError, match="Nesterov"):
        wt.optim.SGD([p], lr=0.1, nesterov=True)
    opt = wt.optim.SGD([p], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [p]})
    q = wt.zeros(3, requires_grad=True)
    opt.add_param_group({"params": q, "lr": 0.5})
    assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[1]["momentum"] == 0
    with pytest.raises(ValueError, match="different number of parameter groups"):
        wt.optim.SGD([p], lr=0.1).load_state_dict(opt.state_dict())


@pytest.mark.usefixtures("webgpu")
def test_webgpu_adam_dispatch_budget():
    """A step must stay a handful of dispatches per parameter (each costs ~55 us on lavapipe)."""
    from webtorch.backends import webgpu
    ps = [wt.randn(64, 64, device="webgpu", requires_grad=True) for _ in range(4)]
    for p in ps:
        p.grad = wt.randn(64, 64, device="webgpu")
    opt = wt.optim.Adam(ps, lr=1e-3)
    opt.step()
    n0 = webgpu.dispatch_count()
    opt.step()
    per_param = (webgpu.dispatch_count() - n0) / len(ps)
    assert per_param <= 14, per_param


# ---- constructor validation: PyTorch's exception type and message -------------------------
BAD = [
    ("SGD", dict(lr=-1.0)), ("SGD", dict(momentum=-0.5)), ("SGD", dict(lr=0.1, fused=True, foreach=True)),
    ("Adam", dict(lr=-1.0)), ("Adam", dict(eps=-1e-8)), ("Adam", dict(betas=(1.0, 0.999))),
    ("Adam", dict(betas=(0.9, -0.1))), ("Adam", dict(weight_decay=-1)), ("Adam", dict(betas=(0.9, 1))),
    ("AdamW", dict(fused=True, foreach=True)), ("RMSprop", dict(alpha=-0.1)), ("RMSprop", dict(momentum=-1)),
    ("Adagrad", dict(lr_decay=-1)), ("Adagrad", dict(initial_accumulator_value=-1)),
    ("Adadelta", dict(lr=-1.0)), ("Adadelta", dict(rho=1.5)), ("Adadelta", dict(eps=-1.0)),
    ("Adadelta", dict(weight_decay=-1.0)), ("Adamax", dict(lr=-0.5)), ("Adamax", dict(betas=(0.9, 1.0))),
    ("Adamax", dict(eps=-1.0)), ("NAdam", dict(momentum_decay=-1.0)), ("NAdam", dict(betas=(-0.1, 0.9))),
    ("NAdam", dict(weight_decay=-0.1)), ("RAdam", dict(lr=-1e-3)), ("RAdam", dict(betas=(0.9, 1.5))),
    ("ASGD", dict(lr=-1.0)), ("ASGD", dict(weight_decay=-1.0)), ("Rprop", dict(lr=-1.0)),
    ("Rprop", dict(etas=(1.5, 1.2))), ("Rprop", dict(etas=(0.5, 0.9))), ("LBFGS", dict(lr=-1.0)),
    ("Adafactor", dict(lr=-1.0)), ("Adafactor", dict(beta2_decay=0.5)), ("Adafactor", dict(eps=(-1.0, 1e-3))),
    ("Adafactor", dict(eps=(None, -1.0))), ("Adafactor", dict(d=0.5)), ("Adafactor", dict(weight_decay=-1.0)),
]


@pytest.mark.parametrize("name,kw", BAD, ids=[f"{n}-{i}" for i, (n, _) in enumerate(BAD)])
def test_validation_errors_match_torch(name, kw):
    with pytest.raises(Exception) as te:
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **kw)
    with pytest.raises(type(te.value)) as we:
        getattr(wt.optim, name)([wt.zeros(2, requires_grad=True)], **kw)
    assert str(we.value) == str(te.value)


def test_differentiable_is_refused_not_ignored():
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        wt.optim.Adam([wt.zeros(2, requires_grad=True)], differentiable=True)
    # foreach / capturable / fused only choose PyTorch's implementation: same numbers here
    params, grads = _data()
    want, _ = _run(torch, "Adam", dict(lr=0.01, foreach=True), params, grads)
    got, _ = _run(wt, "Adam", dict(lr=0.01, foreach=True, capturable=True), params, grads)
    np.testing.assert_allclose(got[-1][0], want[-1][0], rtol=1e-5, atol=1e-6)


@pytest.mark.usefixtures("webgpu")
def test_webgpu_steps_do_not_read_back(monkeypatch):
    """Every optimizer but LBFGS steps without waiting on the GPU (state scalars are host floats;
    Adafactor's norms stay on the device)."""
    from webtorch.backends import webgpu
    drv = webgpu.get_backend().driver
    params, grads = _data()
    names = sorted({n for n, _ in CASES})
    opts = []
    for n in names:
        ps = [wt.tensor(p, device="webgpu", requires_grad=True) for p in params]
        kw = dict(CASES[[c[0] for c in CASES].index(n)][1])
        opts.append((getattr(wt.optim, n)(ps, **kw), ps))

    def no_read(*a, **k):
        raise AssertionError("an optimizer step read back from the GPU")

    monkeypatch.setattr(drv, "read_buffer", no_read)
    for gs in grads[:3]:
        for opt, ps in opts:
            for p, g in zip(ps, gs):
                p.grad = wt.tensor(g, device="webgpu")
            opt.step()
    with pytest.raises(AssertionError, match="read back"):  # the guard does catch a read
        opts[0][1][0].tolist()
    monkeypatch.undo()
    assert all(np.isfinite(_np(p)).all() for _, ps in opts for p in ps)


# ---- LBFGS ----------------------------------------------------------------------------------
def _rosenbrock(x):
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


def _regression(lib, w, b, X, y):
    return ((X @ w + b - y) ** 2).mean()


def _lbfgs_run(lib, x0s, loss_fn, kw, steps, dtype, device=None):
    dev = {} if device is None else {"device": device}
    xs = [lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True, **dev) for x in x0s]
    opt = lib.optim.LBFGS(xs, **kw)

    def closure():
        opt.zero_grad()
        loss = loss_fn(*xs)
        loss.backward()
        return loss

    out = []
    for _ in range(steps):
        loss = opt.step(closure)
        st = opt.state[xs[0]]
        xs_now = [np.array(x.detach().cpu().tolist()) for x in xs]
        out.append((float(loss.detach()), xs_now, st["func_evals"], st["n_iter"]))
    return out, opt


def _assert_lbfgs_same(got, want, rtol):
    for (lw, xw, fw, nw), (lt, xt, ft, nt) in zip(got, want):
        assert (fw, nw) == (ft, nt)
        assert lw == pytest.approx(lt, rel=rtol)
        for a, b in zip(xw, xt):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("kw", [dict(lr=0.1, max_iter=10, history_size=5),
                                dict(max_iter=10, history_size=5, line_search_fn="strong_wolfe"),
                                dict(max_iter=7, max_eval=9, history_size=2, line_search_fn="strong_wolfe",
                                     tolerance_change=1e-12)])
def test_lbfgs_rosenbrock_iterates_float64(kw):
    x0 = [np.array([-1.5, 2.0, 0.5, -0.3])]
    want, _ = _lbfgs_run(torch, x0, _rosenbrock, kw, 5, "float64")
    got, _ = _lbfgs_run(wt, x0, _rosenbrock, kw, 5, "float64")
    _assert_lbfgs_same(got, want, 1e-9)


@pytest.mark.parametrize("ls", [None, "strong_wolfe"])
def test_lbfgs_regression_matches_torch(ls, device):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((16, 3)).astype(np.float32)
    y = (X @ np.array([[1.5], [-2.0], [0.5]]) + 0.3 + 0.1 * rng.standard_normal((16, 1))).astype(np.float32)
    x0 = [np.zeros((3, 1), np.float32), np.zeros(1, np.float32)]
    kw = dict(lr=0.5 if ls is None else 1, max_iter=4, history_size=3, line_search_fn=ls)
    tX, ty = torch.tensor(X), torch.tensor(y)
    wX, wy = wt.tensor(X, device=device), wt.tensor(y, device=device)
    want, _ = _lbfgs_run(torch, x0, lambda w, b: _regression(torch, w, b, tX, ty), kw, 2, "float32")
    got, _ = _lbfgs_run(wt, x0, lambda w, b: _regression(wt, w, b, wX, wy), kw, 2, "float32", device)
    _assert_lbfgs_same(got, want, 1e-4)


def test_lbfgs_state_dict_from_torch_and_errors():
    x0 = [np.array([-1.2, 1.0, 0.8])]
    kw = dict(max_iter=4, history_size=3, line_search_fn="strong_wolfe")
    want, topt = _lbfgs_run(torch, x0, _rosenbrock, kw, 3, "float64")
    # torch's optimizer after 2 steps, continued here from its state dict
    _, topt2 = _lbfgs_run(torch, x0, _rosenbrock, kw, 2, "float64")
    x = wt.tensor(topt2.param_groups[0]["params"][0].detach().numpy(), requires_grad=True)
    opt = wt.optim.LBFGS([x], **kw)
    opt.load_state_dict(topt2.state_dict())
    assert opt.state[x]["n_iter"] == topt2.state[topt2.param_groups[0]["params"][0]]["n_iter"]

    def closure():
        opt.zero_grad()
        loss = _rosenbrock(x)
        loss.backward()
        return loss

    opt.step(closure)
    np.testing.assert_allclose(np.array(x.detach().tolist()), want[2][1][0], rtol=1e-9)

    p = wt.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match=r"^LBFGS doesn't support per-parameter options \(parameter groups\)$"):
        wt.optim.LBFGS([{"params": [p]}, {"params": [wt.zeros(1, requires_grad=True)]}])
    with pytest.raises(TypeError, match="closure"):
        wt.optim.LBFGS([p]).step()
    p.grad = wt.ones(2)
    with pytest.raises(RuntimeError, match="^only 'strong_wolfe' is supported$"):
        wt.optim.LBFGS([p], line_search_fn="armijo").step(lambda: (p * p).sum())


def test_hooks_as_torch():
    log = {}
    for lib in (torch, wt):
        calls = log[lib.__name__] = []
        p = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.5)
        opt.register_step_pre_hook(lambda o, a, k: calls.append(("pre", len(a))))
        h = opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
        opt.register_state_dict_pre_hook(lambda o: calls.append("sd-pre"))
        opt.register_state_dict_post_hook(lambda o, sd: calls.append("sd-post-1"))
        opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1}, prepend=True)
        opt.register_load_state_dict_pre_hook(lambda o, sd: calls.append(("load-pre", sd.get("extra"))))
        opt.register_load_state_dict_post_hook(lambda o: calls.append("load-post"))

        def closure():
            opt.zero_grad()
            loss = (p * p).sum()
            loss.backward()
            return loss

        opt.step(closure)
        h.remove()
        # a pre-hook may swap the closure
        opt.register_step_pre_hook(lambda o, a, k: ((o,), {"closure": closure}))
        opt.step()
        sd = opt.state_dict()
        calls.append(sorted(sd))
        opt.load_state_dict(sd)
        calls.append(p.detach().tolist())
    assert log["webtorch"] == log["torch"]


@pytest.mark.parametrize("kw", [dict(lr=0.1), dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1),
                                dict(lr=0.1, momentum=0.9, dampening=0.3)])
def test_sgd_float32_steps_bit_for_bit(kw):
    """SGD is add with alpha all through, fma(other, alpha, self) in PyTorch's cpu kernel: webtorch's cpu
    rounds it once too, so five steps give PyTorch's parameters bit for bit (not only within a tolerance)."""
    x0 = torch.randn(300, generator=torch.Generator().manual_seed(3))
    got = []
    for lib in (torch, wt):
        p = lib.tensor(x0.numpy(), requires_grad=True)
        opt = lib.optim.SGD([p], **kw)
        for _ in range(5):
            opt.zero_grad()
            (p ** 3 - p).sum().backward()
            opt.step()
        got.append(p.detach().numpy().view(np.uint32))
    assert (got[0] == got[1]).all()
