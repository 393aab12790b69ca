"""torch.backends.cuda: PyTorch's flags without CUDA. Settable, with no effect here (webtorch has no
CUDA; scaled_dot_product_attention computes the math path everywhere)."""
import contextlib
import warnings


class cuBLASModule:
    """`torch.backends.cuda.matmul.allow_tf32` and friends: stored, never used."""

    def __init__(self):
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True
        self.allow_fp16_accumulation = False
        self.fp32_precision = "none"


class cuFFTPlanCache:
    """One device's cuFFT plan cache: sized and cleared, holding nothing."""

    def __init__(self, device_index=0):
        self.device_index, self.max_size, self.size = device_index, 4096, 0

    def clear(self):
        pass


class cuFFTPlanCacheManager:
    """`torch.backends.cuda.cufft_plan_cache[i]`: one cuFFTPlanCache per device index."""

    def __init__(self):
        self.caches = {}

    def __getitem__(self, device):
        return self.caches.setdefault(device if isinstance(device, int) else 0, cuFFTPlanCache(device))

    def __getattr__(self, name):
        return getattr(self[0], name)


class cuFFTPlanCacheAttrContextProp:
    """PyTorch's property type for the cuFFT cache's size attributes (kept for the name)."""

    def __init__(self, getter, setter):
        self.getter, self.setter = getter, setter

    def __get__(self, obj, objtype):
        return self.getter(obj.device_index)

    def __set__(self, obj, val):
        self.setter(obj.device_index, val)


class SDPAParams:
    """The arguments of one scaled_dot_product_attention call, as the can_use_* checks take them."""

    def __init__(self, query, key, value, attn_mask=None, dropout=0.0, is_causal=False, enable_gqa=False):
        self.query, self.key, self.value, self.attn_mask = query, key, value, attn_mask
        self.dropout, self.is_causal, self.enable_gqa = dropout, is_causal, enable_gqa


matmul = cuBLASModule()
cufft_plan_cache = cuFFTPlanCacheManager()
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True, "fp16_bf16_reduction_math": False}


def is_built():
    return False


def _flag(name):
    """(getter, setter) of one scaled_dot_product_attention backend flag."""
    def get():
        return _sdp[name]

    def set_(enabled):
        _sdp[name] = enabled
    return get, set_


flash_sdp_enabled, enable_flash_sdp = _flag("flash")
mem_efficient_sdp_enabled, enable_mem_efficient_sdp = _flag("mem_efficient")
math_sdp_enabled, enable_math_sdp = _flag("math")
cudnn_sdp_enabled, enable_cudnn_sdp = _flag("cudnn")
fp16_bf16_reduction_math_sdp_allowed, allow_fp16_bf16_reduction_math_sdp = _flag("fp16_bf16_reduction_math")


def is_flash_attention_available():
    return False


def is_ck_sdpa_available():
    return False


def can_use_flash_attention(params, debug=False):
    return False


def can_use_efficient_attention(params, debug=False):
    return False


def can_use_cudnn_attention(params, debug=False):
    return False


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager will be "
                  "removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context manager, with updated "
                  "signature.", FutureWarning, stacklevel=3)
    previous = dict(_sdp)
    _sdp.update(flash=enable_flash, math=enable_math, mem_efficient=enable_mem_efficient, cudnn=enable_cudnn)
    try:
        yield {}
    finally:
        _sdp.update(previous)


def _no_cublas(name):
    raise AttributeError(f"module 'torch._C' has no attribute '{name}'")


def cublas_workspace_size(size=None):
    _no_cublas("_cuda_getCublasWorkspaceSize")


def blas_workspace_size(size=None, backend=None):
    _no_cublas("_cuda_getCublasWorkspaceSize")


def cublaslt_workspace_size(size=None):
    _no_cublas("_cuda_getCublasLtWorkspaceSize")


def preferred_blas_library(backend=None):
    """Stored, with no effect: webtorch's matmul is its own kernel."""
    return "cublas" if backend is None else backend


def preferred_linalg_library(backend=None):
    return "default" if backend is None else backend


def preferred_rocm_fa_library(backend=None):
    return "default" if backend is None else backend
