"""Every nn layer and activation against PyTorch: torch's weights copied in, same inputs -> same
outputs, input gradients, parameter gradients and buffers, on every device."""
import numpy as np
import pytest
import torch

from _nn_util import NoGrad, check, assert_close, sync
import webtorch as wt

R = np.random.RandomState(7)


def X(*shape, scale=1.0):
    return (R.standard_normal(shape) * scale).astype(np.float32)


def I(hi, *shape):
    return R.randint(0, hi, shape).astype(np.int64)


def _mask_kpm(n, s):
    m = np.zeros((n, s), dtype=bool)
    m[0, -1] = True
    m[-1, 0] = True
    return m


CAUSAL = np.triu(np.ones((4, 4), dtype=bool), 1)

# (id, make(nn, T), inputs, options)
LAYERS = [
    ("linear", lambda nn, T: nn.Linear(4, 3), [X(2, 4)], {}),
    ("linear_3d_nobias", lambda nn, T: nn.Linear(4, 3, bias=False), [X(2, 3, 4)], {}),
    ("linear_1d", lambda nn, T: nn.Linear(4, 2), [X(4)], {}),
    ("bilinear", lambda nn, T: nn.Bilinear(3, 2, 2), [X(2, 3), X(2, 2)], {}),
    ("identity", lambda nn, T: nn.Identity(), [X(2, 3)], {}),
    ("conv1d", lambda nn, T: nn.Conv1d(2, 3, 3, stride=2, padding=1), [X(2, 2, 7)], {}),
    ("conv1d_same_dil", lambda nn, T: nn.Conv1d(2, 2, 2, padding="same", dilation=2, bias=False), [X(1, 2, 6)], {}),
    ("conv2d", lambda nn, T: nn.Conv2d(2, 3, 3), [X(1, 2, 5, 5)], {}),
    ("conv2d_groups", lambda nn, T: nn.Conv2d(2, 4, (3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2),
     [X(2, 2, 6, 7)], {}),
    ("conv2d_same", lambda nn, T: nn.Conv2d(2, 2, 4, padding="same"), [X(1, 2, 5, 4)], {}),
    ("conv2d_reflect", lambda nn, T: nn.Conv2d(1, 2, 3, padding=1, padding_mode="reflect"), [X(1, 1, 4, 4)], {}),
    ("conv2d_circular", lambda nn, T: nn.Conv2d(1, 2, 3, padding=(1, 2), padding_mode="circular"),
     [X(1, 1, 4, 5)], {}),
    ("conv2d_1x1", lambda nn, T: nn.Conv2d(3, 2, 1), [X(2, 3, 2, 3)], {}),
    ("conv2d_unbatched", lambda nn, T: nn.Conv2d(2, 2, 2, stride=2), [X(2, 4, 4)], {}),
    ("conv_transpose2d", lambda nn, T: nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1),
     [X(1, 2, 3, 3)], {}),
    ("conv_transpose2d_groups", lambda nn, T: nn.ConvTranspose2d(2, 4, 2, groups=2, dilation=2, bias=False),
     [X(2, 2, 3, 2)], {}),
    ("conv_transpose2d_outsize", lambda nn, T: nn.ConvTranspose2d(1, 1, 3, stride=2), [X(1, 1, 3, 3)],
     {"call": lambda m, T, x: m(x, output_size=[8, 8])}),
    ("conv_transpose1d", lambda nn, T: nn.ConvTranspose1d(2, 2, 3, stride=2), [X(1, 2, 4)], {}),
    ("maxpool2d", lambda nn, T: nn.MaxPool2d(2), [X(1, 2, 4, 4)], {}),
    ("maxpool2d_pad_ceil", lambda nn, T: nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True), [X(1, 2, 6, 7)], {}),
    ("maxpool2d_dilation", lambda nn, T: nn.MaxPool2d(2, stride=1, dilation=2), [X(2, 1, 5, 5)], {}),
    ("maxpool2d_indices", lambda nn, T: nn.MaxPool2d(2, stride=2, padding=1, return_indices=True),
     [X(1, 2, 5, 5)], {"call": lambda m, T, x: m(x)[0] + 0 * m(x)[1].float()}),
    ("maxpool1d", lambda nn, T: nn.MaxPool1d(3, stride=2), [X(2, 2, 7)], {}),
    ("avgpool2d", lambda nn, T: nn.AvgPool2d(2), [X(1, 2, 4, 4)], {}),
    ("avgpool2d_pad_ceil", lambda nn, T: nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True), [X(1, 2, 6, 7)], {}),
    ("avgpool2d_no_pad_count", lambda nn, T: nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False),
     [X(1, 1, 5, 6)], {}),
    ("avgpool2d_divisor", lambda nn, T: nn.AvgPool2d(2, divisor_override=3), [X(1, 1, 4, 4)], {}),
    ("avgpool1d", lambda nn, T: nn.AvgPool1d(3, stride=2, padding=1), [X(2, 2, 7)], {}),
    ("adaptive_avgpool2d", lambda nn, T: nn.AdaptiveAvgPool2d((2, 3)), [X(1, 2, 5, 7)], {}),
    ("adaptive_avgpool2d_even", lambda nn, T: nn.AdaptiveAvgPool2d(2), [X(2, 2, 4, 6)], {}),
    ("adaptive_avgpool2d_global", lambda nn, T: nn.AdaptiveAvgPool2d(1), [X(2, 3, 3, 3)], {}),
    ("adaptive_avgpool2d_none", lambda nn, T: nn.AdaptiveAvgPool2d((None, 2)), [X(1, 1, 3, 5)], {}),
    ("adaptive_maxpool2d", lambda nn, T: nn.AdaptiveMaxPool2d((2, 3)), [X(1, 2, 5, 7)], {}),
    ("batchnorm1d", lambda nn, T: nn.BatchNorm1d(3), [X(4, 3)], {}),
    ("batchnorm1d_3d", lambda nn, T: nn.BatchNorm1d(3, momentum=0.3), [X(2, 3, 5)], {}),
    ("batchnorm2d", lambda nn, T: nn.BatchNorm2d(3), [X(2, 3, 3, 3)], {"steps": 2}),
    ("batchnorm2d_cumulative", lambda nn, T: nn.BatchNorm2d(2, momentum=None), [X(2, 2, 3, 3)], {"steps": 3}),
    ("batchnorm2d_eval", lambda nn, T: nn.BatchNorm2d(3), [X(2, 3, 2, 2)], {"train": False, "rand_buffers": True}),
    ("batchnorm2d_noaffine", lambda nn, T: nn.BatchNorm2d(2, affine=False), [X(2, 2, 3, 3)], {}),
    ("batchnorm2d_nostats", lambda nn, T: nn.BatchNorm2d(2, track_running_stats=False), [X(2, 2, 2, 2)],
     {"train": False}),
    ("layernorm", lambda nn, T: nn.LayerNorm(4), [X(2, 3, 4)], {}),
    ("layernorm_2d_noaffine", lambda nn, T: nn.LayerNorm((3, 4), elementwise_affine=False), [X(2, 3, 4)], {}),
    ("layernorm_nobias", lambda nn, T: nn.LayerNorm(4, bias=False, eps=1e-3), [X(3, 4)], {}),
    ("groupnorm", lambda nn, T: nn.GroupNorm(2, 4), [X(2, 4, 3, 3)], {}),
    ("groupnorm_3d", lambda nn, T: nn.GroupNorm(1, 3, affine=False), [X(2, 3, 5)], {}),
    ("rmsnorm", lambda nn, T: nn.RMSNorm(4), [X(2, 3, 4)], {}),
    ("rmsnorm_eps_2d", lambda nn, T: nn.RMSNorm((2, 4), eps=1e-3), [X(3, 2, 4)], {}),
    ("instancenorm2d", lambda nn, T: nn.InstanceNorm2d(2, affine=True), [X(2, 2, 3, 3)], {}),
    ("dropout_eval", lambda nn, T: nn.Dropout(0.5), [X(3, 4)], {"train": False}),
    ("dropout_p0", lambda nn, T: nn.Dropout(0.0), [X(3, 4)], {}),
    ("embedding", lambda nn, T: nn.Embedding(10, 3), [I(10, 2, 4)], {}),
    ("embedding_padding", lambda nn, T: nn.Embedding(5, 3, padding_idx=1),
     [np.array([[1, 2, 1], [0, 4, 2]], dtype=np.int64)], {}),
    ("flatten", lambda nn, T: nn.Flatten(), [X(2, 3, 2)], {}),
    ("flatten_range", lambda nn, T: nn.Flatten(0, 1), [X(2, 3, 2)], {}),
    ("unflatten", lambda nn, T: nn.Unflatten(1, (2, 3)), [X(2, 6)], {}),
    ("pixel_shuffle", lambda nn, T: nn.PixelShuffle(2), [X(1, 8, 2, 3)], {}),
    ("upsample_nearest", lambda nn, T: nn.Upsample(scale_factor=2), [X(1, 1, 2, 3)], {}),
    ("upsample_bilinear", lambda nn, T: nn.Upsample(size=(3, 5), mode="bilinear"), [X(1, 2, 2, 3)], {}),
    ("zeropad2d", lambda nn, T: nn.ZeroPad2d((1, 0, 2, 1)), [X(1, 1, 2, 3)], {}),
    ("reflectionpad2d", lambda nn, T: nn.ReflectionPad2d(1), [X(1, 1, 3, 3)], {}),
    ("replicationpad1d", lambda nn, T: nn.ReplicationPad1d((2, 1)), [X(1, 2, 3)], {}),
    # attention
    ("mha", lambda nn, T: nn.MultiheadAttention(8, 2), [X(3, 2, 8), X(4, 2, 8), X(4, 2, 8)], {}),
    ("mha_self_batch_first_masks", lambda nn, T: nn.MultiheadAttention(8, 2, batch_first=True),
     [X(2, 4, 8), NoGrad(_mask_kpm(2, 4)), NoGrad(CAUSAL)],
     {"call": lambda m, T, x, kpm, am: m(x, x, x, key_padding_mask=kpm, attn_mask=am)}),
    ("mha_no_weights_float_mask", lambda nn, T: nn.MultiheadAttention(4, 2, batch_first=True),
     [X(2, 3, 4), NoGrad(X(3, 3))],
     {"call": lambda m, T, x, am: m(x, x, x, attn_mask=am, need_weights=False)}),
    ("mha_per_head_weights", lambda nn, T: nn.MultiheadAttention(4, 2, bias=False),
     [X(3, 1, 4)], {"call": lambda m, T, x: m(x, x, x, average_attn_weights=False)}),
    ("mha_kdim_vdim", lambda nn, T: nn.MultiheadAttention(4, 2, kdim=3, vdim=5),
     [X(2, 2, 4), X(3, 2, 3), X(3, 2, 5)], {}),
    ("mha_bias_kv_zero_attn", lambda nn, T: nn.MultiheadAttention(4, 1, add_bias_kv=True, add_zero_attn=True),
     [X(2, 2, 4), X(3, 2, 4), X(3, 2, 4)], {}),
    ("mha_unbatched", lambda nn, T: nn.MultiheadAttention(4, 2), [X(3, 4), X(2, 4), X(2, 4)], {}),
    ("encoder_layer", lambda nn, T: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), [X(3, 2, 8)], {}),
    ("encoder_layer_gelu_normfirst_bf", lambda nn, T: nn.TransformerEncoderLayer(
        8, 2, 12, dropout=0.0, activation="gelu", norm_first=True, batch_first=True),
     [X(2, 4, 8), NoGrad(_mask_kpm(2, 4))], {"call": lambda m, T, x, kpm: m(x, src_key_padding_mask=kpm)}),
    ("encoder_layer_causal", lambda nn, T: nn.TransformerEncoderLayer(4, 1, 8, dropout=0.0, batch_first=True),
     [X(1, 4, 4), NoGrad(CAUSAL)], {"call": lambda m, T, x, am: m(x, src_mask=am)}),
    ("encoder_stack", lambda nn, T: nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0), 2,
                                                          norm=nn.LayerNorm(4), enable_nested_tensor=False),
     [X(3, 2, 4)], {}),
]

ACTS = [
    ("relu", lambda nn, T: nn.ReLU()), ("leaky_relu", lambda nn, T: nn.LeakyReLU(0.2)),
    ("gelu", lambda nn, T: nn.GELU()), ("gelu_tanh", lambda nn, T: nn.GELU(approximate="tanh")),
    ("silu", lambda nn, T: nn.SiLU()), ("sigmoid", lambda nn, T: nn.Sigmoid()), ("tanh", lambda nn, T: nn.Tanh()),
    ("softmax", lambda nn, T: nn.Softmax(dim=1)), ("log_softmax", lambda nn, T: nn.LogSoftmax(dim=-1)),
    ("softmin", lambda nn, T: nn.Softmin(dim=0)),
    ("elu", lambda nn, T: nn.ELU(alpha=0.5)), ("celu", lambda nn, T: nn.CELU(alpha=1.5)),
    ("selu", lambda nn, T: nn.SELU()), ("hardswish", lambda nn, T: nn.Hardswish()),
    ("hardsigmoid", lambda nn, T: nn.Hardsigmoid()), ("hardtanh", lambda nn, T: nn.Hardtanh(-0.5, 2.0)),
    ("relu6", lambda nn, T: nn.ReLU6()), ("mish", lambda nn, T: nn.Mish()),
    ("softplus", lambda nn, T: nn.Softplus()), ("softplus_beta", lambda nn, T: nn.Softplus(beta=2, threshold=1.5)),
    ("softsign", lambda nn, T: nn.Softsign()), ("logsigmoid", lambda nn, T: nn.LogSigmoid()),
    ("tanhshrink", lambda nn, T: nn.Tanhshrink()), ("softshrink", lambda nn, T: nn.Softshrink(0.3)),
    ("hardshrink", lambda nn, T: nn.Hardshrink(0.3)), ("glu", lambda nn, T: nn.GLU(dim=1)),
    ("prelu", lambda nn, T: nn.PReLU()), ("prelu_channels", lambda nn, T: nn.PReLU(4)),
    ("threshold", lambda nn, T: nn.Threshold(0.1, 20.0)),
]


@pytest.mark.parametrize("case", LAYERS, ids=[c[0] for c in LAYERS])
def test_layer_matches_torch(case, device):
    name, make, inputs, opts = case
    check(device, make, inputs, name=name, **opts)


_ACT_X = (np.random.RandomState(3).standard_normal((3, 4, 2)) * 3).astype(np.float32)


@pytest.mark.parametrize("case", ACTS, ids=[c[0] for c in ACTS])
def test_activation_matches_torch(case, device):
    name, make = case
    check(device, make, [_ACT_X], name=name, rand_params=False)


def test_inplace_activations(device):
    for make in (lambda nn: nn.ReLU(inplace=True), lambda nn: nn.LeakyReLU(0.1, inplace=True),
                 lambda nn: nn.ELU(inplace=True), lambda nn: nn.SiLU(inplace=True), lambda nn: nn.Hardtanh(inplace=True)):
        t = torch.tensor(_ACT_X)
        w = wt.tensor(_ACT_X, device=device)
        tr = make(torch.nn)(t)
        wr = make(wt.nn)(w)
        assert_close(wr, tr, device)
        assert_close(w, t, device, "modified in place")
        assert make(torch.nn).extra_repr() == make(wt.nn).extra_repr()


def test_custom_net_matches_torch(device):
    """The seed's CustomNet: Conv2d(3,64,3) -> BatchNorm2d(64) -> ReLU -> MaxPool2d(2)."""
    def make(nn, T):
        class CustomNet(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 3)
                self.bn = nn.BatchNorm2d(64)
                self.relu = nn.ReLU()
                self.pool = nn.MaxPool2d(2)

            def forward(self, x):
                return self.pool(self.relu(self.bn(self.conv(x))))
        return CustomNet()
    x = np.random.RandomState(11).standard_normal((2, 3, 6, 6)).astype(np.float32)
    tm, wm = check(device, make, [x], name="customnet", rand_params=False, steps=2)
    assert wm.bn.num_batches_tracked.item() == 2
    # eval mode uses the running statistics
    tm.eval()
    wm.eval()
    with torch.no_grad():
        want = tm(torch.tensor(x))
    got = wm(wt.tensor(x, device=device))
    assert_close(got, want, device, "eval output")


def test_dropout_training_statistics(device):
    wt.manual_seed(0)
    x = wt.ones(4000, device=device, requires_grad=True)
    d = wt.nn.Dropout(0.25)
    y = d(x)
    vals = np.array(y.detach().cpu().tolist())
    kept = vals != 0
    assert 0.7 < kept.mean() < 0.8
    np.testing.assert_allclose(vals[kept], 1 / 0.75, rtol=1e-6)
    y.sum().backward()
    np.testing.assert_allclose(np.array(x.grad.cpu().tolist()), vals, rtol=1e-6)
    d.eval()
    assert d(x) is x
    x2 = wt.ones(2, 3, 50, 1, device=device)
    m = np.array(wt.nn.functional.dropout2d(x2, 0.5).cpu().tolist())
    # whole channels are zeroed together
    assert set(np.unique(m.reshape(6, -1).std(axis=1))) == {0.0}


def test_max_pool_gradient_goes_to_argmax_only(device):
    # ties: PyTorch sends the gradient to the first maximal element of each window
    x = np.array([[[[1.0, 1.0, 0.0, 2.0], [1.0, 0.5, 2.0, 2.0]]]], dtype=np.float32)
    check(device, lambda nn, T: nn.MaxPool2d(2), [x], name="maxpool_ties", rand_params=False)
    # overlapping windows accumulate
    check(device, lambda nn, T: nn.MaxPool2d(3, stride=1), [X(1, 1, 5, 5)], name="maxpool_overlap",
          rand_params=False)


def test_max_pool_return_indices(device):
    x = X(2, 2, 5, 6)
    for kw in ({"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
               {"kernel_size": 2, "stride": 1, "dilation": 2}):
        tv, ti = torch.nn.functional.max_pool2d(torch.tensor(x), return_indices=True, **kw)
        wv, wi = wt.nn.functional.max_pool2d(wt.tensor(x, device=device), return_indices=True, **kw)
        assert_close(wv, tv, device)
        assert wi.dtype is wt.int64
        assert wi.cpu().tolist() == ti.tolist()
    tv, ti = torch.nn.functional.adaptive_max_pool2d(torch.tensor(x), (2, 4), return_indices=True)
    wv, wi = wt.nn.functional.adaptive_max_pool2d(wt.tensor(x, device=device), (2, 4), return_indices=True)
    assert_close(wv, tv, device)
    assert wi.cpu().tolist() == ti.tolist()


def test_embedding_max_norm_and_from_pretrained(device):
    w = X(6, 3, scale=2.0)
    idx = np.array([[0, 2], [2, 5]], dtype=np.int64)
    te = torch.nn.Embedding(6, 3, max_norm=1.0)
    we = wt.nn.Embedding(6, 3, max_norm=1.0)
    with torch.no_grad():
        te.weight.copy_(torch.tensor(w))
    sync(te, we, device)
    assert_close(we(wt.tensor(idx, device=device)), te(torch.tensor(idx)), device)
    assert_close(we.weight, te.weight, device, "renormed rows")
    pe = wt.nn.Embedding.from_pretrained(wt.tensor(w, device=device))
    assert not pe.weight.requires_grad
    assert repr(pe) == repr(torch.nn.Embedding.from_pretrained(torch.tensor(w)))


def test_inplace_activations_inside_a_graph(device):
    def make(nn, T):
        L = lambda: nn.Linear(5, 5)  # noqa: E731
        return nn.Sequential(nn.Linear(4, 5), nn.ReLU(inplace=True), L(), nn.ELU(inplace=True), L(),
                             nn.SiLU(inplace=True), L(), nn.Hardtanh(inplace=True), nn.Dropout(0.0, inplace=True),
                             nn.LeakyReLU(0.1, inplace=True), L(), nn.SELU(inplace=True), L(), nn.Mish(inplace=True),
                             L(), nn.Hardswish(inplace=True), L(), nn.CELU(inplace=True), L(),
                             nn.Threshold(0.1, 2.0, inplace=True), L(), nn.ReLU6(inplace=True))
    check(device, make, [X(3, 4)], name="inplace_graph")
