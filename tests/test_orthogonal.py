"""nn.utils.parametrizations.orthogonal against PyTorch on every device: the three maps with and without the
dynamic trivialization, tall/square/wide and batched weights (the same initial weight and, for the random
completion of a non-square base, the same seed), forward, gradients, SGD steps, state_dict keys, errors."""
import numpy as np
import pytest
import torch

import webtorch as wt

CASES = [((4, 4), None, True), ((4, 4), "cayley", True), ((5, 3), "householder", True),
         ((3, 5), "matrix_exp", True), ((5, 3), "cayley", True), ((3, 5), "householder", False),
         ((2, 4, 4), "householder", False), ((2, 3, 4), "cayley", True)]


def _holder(lib, w):
    """A module holding `weight` only (so batched weights too), of either library."""
    m = lib.nn.Module()
    m.weight = lib.nn.Parameter(lib.tensor(w))
    return m


def _pair(shape, omap, triv, seed=0):
    w = np.random.RandomState(seed).standard_normal(shape).astype(np.float32)
    mods = []
    for lib in (torch, wt):
        lib.manual_seed(seed)
        mods.append(lib.nn.utils.parametrizations.orthogonal(_holder(lib, w.tolist()), orthogonal_map=omap,
                                                             use_trivialization=triv))
    return mods


def _close(w, t, atol=5e-5):
    np.testing.assert_allclose(np.array(w.tolist()), t.detach().numpy(), atol=atol, rtol=1e-4)


@pytest.mark.parametrize("shape,omap,triv", CASES)
def test_orthogonal_steps_match_pytorch(device, shape, omap, triv):
    tm, wm = _pair(shape, omap, triv)
    wm.to(device)
    assert list(wm.state_dict()) == list(tm.state_dict())
    topt, wopt = torch.optim.SGD(tm.parameters(), lr=0.1), wt.optim.SGD(wm.parameters(), lr=0.1)
    x = np.random.RandomState(1).standard_normal(shape[:-2] + (2, shape[-2])).astype(np.float32)
    for _ in range(2):
        yt, yw = torch.tensor(x) @ tm.weight, wt.tensor(x, device=device) @ wm.weight
        _close(yw, yt)
        yt.pow(3).sum().backward()
        yw.pow(3).sum().backward()
        _close(wm.parametrizations.weight.original.grad, tm.parametrizations.weight.original.grad, 2e-4)
        topt.step(), wopt.step(), topt.zero_grad(), wopt.zero_grad()
    _close(wm.weight, tm.weight, 2e-4)
    n = min(shape[-2:])
    gram = wm.weight @ wm.weight.mT if shape[-2] < shape[-1] else wm.weight.mT @ wm.weight
    _close(gram, torch.eye(n).expand(*shape[:-2], n, n))


@pytest.mark.parametrize("omap,triv", [("householder", False), ("matrix_exp", True)])
def test_orthogonal_registered_and_assigned_on_device(device, omap, triv):
    """right_inverse on the device: geqrf's reflectors (householder) or the QR of a non-orthogonal square."""
    w = np.random.RandomState(2).standard_normal((4, 4)).astype(np.float32)
    tm = torch.nn.utils.parametrizations.orthogonal(_holder(torch, w), orthogonal_map=omap,
                                                                use_trivialization=triv)
    wm = wt.nn.utils.parametrizations.orthogonal(_holder(wt, w.tolist()).to(device), orthogonal_map=omap,
                                                  use_trivialization=triv)
    _close(wm.weight, tm.weight)
    q = np.linalg.qr(w + 1)[0].astype(np.float32)
    with torch.no_grad():
        tm.weight = torch.tensor(q)
    with wt.no_grad():
        wm.weight = wt.tensor(q, device=device)
    _close(wm.weight, tm.weight)
    _close(wm.parametrizations.weight.original, tm.parametrizations.weight.original)


def _message(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), orthogonal_map="qr"),
    lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), "bias"),  # a 1-D tensor
    lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), name="nope"),
    lambda lib: setattr(lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), use_trivialization=False),
                        "weight", lib.eye(3)),
    lambda lib: setattr(lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3)), "weight", lib.eye(2)),
    lambda lib: lib.nn.utils.parametrizations.orthogonal(_holder(lib, [[1j, 0], [0, 1j]]), "weight", "householder"),
])
def test_orthogonal_errors_match_pytorch(call):
    t_type, t_msg = _message(lambda: call(torch))
    w_type, w_msg = _message(lambda: call(wt))
    assert (w_type.__name__, w_msg.replace("webtorch", "torch")) == (t_type.__name__, t_msg)
