"""Per-sample gradients with torch.func, as the tutorial: vmap(grad(compute_loss)) over a batch with
functional_call, checked against a loop of one backward per example; then per-example clipping (DP-SGD)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def deterministic_init(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float32) * (0.37 + i)).reshape(p.shape) * 0.3)


model = Net()
deterministic_init(model)
data = torch.cos(torch.arange(32 * 8, dtype=torch.float32) * 0.11).reshape(32, 8)
targets = torch.arange(32) % 4


def loss_fn(predictions, targets):
    return F.cross_entropy(predictions, targets)


params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v.detach() for k, v in model.named_buffers()}


def compute_loss(params, buffers, sample, target):
    batch = sample.unsqueeze(0)
    targets = target.unsqueeze(0)
    predictions = functional_call(model, (params, buffers), (batch,))
    return loss_fn(predictions, targets)


ft_compute_grad = grad(compute_loss)
ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)


def compute_grad(sample, target):
    loss = loss_fn(model(sample.unsqueeze(0)), target.unsqueeze(0))
    return torch.autograd.grad(loss, list(model.parameters()))


per_sample_grads = [compute_grad(data[i], targets[i]) for i in range(len(data))]
per_sample_grads = [torch.stack(g) for g in zip(*per_sample_grads)]

for (name, ft), loop in zip(ft_per_sample_grads.items(), per_sample_grads):
    print(f"{name:10s} {tuple(ft.shape)} sum|g| {ft.abs().sum().item():.5f} "
          f"matches loop: {torch.allclose(ft, loop, atol=3e-5, rtol=1e-4)}")

# DP-SGD: clip each example's gradient to norm 1, average, step
norms = torch.stack([g.flatten(1).norm(dim=1) for g in ft_per_sample_grads.values()], dim=1).norm(dim=1)
print("first per-example norms:", [round(v, 4) for v in norms[:4].tolist()])
scale = (1.0 / norms).clamp(max=1.0)
with torch.no_grad():
    for (name, g), p in zip(ft_per_sample_grads.items(), model.parameters()):
        clipped = g * scale.reshape(-1, *([1] * (g.dim() - 1)))
        p -= 0.5 * clipped.mean(0)
print(f"loss after one DP-SGD step: {loss_fn(model(data), targets).item():.5f}")
