"""Selective activation checkpointing (torch.utils.checkpoint's SAC) against PyTorch: gradients through
checkpoint(..., context_fn=create_selective_checkpoint_contexts(policy)) equal PyTorch's; an op the policy saves
is not recomputed (a saved dropout keeps its forward mask without preserve_rng_state); the API's names, enums
and errors."""
import functools
import warnings

import pytest
import torch

import webtorch as wt


def _f(T):
    def f(x, w):
        return (T.matmul(x, w).sin() * 2).relu().sum()
    return f


def _grads(T, x0, w0, context_fn, device=None):
    x = (wt.tensor(x0.tolist(), device=device) if T is wt else x0.clone()).requires_grad_()
    w = (wt.tensor(w0.tolist(), device=device) if T is wt else w0.clone()).requires_grad_()
    out = T.utils.checkpoint.checkpoint(_f(T), x, w, use_reentrant=False, context_fn=context_fn)
    out.backward()
    return out.item(), x.grad.tolist(), w.grad.tolist()


@pytest.mark.parametrize("save", ["matmul", "sin"])
def test_sac_gradients_as_pytorch(device, save):
    torch.manual_seed(0)
    x0, w0 = torch.randn(4, 5), torch.randn(5, 3)
    calls = {torch: [], wt: []}

    def policy_for(T):
        def policy(ctx, op, *args, **kwargs):
            calls[T].append(ctx.is_recompute)
            name = getattr(op, "__name__", str(op))
            return T.utils.checkpoint.CheckpointPolicy.MUST_SAVE if save in name else \
                T.utils.checkpoint.CheckpointPolicy.PREFER_RECOMPUTE
        return functools.partial(T.utils.checkpoint.create_selective_checkpoint_contexts, policy)
    ref = _grads(torch, x0, w0, policy_for(torch))
    got = _grads(wt, x0, w0, policy_for(wt), device)
    assert abs(got[0] - ref[0]) < 1e-4
    for a, b in zip(got[1:], ref[1:]):
        assert torch.allclose(torch.tensor(a), torch.tensor(b), atol=1e-5)
    assert set(calls[wt]) == set(calls[torch]) == {False}  # the policy is asked in forward only


def test_saved_op_is_not_recomputed():
    cp = wt.utils.checkpoint

    def f(x, w):
        return wt.nn.functional.dropout(wt.matmul(x, w), 0.5, True).sin().sum()
    wt.manual_seed(0)
    x0, w0 = wt.randn(4, 5), wt.randn(5, 6)
    x = x0.clone().requires_grad_()
    wt.manual_seed(1)
    f(x, w0).backward()
    ref = x.grad
    for saved, same in (([wt.nn.functional.dropout], True), ([wt.matmul], False)):
        x = x0.clone().requires_grad_()
        wt.manual_seed(1)
        cp.checkpoint(f, x, w0, use_reentrant=False, preserve_rng_state=False,
                      context_fn=functools.partial(cp.create_selective_checkpoint_contexts, saved)).backward()
        assert bool(wt.allclose(x.grad, ref)) is same


def test_sac_api():
    for T in (torch, wt):
        cp = T.utils.checkpoint
        assert [(p.name, p.value) for p in cp.CheckpointPolicy] == \
            [(p.name, p.value) for p in torch.utils.checkpoint.CheckpointPolicy]
        ctx = cp.SelectiveCheckpointContext(is_recompute=False)
        assert ctx.is_recompute is False and ctx.op_output is None
        with pytest.raises(TypeError, match="policy_fn_or_list must be either a function or a list of ops"):
            cp.create_selective_checkpoint_contexts(3)
        with pytest.raises(ValueError, match="Expected op in `op_list` to be an OpOverload but got: 3"):
            cp.create_selective_checkpoint_contexts([3])
        with cp.set_checkpoint_debug_enabled(True), cp.set_checkpoint_early_stop(False):
            pass
        with cp.GraphExecGroup():
            with pytest.raises(RuntimeError, match="GraphExecGroup contexts cannot be nested"):
                with cp.GraphExecGroup():
                    pass
        assert isinstance(cp.SAC_IGNORED_OPS, set) and cp.SAC_IGNORED_OPS
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = wt.ones(2, requires_grad=True)
        bad = functools.partial(wt.utils.checkpoint.create_selective_checkpoint_contexts, lambda *a, **k: 3)
        with pytest.raises(RuntimeError, match="policy_fn must return a CheckpointPolicy"):
            wt.utils.checkpoint.checkpoint(lambda x: x.sin(), x, use_reentrant=False, context_fn=bad)
