"""torch.backends.cudnn: settable flags with no effect (webtorch has no cuDNN)."""
enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available():
    return False


def version():
    return None
