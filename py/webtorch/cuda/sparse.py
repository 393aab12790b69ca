"""torch.cuda.sparse: empty, as PyTorch's."""
