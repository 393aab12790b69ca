def no_mps(what):
    """PyTorch's error where an MPS call runs without the MPS backend."""
    raise RuntimeError(f"Cannot execute {what}() without MPS backend.")
