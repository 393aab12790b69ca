"""torch.nn.attention: `sdpa_kernel` and `SDPBackend`. webtorch has one attention kernel (the math one, fused on
webgpu), so the backend choice is recorded in the flags `torch.backends.cuda` reports, as PyTorch records it, and
changes nothing; the flash-attention implementation registry lists none."""
import contextlib
import enum

from ...backends import cuda as _cuda

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS", "register_flash_attention_impl",
           "activate_flash_attention_impl", "list_flash_attention_impls", "current_flash_attention_impl",
           "restore_flash_attention_impl"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_backend_names = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
                  "mem_efficient": SDPBackend.EFFICIENT_ATTENTION, "math": SDPBackend.MATH}


def _cur_sdpa_kernel_backends():
    return [b for name, b in _backend_names.items() if _cuda._sdp[name]]


def _sdpa_kernel(backends):
    for name, b in _backend_names.items():
        _cuda._sdp[name] = b in backends


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Select the scaled_dot_product_attention backends inside the block (restored after it)."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                             f"{type(backends).__name__}")
    backends = list(dict.fromkeys([backends] if isinstance(backends, SDPBackend) else backends))
    previous = _cur_sdpa_kernel_backends()
    try:
        _sdpa_kernel(backends)
        yield {}
    finally:
        _sdpa_kernel(previous)


def register_flash_attention_impl(impl, *, register_fn):
    raise RuntimeError(f"Flash attention implementation {impl!r} needs CUDA, which webtorch does not have")


def activate_flash_attention_impl(impl):
    raise ValueError(f"Unknown flash attention impl '{impl}'. Available implementations: []")


def list_flash_attention_impls():
    return []


def current_flash_attention_impl():
    return None


def restore_flash_attention_impl(_raise_warn=True):
    return None
