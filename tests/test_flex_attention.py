"""torch.nn.attention.flex_attention against PyTorch's eager flex_attention: outputs and log-sum-exps with score_mod,
block masks (create_block_mask's block tables too), GQA and fully masked rows, on cpu, cpu-pure and webgpu;
gradients on webgpu (PyTorch raises for backward on cpu, as webtorch does) against PyTorch's autograd of the same
math; PyTorch's errors."""
import math

import numpy as np
import pytest
import torch
import torch.nn.attention.flex_attention as tfa

import webtorch as wt
import webtorch.nn.attention.flex_attention as wfa

B, H, L, E = 2, 4, 6, 8


@pytest.fixture(autouse=True)
def _pytorch_eager(monkeypatch):
    """PyTorch's eager flex_attention without the torch.compile(backend="eager") it wraps the same math in (seconds
    per case); its warning is PyTorch's, not webtorch's."""
    monkeypatch.setattr(tfa, "_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG", True)


def causal(b, h, q, kv):
    return q >= kv


def late(b, h, q, kv):  # rows 0 and 1 attend nothing
    return (q >= kv) & (q > 1)


def bias(score, b, h, q, kv):
    return score + (q - kv) * 0.1 * (h + 1)


def _inputs(gqa=False):
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(B, H, L, E, generator=g) for _ in range(3))
    return (q, k[:, :2], v[:, :2]) if gqa else (q, k, v)


CASES = {"plain": (None, None, False), "score_mod": (bias, None, False), "causal": (None, causal, False),
         "both+gqa": (bias, causal, True), "masked rows": (None, late, False)}


def _attend(T, fa, dev, case, tensors, grad=False):
    score_mod, mask_mod, gqa = CASES[case]
    q, k, v = (T.tensor(t.tolist(), device=dev, requires_grad=grad) for t in tensors)
    bm = fa.create_block_mask(mask_mod, B, None, L, L, device=dev, BLOCK_SIZE=4) if mask_mod else None
    out, aux = fa.flex_attention(q, k, v, score_mod=score_mod, block_mask=bm, enable_gqa=gqa,
                                 return_aux=fa.AuxRequest(lse=True))
    return (q, k, v), out, aux.lse, bm


@pytest.mark.parametrize("case", list(CASES))
def test_flex_attention_equals_pytorch(case, device):
    if device == "webgpu" and case not in ("both+gqa", "masked rows"):
        pytest.skip("lavapipe time: the webgpu tier runs the two cases that combine everything")
    tensors = _inputs(CASES[case][2])
    _, want, want_lse, want_bm = _attend(torch, tfa, "cpu", case, tensors)
    _, got, got_lse, got_bm = _attend(wt, wfa, device, case, tensors)
    np.testing.assert_allclose(got.cpu().tolist(), want.tolist(), atol=1e-6)
    np.testing.assert_allclose(got_lse.cpu().tolist(), want_lse.tolist(), atol=1e-6)
    if want_bm is not None:
        assert got_bm.shape == want_bm.shape and got_bm.BLOCK_SIZE == want_bm.BLOCK_SIZE
        for g, w in zip(got_bm.as_tuple()[2:10], want_bm.as_tuple()[2:10]):
            assert g.cpu().tolist() == w.tolist() and g.dtype.name == str(w.dtype).split(".")[-1]
        assert got_bm.to_dense().cpu().tolist() == want_bm.to_dense().tolist()


def _reference(q, k, v, case):
    """PyTorch's math for the case, by hand (PyTorch's flex_attention has no backward on cpu)."""
    score_mod, mask_mod, gqa = CASES[case]
    k, v = (t.repeat_interleave(q.size(1) // t.size(1), dim=1) for t in (k, v))
    s = q @ k.transpose(-2, -1) / math.sqrt(E)
    b, h, m, n = (torch.arange(s.size(d)).reshape([-1 if i == d else 1 for i in range(4)]) for d in range(4))
    s = score_mod(s, b, h, m, n) if score_mod else s
    s = s.masked_fill(~mask_mod(b, h, m, n), -math.inf) if mask_mod else s
    return s.softmax(-1) @ v, s.logsumexp(-1)


def test_gradients_on_webgpu_and_pytorchs_cpu_error(webgpu):
    tensors = _inputs(True)
    with pytest.raises(NotImplementedError, match="FlexAttention does not support backward on CPU") as want:
        _attend(torch, tfa, "cpu", "both+gqa", tensors, grad=True)
    with pytest.raises(NotImplementedError) as got:
        _attend(wt, wfa, "cpu", "both+gqa", tensors, grad=True)
    assert str(got.value) == str(want.value)
    (q, k, v), out, lse, _ = _attend(wt, wfa, "webgpu", "both+gqa", tensors, grad=True)
    (out.sin().sum() + lse.sum()).backward()
    leaves = [t.clone().requires_grad_() for t in tensors]
    ref, ref_lse = _reference(*leaves, "both+gqa")
    (ref.sin().sum() + ref_lse.sum()).backward()
    for ours, theirs in zip((q, k, v), leaves):
        np.testing.assert_allclose(ours.grad.cpu().tolist(), theirs.grad.tolist(), atol=1e-5)


def test_pytorchs_errors():
    q, k, v = _inputs(True)
    for T, fa in ((torch, tfa), (wt, wfa)):
        args = [T.tensor(t.tolist()) for t in (q, k, v)]
        with pytest.raises(ValueError, match=r"^Expect query and key/value to have the same number of heads but got "
                                             r"Hq=4 and Hkv=2. Try setting enable_gqa=True for GQA.$"):
            fa.flex_attention(*args)
        with pytest.raises(ValueError, match="^Cannot specify both return_lse and return_aux"):
            fa.flex_attention(*args, enable_gqa=True, return_lse=True, return_aux=fa.AuxRequest(lse=True))
        with pytest.raises(AssertionError, match="create-block_mask requires a mask_mod function"):
            fa.create_block_mask(bias, 1, 1, L, L, device="cpu")
