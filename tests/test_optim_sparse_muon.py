"""torch.optim.Muon and SparseAdam against PyTorch: several steps (parameters and state), the state_dict round
trip, and PyTorch's errors. Muon's Newton-Schulz runs in PyTorch's bfloat16 (emulated, see optim/_muon.py)."""
import pytest
import torch

import webtorch as wt


def _wt(t, device, requires_grad=False):
    return wt.tensor(t.tolist(), device=device, requires_grad=requires_grad)


def _close(a, b, atol=1e-6):
    assert torch.allclose(torch.tensor(a.tolist()), b, atol=atol, rtol=1e-5), (a, b)


def _muon_steps(T, device, kw, shapes, grads):
    start = [g * 0.5 for g in grads[0]]
    params = [_wt(s, device, True) if T is wt else s.clone().requires_grad_() for s in start]
    opt = T.optim.Muon(params, **kw)
    for step in grads:
        for p, g in zip(params, step):
            p.grad = _wt(g, device) if T is wt else g.clone()
        opt.step()
    return params, opt


@pytest.mark.parametrize("kw", [{}, dict(lr=0.02, nesterov=False, adjust_lr_fn="match_rms_adamw", weight_decay=0.01)])
def test_muon_steps(device, kw):
    if kw and device != "cpu":
        pytest.skip("the options are device-independent: the cpu covers them")
    torch.manual_seed(0)
    shapes = [(8, 5), (4, 6)] if device == "cpu" else [(4, 6)]
    grads = [[torch.randn(s) for s in shapes] for _ in range(2)]
    ref, ropt = _muon_steps(torch, None, kw, shapes, grads)
    got, wopt = _muon_steps(wt, device, kw, shapes, grads)
    for a, b in zip(got, ref):
        _close(a, b.detach(), 1e-5)
    for i, p in enumerate(got):
        _close(wopt.state[p]["momentum_buffer"], ropt.state[ref[i]]["momentum_buffer"])
    sd = wopt.state_dict()
    assert sorted(sd["param_groups"][0]) == sorted(ropt.state_dict()["param_groups"][0])
    fresh = wt.optim.Muon([wt.zeros(s, requires_grad=True, device=device) for s in shapes], **kw)
    fresh.load_state_dict(sd)
    assert fresh.state_dict()["param_groups"] == sd["param_groups"]


def test_muon_errors():
    for T in (torch, wt):
        for make, msg in ((lambda T=T: T.optim.Muon([T.zeros(3, requires_grad=True)]), "only supports 2D parameters"),
                          (lambda T=T: T.optim.Muon([T.zeros(2, 2)], lr=-1.0), "Learning rate should be >= 0"),
                          (lambda T=T: T.optim.Muon([T.zeros(2, 2)], adjust_lr_fn="x"), "function x is not supported")):
            with pytest.raises(ValueError, match=msg):
                make()
        p = T.zeros(2, 2, requires_grad=True)
        opt = T.optim.Muon([p], ns_steps=100)
        p.grad = T.ones(2, 2)
        with pytest.raises(ValueError, match="Number of steps must be less than 100"):
            opt.step()


def _sparse_grad(T, device, idx, vals, shape):
    if T is wt:
        return wt.sparse_coo_tensor(_wt(idx, device).long(), _wt(vals, device), shape)
    return torch.sparse_coo_tensor(idx, vals, shape)


@pytest.mark.parametrize("maximize", [False, True])
def test_sparse_adam_steps(device, maximize):
    torch.manual_seed(1)
    w0 = torch.randn(6, 3)
    steps = [(torch.tensor([[0, 2, 2, 5]]), torch.randn(4, 3)), (torch.tensor([[1, 2]]), torch.randn(2, 3)),
             (torch.tensor([[0, 4]]), torch.randn(2, 3))]
    out = []
    for T in (torch, wt):
        p = _wt(w0, device, True) if T is wt else w0.clone().requires_grad_()
        opt = T.optim.SparseAdam([p], lr=0.01, maximize=maximize)
        for idx, vals in steps:
            p.grad = _sparse_grad(T, device, idx, vals, (6, 3))
            opt.step()
        out.append((p, opt))
    (rp, ropt), (wp, wopt) = out
    _close(wp, rp.detach())
    rs, ws = ropt.state_dict()["state"][0], wopt.state_dict()["state"][0]
    assert ws["step"] == rs["step"] == 3 and type(ws["step"]) is int
    _close(ws["exp_avg"], rs["exp_avg"])
    _close(ws["exp_avg_sq"], rs["exp_avg_sq"])
    fresh = wt.optim.SparseAdam([_wt(w0, device, True)], lr=0.01)
    fresh.load_state_dict(wopt.state_dict())
    assert fresh.state_dict()["state"][0]["step"] == 3


def test_sparse_adam_errors():
    for T in (torch, wt):
        for make, msg in ((lambda T=T: T.optim.SparseAdam([T.zeros(2, requires_grad=True)], lr=0.0), "Invalid learn"),
                          (lambda T=T: T.optim.SparseAdam([T.zeros(2, requires_grad=True)], eps=0.0), "Invalid eps"),
                          (lambda T=T: T.optim.SparseAdam([T.zeros(2, requires_grad=True)], betas=(1.0, 0.9)),
                           "Invalid beta parameter at index 0"),
                          (lambda T=T: T.optim.SparseAdam([T.zeros(2, dtype=T.complex64, requires_grad=True)]),
                           r"Complex params at indices \[\[0, 0\]\]")):
            with pytest.raises(ValueError, match=msg):
                make()
        p = T.zeros(2, requires_grad=True)
        opt = T.optim.SparseAdam([p])
        p.grad = T.ones(2)
        with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients, please consider Adam"):
            opt.step()


@pytest.mark.parametrize("kw", [dict(padding_idx=1), {}])
def test_sparse_embedding_with_sparse_adam(device, kw):
    """nn.Embedding(sparse=True) gives a sparse gradient as PyTorch's (its rows uncoalesced, padding_idx's left
    out), and SparseAdam trains it to PyTorch's weights."""
    torch.manual_seed(2)
    w0, batches = torch.randn(6, 3), [torch.tensor([[0, 2], [2, 1]]), torch.tensor([[5, 1], [1, 4]])]
    out = []
    for T in (torch, wt):
        emb = T.nn.Embedding(6, 3, sparse=True, **kw)
        if T is wt:
            emb = emb.to(device)
        with (torch.no_grad() if T is torch else wt.no_grad()):
            emb.weight.copy_(w0 if T is torch else _wt(w0, device))
        opt = T.optim.SparseAdam(emb.parameters(), lr=0.1)
        for b in batches:
            opt.zero_grad()
            emb(b if T is torch else _wt(b, device)).pow(2).sum().backward()
            grads = emb.weight.grad
            opt.step()
        out.append((emb.weight, grads))
    (rw, rg), (ww, wg) = out
    assert wg.is_sparse and wg._indices().tolist() == rg._indices().tolist()
    _close(wg._values(), rg._values())
    _close(ww, rw.detach(), 1e-5)


def test_sparse_embedding_scale_grad_by_freq_raises():
    for T in (torch, wt):
        e = T.nn.Embedding(5, 3, sparse=True, scale_grad_by_freq=True)
        with pytest.raises(RuntimeError, match="scale_grad_by_freq not supported with sparse gradients"):
            e(T.tensor([[0, 2], [2, 1]])).sum().backward()


def _swap(T, make, device):
    """Steps a second model's parameters, with a state dict's state, through a live optimizer."""
    torch.manual_seed(3)
    w0, w1, g = torch.randn(3, 2), torch.randn(3, 2), torch.randn(3, 2)

    def param(t):
        return _wt(t, device, True) if T is wt else t.clone().requires_grad_()
    live = param(w0)
    opt = make(T, [live])
    live.grad = _wt(g, device) if T is wt else g.clone()
    opt.step()
    other = param(w1)
    saved = opt.state_dict()
    with T.optim.swap_in_optimizer_params_and_state(opt, {"w": other}, saved):
        other.grad = _wt(g * 2, device) if T is wt else g * 2
        opt.step()
        inside = [opt.param_groups[0]["params"][0] is other]
    return [other.tolist(), live.tolist(), inside, opt.param_groups[0]["params"][0] is live]


@pytest.mark.parametrize("make", [lambda T, p: T.optim.SGD(p, lr=0.1, momentum=0.9),
                                  lambda T, p: T.optim.Adam(p, lr=0.1)])
def test_swap_in_optimizer_params_and_state(device, make):
    got, ref = _swap(wt, make, device), _swap(torch, make, None)
    _close(wt.tensor(got[0]), torch.tensor(ref[0]))
    _close(wt.tensor(got[1]), torch.tensor(ref[1]))  # the live parameter, stepped once before the block only
    assert got[2:] == ref[2:] == [[True], True]
    for T in (torch, wt):
        p = T.zeros(2, requires_grad=True)
        opt = T.optim.SGD([p], lr=0.1, momentum=0.9)
        with pytest.raises(RuntimeError, match="requires initialized optimizer state"):
            with T.optim.swap_in_optimizer_params_and_state(opt, {"p": p}, opt.state_dict()):
                pass
