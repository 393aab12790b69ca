"""An in-place op straight on the output of an op webtorch composes from others (conv, pooling,
norms, losses' inputs) — `F.relu(conv(x), inplace=True)` — records and backpropagates as in
PyTorch: the composite's output is a tensor of its own, not a view of its inner graph."""
import numpy as np
import pytest
import torch

from _nn_util import assert_close, randn, rng_for, wt

CASES = {
    "conv_nobias_relu_": (lambda T, x, w: T.nn.functional.relu(T.nn.functional.conv2d(x, w), inplace=True)),
    "conv_nobias_mul_": (lambda T, x, w: T.nn.functional.conv2d(x, w).mul_(w.sum())),
    "max_pool2d_relu_": (lambda T, x, w: T.nn.functional.relu(T.nn.functional.max_pool2d(x, 2), inplace=True) * w.sum()),
    "avg_pool2d_add_": (lambda T, x, w: T.nn.functional.avg_pool2d(x, 2).add_(w.sum())),
    "layer_norm_relu_": (lambda T, x, w: T.nn.functional.relu_(T.nn.functional.layer_norm(x, x.shape[-2:])) * w.sum()),
    "batch_norm_relu_": (lambda T, x, w: T.nn.functional.relu(T.nn.functional.batch_norm(
        x, None, None, training=True), inplace=True) * w.sum()),
    "conv_then_view_relu_": (lambda T, x, w: T.nn.functional.conv2d(x, w).view(-1).relu_()),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_inplace_on_composite_output(device, case):
    rng = rng_for(case)
    x, w = randn(rng, 2, 3, 6, 6), randn(rng, 4, 3, 3, 3)
    got, want = [], []
    for T, out, dev in ((wt, got, device), (torch, want, "cpu")):
        xs = [T.tensor(a, device=dev, requires_grad=True) for a in (x, w)]
        y = CASES[case](T, *xs)
        (y * T.arange(y.numel(), device=dev).reshape(y.shape)).sum().backward()
        out += [y, xs[0].grad, xs[1].grad]
        out.append(type(y.grad_fn).__name__)
    assert got.pop() == want.pop()  # the grad_fn names
    for what, g, e in zip(("out", "x.grad", "w.grad"), got, want):
        assert_close(g, e, device, f"{case} {what}", rtol=1e-3, atol=1e-3)


def test_module_relu_inplace_after_conv_without_bias(device):
    """The everyday form: nn.Sequential(Conv2d(bias=False), BatchNorm, ReLU(inplace=True), MaxPool)."""
    rng = rng_for("seq")
    x = randn(rng, 2, 3, 8, 8)
    grads = []
    for T, dev in ((wt, device), (torch, "cpu")):
        T.manual_seed(0)
        m = T.nn.Sequential(T.nn.Conv2d(3, 4, 3, bias=False), T.nn.ReLU(inplace=True), T.nn.MaxPool2d(2),
                            T.nn.ReLU(inplace=True), T.nn.Flatten(), T.nn.Linear(36, 2))
        with T.no_grad():
            for i, p in enumerate(m.parameters()):
                p.copy_(T.tensor(np.cos(np.arange(p.numel()) + i).reshape(tuple(p.shape)).astype(np.float32)))
        m = m.to(dev)
        m(T.tensor(x, device=dev)).pow(2).sum().backward()
        grads.append([p.grad for p in m.parameters()])
    for g, e in zip(*grads):
        assert_close(g, e, device, "param grad", rtol=1e-3, atol=1e-3)
