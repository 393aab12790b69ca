"""torch.nn.utils.prune against PyTorch: the pruning tutorial's steps (parameters, buffers, state_dict keys,
forward pre-hooks, iterative pruning in a PruningContainer, global pruning, remove), masks and outputs, and
PyTorch's errors for bad amounts and dims. The random methods draw PyTorch's streams on the cpu device."""
import pytest
import torch
import torch.nn.utils.prune  # noqa: F401 (torch.nn.utils does not import prune itself)

import webtorch as wt


def _net(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = lib.nn.Conv2d(1, 4, 3)
            self.fc = lib.nn.Linear(16, 3)

        def forward(self, x):
            return self.fc(self.conv(x).relu().flatten(1))
    return Net()


def _tutorial(lib):
    """The pruning tutorial's steps on one seeded model; everything it prints, as plain Python."""
    prune = lib.nn.utils.prune
    lib.manual_seed(0)
    net = _net(lib)
    x = lib.randn(2, 1, 4, 4)
    out = {}
    prune.random_unstructured(net.conv, name="weight", amount=0.3)
    prune.l1_unstructured(net.conv, name="bias", amount=3)
    out["params"] = [n for n, _ in net.named_parameters()]
    out["buffers"] = [n for n, _ in net.named_buffers()]
    prune.ln_structured(net.conv, name="weight", amount=0.5, n=2, dim=0)
    prune.random_structured(net.fc, name="weight", amount=1, dim=1)
    prune.global_unstructured([(net.conv, "weight"), (net.fc, "weight"), (net.fc, "bias")],
                              pruning_method=prune.L1Unstructured, amount=0.25)
    out["hooks"] = [[type(h).__name__ for h in m._forward_pre_hooks.values()] for m in (net.conv, net.fc)]
    out["container"] = [type(h).__name__ for h in list(net.conv._forward_pre_hooks.values())[-1]]
    out["state_dict"] = list(net.state_dict())
    out["masks"] = {k: v.tolist() for k, v in net.state_dict().items() if k.endswith("_mask")}
    y = net(x)
    y.sum().backward()
    out["y"] = y.tolist()
    out["grad"] = net.conv.weight_orig.grad.tolist()
    out["pruned"] = prune.is_pruned(net)
    for m, name in ((net.conv, "weight"), (net.conv, "bias"), (net.fc, "weight"), (net.fc, "bias")):
        prune.remove(m, name)
    out["removed"] = (list(net.state_dict()), prune.is_pruned(net), net.conv.weight.tolist())
    return out


def test_tutorial_matches_pytorch_on_cpu():
    got, want = _tutorial(wt), _tutorial(torch)
    for key in want:
        if key in ("y", "grad"):
            assert torch.allclose(torch.tensor(got[key]), torch.tensor(want[key]), atol=1e-5), key
        elif key == "removed":
            assert got[key][:2] == want[key][:2]
            assert torch.allclose(torch.tensor(got[key][2]), torch.tensor(want[key][2]))
        else:
            assert got[key] == want[key], key


def _copy(wmod, tmod, device):
    for n, p in tmod.named_parameters():
        getattr(wmod, n).data = wt.tensor(p.tolist(), device=device)
    return wmod.to(device)


@pytest.mark.parametrize("how", ["l1", "ln", "custom", "global", "identity", "importance"])
def test_deterministic_pruning_on_devices(device, how):
    """The methods that draw nothing give PyTorch's masks, outputs and gradients on every device."""
    torch.manual_seed(1)
    res = []
    tlin = torch.nn.Linear(5, 4)
    for lib, dev in ((torch, "cpu"), (wt, device)):
        prune = lib.nn.utils.prune
        m = _copy(wt.nn.Linear(5, 4), tlin, dev) if lib is wt else torch.nn.Linear(5, 4)
        if lib is torch:
            m.load_state_dict(tlin.state_dict())
        if how == "l1":
            prune.l1_unstructured(m, "weight", amount=0.4)
            prune.l1_unstructured(m, "weight", amount=3)
        elif how == "ln":
            prune.ln_structured(m, "weight", amount=2, n=1, dim=1)
            prune.ln_structured(m, "weight", amount=0.25, n=float("inf"), dim=0)
        elif how == "custom":
            prune.custom_from_mask(m, "bias", mask=lib.tensor([1, 0, 0, 1], device=dev))
        elif how == "global":
            prune.global_unstructured([(m, "weight"), (m, "bias")], pruning_method=prune.L1Unstructured, amount=7)
        elif how == "identity":
            prune.identity(m, "weight")
        else:
            scores = lib.arange(20.0, device=dev).reshape(4, 5)
            prune.l1_unstructured(m, "weight", amount=6, importance_scores=scores)
        x = lib.linspace(-1, 1, 10, device=dev).reshape(2, 5)
        y = m(x)
        y.square().sum().backward()
        orig = m.weight_orig if hasattr(m, "weight_orig") else m.weight
        masks = {k: v.tolist() for k, v in m.state_dict().items() if k.endswith("_mask")}
        res.append((list(m.state_dict()), masks, y.tolist(), orig.grad.tolist()))
    (keys, masks, y, g), (wkeys, wmasks, wy, wg) = res
    assert wkeys == keys and wmasks == masks
    assert torch.allclose(torch.tensor(wy), torch.tensor(y), atol=1e-5)
    assert torch.allclose(torch.tensor(wg), torch.tensor(g), atol=1e-5)


def test_random_pruning_on_devices(device):
    """Random masks prune the asked number of entries / channels on every device (PyTorch's own numbers on cpu:
    test_tutorial_matches_pytorch_on_cpu)."""
    prune = wt.nn.utils.prune
    m = wt.nn.Conv2d(3, 6, 2).to(device)
    prune.random_unstructured(m, "weight", amount=0.5)
    assert int((m.weight_mask == 0).sum().item()) == 36
    prune.random_structured(m, "weight", amount=2, dim=0)
    kept = (m.weight_mask.sum(dim=(1, 2, 3)) != 0).tolist()
    assert kept.count(False) >= 2 and m.weight_mask.device == m.weight_orig.device
    assert (m.weight == m.weight_orig * m.weight_mask).all().item()


def test_prune_method_and_container():
    for lib in (torch, wt):
        prune = lib.nn.utils.prune
        t = lib.tensor([[1.0, -3.0, 2.0], [0.5, 4.0, -0.1]])
        assert prune.L1Unstructured(amount=2).prune(t).tolist() == [[1.0, -3.0, 2.0], [0.0, 4.0, 0.0]]
        c = prune.PruningContainer()
        assert len(c) == 0
        with pytest.raises(TypeError, match="is not a BasePruningMethod subclass"):
            c.add_pruning_method(3)
        m = lib.nn.Linear(2, 2)
        prune.identity(m, "weight")
        with pytest.raises(ValueError, match="Can only add pruning methods acting on the parameter named 'weight'"):
            first = list(m._forward_pre_hooks.values())[0]
            cont = prune.PruningContainer(first)
            other = prune.Identity()
            other._tensor_name = "bias"
            cont.add_pruning_method(other)


@pytest.mark.parametrize("call", [
    lambda p, m: p.random_unstructured(m, "weight", amount="0.5"),
    lambda p, m: p.random_unstructured(m, "weight", amount=-1),
    lambda p, m: p.l1_unstructured(m, "weight", amount=1.5),
    lambda p, m: p.l1_unstructured(m, "weight", amount=13),
    lambda p, m: p.ln_structured(m, "bias", amount=1, n=2, dim=0),
    lambda p, m: p.random_structured(m, "weight", amount=1, dim=2),
    lambda p, m: p.remove(m, "weight"),
    lambda p, m: p.global_unstructured([(m, "weight")], pruning_method=p.RandomStructured, amount=1),
    lambda p, m: p.global_unstructured(3, pruning_method=p.L1Unstructured, amount=1),
    lambda p, m: p.l1_unstructured(m, "weight", amount=1, importance_scores=m.bias.detach()),
])
def test_errors(call):
    def run(lib):
        m = lib.nn.Linear(3, 4)
        try:
            call(lib.nn.utils.prune, m)
        except Exception as e:  # noqa: BLE001 - the exception's type and message are what is compared
            msg = str(e).replace("webtorch.", "").replace("torch.", "")
            return type(e).__name__, msg.split(" of module ")[0].split("of shape")[0], [n for n, _ in
                                                                                       m.named_parameters()]
        return None
    assert run(wt) == run(torch) and run(torch) is not None
