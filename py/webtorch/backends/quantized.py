"""torch.backends.quantized: quantized engines (webtorch has no quantized kernels)."""
engine = "none"
supported_engines = ["none"]
