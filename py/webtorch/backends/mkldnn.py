"""torch.backends.mkldnn: oneDNN, which webtorch does not use; the flags are settable, with no effect."""
enabled = True
deterministic = False
allow_tf32 = False


def is_available():
    return False
