# title: Tensor basics
import torch

torch.manual_seed(0)
device = "webgpu" if torch.webgpu.is_available() else "cpu"
print("device:", device)

# A batch of 4 RGB images, 8x8 pixels (the seed's torch.randn(32, 3, 224, 224), smaller)
x = torch.randn(4, 3, 8, 8, device=device)
print("shape:", tuple(x.shape), "dtype:", x.dtype)

# Indexing: the first channel of every image
r = x[:, 0, :, :]
print("x[:, 0, :, :] shape:", tuple(r.shape))

# Element-wise arithmetic with broadcasting
y = x * 0.5 + 1.0
print("mean of x * 0.5 + 1.0:", round(y.mean().item(), 4), "(x mean:", round(x.mean().item(), 4), ")")

a = torch.arange(6, dtype=torch.float32, device=device).reshape(2, 3)
print(a)
print(a.T @ a)
print(a.sum(dim=0), a.max())
