"""torch.nn.parallel on one device: webtorch has one GPU and no distributed backend.

DataParallel behaves as PyTorch's does when it finds no CUDA device: it wraps the module
(`.module`; state_dict keys prefixed `module.`, so checkpoints match PyTorch's) and its forward
calls the module on the device the module and inputs are on. DistributedDataParallel raises,
saying how to graduate the model to PyTorch's distributed stack.
"""
from ..distributed import NO_BACKEND_MSG
from .modules.module import Module


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []
        self.output_device = None
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


class DistributedDataParallel(Module):
    def __init__(self, module, *args, **kwargs):
        raise RuntimeError("DistributedDataParallel: " + NO_BACKEND_MSG)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    return module(*inputs, **(module_kwargs or {}))
