"""torch.backends.kleidiai: Arm's KleidiAI kernels, absent here."""


def is_available():
    return False
