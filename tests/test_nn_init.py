"""nn.init and layers' default initialization: the same distributions as PyTorch (bounds, means,
standard deviations, measured statistically), and calculate_gain's table."""
import math

import numpy as np
import pytest
import torch

import webtorch as wt
from _nn_util import to_np

init = wt.nn.init


def _stats(t):
    a = to_np(t).astype(np.float64).ravel()
    return a, a.mean(), a.std()


@pytest.mark.parametrize("nl,param", [("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None),
                                      ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2), ("selu", None),
                                      ("conv_transpose2d", None)])
def test_calculate_gain(nl, param):
    assert init.calculate_gain(nl, param) == pytest.approx(torch.nn.init.calculate_gain(nl, param))


def test_calculate_gain_errors():
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        init.calculate_gain("foo")


def test_default_layer_inits_match_torch_distributions(device):
    wt.manual_seed(0)
    for make in (lambda nn: nn.Linear(256, 64), lambda nn: nn.Conv2d(16, 32, 3), lambda nn: nn.Conv1d(8, 64, 5),
                 lambda nn: nn.ConvTranspose2d(16, 8, 3)):
        w = make(wt.nn).to(device)
        t = make(torch.nn)
        fan_in = torch.nn.init._calculate_fan_in_and_fan_out(t.weight)[0]
        bound = 1 / math.sqrt(fan_in)
        a, mean, std = _stats(w.weight)
        assert a.min() >= -bound and a.max() <= bound
        assert a.max() > 0.95 * bound and a.min() < -0.95 * bound
        assert abs(mean) < 0.05 * bound
        assert std == pytest.approx(t.weight.detach().std().item(), rel=0.06)
        b, _, _ = _stats(w.bias)
        assert b.min() >= -bound and b.max() <= bound and len(set(b.tolist())) == len(b)
    # norms start at ones/zeros; embedding at N(0, 1) with the padding row zeroed
    bn = wt.nn.BatchNorm2d(3)
    assert bn.weight.tolist() == [1, 1, 1] and bn.bias.tolist() == [0, 0, 0]
    assert bn.running_var.tolist() == [1, 1, 1] and bn.num_batches_tracked.item() == 0
    emb = wt.nn.Embedding(500, 20, padding_idx=3)
    e, mean, std = _stats(emb.weight)
    assert abs(mean) < 0.03 and std == pytest.approx(1.0, rel=0.03)
    assert emb.weight[3].tolist() == [0.0] * 20
    mha = wt.nn.MultiheadAttention(32, 4)
    bound = math.sqrt(6 / (32 + 96))
    a, _, _ = _stats(mha.in_proj_weight)
    assert a.max() <= bound and a.max() > 0.95 * bound
    assert mha.in_proj_bias.abs().sum().item() == 0 and mha.out_proj.bias.abs().sum().item() == 0


@pytest.mark.parametrize("name", ["uniform", "normal", "xavier_uniform", "xavier_normal", "kaiming_uniform",
                                  "kaiming_normal_fan_out", "trunc_normal"])
def test_init_distributions(name, device):
    shape = (200, 100)
    w = wt.empty(shape, device=device)
    t = torch.empty(shape)
    wt.manual_seed(3)
    torch.manual_seed(3)
    calls = {
        "uniform": (lambda m, x: m.uniform_(x, -0.3, 0.7)),
        "normal": (lambda m, x: m.normal_(x, 0.5, 2.0)),
        "xavier_uniform": (lambda m, x: m.xavier_uniform_(x, gain=2.0)),
        "xavier_normal": (lambda m, x: m.xavier_normal_(x)),
        "kaiming_uniform": (lambda m, x: m.kaiming_uniform_(x, a=0.1)),
        "kaiming_normal_fan_out": (lambda m, x: m.kaiming_normal_(x, mode="fan_out", nonlinearity="relu")),
        "trunc_normal": (lambda m, x: m.trunc_normal_(x, mean=0.2, std=1.0, a=-1.0, b=1.5)),
    }
    r = calls[name](init, w)
    assert r is w
    calls[name](torch.nn.init, t)
    a, mean, std = _stats(w)
    b = t.numpy().astype(np.float64).ravel()
    assert mean == pytest.approx(b.mean(), abs=0.03 * max(b.std(), 1e-3) + 0.01)
    assert std == pytest.approx(b.std(), rel=0.03)
    if name in ("uniform", "xavier_uniform", "kaiming_uniform", "trunc_normal"):
        lo, hi = b.min(), b.max()
        span = hi - lo
        assert a.min() >= lo - 0.01 * span and a.max() <= hi + 0.01 * span


def test_constant_ones_zeros_eye_dirac_orthogonal():
    x = wt.nn.Parameter(wt.empty(3, 4))
    assert init.constant_(x, 0.25) is x and x.tolist() == [[0.25] * 4] * 3
    assert x.requires_grad and x.grad_fn is None
    init.ones_(x)
    assert x.sum().item() == 12
    init.zeros_(x)
    assert x.abs().sum().item() == 0
    init.eye_(x)
    assert x.tolist() == torch.nn.init.eye_(torch.empty(3, 4)).tolist()
    d = wt.empty(4, 2, 3, 3)
    init.dirac_(d)
    assert d.tolist() == torch.nn.init.dirac_(torch.empty(4, 2, 3, 3)).tolist()
    for shape in ((6, 4), (3, 8), (4, 2, 2)):
        q = init.orthogonal_(wt.empty(*shape), gain=2.0)
        m = to_np(q).reshape(shape[0], -1)
        gram = m @ m.T if shape[0] <= m.shape[1] else m.T @ m
        np.testing.assert_allclose(gram, 4.0 * np.eye(gram.shape[0]), atol=1e-4)
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed"):
        init.xavier_uniform_(wt.empty(3))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(wt.empty(3, 3), mode="fan_avg")
