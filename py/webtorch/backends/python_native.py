"""torch.backends.python_native: kernels written in Python DSLs (Triton, CuTe DSL) that PyTorch may
dispatch to on CUDA; none is available here."""
all_dsls = ["cutedsl", "triton"]
available_dsls = []
