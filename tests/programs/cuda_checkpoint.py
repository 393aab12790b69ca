"""The CUDA idiom, unmodified: pick "cuda" when available, train, save the whole model with
torch.save(model), load it back (it stays on the device it was saved from) and resume."""
import os
import tempfile

import torch
import torch.nn as nn

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
torch.cuda.manual_seed_all(0)
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 3))

    def forward(self, x):
        return self.body(x)


def init(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(0.3 * torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 0.9 + i).reshape(p.shape))


def train(model, opt, x, y, steps):
    for step in range(steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.5f}")


x = torch.sin(torch.arange(40, dtype=torch.float32)).reshape(10, 4).to(device)
y = (torch.arange(10) % 3).to(device)
model = Net()
init(model)
model = model.to(device)
opt = torch.optim.Adam(model.parameters(), lr=0.05)
train(model, opt, x, y, 4)
if torch.cuda.is_available():
    torch.cuda.synchronize()
    assert torch.cuda.max_memory_allocated() > 0

with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "model.pt")
    torch.save(model, path)
    torch.save({"optimizer": opt.state_dict()}, os.path.join(d, "opt.pt"))
    resumed = torch.load(path, weights_only=False)
    state = torch.load(os.path.join(d, "opt.pt"))
print("restored on the saved device:", next(resumed.parameters()).device == next(model.parameters()).device)
opt2 = torch.optim.Adam(resumed.parameters(), lr=0.05)
opt2.load_state_dict(state["optimizer"])
train(resumed, opt2, x, y, 3)
print("pred", resumed(x[:2]).argmax(dim=1).tolist(), resumed(x[:2]).detach().cpu())
