"""torch.optim.swa_utils vs PyTorch: AveragedModel (SWA and EMA, with and without buffers),
update_bn and SWALR, on every device."""
import math
import warnings

import numpy as np
import pytest
import torch

import webtorch as wt


def _np(t):
    return np.array(t.detach().cpu().tolist(), dtype=np.float64)


def _models(device):
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.BatchNorm1d(6), torch.nn.ReLU(), torch.nn.Linear(6, 2))
    wm = wt.nn.Sequential(wt.nn.Linear(4, 6), wt.nn.BatchNorm1d(6), wt.nn.ReLU(), wt.nn.Linear(6, 2))
    wm.load_state_dict(tm.state_dict())
    return tm, wm.to(device)


SWU = [dict(), dict(multi_avg_fn="ema", use_buffers=True), dict(avg_fn="ema"), dict(multi_avg_fn="swa")]


@pytest.mark.parametrize("kw", SWU, ids=["swa", "ema-multi-buffers", "ema-fn", "swa-multi"])
def test_averaged_model_matches_torch(kw, device):
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((8, 4)).astype(np.float32) for _ in range(4)]
    tm, wm = _models(device)
    out = []
    for lib, m, dev in ((torch, tm, None), (wt, wm, device)):
        su = lib.optim.swa_utils
        fns = {"ema": (su.get_ema_multi_avg_fn(0.9) if "multi_avg_fn" in kw else su.get_ema_avg_fn(0.8)),
               "swa": su.get_swa_multi_avg_fn()}
        args = {k: (fns[v] if isinstance(v, str) else v) for k, v in kw.items()}
        avg = su.AveragedModel(m, **args)
        opt = lib.optim.SGD(m.parameters(), lr=0.1, momentum=0.5)
        for x in xs:
            opt.zero_grad()
            inp = lib.tensor(x) if dev is None else lib.tensor(x, device=dev)
            (m(inp) ** 2).mean().backward()
            opt.step()
            avg.update_parameters(m)
        loader = [lib.tensor(x) if dev is None else lib.tensor(x, device=dev) for x in xs[:2]]
        su.update_bn(loader, avg)
        out.append((avg.state_dict(), avg(loader[0])))
    (tsd, ty), (wsd, wy) = out
    assert list(tsd) == list(wsd)
    for k in tsd:
        np.testing.assert_allclose(_np(wsd[k]), tsd[k].numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
    np.testing.assert_allclose(_np(wy), ty.detach().numpy(), rtol=1e-5, atol=1e-5)


def test_avg_fn_errors():
    for lib in (torch, wt):
        with pytest.raises(ValueError, match=r"^Invalid decay value 1.5 provided. Please provide a value in \[0,1\] "
                                             r"range.$"):
            lib.optim.swa_utils.get_ema_avg_fn(1.5)
        with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn should be provided"):
            lib.optim.swa_utils.AveragedModel(lib.nn.Linear(1, 1), avg_fn=lambda *a: 0, multi_avg_fn=lambda *a: 0)


@pytest.mark.parametrize("kw", [dict(swa_lr=0.05), dict(swa_lr=[0.01, 0.2], anneal_epochs=3, anneal_strategy="linear"),
                                dict(swa_lr=0.02, anneal_epochs=0)])
def test_swalr_matches_torch(kw):
    warnings.simplefilter("ignore")
    res = []
    for lib in (torch, wt):
        p1, p2 = lib.zeros(2, requires_grad=True), lib.zeros(3, requires_grad=True)
        opt = lib.optim.SGD([{"params": [p1]}, {"params": [p2], "lr": 0.3}], lr=0.1)
        s = lib.optim.swa_utils.SWALR(opt, **kw)
        seq = [s.get_last_lr()]
        for i in range(15):
            opt.step()
            s.step()
            seq.append(s.get_last_lr() + [g["lr"] for g in opt.param_groups])
        res.append((seq, s.state_dict()))
    (ts, tsd), (ws, wsd) = res
    for a, b in zip(ws, ts):
        assert all(math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-15) for x, y in zip(a, b)), (a, b)
    assert sorted(wsd) == sorted(tsd) and wsd["_step_count"] == tsd["_step_count"]
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear', instead got x"):
        wt.optim.swa_utils.SWALR(wt.optim.SGD([wt.zeros(1, requires_grad=True)]), 0.1, anneal_strategy="x")
