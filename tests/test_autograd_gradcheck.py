"""Finite-difference checks in float64 on cpu: gradcheck for every differentiable op,
gradgradcheck (second derivatives) for the elementwise ops and matmul."""
import pytest

import webtorch as wt
from webtorch.autograd.gradcheck import GradcheckError
from _autograd_cases import BY_NAME, CASES, GRADGRAD, build


def _fn(case, args, leaves):
    """The case as a function of its float inputs only (index/mask args held fixed)."""
    pos = [k for k, spec in enumerate(case.args) if spec[0] == "f"]

    def f(*xs):
        full = list(args)
        for k, x in zip(pos, xs):
            full[k] = x
        return case.fn(wt, *full)
    return f


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_gradcheck(case):
    args, leaves = build(wt, case, "cpu", wt.float64)
    assert wt.autograd.gradcheck(_fn(case, args, leaves), tuple(leaves), eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("name", GRADGRAD)
def test_gradgradcheck(name):
    case = BY_NAME[name]
    args, leaves = build(wt, case, "cpu", wt.float64)
    assert wt.autograd.gradgradcheck(_fn(case, args, leaves), tuple(leaves), eps=1e-6, atol=1e-5, rtol=1e-3)


def test_gradcheck_catches_a_wrong_derivative():
    class BadExp(wt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y * 1.01

    x = wt.tensor([0.3, -0.2], dtype=wt.float64, requires_grad=True)
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        wt.autograd.gradcheck(BadExp.apply, (x,))
    assert wt.autograd.gradcheck(BadExp.apply, (x,), raise_exception=False) is False


def test_gradgradcheck_catches_a_wrong_second_derivative():
    class BadSquare(wt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x.detach() + 0 * x  # first derivative right, second wrong (x detached)

    x = wt.tensor([0.3, -0.7], dtype=wt.float64, requires_grad=True)
    assert wt.autograd.gradcheck(BadSquare.apply, (x,))
    with pytest.raises(GradcheckError):
        wt.autograd.gradgradcheck(BadSquare.apply, (x,))
