"""Built-in ops have two derivative styles: a formula row (autograd/derivatives.py, through
ops/_common.py's formula_node) or a decomposition (Composite). Views, joins, splits, copies,
CopySlices and the (values, indices) ops are rows; the activations PyTorch has at torch level are
declared in the registry (ops/activation.py)."""
import pytest
import torch

import webtorch as wt
import webtorch.nn.functional as F
from webtorch.autograd.function import Function
from webtorch.ops._common import Composite


def _subclasses(cls):
    for s in cls.__subclasses__():
        yield s
        yield from _subclasses(s)


# nodes whose backward reuses the forward's intermediate recursion (a row sees only inputs and results)
OWN_BACKWARD = {"CtcLossBackward0": "PyTorch's ctc_loss_backward runs the beta recursion against the forward's alphas",
                "EmbeddingBackward0": "embedding(sparse=True): its gradient is a sparse COO tensor, built by "
                                      "webtorch.sparse (above the derivative table); the dense form decomposes"}


def test_every_builtin_node_is_a_formula_row_or_a_decomposition():
    builtin = [c for c in set(_subclasses(Function)) if c.__module__.startswith(("webtorch.ops", "webtorch.nn._functional"))]
    assert len(builtin) > 150
    for c in builtin:
        if issubclass(c, Composite) or getattr(c, "_node_name", None) in OWN_BACKWARD:
            continue
        # formula_node takes the node's row from DERIVATIVES (a KeyError without one)
        assert c.backward.__qualname__.startswith("formula_node."), f"{c._backward_cls.__name__}: a hand-written backward"


def _pair(values, requires_grad=True):
    return (wt.tensor(values, requires_grad=requires_grad), torch.tensor(values, requires_grad=requires_grad))


def _close(a, b):
    assert a.dtype.name == str(b.dtype).split(".")[1]
    torch.testing.assert_close(torch.tensor(a.tolist(), dtype=b.dtype), b.detach(), rtol=1e-6, atol=1e-7)


def _check(y, yt, x, xt):
    assert y.grad_fn.name() == yt.grad_fn.name()
    _close(y, yt)
    g = [float(i + 1) for i in range(y.numel())]
    y.backward(wt.tensor(g).reshape(y.shape))
    yt.backward(torch.tensor(g).reshape(yt.shape))
    for a, b in zip(x if isinstance(x, list) else [x], xt if isinstance(xt, list) else [xt]):
        _close(a.grad, b.grad)


def test_variadic_rows_cat_stack_with_mixed_dtypes():
    a, at = _pair([[1.0, 2.0], [3.0, 4.0]])
    b = wt.tensor([[5.0, 6.0]], dtype=wt.float64, requires_grad=True)
    bt = torch.tensor([[5.0, 6.0]], dtype=torch.float64, requires_grad=True)
    _check(wt.cat([a, b]), torch.cat([at, bt]), [a, b], [at, bt])
    a, at = _pair([1.0, 2.0])
    c, ct = _pair([3.0, 4.0])
    _check(wt.stack([a, c], 1), torch.stack([at, ct], 1), [a, c], [at, ct])


def test_multi_output_rows_unbind_split_max_sort():
    for f in (lambda x: x.unbind(1)[1] * 2 + x.unbind(1)[0], lambda x: x.split([1, 2], 1)[1].sum(1),
              lambda x: x.max(1)[0], lambda x: x.cummin(1)[0], lambda x: x.sort(1, descending=True)[0][:, :2]):
        x, xt = _pair([[3.0, 1.0, 2.0], [0.5, 4.0, 4.0]])
        _check(f(x), f(xt), x, xt)


def test_copy_slices_and_copy_rows():
    w, wt_ = _pair([1.0, 2.0, 3.0, 4.0])
    v, vt = _pair([10.0, 20.0])
    y, yt = w * 1, wt_ * 1
    y[1:3].mul_(v)
    yt[1:3].mul_(vt)
    _check(y, yt, [w, v], [wt_, vt])
    w, wt_ = _pair([1.0, 2.0])
    y, yt = w * 1, wt_ * 1
    y.copy_(wt.tensor([5.0], dtype=wt.float64))
    yt.copy_(torch.tensor([5.0], dtype=torch.float64))
    _check(y, yt, w, wt_)


@pytest.mark.parametrize("name,args", [("selu", ()), ("celu", (1.3,)), ("threshold", (0.1, 20.0)),
                                       ("hardshrink", (0.3,))])
def test_torch_level_activations_come_from_the_registry(name, args):
    x, xt = _pair([-2.0, -0.5, 0.25, 1.5])
    _check(getattr(wt, name)(x, *args), getattr(torch, name)(xt, *args), x, xt)
    if hasattr(torch, name + "_"):
        y, yt = x.detach().clone(), xt.detach().clone()
        getattr(wt, name + "_")(y, *args)
        getattr(torch, name + "_")(yt, *args)
        _close(y, yt)
    assert getattr(wt, name) is not getattr(F, name)  # nn.functional's takes `inplace`, as PyTorch's
    assert hasattr(getattr(wt, name), "_impl")  # routed through __torch_function__


def test_activation_methods_and_rrelu_prelu():
    x, xt = _pair([-2.0, -0.5, 0.25, 1.5], requires_grad=False)
    _close(x.hardshrink(0.3), xt.hardshrink(0.3))
    _close(x.prelu(wt.tensor([0.1])), xt.prelu(torch.tensor([0.1])))
    _close(wt.rrelu(x), torch.rrelu(xt))
    y, yt = x.clone(), xt.clone()
    wt.rrelu_(y)
    torch.rrelu_(yt)
    _close(y, yt)
    r = wt.rrelu(x, 0.1, 0.3, True, wt.Generator().manual_seed(0))
    assert ((r >= 0) | ((r <= x * 0.1) & (r >= x * 0.3))).all()
