"""nn.Module semantics against PyTorch: registration, traversal, state_dict key order, load errors
(same text), repr of a nested model, attribute protocol, modes, devices, hooks, containers,
Parameter, nn.utils."""
import copy
import math
import pickle

import numpy as np
import pytest
import torch

from _nn_util import assert_close, sync, to_np
import webtorch as wt


def _model(nn):
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(4)
            self.act = nn.ReLU(inplace=True)
            self.register_buffer("scale", torch_or_wt(nn).ones(1))
            self.register_buffer("tmp", torch_or_wt(nn).zeros(2), persistent=False)

        def forward(self, x):
            return self.act(self.bn(self.conv(x))) * self.scale

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(Block(), nn.MaxPool2d(2), nn.Dropout(0.1))
            self.heads = nn.ModuleDict({"cls": nn.Linear(16, 3), "aux": nn.Sequential(nn.Flatten(), nn.Identity())})
            self.blocks = nn.ModuleList([nn.Linear(3, 3) for _ in range(3)] + [nn.GELU(approximate="tanh")])
            self.emb = nn.Embedding(10, 4, padding_idx=0)
            self.norms = nn.ModuleList([nn.LayerNorm(4), nn.GroupNorm(2, 4), nn.RMSNorm(4)])
            self.attn = nn.TransformerEncoderLayer(4, 2, 8, batch_first=True)
            self.up = nn.ConvTranspose2d(4, 2, 2, stride=2, output_padding=1, groups=2, dilation=2)
            self.pools = nn.Sequential(nn.AvgPool2d(3, 2, 1), nn.AdaptiveAvgPool2d((1, 1)), nn.Unflatten(1, (2, 2)),
                                       nn.Conv1d(2, 2, 3, padding="same", padding_mode="reflect"),
                                       nn.BatchNorm1d(2, momentum=None, affine=False))
            self.acts = nn.Sequential(nn.LeakyReLU(0.2), nn.ELU(alpha=0.5, inplace=True), nn.Softplus(2, 10),
                                      nn.Softmax(dim=-1), nn.LogSoftmax(1), nn.SiLU(), nn.Hardswish(), nn.Mish(),
                                      nn.Sigmoid(), nn.Tanh())
            self.losses = nn.ModuleList([nn.CrossEntropyLoss(label_smoothing=0.1), nn.BCEWithLogitsLoss(),
                                         nn.KLDivLoss(reduction="batchmean")])
            self.mha = nn.MultiheadAttention(4, 2, kdim=3, vdim=3)
            self.bias = nn.Parameter(torch_or_wt(nn).zeros(3))

    return Net()


def torch_or_wt(nn):
    return torch if nn is torch.nn else wt


def test_repr_matches_torch():
    assert repr(_model(wt.nn)) == repr(_model(torch.nn))


def test_state_dict_keys_order_and_shapes():
    t, w = _model(torch.nn), _model(wt.nn)
    tsd, wsd = t.state_dict(), w.state_dict()
    assert list(wsd.keys()) == list(tsd.keys())
    for k in tsd:
        assert tuple(wsd[k].shape) == tuple(tsd[k].shape), k
        assert str(wsd[k].dtype) == str(tsd[k].dtype), k
    assert wsd._metadata.keys() == tsd._metadata.keys()
    assert dict(wsd._metadata) == {k: dict(v) for k, v in tsd._metadata.items()}
    assert [n for n, _ in w.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in w.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert [n for n, _ in w.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in w.named_children()] == [n for n, _ in t.named_children()]
    assert len(list(w.parameters())) == len(list(t.parameters()))
    assert len(list(w.parameters(recurse=False))) == 1
    kv = w.state_dict(keep_vars=True)
    assert isinstance(kv["bias"], wt.nn.Parameter)
    assert not isinstance(wsd["bias"], wt.nn.Parameter) and not wsd["bias"].requires_grad


def test_state_dict_roundtrip_both_ways():
    t, w = _model(torch.nn), _model(wt.nn)
    sync(t, w, "cpu")
    for k, v in t.state_dict().items():
        np.testing.assert_array_equal(to_np(w.state_dict()[k]), v.numpy(), err_msg=k)
    # and back into a fresh torch model
    t2 = _model(torch.nn)
    t2.load_state_dict({k: torch.tensor(np.asarray(v.tolist())).to(t.state_dict()[k].dtype)
                        for k, v in w.state_dict().items()})
    for k, v in t2.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), t.state_dict()[k].numpy())


def _errors(lib, model, sd, **kw):
    with pytest.raises(RuntimeError) as e:
        model.load_state_dict(sd, **kw)
    return str(e.value)


def test_load_state_dict_errors_match_torch():
    def sd_of(lib, m):
        d = m.state_dict()
        d.pop("features.0.conv.weight")
        d.pop("heads.cls.bias")
        d["extra.key"] = lib.zeros(1)
        d["features.0.foo"] = lib.zeros(1)
        d["blocks.0.weight"] = lib.zeros(2, 3)
        return d
    t, w = _model(torch.nn), _model(wt.nn)
    assert _errors(wt, w, sd_of(wt, w)) == _errors(torch, t, sd_of(torch, t))
    # strict=False: no missing/unexpected errors, but still the size mismatch
    assert _errors(wt, w, sd_of(wt, w), strict=False) == _errors(torch, t, sd_of(torch, t), strict=False)
    # strict=False without size mismatch returns the incompatible keys
    tsd, wsd = sd_of(torch, t), sd_of(wt, w)
    tsd.pop("blocks.0.weight")
    wsd.pop("blocks.0.weight")
    tr, wr = t.load_state_dict(tsd, strict=False), w.load_state_dict(wsd, strict=False)
    assert wr.missing_keys == tr.missing_keys
    assert wr.unexpected_keys == tr.unexpected_keys
    assert repr(w.load_state_dict(w.state_dict())) == "<All keys matched successfully>"


def test_batchnorm_loads_old_state_dict_without_num_batches_tracked():
    t, w = torch.nn.BatchNorm1d(3), wt.nn.BatchNorm1d(3)
    sd = {k: v for k, v in t.state_dict().items() if k != "num_batches_tracked"}
    t.load_state_dict(sd)  # no metadata -> version None -> filled in
    w.load_state_dict({k: wt.tensor(v.numpy()) for k, v in sd.items()})
    assert w.num_batches_tracked.item() == 0


def test_setattr_semantics():
    m = wt.nn.Linear(2, 2)
    with pytest.raises(TypeError, match=r"cannot assign 'torch.FloatTensor' as parameter 'weight' "
                                        r"\(torch.nn.Parameter or None expected\)"):
        m.weight = wt.zeros(2, 2)
    m.bias = None
    assert "bias" in m._parameters and m.bias is None
    assert list(m.state_dict()) == ["weight"]
    m.sub = wt.nn.ReLU()
    assert "sub" in m._modules
    with pytest.raises(TypeError, match="cannot assign 'int' as child module 'sub'"):
        m.sub = 3
    m.register_buffer("buf", wt.ones(1))
    m.buf = wt.zeros(3)
    assert m._buffers["buf"].shape == (3,)
    with pytest.raises(TypeError, match="cannot assign 'str' as buffer 'buf'"):
        m.buf = "x"
    m.plain = 5
    assert m.plain == 5 and "plain" in m.__dict__
    del m.sub
    assert "sub" not in m._modules
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
        m.nope
    with pytest.raises(KeyError, match="attribute 'plain' already exists"):
        m.register_buffer("plain", wt.ones(1))
    with pytest.raises(KeyError, match='parameter name can'):
        m.register_parameter("a.b", None)
    with pytest.raises(TypeError, match="cannot assign 'torch.FloatTensor' object to parameter 'p'"):
        m.register_parameter("p", wt.ones(1))
    m.weight = wt.nn.Parameter(wt.ones(2, 2))
    assert m.weight.sum().item() == 4
    m.x = wt.nn.Buffer(wt.ones(2), persistent=False)
    assert "x" in m._buffers and "x" in m._non_persistent_buffers_set and type(m.x) is wt.Tensor

    class Early(wt.nn.Module):
        def __init__(self):
            self.w = wt.nn.Parameter(wt.ones(1))
    with pytest.raises(AttributeError, match=r"cannot assign parameters before Module.__init__\(\) call"):
        Early()


def test_submodule_access():
    w = _model(wt.nn)
    assert w.get_submodule("features.0.conv") is w.features[0].conv
    assert w.get_parameter("features.0.bn.weight") is w.features[0].bn.weight
    assert w.get_buffer("features.0.bn.running_mean") is w.features[0].bn.running_mean
    with pytest.raises(AttributeError, match="Sequential has no attribute `zz`"):
        w.get_submodule("features.zz")
    w.add_module("extra", wt.nn.Tanh())
    assert list(w._modules)[-1] == "extra"
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        w.add_module("x", 3)


def test_train_eval_apply_requires_grad_zero_grad():
    w = _model(wt.nn)
    assert w.training and all(m.training for m in w.modules())
    w.eval()
    assert not any(m.training for m in w.modules())
    w.train()
    assert all(m.training for m in w.modules())
    names = []
    w.apply(lambda m: names.append(type(m).__name__))
    assert names[-1] == "Net" and names.count("Linear") == 6
    lin = wt.nn.Linear(3, 2)
    lin(wt.randn(4, 3)).sum().backward()
    assert lin.weight.grad is not None
    lin.zero_grad(set_to_none=False)
    assert lin.weight.grad is not None and lin.weight.grad.abs().sum().item() == 0
    lin.zero_grad()
    assert lin.weight.grad is None
    lin.requires_grad_(False)
    assert not any(p.requires_grad for p in lin.parameters())


def test_to_device_and_dtype(device):
    m = wt.nn.Sequential(wt.nn.Linear(3, 2), wt.nn.BatchNorm1d(2))
    w_id = id(m[0].weight)
    m(wt.randn(4, 3)).sum().backward()
    assert m.to(device) is m
    assert id(m[0].weight) == w_id, "to() keeps the Parameter objects (optimizers hold them)"
    assert isinstance(m[0].weight, wt.nn.Parameter)
    assert m[0].weight.device.type == wt.device(device).type
    assert m[0].weight.grad.device.type == wt.device(device).type
    assert m[1].num_batches_tracked.device.type == wt.device(device).type
    assert m[1].num_batches_tracked.dtype is wt.int64
    y = m(wt.randn(4, 3, device=device))
    assert y.device.type == wt.device(device).type
    if device != "webgpu":
        m.double()
        assert m[0].weight.dtype is wt.float64 and m[1].num_batches_tracked.dtype is wt.int64
        m.to(wt.float32)
        assert m[0].weight.dtype is wt.float32
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point"):
        m.to(wt.int32)
    with pytest.raises(AssertionError, match="CUDA"):
        m.cuda()
    m.cpu()
    assert m[0].weight.device.type == "cpu"


def test_forward_hooks():
    m = wt.nn.Linear(2, 2)
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
    h2 = m.register_forward_hook(lambda mod, args, out: calls.append(out.shape) or out + 1)
    x = wt.randn(3, 2)
    y = m(x)
    expect = m.bias.detach() + 1
    np.testing.assert_allclose(to_np(y), np.broadcast_to(to_np(expect), (3, 2)), rtol=1e-6)
    assert calls == [(3, 2)]
    h1.remove()
    h2.remove()
    np.testing.assert_allclose(to_np(m(x)), to_np(wt.nn.functional.linear(x, m.weight, m.bias)), rtol=1e-6)
    h3 = m.register_forward_pre_hook(lambda mod, args, kwargs: ((args[0] * 2,), kwargs), with_kwargs=True)
    np.testing.assert_allclose(to_np(m(x)), to_np(wt.nn.functional.linear(x * 2, m.weight, m.bias)), rtol=1e-6)
    h3.remove()


def test_sequential_and_containers():
    s = wt.nn.Sequential(wt.nn.Linear(2, 3), wt.nn.ReLU(), wt.nn.Linear(3, 1))
    t = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
    assert len(s) == 3 and isinstance(s[1], wt.nn.ReLU) and isinstance(s[-1], wt.nn.Linear)
    assert repr(s[1:]) == repr(t[1:])
    assert isinstance(s[:2], wt.nn.Sequential) and len(s[:2]) == 2
    s.append(wt.nn.Sigmoid())
    t.append(torch.nn.Sigmoid())
    assert repr(s) == repr(t)
    del s[1]
    del t[1]
    assert repr(s) == repr(t)
    s.insert(1, wt.nn.Tanh())
    t.insert(1, torch.nn.Tanh())
    assert repr(s) == repr(t)
    with pytest.raises(IndexError, match="index 9 is out of range"):
        s[9]
    from collections import OrderedDict
    od = wt.nn.Sequential(OrderedDict([("a", wt.nn.Linear(1, 1)), ("b", wt.nn.ReLU())]))
    assert list(od.state_dict()) == ["a.weight", "a.bias"] and od.b is od[1]
    ml = wt.nn.ModuleList([wt.nn.Linear(1, 1)])
    ml.append(wt.nn.ReLU())
    ml.extend([wt.nn.ReLU(), wt.nn.ReLU()])
    tl = torch.nn.ModuleList([torch.nn.Linear(1, 1), torch.nn.ReLU(), torch.nn.ReLU(), torch.nn.ReLU()])
    assert repr(ml) == repr(tl) and len(ml) == 4
    assert isinstance(ml[1:], wt.nn.ModuleList)
    md = wt.nn.ModuleDict({"x": wt.nn.ReLU()})
    md["y"] = wt.nn.Linear(1, 2)
    assert list(md.keys()) == ["x", "y"] and "y" in md and len(md) == 2
    assert list(md.state_dict()) == ["y.weight", "y.bias"]
    pl = wt.nn.ParameterList([wt.nn.Parameter(wt.ones(2)), wt.zeros(3)])
    tpl = torch.nn.ParameterList([torch.nn.Parameter(torch.ones(2)), torch.zeros(3)])
    assert repr(pl) == repr(tpl)
    assert list(pl.state_dict()) == list(tpl.state_dict())
    pd = wt.nn.ParameterDict({"a": wt.ones(2)})
    tpd = torch.nn.ParameterDict({"a": torch.ones(2)})
    assert repr(pd) == repr(tpd) and isinstance(pd["a"], wt.nn.Parameter)


def test_parameter():
    p = wt.nn.Parameter(wt.tensor([1.0, 2.0]))
    tp = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    assert repr(p) == repr(tp)
    assert p.requires_grad and p.is_leaf and isinstance(p, wt.Tensor)
    assert type(p * 2) is wt.Tensor and type(p + p) is wt.Tensor and type(p[0]) is wt.Tensor
    assert type(p.detach()) is wt.Tensor
    q = copy.deepcopy(p)
    assert type(q) is wt.nn.Parameter and q.requires_grad and q.tolist() == [1.0, 2.0]
    q.data.add_(1)
    assert p.tolist() == [1.0, 2.0]
    r = pickle.loads(pickle.dumps(p))
    assert type(r) is wt.nn.Parameter and r.tolist() == [1.0, 2.0]
    assert not wt.nn.Parameter(wt.ones(1), requires_grad=False).requires_grad
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        wt.nn.Parameter(wt.tensor([1, 2]))
    m = wt.nn.Linear(2, 2)
    m2 = copy.deepcopy(m)
    assert m2.weight is not m.weight and np.array_equal(to_np(m2.weight), to_np(m.weight))
    assert isinstance(m2.weight, wt.nn.Parameter)


def test_custom_module_without_forward():
    class M(wt.nn.Module):
        pass
    with pytest.raises(NotImplementedError, match='Module \\[M\\] is missing the required "forward" function'):
        M()(1)


def test_clip_grad_and_vector_utils(device):
    rng = np.random.RandomState(0)
    grads = [rng.standard_normal(s).astype(np.float32) for s in ((3, 2), (4,))]
    for norm_type in (2.0, 1.0, math.inf):
        tp = [torch.nn.Parameter(torch.zeros(g.shape)) for g in grads]
        wp = [wt.nn.Parameter(wt.zeros(g.shape, device=device)) for g in grads]
        for a, b, g in zip(tp, wp, grads):
            a.grad = torch.tensor(g)
            b.grad = wt.tensor(g, device=device)
        tn = torch.nn.utils.clip_grad_norm_(tp, 0.5, norm_type)
        wn = wt.nn.utils.clip_grad_norm_(wp, 0.5, norm_type)
        assert_close(wn, tn, device)
        for a, b in zip(tp, wp):
            assert_close(b.grad, a.grad, device)
    tp = [torch.nn.Parameter(torch.zeros(g.shape)) for g in grads]
    wp = [wt.nn.Parameter(wt.zeros(g.shape, device=device)) for g in grads]
    for a, b, g in zip(tp, wp, grads):
        a.grad = torch.tensor(g)
        b.grad = wt.tensor(g, device=device)
    torch.nn.utils.clip_grad_value_(tp, 0.3)
    wt.nn.utils.clip_grad_value_(wp, 0.3)
    for a, b in zip(tp, wp):
        assert_close(b.grad, a.grad, device)
    vec = wt.nn.utils.parameters_to_vector(wp)
    assert tuple(vec.shape) == (10,)
    wt.nn.utils.vector_to_parameters(wt.arange(10, dtype=wt.float32, device=device), wp)
    assert wp[0].tolist() == [[0, 1], [2, 3], [4, 5]] and wp[1].tolist() == [6, 7, 8, 9]
    assert isinstance(wp[0], wt.nn.Parameter)


@pytest.mark.filterwarnings("ignore:Full backward hook")
def test_full_backward_hooks_match_torch():
    x = np.random.RandomState(2).standard_normal((3, 2)).astype(np.float32)
    rec = {}
    for lib in (torch, wt):
        torch.manual_seed(0)
        tm = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
        m = tm if lib is torch else sync(tm, wt.nn.Sequential(wt.nn.Linear(2, 4), wt.nn.Tanh(), wt.nn.Linear(4, 1)),
                                         "cpu")
        log = []
        m[1].register_full_backward_pre_hook(lambda mod, go: log.append(("pre", to_np(go[0]))) or (go[0] * 2,))
        m[1].register_full_backward_hook(lambda mod, gi, go: log.append(("post", to_np(gi[0]), to_np(go[0]))))
        m[0].register_full_backward_hook(lambda mod, gi, go: log.append(("first", gi[0] is None, to_np(go[0]))))
        xin = lib.tensor(x)
        m(xin).sum().backward()
        rec[lib] = (log, to_np(m[0].weight.grad))
    (tl, tg), (wl, wg) = rec[torch], rec[wt]
    assert [e[0] for e in wl] == [e[0] for e in tl] == ["pre", "post", "first"]
    for a, b in zip(wl, tl):
        for u, v in zip(a[1:], b[1:]):
            if isinstance(u, bool):
                assert u == v
            else:
                np.testing.assert_allclose(u, v, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(wg, tg, rtol=1e-5, atol=1e-6)


def test_nn_runs_without_numpy():
    """Pyodide has no numpy: webtorch.nn must import and train on the pure-Python backend."""
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = ("import sys; sys.modules['numpy'] = None; sys.path.insert(0, %r)\n"
            "import webtorch as torch, webtorch.nn as nn, webtorch.nn.functional as F\n"
            "m = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.BatchNorm2d(2), nn.ReLU(), nn.MaxPool2d(2),\n"
            "                  nn.Flatten(), nn.Linear(8, 3))\n"
            "loss = F.cross_entropy(m(torch.randn(2, 1, 4, 4)), torch.tensor([0, 2]))\n"
            "loss.backward()\n"
            "assert type(torch._device._backends['cpu']).__name__ == 'PureBackend'\n"
            "print('ok', m[0].weight.grad.shape)\n") % os.path.join(root, "py")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok torch.Size([2, 1, 3, 3])")
