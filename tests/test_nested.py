"""Issue #22: torch.nested against PyTorch 2.13 (strided and jagged layouts): construction, printing, the common ops
on the components (forward and gradients), to_padded_tensor, narrow, masked_select, nested_tensor_from_jagged."""
import numpy as np
import pytest
import torch

import webtorch as wt

A = np.arange(6, dtype=np.float32).reshape(2, 3) / 4 - 0.5
B = np.arange(9, dtype=np.float32).reshape(3, 3) / 5 - 0.7
W = (np.arange(12, dtype=np.float32).reshape(4, 3) / 7 - 0.8)


def _nt(T, layout, device="cpu"):
    return T.nested.nested_tensor([T.tensor(A), T.tensor(B)], layout=getattr(T, layout), device=device,
                                  requires_grad=True)


def _close(got, want, tol=1e-5):
    np.testing.assert_allclose(np.asarray(got.detach().cpu().tolist()), want.detach().numpy(), rtol=tol, atol=tol)


PROGRAMS = {
    "linear_relu": lambda T, nt: (T.nn.functional.linear(nt, T.tensor(W, device=nt.device)) * 2 + 1).relu(),
    "softmax_exp": lambda T, nt: nt.softmax(-1) + nt.exp() - nt.sigmoid() * nt,
    "bias_div": lambda T, nt: (nt + T.tensor([1.0, 2.0, 3.0], device=nt.device)) / 2 - 1,
    "layer_norm_gelu": lambda T, nt: T.nn.functional.gelu(T.nn.functional.layer_norm(
        nt, (3,), T.tensor([1.0, 0.5, 2.0], device=nt.device), T.tensor([0.1, 0.0, -0.2], device=nt.device))),
    "matmul_tanh": lambda T, nt: (nt @ T.tensor(W.T.copy(), device=nt.device)).tanh(),
    "sum_last": lambda T, nt: nt.sum(-1, keepdim=True).detach() * nt,  # PyTorch has no nested sum backward
}


# PyTorch's strided layout refuses the others (webtorch runs them with the jagged layout's semantics)
CASES = [("jagged", n) for n in PROGRAMS] + [("strided", "linear_relu"), ("strided", "layer_norm_gelu")]


@pytest.mark.parametrize("layout,name", CASES)
def test_programs_forward_and_grad(device, layout, name):
    tn, wn = _nt(torch, layout), _nt(wt, layout, device)
    ty, wy = PROGRAMS[name](torch, tn), PROGRAMS[name](wt, wn)
    assert wy.is_nested and wy.layout is getattr(wt, layout) and wy.dim() == ty.dim() and wy.size(0) == 2
    for g, w in zip(wy.unbind(), ty.unbind()):
        _close(g, w)
    tp, wp = torch.nested.to_padded_tensor(ty, -1.0), wt.nested.to_padded_tensor(wy, -1.0)
    _close(wp, tp)
    (tp * tp).sum().backward()
    (wp * wp).sum().backward()
    for g, w in zip(wn.grad.unbind(), tn.grad.unbind()):
        _close(g, w, 1e-4)


def test_construction_and_printing():
    for layout in ("strided", "jagged"):
        t, w = _nt(torch, layout), _nt(wt, layout)
        assert (w.is_nested, w.dim(), w.size(0), w.numel(), w.requires_grad, w.is_leaf) == (
            t.is_nested, t.dim(), t.size(0), t.numel(), t.requires_grad, t.is_leaf)
        assert w.size(2) == t.size(2) == 3 and w.is_contiguous() and isinstance(w, wt.Tensor)
        assert w[1].tolist() == t[1].tolist() and w[0, 1].tolist() == t[0, 1].tolist()
    t = torch.nested.nested_tensor([torch.tensor(A), torch.tensor(B)])
    assert repr(wt.nested.nested_tensor([wt.tensor(A), wt.tensor(B)])) == repr(t)
    assert repr(wt.nested.nested_tensor([[1, 2], [3]])) == repr(torch.nested.nested_tensor([[1, 2], [3]]))
    w = wt.nested.nested_tensor([wt.tensor(A), wt.tensor(B)], layout=wt.jagged)
    assert str(w.shape).startswith("torch.Size([2, j") and str(w.shape).endswith(", 3])")
    assert repr(w).endswith(", offsets=tensor([0, 2, 5]), contiguous=True)") and w.offsets().tolist() == [0, 2, 5]
    assert w.values().tolist() == np.concatenate([A, B]).tolist() and w.lengths() is None
    assert len(w) == 2
    with pytest.raises(RuntimeError, match="doesn't support sizes"):
        len(wt.nested.nested_tensor([wt.tensor(A), wt.tensor(B)]))
    with pytest.raises(RuntimeError, match="Given dimension 1 is irregular and does not have a size."):
        wt.nested.nested_tensor([wt.tensor(A), wt.tensor(B)]).size(1)
    with pytest.raises(RuntimeError, match="All Tensors given to nested_tensor must have the same dimension. Found "
                                           "dimension 1 for Tensor at index 1 and dimension 2 for Tensor at index 0."):
        wt.nested.nested_tensor([wt.ones(2, 3), wt.ones(2)])
    assert wt.nested.nested_tensor([wt.ones(2, 3)], dtype=wt.float64).dtype is wt.float64
    with pytest.raises(NotImplementedError, match="'cumprod' is not supported for nested tensors"):
        w.cumprod(1)


def test_reductions_jagged(device):
    t = torch.nested.nested_tensor([torch.tensor(A), torch.tensor(B)], layout=torch.jagged)
    w = wt.nested.nested_tensor([wt.tensor(A), wt.tensor(B)], layout=wt.jagged, device=device)
    _close(w.sum(), t.sum())
    _close(w.mean(1), t.mean(1))
    for g, e in zip(w.amax(-1).unbind(), t.amax(-1).unbind()):
        _close(g, e)
    with pytest.raises(RuntimeError, match="reducing along the batch dimension but not the ragged dimension"):
        w.sum(0)


def test_narrow_masked_select_from_jagged(device):
    x = np.arange(24, dtype=np.float32).reshape(2, 4, 3)
    for T, d in ((torch, "cpu"), (wt, device)):
        xt = T.tensor(x, device=d)
        r = T.nested.narrow(xt, 1, T.tensor([0, 1], device=d), T.tensor([2, 3], device=d), layout=T.jagged)
        got = ([c.tolist() for c in r.unbind()], r.offsets().tolist(), r.lengths().tolist(), r.is_contiguous())
        if T is torch:
            want = got
    assert got == want
    with pytest.raises(RuntimeError, match="only dim=0 supported for nested tensors, but got: 1"):
        wt.nested.narrow(wt.tensor(x), 1, 0, 2)
    m = np.array([[True, False, True, False], [False, True, True, True]])
    t = torch.nested.masked_select(torch.arange(8.0).reshape(2, 4), torch.tensor(m))
    w = wt.nested.masked_select(wt.arange(8.0, device=device).reshape(2, 4), wt.tensor(m, device=device))
    assert [c.tolist() for c in w.unbind()] == [c.tolist() for c in t.unbind()] and w.layout is wt.jagged
    v = np.arange(10, dtype=np.float32).reshape(5, 2)
    for kw in (dict(offsets=[0, 2, 5]), dict(offsets=[0, 2, 4], lengths=[1, 1]), dict(lengths=[3, 2])):
        t = torch.nested.nested_tensor_from_jagged(torch.tensor(v), **{k: torch.tensor(a) for k, a in kw.items()})
        w = wt.nested.nested_tensor_from_jagged(wt.tensor(v, device=device),
                                                **{k: wt.tensor(a, device=device) for k, a in kw.items()})
        assert [c.tolist() for c in w.unbind()] == [c.tolist() for c in t.unbind()]
        assert w.offsets().tolist() == t.offsets().tolist() and w.is_contiguous() == t.is_contiguous()
    with pytest.raises(RuntimeError, match="At least one of offsets or lengths is required."):
        wt.nested.nested_tensor_from_jagged(wt.tensor(v))
    t = torch.nested.as_nested_tensor(torch.tensor(x), layout=torch.jagged)
    w = wt.nested.as_nested_tensor(wt.tensor(x, device=device), layout=wt.jagged)
    assert w.offsets().tolist() == t.offsets().tolist() == [0, 4, 8]
    p = wt.nested.to_padded_tensor(wt.nested.nested_tensor([wt.ones(2, 3), wt.ones(1, 3)]), 0.5, (3, 3, 4))
    assert p.tolist() == torch.nested.to_padded_tensor(
        torch.nested.nested_tensor([torch.ones(2, 3), torch.ones(1, 3)]), 0.5, (3, 3, 4)).tolist()
