"""torch.backends.cusparselt: NVIDIA's cuSPARSELt, absent here."""


def is_available():
    return False


def version():
    return None


def get_max_alg_id():
    return None
