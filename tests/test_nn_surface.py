"""nn / utils / autograd names of issue #22 against PyTorch on every device: parametrizations and the
old weight/spectral norm hooks, Lazy modules, EmbeddingBag, CTCLoss, MaxUnpool, the new losses and
pads, functional_call, fusion, samplers, detect_anomaly, Variable. (The functional ops with an OpInfo
— grid_sample, embedding_bag, ctc_loss, max_unpool*, multi_margin_loss, ... — run in tests/opinfo.)"""
import warnings

import numpy as np
import pytest
import torch
from _nn_util import NoGrad, assert_close, check

import webtorch as wt

R = np.random.RandomState(22)


def X(*shape):
    return R.standard_normal(shape).astype(np.float32)


def I(high, *shape):  # noqa: E743
    return NoGrad(R.randint(0, high, shape).astype(np.int64))


def _weight_norm(nn, T):
    return nn.utils.parametrizations.weight_norm(nn.Linear(4, 3))


def _spectral_norm(nn, T):
    return nn.utils.parametrizations.spectral_norm(nn.Conv2d(2, 3, 3), n_power_iterations=2)


def _old_hooks(nn, T):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return nn.Sequential(nn.utils.weight_norm(nn.Linear(4, 5), dim=None), nn.utils.spectral_norm(nn.Linear(5, 3)))


def _grid_stn(nn, T):
    class STN(nn.Module):
        def __init__(self):
            super().__init__()
            self.loc = nn.Linear(16, 6)

        def forward(self, x):
            theta = self.loc(x.flatten(1)).view(-1, 2, 3)
            grid = nn.functional.affine_grid(theta, list(x.shape), align_corners=False)
            return nn.functional.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=False)
    return STN()


LAYERS = [
    ("weight_norm", _weight_norm, [X(2, 4)]),
    ("spectral_norm", _spectral_norm, [X(1, 2, 5, 5)]),
    ("old_weight_spectral_norm_hooks", _old_hooks, [X(2, 4)]),
    ("spatial_transformer", _grid_stn, [X(2, 1, 4, 4)]),
    ("embedding_bag_sum_offsets", lambda nn, T: nn.EmbeddingBag(10, 3, mode="sum"), [I(10, 7), NoGrad(
        np.array([0, 2, 2, 5], dtype=np.int64))]),
    ("embedding_bag_max_2d", lambda nn, T: nn.EmbeddingBag(10, 3, mode="max", padding_idx=0), [I(10, 3, 4)]),
    ("multi_margin_loss", lambda nn, T: nn.MultiMarginLoss(p=2, margin=0.5), [X(4, 5), I(5, 4)]),
    ("multilabel_margin_loss", lambda nn, T: nn.MultiLabelMarginLoss(), [X(3, 4), NoGrad(
        np.array([[3, 0, -1, 1], [1, 2, 0, 3], [2, -1, 0, 0]], dtype=np.int64))]),
    ("triplet_with_distance", lambda nn, T: nn.TripletMarginWithDistanceLoss(swap=True), [X(3, 4), X(3, 4), X(3, 4)]),
    ("reflection_pad3d", lambda nn, T: nn.ReflectionPad3d((1, 0, 2, 1, 1, 1)), [X(1, 2, 3, 4, 3)]),
    ("circular_pad3d", lambda nn, T: nn.CircularPad3d(1), [X(1, 1, 2, 3, 3)]),
    ("lppool3d", lambda nn, T: nn.LPPool3d(2, 2), [np.abs(X(1, 2, 4, 4, 4)) + 0.1]),
    ("channel_shuffle", lambda nn, T: nn.ChannelShuffle(2), [X(1, 4, 2, 3)]),
]


@pytest.mark.parametrize("case", LAYERS, ids=[c[0] for c in LAYERS])
def test_layer_matches_torch(case, device):
    name, make, inputs = case
    check(device, make, inputs, name=name)


def test_ctc_loss_module(device):
    T_, N, C = 10, 2, 5
    logits = X(T_, N, C)
    targets = np.array([[1, 2, 2], [3, 1, 0]], dtype=np.int64)
    tl = torch.tensor(logits, requires_grad=True)
    t_loss = torch.nn.CTCLoss()(tl.log_softmax(2), torch.tensor(targets), torch.tensor([10, 8]), torch.tensor([3, 2]))
    t_loss.backward()
    wl = wt.tensor(logits, device=device, requires_grad=True)
    w_loss = wt.nn.CTCLoss()(wl.log_softmax(2), wt.tensor(targets, device=device), wt.tensor([10, 8], device=device),
                             wt.tensor([3, 2], device=device))
    w_loss.backward()
    assert_close(w_loss, t_loss, device)
    assert_close(wl.grad, tl.grad, device)


def test_max_unpool_round_trip(device):
    x = X(1, 2, 4, 6)
    tv, ti = torch.nn.MaxPool2d(2, return_indices=True)(torch.tensor(x))
    wv, wi = wt.nn.MaxPool2d(2, return_indices=True)(wt.tensor(x, device=device))
    assert wi.tolist() == ti.tolist()
    assert_close(wt.nn.MaxUnpool2d(2)(wv, wi), torch.nn.MaxUnpool2d(2)(tv, ti), device)
    assert repr(wt.nn.MaxUnpool2d(2)) == repr(torch.nn.MaxUnpool2d(2))


@pytest.mark.parametrize("name,args,shape", [("LazyLinear", (4,), (2, 3)), ("LazyConv2d", (4, 3), (2, 3, 6, 6)),
                                             ("LazyConvTranspose1d", (2, 3), (2, 3, 5)),
                                             ("LazyBatchNorm1d", (), (4, 3))])
def test_lazy_module_materializes(name, args, shape, device):
    tm, wm = getattr(torch.nn, name)(*args), getattr(wt.nn, name)(*args).to(device)
    assert repr(wm) == repr(tm)
    assert isinstance(wm.weight, wt.nn.UninitializedParameter)
    x = X(*shape)
    tm(torch.tensor(x))
    wm(wt.tensor(x, device=device))
    assert type(wm).__name__ == type(tm).__name__ and type(wm.weight) is wt.nn.Parameter
    assert [tuple(p.shape) for p in wm.parameters()] == [tuple(p.shape) for p in tm.parameters()]
    wm.load_state_dict({k: wt.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    assert_close(wm(wt.tensor(x, device=device)), tm(torch.tensor(x)), device)


def test_lazy_load_state_dict_materializes():
    m = wt.nn.LazyLinear(3)
    m.load_state_dict({"weight": wt.ones(3, 2), "bias": wt.zeros(3)})
    assert tuple(m.weight.shape) == (3, 2) and type(m.weight) is wt.nn.Parameter


def test_parametrize_api():
    P = wt.nn.utils.parametrize

    class Symmetric(wt.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(0, 1)

    m = wt.nn.Linear(3, 3)
    P.register_parametrization(m, "weight", Symmetric())
    assert type(m).__name__ == "ParametrizedLinear" and P.is_parametrized(m, "weight")
    assert P.type_before_parametrizations(m) is wt.nn.Linear
    assert sorted(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    w = m.weight
    assert w.tolist() == w.t().tolist()
    with P.cached():
        assert m.weight is m.weight
    with pytest.raises(RuntimeError, match="does not implement right_inverse"):
        m.weight = wt.eye(3)
    P.remove_parametrizations(m, "weight")
    assert type(m) is wt.nn.Linear and m.weight.tolist() == w.tolist()
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        P.remove_parametrizations(m, "weight")


def test_functional_call_and_fusion(device):
    tm, wm = torch.nn.Linear(4, 3), wt.nn.Linear(4, 3).to(device)
    x = X(2, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        got = wt.nn.utils.stateless.functional_call(wm, {"weight": wt.ones(3, 4, device=device)},
                                                    (wt.tensor(x, device=device),))
        want = torch.nn.utils.stateless.functional_call(tm, {"weight": torch.ones(3, 4)}, (torch.tensor(x),))
    assert_close(got - wm.bias, want - tm.bias, device)
    assert wm.weight.shape == (3, 4) and not np.allclose(wm.weight.detach().cpu().numpy(), 1)
    tc, tb = torch.nn.Conv2d(2, 3, 3).eval(), torch.nn.BatchNorm2d(3).eval()
    with torch.no_grad():
        tb.running_mean.uniform_()
        tb.running_var.uniform_(1, 2)
    wc, wb = wt.nn.Conv2d(2, 3, 3).eval(), wt.nn.BatchNorm2d(3).eval()
    for t, w in ((tc, wc), (tb, wb)):
        w.load_state_dict({k: wt.tensor(v.numpy()) for k, v in t.state_dict().items()})
    xi = X(1, 2, 5, 5)
    assert_close(wt.nn.utils.fuse_conv_bn_eval(wc.to(device), wb.to(device))(wt.tensor(xi, device=device)),
                 torch.nn.utils.fuse_conv_bn_eval(tc, tb)(torch.tensor(xi)), device)


def test_samplers():
    wt.manual_seed(0)
    s = wt.utils.data.WeightedRandomSampler([0.1, 0.0, 0.9, 0.5], 20)
    drawn = list(s)
    assert len(s) == len(drawn) == 20 and set(drawn) <= {0, 2, 3}
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        wt.utils.data.WeightedRandomSampler([1.0], 0)
    for kw in (dict(shuffle=False), dict(shuffle=False, drop_last=True)):
        for rank in range(3):
            want = list(torch.utils.data.DistributedSampler(range(10), num_replicas=3, rank=rank, **kw))
            assert list(wt.utils.data.DistributedSampler(range(10), num_replicas=3, rank=rank, **kw)) == want
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        wt.utils.data.DistributedSampler(range(10))
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval \[0, 2\]"):
        wt.utils.data.DistributedSampler(range(10), num_replicas=3, rank=3)


def test_detect_anomaly_and_variable(device):
    x = wt.tensor([0.0, 1.0], device=device, requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        guard = wt.autograd.detect_anomaly()
    with guard, pytest.raises(RuntimeError, match=r"Function 'DivBackward0' returned nan values in its 1th output."):
        (x / x).sum().backward()
    (x / x).sum().backward()  # off again: NaN gradients pass, as PyTorch's
    with wt.autograd.set_detect_anomaly(True):
        (x * 2).sum().backward()
    v = wt.autograd.Variable(wt.ones(2, device=device), requires_grad=True)
    assert type(v) is wt.Tensor and v.requires_grad and v.is_leaf
    assert isinstance(wt.ones(1), wt.autograd.Variable)
    with pytest.raises(RuntimeError, match="deprecated, use torch.tensor"):
        wt.autograd.variable(1)


def test_sync_batchnorm_single_process(device):
    check(device, lambda nn, T: nn.SyncBatchNorm(3), [X(2, 3, 4)], name="sync_batchnorm")
    m = wt.nn.SyncBatchNorm.convert_sync_batchnorm(wt.nn.Sequential(wt.nn.Conv2d(2, 3, 1), wt.nn.BatchNorm2d(3)))
    t = torch.nn.SyncBatchNorm.convert_sync_batchnorm(torch.nn.Sequential(torch.nn.Conv2d(2, 3, 1),
                                                                          torch.nn.BatchNorm2d(3)))
    assert repr(m) == repr(t)


def test_checkpoint_helpers():
    C, TC = wt.utils.checkpoint, torch.utils.checkpoint
    a, b = wt.ones(2, requires_grad=True), 3
    out = C.detach_variable((a, b))
    assert out[1] == 3 and out[0].requires_grad and out[0].is_leaf and out[0] is not a
    with pytest.raises(RuntimeError, match="Only tuple of tensors is supported. Got Unsupported input type: list"):
        C.detach_variable([a])
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        C.check_backward_validity([wt.ones(1)])
    assert len(C.noop_context_fn()) == 2 and issubclass(C.CheckpointError, RuntimeError)
    assert C.DefaultDeviceType.get_device_type() == TC.DefaultDeviceType.get_device_type() == "cpu"
    assert C.get_device_states(wt.ones(1)) == TC.get_device_states(torch.ones(1)) == ([], [])
