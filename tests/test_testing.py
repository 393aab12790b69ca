"""Issue #22: torch.testing against PyTorch 2.13: assert_close's verdicts and messages (default tolerances per dtype,
nested containers, attribute checks), assert_allclose, make_tensor's ranges, layouts and errors."""
import math
import warnings

import pytest
import torch

import webtorch as wt

NAN, INF = math.nan, math.inf
CASES = [  # (actual, expected, kwargs), built with T = torch or webtorch
    lambda T: (T.tensor([1.0, 2.0, 3.0]), T.tensor([1.0, 2.5, 3.0]), {}),
    lambda T: (T.tensor([1.0, 2.0, 3.0]), T.tensor([1.0, 2.0, 3.0], dtype=T.float64), {}),
    lambda T: (T.tensor([1.0, 2.0, 3.0]), T.tensor([1.0, 2.0]), {}),
    lambda T: (T.tensor([[1, 2], [3, 4]]), T.tensor([[1, 2], [3, 5]]), {}),
    lambda T: (1.0, 1.1, {}),
    lambda T: (1.0, 1.0 + 1e-9, {}),
    lambda T: (1, 1.0, {}),
    lambda T: ({"a": T.ones(2)}, {"a": T.zeros(2)}, {}),
    lambda T: ([T.ones(2), (T.ones(1), 3)], [T.ones(2), (T.ones(1), 4)], {}),
    lambda T: (T.tensor([1.0, NAN]), T.tensor([1.0, NAN]), {}),
    lambda T: (T.tensor([1.0, NAN]), T.tensor([1.0, NAN]), {"equal_nan": True}),
    lambda T: (T.tensor([1.0, INF, -INF]), T.tensor([1.0, INF, -INF]), {}),
    lambda T: (T.tensor([1.0, 2.0]), T.tensor([1.0, 2.001]), {"rtol": 1e-2, "atol": 0}),
    lambda T: (T.tensor([1.0, 2.0]), T.tensor([1.0, 2.1]), {"msg": "custom"}),
    lambda T: (T.tensor([1.0, 2.0]), T.tensor([1.0, 2.1]), {"rtol": 1e-2}),
    lambda T: (T.tensor([1.0, 2.0], dtype=T.float16), T.tensor([1.0, 2.001], dtype=T.float16), {}),
    lambda T: (T.tensor([1.0, 2.0]), T.tensor([1.0, 2.0], dtype=T.float64), {"check_dtype": False}),
    lambda T: (T.tensor([[1.0, 2.0], [3, 4]]), T.tensor([[1.0, 3.0], [2, 4]]).t(), {"check_stride": True}),
    lambda T: (T.zeros(2, 3), T.zeros(2, 3).add(T.tensor([0.0, 0.0, 1e-3])), {"msg": lambda m: "[" + m + "]"}),
]


def _outcome(fn):
    try:
        fn()
        return None
    except Exception as e:  # the exception's type and text are what we compare
        return type(e).__name__, str(e)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_assert_close_as_pytorch(case):
    (ta, te, kw), (wa, we, wkw) = CASES[case](torch), CASES[case](wt)
    assert _outcome(lambda: wt.testing.assert_close(wa, we, **wkw)) == _outcome(
        lambda: torch.testing.assert_close(ta, te, **kw))


def test_assert_close_devices_and_types(device):
    x = wt.arange(6.0, device=device).reshape(2, 3)
    wt.testing.assert_close(x * 1.0000001, x)
    with pytest.raises(AssertionError, match=r"Greatest absolute difference: 1.0 at index \(1, 2\)"):
        wt.testing.assert_close(x + (x == 5).float(), x)
    if device == "webgpu":
        with pytest.raises(AssertionError, match="The values for attribute 'device' do not match"):
            wt.testing.assert_close(x, x.cpu())
        wt.testing.assert_close(x, x.cpu(), check_device=False)
    with pytest.raises(TypeError, match="No comparison pair was able to handle inputs of type"):
        wt.testing.assert_close(x, [1.0])
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol' must be either specified or omitted"):
        wt.testing.assert_close(x, x, rtol=0.1)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        wt.testing.assert_allclose(wt.tensor([1.0, 2.0]), [1.0, 2.0])
    assert any(issubclass(m.category, FutureWarning) for m in w)


def test_make_tensor(device):
    wt.manual_seed(0)
    x = wt.testing.make_tensor(3, 4, dtype=wt.float32, device=device, low=-1, high=1)
    assert x.shape == (3, 4) and x.device.type == device and bool((x >= -1).all() & (x < 1).all())
    y = wt.testing.make_tensor((2, 5), dtype=wt.int64, device=device, noncontiguous=True, exclude_zero=True)
    assert y.shape == (2, 5) and not y.is_contiguous() and bool((y != 0).all() & (y >= -9).all() & (y < 10).all())
    assert wt.testing.make_tensor(4, dtype=wt.bool, device=device).dtype is wt.bool
    assert wt.testing.make_tensor(2, dtype=wt.float32, device=device, requires_grad=True).requires_grad
    for kw in (dict(dtype=wt.float32, low=3, high=1), dict(dtype=wt.int64, requires_grad=True),
               dict(dtype=wt.uint8, low=-5, high=-1)):
        tkw = {k: getattr(torch, v.name) if isinstance(v, wt.dtype) else v for k, v in kw.items()}
        with pytest.raises(ValueError) as e:
            torch.testing.make_tensor(2, device="cpu", **tkw)
        with pytest.raises(ValueError, match=str(e.value).replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
            wt.testing.make_tensor(2, device=device, **kw)
