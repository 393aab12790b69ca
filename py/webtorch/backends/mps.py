"""torch.backends.mps: Apple's Metal device is not a webtorch device (WebGPU reaches Metal natively)."""


def is_available():
    return False


def is_built():
    return False


def get_name():
    raise AttributeError("module 'torch._C' has no attribute '_mps_get_name'")


def get_core_count():
    raise AttributeError("module 'torch._C' has no attribute '_mps_get_core_count'")


def is_macos_or_newer(major, minor):
    raise RuntimeError("Cannot execute isOnMacOSorNewer() without MPS backend.")


def is_macos13_or_newer(minor=0):
    return is_macos_or_newer(13, minor)
