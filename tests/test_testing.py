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
