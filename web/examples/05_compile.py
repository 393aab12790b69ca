# title: torch.compile: one training loop, eager and compiled
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

device = "webgpu" if torch.webgpu.is_available() else "cpu"
print("device:", device)
x = torch.randn(256, 32, device=device)
y = (x[:, :10] * x[:, 10:20]).argmax(1)          # a class per point, learnable from x


def setup():
    torch.manual_seed(0)                          # the same initial weights for both runs
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.2)

    def step():                                   # forward, backward and update: one step
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def train(step, steps=100, warmup=3):
    for _ in range(warmup):                       # compiled: trace, then capture (twice)
        step()
    t0 = time.perf_counter()
    for _ in range(steps):
        loss = step()
    loss = loss.item()                            # one readback, at the end
    return loss, (time.perf_counter() - t0) / steps * 1e3


eager_loss, eager_ms = train(setup())
compiled_loss, compiled_ms = train(torch.compile(setup()))
print(f"eager:    {eager_ms:.2f} ms/step, loss {eager_loss:.4f}")
print(f"compiled: {compiled_ms:.2f} ms/step, loss {compiled_loss:.4f}")
print(f"speedup:  {eager_ms / compiled_ms:.1f}x")
