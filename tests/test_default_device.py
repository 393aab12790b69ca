"""torch.set_default_device / get_default_device and `with torch.device(...)`, as in PyTorch."""
import webtorch as torch
import webtorch.nn as nn


def test_set_default_device_moves_factories_and_modules(device):
    prev = torch.get_default_device()
    try:
        torch.set_default_device(device)
        assert torch.get_default_device() == torch.device(device)
        for t in (torch.zeros(2), torch.randn(2, 3), torch.arange(4), torch.tensor([1.0, 2.0]), torch.eye(2),
                  nn.Linear(3, 2).weight):
            assert t.device == torch.device(device)
        assert torch.zeros(2, device="cpu").device.type == "cpu"  # an explicit device wins
    finally:
        torch.set_default_device(prev)
    assert torch.zeros(1).device == prev


def test_device_context_manager(device):
    outer = torch.get_default_device()
    with torch.device(device) as d:
        assert torch.get_default_device() == d
        assert torch.ones(3).device == torch.device(device)
        with torch.device("cpu"):
            assert torch.ones(1).device.type == "cpu"
        assert torch.ones(1).device == torch.device(device)
    assert torch.get_default_device() == outer
    torch.set_default_device(None)
    assert torch.get_default_device() == torch.device("cpu")
