"""Adding an element-wise primitive is one record (+ one derivative row), and nothing else: a fake binary
primitive `fake_hypot2(a, b) = a*a + b*b`, defined at test time with its numpy, pure-Python and WGSL forms,
is webtorch.fake_hypot2 and Tensor.fake_hypot2 (in-place and out= too) on cpu (numpy), cpu-pure and
webgpu, differentiable through its row (gradcheck), fused on webgpu, and equal to a numpy reference on
OpInfo-style samples. The registry is as before once the test is done."""
import numpy as np
import pytest
from core_util import fusion, to_wt

import webtorch as wt
from webtorch.autograd.derivatives import DERIVATIVES
from webtorch.backends import elementwise
from webtorch.backends.base import EWISE_OPS
from webtorch.ops.registry import ELEMENTWISE, FUNCTIONS, METHODS

NAME, NODE = "fake_hypot2", "FakeHypot2Backward0"
FAKE = elementwise.Prim(NAME, 2, "f", np={"f": lambda a, b: a * a + b * b}, py={"f": lambda a, b: a * a + b * b},
                        wgsl={"f": "({0} * {0} + {1} * {1})"}, decl={"rule": "float", "tensor_other": True})
ROW = {"a": lambda g, a, b: 2 * g * a, "b": lambda g, a, b: 2 * g * b}
# OpInfo-style samples: (input shape, other shape), broadcasting and 0-d included
SAMPLES = [((), ()), ((5,), (5,)), ((2, 3), (2, 3)), ((2, 1), (1, 3)), ((4, 3), (3,)), ((0, 3), (1, 3))]
rng = np.random.default_rng(0)


def ref(a, b):
    return a * a + b * b


@pytest.fixture
def fake():
    DERIVATIVES[NODE] = ROW
    elementwise.define(FAKE)
    try:
        yield
    finally:
        elementwise.remove(NAME)
        del DERIVATIVES[NODE]


def test_a_record_is_an_op_everywhere(fake, device):
    for sa, sb in SAMPLES:
        a, b = rng.uniform(-2, 2, sa).astype(np.float32), rng.uniform(-2, 2, sb).astype(np.float32)
        x, y = to_wt(a, device), to_wt(b, device)
        want = ref(a, b)
        out = wt.empty(want.shape, device=device)
        for got in (wt.fake_hypot2(x, y), x.fake_hypot2(y), wt.fake_hypot2(x, y, out=out)):
            assert got.dtype == wt.float32 and tuple(got.shape) == want.shape and got.device.type == x.device.type
            np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-6, atol=1e-6)
        if want.shape == a.shape:
            z = x.clone()
            assert z.fake_hypot2_(y) is z
            np.testing.assert_allclose(z.cpu().numpy(), want, rtol=1e-6, atol=1e-6)
    # integers become the default float (its rule 'float' refuses them, as PyTorch's float-only kernels)
    with pytest.raises(NotImplementedError, match="fake_hypot2_cpu"):
        wt.fake_hypot2(wt.tensor([1, 2], device=device), wt.tensor([3, 4], device=device))


def test_its_gradient_is_its_row(fake, device):
    a, b = rng.uniform(-2, 2, (2, 3)).astype(np.float32), rng.uniform(-2, 2, (3,)).astype(np.float32)
    x, y = to_wt(a, device).requires_grad_(), to_wt(b, device).requires_grad_()
    z = wt.fake_hypot2(x, y)
    assert z.grad_fn.name() == NODE
    z.sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), 2 * a, rtol=1e-6)
    np.testing.assert_allclose(y.grad.cpu().numpy(), 2 * b * 2, rtol=1e-6)  # summed over the broadcast rows
    if device != "webgpu":  # float64: gradcheck and gradgradcheck
        x64 = wt.tensor(a, dtype=wt.float64, requires_grad=True)
        y64 = wt.tensor(b, dtype=wt.float64, requires_grad=True)
        assert wt.autograd.gradcheck(wt.fake_hypot2, (x64, y64))
        assert wt.autograd.gradgradcheck(wt.fake_hypot2, (x64, y64))


@pytest.mark.usefixtures("webgpu")
def test_it_fuses_on_webgpu(fake):
    from webtorch.backends import webgpu
    a, b = rng.uniform(-2, 2, 64).astype(np.float32), rng.uniform(-2, 2, 64).astype(np.float32)
    x, y = to_wt(a, "webgpu"), to_wt(b, "webgpu")
    with fusion("webgpu", True):
        webgpu.synchronize()
        d0 = webgpu.dispatch_count()
        z = (wt.fake_hypot2(x, y) + 1).sqrt()
        got = z.cpu().numpy()
        assert webgpu.dispatch_count() - d0 == 1  # one kernel: the record's expression joins the chain
    np.testing.assert_allclose(got, np.sqrt(ref(a, b) + 1), rtol=1e-6)


def test_removing_it_restores_the_registry():
    before = (set(FUNCTIONS), set(METHODS), set(ELEMENTWISE), set(EWISE_OPS), dict(elementwise.RECORDS))
    DERIVATIVES[NODE] = ROW
    elementwise.define(FAKE)
    assert NAME in EWISE_OPS and NAME in FUNCTIONS and hasattr(wt.Tensor, NAME + "_")
    with pytest.raises(ValueError):
        elementwise.define(FAKE)
    elementwise.remove(NAME)
    del DERIVATIVES[NODE]
    assert (set(FUNCTIONS), set(METHODS), set(ELEMENTWISE), set(EWISE_OPS), dict(elementwise.RECORDS)) == before
    assert not hasattr(wt.Tensor, NAME) and not hasattr(wt, NAME)
