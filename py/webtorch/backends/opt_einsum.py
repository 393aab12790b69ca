"""torch.backends.opt_einsum: the opt_einsum package's contraction order for torch.einsum (absent
here: webtorch contracts left to right), as PyTorch reports it without the package."""
enabled = False
strategy = None


def is_available():
    return False


def get_opt_einsum():
    return None
