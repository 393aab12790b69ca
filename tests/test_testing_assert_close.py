"""torch.testing.assert_close as PyTorch's: the same pass/fail, exception type and message for tensors (on each
device), Python scalars, None, booleans, sequences and mappings, tolerance arguments and msg."""
import pytest
import torch

import webtorch as wt

CASES = [
    "ac(T.tensor([1., 2, 3], device=D), T.tensor([1., 2.5, 3], device=D))",
    "ac(T.tensor([1, 2, 3], device=D), T.tensor([1, 3, 3], device=D))",
    "ac(T.tensor(1., device=D), T.tensor(1.5, device=D))",
    "ac(T.tensor([1.], device=D), T.tensor([1., 2], device=D))",
    "ac(T.tensor([1.], device=D), T.tensor([1], device=D))",
    "ac(T.tensor([1.], device=D), T.tensor([1], device=D), check_dtype=False)",
    "ac(T.tensor([True, False], device=D), T.tensor([True, True], device=D))",
    "ac(T.tensor([[1., 2], [3, 4]], device=D), T.tensor([[1., 2], [3, 5]], device=D))",
    "ac(T.tensor([float('nan'), 1.], device=D), T.tensor([float('nan'), 1.], device=D))",
    "ac(T.tensor([float('nan'), 1.], device=D), T.tensor([float('nan'), 1.], device=D), equal_nan=True)",
    "ac(T.tensor([1.], device=D), T.tensor([1.1], device=D), rtol=0.2, atol=0)",
    "ac(T.tensor([1.], device=D), T.tensor([1.1], device=D), rtol=0.2)",
    "ac(T.tensor([1.], device=D), T.tensor([2.], device=D), msg='custom')",
    "ac(T.tensor([1.], device=D), T.tensor([2.], device=D), msg=lambda m: 'X' + m[:10])",
    "ac(T.tensor([0., 1.], device=D), T.tensor([1e-6, 1.], device=D))",
    "ac(T.tensor([0., 1.], device=D), T.tensor([1e-4, 1.], device=D))",
    "ac(T.tensor([1., 2.], requires_grad=True, device=D) * 2, T.tensor([2., 4.], device=D))",
    "ac(T.arange(6., device=D).view(2, 3), T.arange(6., device=D).view(2, 3).t().contiguous().t(), check_stride=True)",
    "ac([T.tensor(1., device=D), T.tensor(2., device=D)], [T.tensor(1., device=D), T.tensor(3., device=D)])",
    "ac({'a': T.tensor(1., device=D)}, {'a': T.tensor(2., device=D)})",
    "ac(T.tensor([1.], device=D), 1.0)",
    "ac(1.0, 1.5)", "ac(1, 2)", "ac(2, 2.0)", "ac(True, False)", "ac(None, 1)", "ac(None, None)",
    "ac({'a': 1}, {'b': 1})", "ac([1, 2], [1, 2, 3])", "ac((1.0, 2.0), [1.0, 2.0])",
    "ac(T.tensor([1.]), T.tensor([1.0000001], dtype=T.float64), check_dtype=False)",
]


def _outcome(lib, case, dev):
    try:
        eval(case, {"ac": lib.testing.assert_close, "T": lib, "D": dev})
    except Exception as e:  # noqa: BLE001 (the exception is the answer compared)
        return type(e).__name__, str(e)
    return "ok", ""


@pytest.mark.parametrize("device", ["cpu", "webgpu"], indirect=True)
def test_assert_close_as_pytorch(device):
    for case in CASES:
        if device == "webgpu" and "float64" in case:
            continue
        assert _outcome(wt, case, device) == _outcome(torch, case, "cpu"), case


MAKE = ["mt(3, 4, dtype=T.float32, device=D)", "mt((2, 3), dtype=T.int64, device=D)", "mt([5], dtype=T.bool, device=D)",
        "mt(4, dtype=T.int32, device=D, low=0.5, high=3.2)", "mt(3, 2, dtype=T.float32, device=D, noncontiguous=True)",
        "mt(6, dtype=T.int64, device=D, low=-1, high=2, exclude_zero=True)", "mt(2, dtype=T.uint8, device=D)",
        "mt(2, dtype=T.float32, device=D, requires_grad=True)", "mt(2, dtype=T.float32, device=D, low=-3e38, high=3e38)",
        "mt(2, dtype=T.int64, device=D, requires_grad=True)", "mt(2, dtype=T.float32, device=D, low=2, high=1)",
        "mt(2, dtype=T.uint8, device=D, low=300, high=400)", "mt(2, dtype=T.float32, device=D, low=float('nan'))"]


def _made(lib, case, dev):
    lib.manual_seed(0)
    try:
        r = eval(case, {"mt": lib.testing.make_tensor, "T": lib, "D": dev})
    except (ValueError, TypeError) as e:
        return type(e).__name__, str(e)
    return r.cpu().tolist(), str(r.dtype), r.stride(), r.requires_grad


@pytest.mark.parametrize("device", ["cpu", "cpu-pure", "webgpu"], indirect=True)
def test_make_tensor_as_pytorch(device):
    """cpu: PyTorch's values under one seed (its draws); webgpu: the same dtypes, strides, ranges and errors."""
    for case in MAKE + (["mt(2, 3, dtype=T.float64, device=D, low=-1, high=1)", "mt(3, dtype=T.complex64, device=D)"]
                        if device == "cpu" else []):
        got, want = _made(wt, case, device), _made(torch, case, "cpu")
        if device == "webgpu" and isinstance(want[0], list):
            flat = torch.tensor(got[0]).flatten().tolist()
            lo, hi = (-9, 10) if "low" not in case else (-3e38, 3e38)
            assert got[1:] == want[1:] and all(lo <= v < hi for v in flat), case
        else:
            assert got == want, case


def test_assert_allclose_deprecated_form_as_pytorch():
    cases = ["aa(T.tensor([1., 2.]), [1., 2.00001])", "aa(T.tensor([1., 2.]), [1., 2.01])", "aa(1.0, 1.00001)",
             "aa(T.tensor([1, 2]), [1, 3])", "aa(T.tensor([1., 2.]), T.tensor([1., 2.], dtype=T.float64))",
             "aa(T.tensor([float('nan')]), [float('nan')])", "aa(T.tensor([1.]), [2.], msg='m')",
             "aa(T.tensor([1.]), [1.5], rtol=0.1)"]
    for case in cases:
        outcomes = []
        for lib in (wt, torch):
            with pytest.warns(FutureWarning, match="assert_allclose"):
                outcomes.append(_outcome(lib, case.replace("aa(", "T.testing.assert_allclose("), "cpu"))
        assert outcomes[0] == outcomes[1], case
