"""torch.cuda, answered honestly: webtorch has no CUDA backend; its GPU device is "webgpu".

Code written for PyTorch that asks `torch.cuda.is_available()` gets False and falls back to
the CPU; use `torch.webgpu.is_available()` and `device="webgpu"` for the GPU.
`torch.cuda.amp` (a submodule, as in PyTorch) maps its spellings to webtorch.amp on "webgpu".
"""


def is_available():
    return False


def device_count():
    return 0


def synchronize(device=None):
    pass


def manual_seed(seed):
    pass


def manual_seed_all(seed):
    pass



from . import amp  # noqa: E402  (torch.cuda.amp.autocast works after a bare `import torch`, as in PyTorch)
