"""ATen's top-level functions and Tensor methods of issue #22/#24 against PyTorch: norm_except_dim,
frobenius_norm, nuclear_norm, native_norm, the view_as_*_copy forms, conj_physical_, slice_inverse, as_strided_,
torch.embedding_bag / ctc_loss / embedding_renorm_ (ATen's signatures), and the Tensor attributes grad_dtype,
name, volatile, module_load, chalf and those of devices and APIs webtorch lacks."""
import warnings

import pytest
import torch

import webtorch as wt


def _wt(t, device, requires_grad=False):
    return wt.tensor(t.tolist(), dtype=getattr(wt, str(t.dtype).split(".")[1]), device=device,
                     requires_grad=requires_grad)


def _close(a, b, atol=1e-5):
    assert tuple(a.shape) == tuple(b.shape) and str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1]
    assert torch.allclose(torch.tensor(a.tolist(), dtype=b.dtype), b, atol=atol, rtol=1e-4), (a, b)


_NORMS = [
    ("norm_except_dim", lambda T, x: T.norm_except_dim(x, 2, 0)),
    ("norm_except_dim", lambda T, x: T.norm_except_dim(x, 3, 1)),
    ("norm_except_dim", lambda T, x: T.norm_except_dim(x, 2, -1)),
    ("frobenius_norm", lambda T, x: T.frobenius_norm(x, [0])),
    ("frobenius_norm", lambda T, x: T.frobenius_norm(x, [0, 1], True)),
    ("frobenius_norm", lambda T, x: T.frobenius_norm(x, [])),
    ("nuclear_norm", lambda T, x: T.nuclear_norm(x)),
    ("nuclear_norm", lambda T, x: T.nuclear_norm(x, [1, 0], keepdim=True)),
]


@pytest.mark.parametrize("case", range(len(_NORMS)))
def test_norm_forms(device, case):
    torch.manual_seed(case)
    x = torch.randn(3, 4, requires_grad=True)
    f = _NORMS[case][1]
    xw = _wt(x, device, True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r, y = f(torch, x), f(wt, xw)
    _close(y, r)
    r.sum().backward()
    y.sum().backward()
    _close(xw.grad, x.grad, atol=1e-4)


@pytest.mark.parametrize("call", ["frobenius_norm(x, [0, 0])", "frobenius_norm(torch.randn(2, 3, 4), [0, 1, 2])",
                                  "frobenius_norm(torch.ones(2, dtype=torch.int64), [0])",
                                  "nuclear_norm(torch.randn(3))", "nuclear_norm(x, [0])", "norm_except_dim(x, 2, 5)",
                                  "native_norm(x)"])
def test_norm_form_errors(call):
    errs = []
    for T in (torch, wt):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as e:
                eval("T." + call, {"T": T, "torch": T, "x": T.randn(3, 4)})
        errs.append((e.type.__name__, str(e.value).split(".")[0]))
    assert errs[0][0] == errs[1][0] and (call == "native_norm(x)" or errs[0][1] == errs[1][1])


def test_copies_conj_slice_inverse(device):
    z = torch.randn(2, 3, dtype=torch.complex64)
    if device == "webgpu":
        z = z.real  # (complex64 views belong to the complex family's webgpu work)
    else:
        zw = _wt(z, "cpu")
        _close(wt.view_as_real_copy(zw), torch.view_as_real_copy(z))
        _close(wt.view_as_complex_copy(wt.view_as_real_copy(zw)), torch.view_as_complex_copy(torch.view_as_real(z)))
        zc = zw.clone()
        assert wt.conj_physical_(zc) is zc
        _close(zc, z.conj_physical())
    x = torch.arange(12.0).reshape(3, 4)
    xw = _wt(x, device)
    assert xw.conj_physical_() is xw
    _close(xw[:, 1:2].slice_inverse(xw, 1, 1, 2), x[:, 1:2].slice_inverse(x, 1, 1, 2))
    _close(wt.as_strided_(xw.clone(), (2, 2), (1, 2), 1), torch.as_strided_(x.clone(), (2, 2), (1, 2), 1))
    leaf = wt.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        leaf.conj_physical_()


@pytest.mark.parametrize("mode,padding_idx,psw", [(0, None, False), (1, None, False), (2, None, False),
                                                  (0, 2, False), (1, 2, False), (2, 2, False), (0, None, True)])
def test_embedding_bag_aten(device, mode, padding_idx, psw):
    torch.manual_seed(mode)
    w = torch.randn(5, 3, requires_grad=True)
    i, o = torch.tensor([0, 2, 2, 4, 1]), torch.tensor([0, 2, 2])
    p = torch.rand(5) if psw else None
    ww = _wt(w, device, True)
    r = torch.embedding_bag(w, i, o, False, mode, False, p, False, padding_idx)
    q = wt.embedding_bag(ww, _wt(i, device), _wt(o, device), False, mode, False, None if p is None else _wt(p, device),
                         False, padding_idx)
    for a, b in zip(q, r):
        _close(a, b)
    r[0].sum().backward()
    q[0].sum().backward()
    _close(ww.grad, w.grad)


def test_ctc_loss_and_renorm_aten(device):
    torch.manual_seed(0)
    lp = torch.randn(6, 2, 4).log_softmax(2).detach().requires_grad_()
    tg = torch.randint(1, 4, (2, 3))
    lpw = _wt(lp, device, True)
    for args in ((), (0, 1), (0, 2, True)):
        r = torch.ctc_loss(lp, tg, [6, 5], [3, 2], *args)
        y = wt.ctc_loss(lpw, _wt(tg, device), [6, 5], [3, 2], *args)
        _close(y, r)
    r.sum().backward()
    y.sum().backward()
    _close(lpw.grad, lp.grad)
    for T in (torch, wt):
        with pytest.raises(TypeError):
            T.ctc_loss(T.zeros(6, 2, 4), T.ones(2, 3, dtype=T.int64), [6, 5], [3, 2], reduction="mean")
    w = torch.randn(5, 3)
    ww = _wt(w, device)
    assert wt.embedding_renorm_(ww, _wt(torch.tensor([0, 2, 2]), device), 1.0, 2.0) is ww
    _close(ww, torch.embedding_renorm_(w, torch.tensor([0, 2, 2]), 1.0, 2.0))


def test_grad_dtype():
    for T in (torch, wt):
        y = T.randn(2, requires_grad=True)
        assert y.grad_dtype is T.float32
        y.grad_dtype = T.float64
        (y * 2).sum().backward()
        assert y.grad.dtype is T.float64 and y.grad.tolist() == [2.0, 2.0]
        y.grad_dtype = None
        assert y.grad_dtype is None
        z = y * 2
        for call, msg in ((lambda z=z: z.grad_dtype, "accessed on leaf"), (lambda z=z: setattr(z, "grad_dtype", None),
                                                                        "set on leaf"),
                          (lambda y=y: setattr(y, "grad_dtype", 3), "must be a torch.dtype or None, but got int")):
            with pytest.raises(RuntimeError, match=msg):
                call()


def _attrs(T):
    x = T.ones(2)
    out = [x.name]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out.append(x.volatile)
        x.volatile = True
    out.append([str(m.message) for m in w])
    for call in (x.ipu, x.xpu, x.mtia, lambda: x.reinforce(1), lambda: x.to_padded_tensor(0.0),
                 lambda: x.record_stream(T.Stream("cpu")), lambda: T.randn(2, requires_grad=True).module_load(x),
                 lambda: x.module_load(T.ones(3))):
        try:
            call()
        except (RuntimeError, AssertionError, NotImplementedError) as e:
            out.append((type(e).__name__, str(e).split(" This could")[0]))
    out.append(x.module_load(T.full((2,), 3.0)).tolist() + x.tolist())
    out.append(x.module_load(T.full((2,), 4.0), assign=True).tolist() + x.tolist())
    return out


def test_tensor_attributes():
    assert _attrs(wt) == _attrs(torch)
    with pytest.raises(TypeError, match="complex32"):
        wt.ones(2).chalf()


_SYNC_BN = ["batch_norm_stats(x, 1e-5)", "batch_norm_elemt(x, None, None, m, m, 1e-5)",
            "batch_norm_gather_stats(x, m[None], m[None], None, None, 0.1, 1e-5, 4)",
            "batch_norm_gather_stats_with_counts(x, m[None], m[None], None, None, 0.1, 1e-5, m[:1])",
            "batch_norm_backward_reduce(x, x, m, m, None, True, True, True)",
            "batch_norm_backward_elemt(x, x, m, m, None, m, m, m[:1].int())"]


@pytest.mark.parametrize("call", _SYNC_BN)
def test_sync_batch_norm_primitives_cpu_raise(call):
    """PyTorch has them on CUDA only: on the cpu both raise NotImplementedError."""
    for T in (torch, wt):
        with pytest.raises(NotImplementedError, match="Could not run 'aten::batch_norm_"):
            eval("T." + call, {"T": T, "x": T.randn(4, 3, 5), "m": T.ones(3)})


def test_batch_norm_update_stats(device):
    torch.manual_seed(0)
    x = torch.randn(4, 3, 5)
    outs = []
    for T in (torch, wt):
        xx = x if T is torch else _wt(x, device)
        rm, rv = T.zeros(3, device=device) if T is wt else T.zeros(3), T.ones(3, device=device) if T is wt else \
            T.ones(3)
        outs.append(list(T.batch_norm_update_stats(xx, rm, rv, 0.1)) + [rm, rv])
    for a, b in zip(outs[1], outs[0]):
        _close(a, b)


def test_sync_batch_norm_pipeline_is_batch_norm(webgpu):
    """One process's SyncBatchNorm forward and backward through the primitives equal PyTorch's batch_norm and its
    gradients (training mode), and the gathered statistics of two halves equal the whole's."""
    torch.manual_seed(0)
    x, w, b, g = torch.randn(6, 3, 4), torch.randn(3), torch.randn(3), torch.randn(6, 3, 4)
    xr, wr = x.clone().requires_grad_(), w.clone().requires_grad_()
    rm, rv = torch.zeros(3), torch.ones(3)
    y = torch.nn.functional.batch_norm(xr, rm, rv, wr, b, True, 0.1, 1e-5)
    y.backward(g)
    X, W, B, G = (_wt(t, "webgpu") for t in (x, w, b, g))
    halves = [wt.batch_norm_stats(X[:3], 1e-5), wt.batch_norm_stats(X[3:], 1e-5)]
    means, invstds = wt.stack([h[0] for h in halves]), wt.stack([h[1] for h in halves])
    RM, RV = wt.zeros(3, device="webgpu"), wt.ones(3, device="webgpu")
    mean, invstd = wt.batch_norm_gather_stats(X, means, invstds, RM, RV, 0.1, 1e-5, 12)
    _close(wt.batch_norm_elemt(X, W, B, mean, invstd, 1e-5), y.detach(), 1e-4)
    _close(RM, rm)
    _close(RV, rv)
    sum_dy, sum_dy_xmu, grad_w, grad_b = wt.batch_norm_backward_reduce(G, X, mean, invstd, W, True, True, True)
    _close(grad_w, wr.grad, 1e-4)
    count = wt.tensor([12, 12], dtype=wt.int32, device="webgpu")
    _close(wt.batch_norm_backward_elemt(G, X, mean, invstd, W, sum_dy, sum_dy_xmu, count), xr.grad, 1e-4)
    assert wt.batch_norm_backward_reduce(G, X, mean, invstd, None, False, True, False) == (None, None, None, None)
