"""torch's process-wide settings and build facts: thread counts, deterministic algorithms,
warn-always, flush-denormal and the has_* flags. webtorch keeps each setting and returns it as
PyTorch does; its kernels are deterministic and single-threaded on the host, whatever the setting."""
import os

_state = {"threads": os.cpu_count() or 1, "interop_threads": os.cpu_count() or 1, "deterministic": False,
          "warn_only": False, "warn_always": False, "interop_set": False}

has_lapack = True  # torch.linalg runs (webtorch's own kernels)
has_spectral = True
has_mkl = False
has_openmp = False


def get_num_threads():
    return _state["threads"]


def _check_threads(name, n):
    if not isinstance(n, int) or isinstance(n, bool):
        raise RuntimeError(f"{name} expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError(f"{name} expects a positive integer")


def set_num_threads(n):
    _check_threads("set_num_threads", n)
    _state["threads"] = n


def get_num_interop_threads():
    return _state["interop_threads"]


def set_num_interop_threads(n):
    """Once, as in PyTorch: a second call raises."""
    _check_threads("set_num_interop_threads", n)
    if _state["interop_set"]:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started or "
                           "set_num_interop_threads called")
    _state["interop_threads"], _state["interop_set"] = n, True


def init_num_threads():
    pass


def use_deterministic_algorithms(mode, *, warn_only=False):
    _state["deterministic"], _state["warn_only"] = bool(mode), bool(warn_only)


def are_deterministic_algorithms_enabled():
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled():
    return _state["warn_only"]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode):
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    if not _state["deterministic"]:
        return 0
    return 1 if _state["warn_only"] else 2


def set_warn_always(b):
    _state["warn_always"] = bool(b)


def is_warn_always_enabled():
    return _state["warn_always"]


def set_flush_denormal(mode):
    """False: no backend here can flush denormals (PyTorch returns False where the CPU cannot)."""
    return False


def is_vulkan_available():
    return False
