"""torch.cuda, answered honestly: webtorch has no CUDA backend; its GPU device is "webgpu".

Code written for PyTorch that asks `torch.cuda.is_available()` gets False and falls back to
the CPU; use `torch.webgpu.is_available()` and `device="webgpu"` for the GPU.
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


class amp:
    """torch.cuda.amp spellings, mapped to webtorch.amp on the webgpu device."""

    @staticmethod
    def autocast(enabled=True, dtype=None, cache_enabled=True):
        from .amp import autocast
        from . import float16
        return autocast("webgpu", dtype=dtype or float16, enabled=enabled)

    @staticmethod
    def GradScaler(init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=True):
        from .amp import GradScaler
        return GradScaler("webgpu", init_scale=init_scale, growth_factor=growth_factor,
                          backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)
