"""The op_db entries added for issue #24 and the nn layers on them, against PyTorch on cpu, cpu-pure and webgpu:
values and gradients (a fixed random cotangent), PyTorch's errors. torch._softmax_backward_data, _safe_softmax,
_chunk_cat, _unsafe_masked_index(_put_accumulate), segment_reduce, histogramdd, _native_batch_norm_legit;
torch.ops.aten's slice, native_dropout_backward, max_pool2d_with_indices_backward, _batch_norm_with_update,
_upsample_bilinear2d_aa (and interpolate's antialias); F.fractional_max_pool2d/3d (PyTorch's draw passed as
_random_samples), F.linear_cross_entropy; nn.FractionalMaxPool2d/3d, LinearCrossEntropyLoss, CrossMapLRN2d,
AdaptiveLogSoftmaxWithLoss; torch.sparse.sampled_addmm. The OpInfo tier runs PyTorch's own samples of the ops."""
import pytest
import torch
from core_util import to_wt

import webtorch as wt


def _w(x, device):
    """torch values -> webtorch's (tensors in lists and tuples too), requires_grad kept."""
    if isinstance(x, torch.Tensor):
        t = to_wt(x, device)
        return t.requires_grad_() if x.requires_grad else t
    if isinstance(x, (list, tuple)):
        return type(x)(_w(v, device) for v in x)
    if isinstance(x, dict):
        return {k: _w(v, device) for k, v in x.items()}
    return getattr(wt, str(x)[6:]) if isinstance(x, torch.dtype) else x


def _t(x):
    return torch.tensor(x.detach().cpu().tolist(), dtype=getattr(torch, x.dtype.name)).reshape(tuple(x.shape))


def _tensors(x):
    if isinstance(x, (torch.Tensor, wt.Tensor)):
        return [x]
    return [t for v in x for t in _tensors(v)] if isinstance(x, (list, tuple)) else []


def check(device, torch_fn, wt_fn, *args, **kwargs):
    """wt_fn(*args, **kwargs) equals torch_fn's and so do the gradients of its float outputs (a random cotangent)
    with respect to the arguments that require grad."""
    atol = 2e-5
    w_args = _w(args, device)
    want, got = torch_fn(*args, **kwargs), wt_fn(*w_args, **_w(kwargs, device))
    want_t, got_t = _tensors(want), _tensors(got)
    assert len(want_t) == len(got_t)
    for a, b in zip(got_t, want_t):
        assert a.dtype.name == str(b.dtype)[6:] and tuple(a.shape) == tuple(b.shape)
        torch.testing.assert_close(_t(a), b.detach(), rtol=1e-4, atol=atol, equal_nan=True)
    t_in = [a for a in _tensors(args) if a.requires_grad]
    outs = [(a, b) for a, b in zip(got_t, want_t) if b.requires_grad]
    if not t_in or not outs:
        return
    gen = torch.Generator().manual_seed(0)
    cots = [torch.randn(b.shape, generator=gen) for _, b in outs]
    t_grads = torch.autograd.grad([b for _, b in outs], t_in, cots, allow_unused=True)
    w_in = [a for a in _tensors(w_args) if a.requires_grad]
    w_grads = wt.autograd.grad([a for a, _ in outs], w_in, [_w(c, device) for c in cots], allow_unused=True)
    for wg, tg in zip(w_grads, t_grads):
        if tg is None:
            assert wg is None or not _t(wg).any()
        else:
            torch.testing.assert_close(_t(wg), tg, rtol=1e-4, atol=atol)


def randn(*shape, grad=True):
    return torch.randn(*shape).requires_grad_(grad)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def test_softmax_family(device):
    g, y = randn(3, 5), torch.randn(3, 5).softmax(1).requires_grad_()
    check(device, torch._softmax_backward_data, wt._softmax_backward_data, g, y, 1, torch.float32)
    x = randn(4, 6)
    with torch.no_grad():
        x[1] = float("-inf")
        x[2, :3] = float("-inf")
    check(device, torch._safe_softmax, wt._safe_softmax, x, 1)  # a row of -inf: 0, and a 0 gradient


def test_chunk_cat_and_masked_index(device):
    ts = [randn(2, 3, 5, grad=False), randn(2, 3, 2, grad=False), randn(2, 3, grad=False)]
    for dim, n in ((0, 3), (1, 2), (2, 4)):
        check(device, torch._chunk_cat, wt._chunk_cat, ts[:2] if dim == 2 else ts, dim, n)
    with pytest.raises(RuntimeError, match="_chunk_cat expects positive num_chunks"):
        wt._chunk_cat(_w(ts, device), 0, 0)
    x, mask = randn(5, 5), torch.rand(6, 6) > 0.4
    idx = [torch.randint(-2, 7, (6, 1)), torch.randint(0, 5, (1, 6))]
    check(device, torch._unsafe_masked_index, wt._unsafe_masked_index, x, mask, idx, -1.5)
    check(device, torch._unsafe_masked_index_put_accumulate, wt._unsafe_masked_index_put_accumulate, x, mask, idx,
          randn(6, 6))


@pytest.mark.parametrize("reduce", ["sum", "mean", "prod", "max", "min"])
def test_segment_reduce(device, reduce):
    data = torch.tensor([1.0, 3.0, 3.0, 2.0, -5.0, 0.5, 4.0], requires_grad=True)  # ties in the max/min
    lengths = torch.tensor([3, 0, 2, 2])
    for initial in (None, 2.0):
        check(device, torch.segment_reduce, wt.segment_reduce, data, reduce, lengths=lengths, initial=initial)
        check(device, torch.segment_reduce, wt.segment_reduce, data, reduce,
              offsets=torch.tensor([0, 3, 3, 5, 7]), initial=initial)
    d2 = randn(3, 4, 2)
    check(device, torch.segment_reduce, wt.segment_reduce, d2, reduce, lengths=torch.tensor([[1, 3], [2, 2], [4, 0]]),
          axis=1)
    with pytest.raises(RuntimeError, match="to sum to data.size"):
        wt.segment_reduce(_w(data, device), reduce, lengths=_w(torch.tensor([1, 1]), device))


def test_histogramdd(device):
    x, w = torch.rand(40, 3) * 4 - 1, torch.rand(40)
    for bins, kw in (([3, 2, 4], {}), (2, {"range": [0.0, 1.0, -1.0, 2.0, 0.0, 3.0]}), ([3, 3, 3], {"weight": w}),
                     ([2, 5, 2], {"density": True, "weight": w}),
                     ([torch.tensor([-1.0, 0.0, 3.0]), torch.tensor([0.0, 0.5, 1.0, 2.0]),
                       torch.tensor([-2.0, 0.0, 2.0])], {})):
        _hist(device, x, bins, kw)
    with pytest.raises(RuntimeError, match="size of bins must be equal"):
        wt.histogramdd(_w(x, device), [1, 1])


def _hist(device, x, bins, kw):
    want = torch.histogramdd(x, bins, **kw)
    got = wt.histogramdd(_w(x, device), _w(bins, device), **{k: _w(v, device) for k, v in kw.items()})
    torch.testing.assert_close(_t(got.hist), want.hist, rtol=1e-5, atol=1e-6)
    for a, b in zip(got.bin_edges, want.bin_edges):
        torch.testing.assert_close(_t(a), b)


def test_aten_namespace(device):
    aten = wt.ops.aten
    x = randn(4, 6, 5)
    check(device, lambda x: torch.ops.aten.slice(x, 1, 1, -1, 2), lambda x: aten.slice.Tensor(x, 1, 1, -1, 2), x)
    mask = torch.rand(4, 6, 5) > 0.3
    check(device, torch.ops.aten.native_dropout_backward, aten.native_dropout_backward, x, mask, 1.25)
    inp = randn(2, 3, 7, 8)
    out, idx = torch.nn.functional.max_pool2d(inp, 3, 2, 1, return_indices=True)
    args = ([3, 3], [2, 2], [1, 1], [1, 1], False, idx)
    check(device, lambda g, i: torch.ops.aten.max_pool2d_with_indices_backward(g, i, *args),
          lambda g, i: aten.max_pool2d_with_indices_backward(g, i, *_w(args, device)), randn(*out.shape), inp)
    for up in ([3, 5], [12, 17]):
        check(device, torch.ops.aten._upsample_bilinear2d_aa, aten._upsample_bilinear2d_aa, inp, up, False)
    check(device, lambda x: torch.ops.aten._upsample_bilinear2d_aa.vec(x, None, True, [0.6, 1.3]),
          lambda x: aten._upsample_bilinear2d_aa.vec(x, None, True, [0.6, 1.3]), inp)
    for mode in ("bicubic", "lanczos"):
        check(device, torch.nn.functional.interpolate, wt.nn.functional.interpolate, inp, (4, 11), mode=mode,
              antialias=True)
        packet = f"_upsample_{mode}2d_aa"
        check(device, getattr(torch.ops.aten, packet).vec, getattr(aten, packet).vec, inp, None, False, [0.5, 1.4])
    with pytest.raises(ValueError, match="Lanczos mode does not support align_corners=True"):
        wt.nn.functional.interpolate(_w(inp, device), 3, mode="lanczos", antialias=True, align_corners=True)


def test_batch_norm_entries(device):
    x, w, b = randn(4, 3, 5), randn(3), randn(3)
    rm, rv = torch.randn(3), torch.rand(3) + 0.5
    wrm, wrv = _w(rm, device), _w(rv, device)
    want = torch.ops.aten._batch_norm_with_update(x, w, b, rm, rv, 0.1, 1e-5)
    got = wt.ops.aten._batch_norm_with_update(*_w((x, w, b), device), wrm, wrv, 0.1, 1e-5)
    for a, e in zip(got, want):
        assert a.dtype.name == str(e.dtype)[6:]
        torch.testing.assert_close(_t(a), e.detach(), rtol=1e-4, atol=2e-5)
    torch.testing.assert_close(_t(wrm), rm)  # the running statistics updated as PyTorch's
    torch.testing.assert_close(_t(wrv), rv)
    for training in (True, False):
        check(device, torch._native_batch_norm_legit, wt._native_batch_norm_legit, x, w, b, rm.clone(), rv.clone(),
              training, 0.1, 1e-5)
    check(device, torch._native_batch_norm_legit, wt._native_batch_norm_legit, x, w, b, True, 0.1, 1e-5)  # no_stats


@pytest.mark.parametrize("n", [2, 3])
def test_fractional_max_pool(device, n):
    F, wF = torch.nn.functional, wt.nn.functional
    pool, wpool = getattr(F, f"fractional_max_pool{n}d"), getattr(wF, f"fractional_max_pool{n}d")
    shape = (2, 3, 9, 11) if n == 2 else (2, 2, 7, 7, 7)
    x = torch.randn(shape).requires_grad_()
    samples = torch.rand(shape[0], shape[1], n)
    for k, kw in ((3, {"output_size": 4}), (2, {"output_ratio": [0.5] * n}),
                  ([2, 3, 2][:n], {"output_size": [3, 4, 2][:n]})):
        check(device, pool, wpool, x, k, return_indices=True, _random_samples=samples, **kw)
    check(device, pool, wpool, x[0].detach().requires_grad_(), 2, 3, _random_samples=samples[:1])  # unbatched
    m = getattr(wt.nn, f"FractionalMaxPool{n}d")(2, output_ratio=0.5, return_indices=True)
    out, idx = m(_w(x, device))
    assert tuple(out.shape) == tuple(shape[:2]) + tuple(s // 2 for s in shape[2:]) and idx.dtype == wt.int64
    with pytest.raises(RuntimeError, match="too large relative to input"):
        wpool(_w(x, device), 3, output_size=[8, 5] if n == 2 else [5, 5, 5])  # 3-D: no window may end at the border
    with pytest.raises(ValueError, match="output_ratio must be between 0 and 1"):
        getattr(wt.nn, f"FractionalMaxPool{n}d")(2, output_ratio=1.5)


def test_linear_cross_entropy(device):
    F, wF = torch.nn.functional, wt.nn.functional
    x, w, b = randn(6, 4), randn(5, 4), randn(5)
    t = torch.randint(0, 5, (6,))
    for kw in ({}, {"reduction": "none", "label_smoothing": 0.1}, {"ignore_index": 2, "reduction": "sum"}):
        check(device, F.linear_cross_entropy, wF.linear_cross_entropy, x, w, t, linear_bias=b, **kw)
    check(device, F.linear_cross_entropy, wF.linear_cross_entropy, x, randn(5, 2, 3, 4), torch.randint(0, 5, (6, 2, 3)))
    check(device, F.linear_cross_entropy, wF.linear_cross_entropy, x, w, torch.rand(6, 5).softmax(1))
    with pytest.raises(RuntimeError, match="ignore_index cannot be specified"):
        wF.linear_cross_entropy(_w(x, device), _w(w, device), _w(torch.rand(6, 5), device), ignore_index=0)
    m = torch.nn.LinearCrossEntropyLoss(4, 5, out_features=(2,), bias=True, label_smoothing=0.05)
    wm = wt.nn.LinearCrossEntropyLoss(4, 5, out_features=(2,), bias=True, label_smoothing=0.05,
                                      options=wt.nn.LinearCrossEntropyOptions(batch_chunk_size=2)).to(device)
    wm.load_state_dict({k: _w(v.detach(), device) for k, v in m.state_dict().items()})
    check(device, m, wm, x, torch.randint(0, 5, (6, 2)))
    with pytest.raises(ValueError, match="batch_chunk_size must be positive"):
        wt.nn.LinearCrossEntropyOptions(batch_chunk_size=0)


def test_cross_map_lrn2d(device):
    for C, size in ((7, 3), (6, 4), (2, 5)):
        check(device, torch.nn.CrossMapLRN2d(size, 1e-2, 0.75, 1.5), wt.nn.CrossMapLRN2d(size, 1e-2, 0.75, 1.5),
              randn(2, C, 3, 4))
    with pytest.raises(ValueError, match="Expected input to be 4D"):
        wt.nn.CrossMapLRN2d(3)(_w(torch.randn(3, 4, 5), device))


def test_adaptive_log_softmax(device):
    m = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 7], div_value=2.0, head_bias=True)
    wm = wt.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 7], div_value=2.0, head_bias=True).to(device)
    wm.load_state_dict({k: _w(v.detach(), device) for k, v in m.state_dict().items()})
    x, t = torch.randn(10, 8), torch.tensor([0, 2, 3, 6, 7, 11, 1, 8, 4, 9])
    want, got = m(x, t), wm(_w(x, device), _w(t, device))
    torch.testing.assert_close(_t(got.output), want.output.detach(), rtol=1e-4, atol=1e-5)
    want.loss.backward()
    got.loss.backward()
    for p, q in zip(wm.parameters(), m.parameters()):
        torch.testing.assert_close(_t(p.grad), q.grad, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(_t(wm.log_prob(_w(x, device))), m.log_prob(x).detach(), rtol=1e-4, atol=1e-5)
    assert wm.predict(_w(x, device)).tolist() == m.predict(x).tolist()
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique"):
        wt.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [7, 3])


@pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta")
def test_sampled_addmm(device):
    a = torch.randn(4, 5)
    a[a < 0.3] = 0
    m1, m2 = randn(4, 3), randn(3, 5)
    want = torch.sparse.sampled_addmm(a.to_sparse_csr(), m1, m2, beta=0.5, alpha=2.0)
    got = wt.sparse.sampled_addmm(_w(a, device).to_sparse_csr(), *_w((m1, m2), device), beta=0.5, alpha=2.0)
    assert got.layout == wt.sparse_csr
    torch.testing.assert_close(_t(got.to_dense()), want.to_dense().detach(), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
        wt.sparse.sampled_addmm(_w(a, device).to_sparse_csr(), *_w((m1, m1), device))


@pytest.mark.parametrize("mode", ["rnn_tanh", "gru", "lstm"])
def test_rnn_functions(device, mode):
    """torch.rnn_tanh / gru / lstm (both overloads) and the _cell functions, with the layers' own weights."""
    cls = torch.nn.GRU if mode == "gru" else torch.nn.LSTM if mode == "lstm" else torch.nn.RNN
    m = cls(4, 3, bidirectional=True)
    params = [p.detach().requires_grad_() for p in m._flat_weights]
    x, h = randn(4, 3, 4), randn(2, 4, 3)  # batch_first
    hx = [h, randn(2, 4, 3)] if mode == "lstm" else h
    check(device, getattr(torch, mode), getattr(wt, mode), x, hx, params, True, 1, 0.0, False, True, True)
    pk = torch.nn.utils.rnn.pack_padded_sequence(randn(3, 4, 4, grad=False), torch.tensor([3, 2, 2, 1]))
    check(device, getattr(torch, mode), getattr(wt, mode), pk.data, pk.batch_sizes, hx, params, True, 1, 0.0, False,
          True)
    cell = mode + "_cell"
    hc = [h[0], hx[1][0]] if mode == "lstm" else h[0]
    check(device, getattr(torch, cell), getattr(wt, cell), x[:, 0], hc, *params[:4])
    check(device, getattr(torch, cell), getattr(wt, cell), x[:, 0], hc, *params[:2])  # no biases
    with pytest.raises(RuntimeError, match="Input batch size 3 doesn't match hidden0 batch size 4"):
        getattr(wt, cell)(*_w((x[0], hc, *params[:2]), device))


def test_native_dropout(device):
    x = _w(torch.ones(1000), device).requires_grad_()
    out, mask = wt.native_dropout(x, 0.25, True)
    assert mask.dtype == wt.bool and 650 < int(mask.sum()) < 850 and out.grad_fn.name() == "NativeDropoutBackward0"
    (g,) = wt.autograd.grad(out.sum(), x)
    torch.testing.assert_close(_t(g), _t(out.detach()))  # native_dropout_backward: the same mask and scale
    torch.testing.assert_close(_t(out), _t(mask).float() * (1 / 0.75))
    out, mask = wt.native_dropout(x, 0.25, False)
    assert bool(mask.all()) and _t(out).tolist() == [1.0] * 1000


def test_conv_tbc_and_factory_kwargs(device):
    for pad in (0, 2, -1):
        check(device, torch.conv_tbc, wt.conv_tbc, randn(7, 2, 3), randn(3, 3, 4), randn(4), pad)
    assert wt.nn.functional.conv_tbc is wt.conv_tbc
    with pytest.raises(RuntimeError, match="Input dim 2 \\(input channels\\) is not == dim 1"):
        wt.conv_tbc(*_w((torch.randn(7, 2, 3), torch.randn(3, 2, 4), torch.randn(4)), device))
    assert wt.nn.factory_kwargs({"device": device, "factory_kwargs": {"dtype": wt.float32}}) == \
        {"device": device, "dtype": wt.float32}
    with pytest.raises(TypeError, match="dtype specified twice"):
        wt.nn.factory_kwargs({"dtype": wt.float32, "factory_kwargs": {"dtype": wt.float32}})


@pytest.mark.parametrize("n", [1, 2])
def test_nn_grad(device, n):
    """torch.nn.grad's convolution gradients, and through them again."""
    shapes = {1: ((2, 4, 9), (6, 2, 3)), 2: ((2, 4, 7, 6), (6, 2, 3, 2))}[n]
    kw = {"stride": 2, "padding": 1, "dilation": 1 if n == 1 else 2, "groups": 2}
    x, w = randn(*shapes[0]), randn(*shapes[1])
    g = randn(*getattr(torch.nn.functional, f"conv{n}d")(x, w, None, **kw).shape)
    tg, wg = torch.nn.grad, wt.nn.grad
    check(device, lambda w, g: getattr(tg, f"conv{n}d_input")(shapes[0], w, g, **kw),
          lambda w, g: getattr(wg, f"conv{n}d_input")(shapes[0], w, g, **kw), w, g)
    check(device, lambda x, g: getattr(tg, f"conv{n}d_weight")(x, shapes[1], g, **kw),
          lambda x, g: getattr(wg, f"conv{n}d_weight")(x, shapes[1], g, **kw), x, g)
