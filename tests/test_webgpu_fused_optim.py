"""Fused optimizer steps on webgpu (webtorch/webgpu/fused.py: Adam/AdamW, RMSprop, Adagrad; SGD's
in test_webgpu_fused.py) against torch.optim on CPU, every flag combination: one dispatch per
parameter eagerly (the step count a Python number), two under torch.compile (the step count in a
device tensor, advanced first, then read by the update), float16 parameters, state_dict round
trips, and the cases the kernels leave to the generic path."""
import itertools
import os

import numpy as np
import pytest

os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

import torch  # noqa: E402  (the oracle)
import webtorch as wt  # noqa: E402
from webtorch.backends import webgpu  # noqa: E402
from webtorch.webgpu import fused  # noqa: E402

pytestmark = pytest.mark.usefixtures("webgpu")  # conftest: skipped only by WEBTORCH_SKIP_WEBGPU=1

SHAPES = [(5, 7), (7,)]
STEPS = 6

ADAM = [(("AdamW" if dec else "Adam"), dict(lr=0.05, weight_decay=wd, amsgrad=ams, maximize=mx))
        for dec, wd, ams, mx in itertools.product([False, True], [0, 0.1], [False, True], [False, True])]
ADAM += [("Adam", dict(lr=0.02, betas=(0.4, 0.8), eps=1e-4, weight_decay=0.1)),  # lerp's weight >= 0.5
         ("AdamW", dict(lr=0.02, betas=(0.4, 0.8), amsgrad=True))]
RMSPROP = [("RMSprop", dict(lr=0.01, centered=c, momentum=m, weight_decay=wd, maximize=mx))
           for c, m, wd, mx in itertools.product([False, True], [0, 0.9], [0, 0.1], [False, True])]
RMSPROP += [("RMSprop", dict(lr=0.01, alpha=0.3, centered=True, eps=1e-4))]
ADAGRAD = [("Adagrad", dict(lr=0.1, lr_decay=d, weight_decay=wd, maximize=mx))
           for d, wd, mx in itertools.product([0, 0.05], [0, 0.1], [False, True])]
ADAGRAD += [("Adagrad", dict(lr=0.1, initial_accumulator_value=0.5, eps=1e-6))]
CASES = ADAM + RMSPROP + ADAGRAD
IDS = [f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items() if k != 'lr')}" for n, kw in CASES]
FUSED = {"Adam": "adam", "AdamW": "adam", "RMSprop": "rmsprop", "Adagrad": "adagrad"}


def _data(seed=0, dtype=np.float32):
    r = np.random.default_rng(seed)
    params = [r.standard_normal(s).astype(dtype) for s in SHAPES]
    grads = [[r.standard_normal(s).astype(dtype) for s in SHAPES] for _ in range(STEPS)]
    grads[3][1][:2] = 0
    return params, grads


def _np(t):
    return t.detach().cpu().numpy()


def _torch_run(name, kw, params, grads):
    ps = [torch.tensor(p, requires_grad=True) for p in params]
    opt = getattr(torch.optim, name)(ps, **kw)
    for gs in grads:
        for p, g in zip(ps, gs):
            p.grad = torch.tensor(g)
        opt.step()
    return [p.detach().numpy() for p in ps], opt


def _wt_run(name, kw, params, grads, compiled=False, transposed=False):
    """webgpu parameters after the steps, the optimizer, and the dispatches of each step (the
    gradients, made before each step, not counted); `transposed`: the matrix's gradients are
    transposed views (as AccumulateGrad steals them from a product)."""
    ps = [wt.tensor(p, device="webgpu").requires_grad_() for p in params]
    opt = getattr(wt.optim, name)(ps, **kw)
    step = wt.compile(lambda: opt.step()) if compiled else opt.step
    counts = []
    for gs in grads:
        for p, g in zip(ps, gs):
            p.grad = wt.tensor(g.T.copy(), device="webgpu").t() if transposed and g.ndim == 2 else \
                wt.tensor(g, device="webgpu")
        d0 = webgpu.dispatch_count()
        step()
        counts.append(webgpu.dispatch_count() - d0)
    return [_np(p) for p in ps], opt, counts


@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_eager_step_is_one_dispatch_per_param_and_matches_torch(name, kw):
    params, grads = _data()
    want, _ = _torch_run(name, kw, params, grads)
    got, _, counts = _wt_run(name, kw, params, grads, transposed=True)
    assert counts[1:] == [len(SHAPES)] * (STEPS - 1)      # the first step also fills the new state
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_compiled_step_is_two_dispatches_per_param_and_matches_torch(name, kw, monkeypatch):
    """Under torch.compile the step count lives on the device (capturable): per parameter one dispatch
    advances it and one update reads it; the values are the generic capturable path's and PyTorch's."""
    params, grads = _data(1)
    want, _ = _torch_run(name, kw, params, grads)
    got, opt, counts = _wt_run(name, kw, params, grads, compiled=True)
    assert counts[1:] == [2 * len(SHAPES)] * (STEPS - 1)
    assert {st["step"].item() for st in opt.state.values()} == {float(STEPS)}
    monkeypatch.delitem(fused.STEPS, FUSED[name])
    generic, _, gcounts = _wt_run(name, kw, params, grads, compiled=True)
    assert gcounts[-1] > counts[-1]
    for a, b, c in zip(got, generic, want):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
        # the bias corrections from a float32 step, as PyTorch's capturable form computes them
        np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name,kw", [("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
                                     ("AdamW", dict(lr=0.01, maximize=True)),
                                     ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1)),
                                     ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1)),
                                     ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1))])
def test_float16_params_match_torch(name, kw):
    if not webgpu.get_backend().has_f16:
        pytest.skip("this adapter lacks 'shader-f16': float16 tensors are refused on webgpu")
    params, grads = _data(2, np.float16)
    want, _ = _torch_run(name, kw, params, grads)
    got, _, counts = _wt_run(name, kw, params, grads)
    assert counts[1:] == [len(SHAPES)] * (STEPS - 1)
    for a, b in zip(got, want):
        assert a.dtype == np.float16
        np.testing.assert_allclose(a.astype(np.float32), b.astype(np.float32), rtol=2e-3, atol=2e-3)


def _to_torch(sd):
    conv = lambda v: torch.tensor(_np(v)) if isinstance(v, wt.Tensor) else v      # noqa: E731
    return {"state": {i: {k: conv(v) for k, v in st.items()} for i, st in sd["state"].items()},
            "param_groups": sd["param_groups"]}


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("name,kw", [("AdamW", dict(lr=0.05, amsgrad=True)),
                                     ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)),
                                     ("Adagrad", dict(lr=0.1, lr_decay=0.05))])
def test_state_dict_round_trip(name, kw, compiled):
    """The state of fused steps (eager, or compiled with the step on the device) loads into
    torch.optim, torch's loads here, and both continue as an uninterrupted PyTorch run."""
    params, grads = _data(3)
    want, _ = _torch_run(name, kw, params, grads)
    half, topt = _torch_run(name, kw, params, grads[:3])
    got, wopt, _ = _wt_run(name, kw, params, grads[:3], compiled=compiled)
    sd = wopt.state_dict()
    assert {float(st["step"].item()) for st in sd["state"].values()} == {3.0}
    # ours into torch
    tps = [torch.tensor(p, requires_grad=True) for p in got]
    t2 = getattr(torch.optim, name)(tps, **kw)
    t2.load_state_dict(_to_torch(sd))
    # torch's into ours, on webgpu, continued by the fused kernels
    wps = [wt.tensor(p, device="webgpu").requires_grad_() for p in half]
    w2 = getattr(wt.optim, name)(wps, **kw)
    w2.load_state_dict(topt.state_dict())
    for gs in grads[3:]:
        for tp, wp, g in zip(tps, wps, gs):
            tp.grad, wp.grad = torch.tensor(g), wt.tensor(g, device="webgpu")
        d0 = webgpu.dispatch_count()
        t2.step()
        w2.step()
        assert webgpu.dispatch_count() - d0 == len(SHAPES)
    for a, b, c in zip(tps, wps, want):
        np.testing.assert_allclose(a.detach().numpy(), c, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(_np(b), c, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name,kw", [("Adam", dict(lr=0.05, amsgrad=True)), ("RMSprop", dict(lr=0.01, momentum=0.5)),
                                     ("Adagrad", dict(lr=0.1))])
def test_gradient_sharing_the_parameter_memory_takes_the_generic_path(name, kw):
    """A gradient that is a view of the parameter's own memory (p.grad = p.detach()) cannot be
    read and written by one kernel: the update runs the generic element-wise path, as PyTorch."""
    p0 = np.random.default_rng(4).standard_normal((4, 3)).astype(np.float32)
    p, pt = wt.tensor(p0, device="webgpu").requires_grad_(), torch.tensor(p0, requires_grad=True)
    opt, topt = getattr(wt.optim, name)([p], **kw), getattr(torch.optim, name)([pt], **kw)
    for _ in range(3):
        p.grad, pt.grad = p.detach(), pt.detach()
        d0 = webgpu.dispatch_count()
        opt.step()
        assert webgpu.dispatch_count() - d0 > 1
        topt.step()
    np.testing.assert_allclose(_np(p), pt.detach().numpy(), rtol=1e-5, atol=1e-6)
