"""torch.backends.mps: Apple's Metal device is not a webtorch device (WebGPU reaches Metal natively)."""


def is_available():
    return False


def is_built():
    return False
