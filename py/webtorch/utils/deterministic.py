"""torch.utils.deterministic: `fill_uninitialized_memory`, whether empty tensors are filled (with NaN, or the largest
integer) while deterministic algorithms are on. webtorch's empty tensors are always zero-filled buffers."""
fill_uninitialized_memory = True
