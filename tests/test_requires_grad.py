"""Which results require grad, their node, and what backward through them does, vs PyTorch: ops
without a derivative still give a result that requires grad (backward raises, PyTorch's
NotImplemented node) or a zero gradient; non-differentiable results (comparisons, indices) never
require grad; an in-place op without a derivative never leaves the old history in place."""
import numpy as np
import pytest
import torch

from core_util import wt, check_same

X = np.array([1.5, -2.25, 3.0], "float32")

CASES = {
    "floor_divide": lambda T, x: x // 2,
    "rfloordiv": lambda T, x: 7 // x,
    "floor_divide_tensors": lambda T, x: T.floor_divide(x, x + 4),
    "floor_divide_": lambda T, x: (x * 1).floor_divide_(2),
    "heaviside": lambda T, x: T.heaviside(x, x),
    "uniform_": lambda T, x: (x * 1).uniform_(),
    "normal_": lambda T, x: (x * 1).normal_(),
    "bernoulli_": lambda T, x: (x * 1).bernoulli_(),
    "exponential_": lambda T, x: (x * 1).exponential_(),
    "random_": lambda T, x: (x * 1).random_(0, 5),
    "uniform_view": lambda T, x: (x * 1)[1:].uniform_(),
    "bernoulli": lambda T, x: T.bernoulli(x.sigmoid()),
    "sign": lambda T, x: x.sign(),
    "round": lambda T, x: x.round(),
    "gt": lambda T, x: x > 0,
    "argmax": lambda T, x: x.argmax(),
    "sort_indices": lambda T, x: x.sort()[1],
    "cat_empty": lambda T, x: T.cat([x[:0], x[3:]]),
    "unique": lambda T, x: T.unique(x),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_requires_grad_and_backward(device, case):
    fn = CASES[case]
    res = []
    for T, dev in ((torch, "cpu"), (wt, device)):
        x = T.tensor(X, device=dev, requires_grad=True)
        y = fn(T, x)
        node = type(y.grad_fn).__name__ if y.grad_fn is not None else None
        try:
            y.float().sum().backward() if y.requires_grad else None
            out = x.grad
        except (RuntimeError, NotImplementedError) as e:  # the exception is what is compared
            out = (type(e), str(e))
        res.append((y.requires_grad, node, out))
    (w_rg, w_node, w_out), (t_rg, t_node, t_out) = res[1], res[0]
    assert (w_rg, w_node) == (t_rg, t_node)
    if isinstance(t_out, torch.Tensor):
        check_same(w_out, t_out, device=device, what="grad")
    else:
        assert w_out == t_out or case == "floor_divide_" and w_out[0] is t_out[0]  # PyTorch names floor_divide_
