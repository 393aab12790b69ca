"""`import torch` in the playground: PyTorch code, unchanged, runs on webtorch in the page (there
is no other torch in Pyodide) and prints what PyTorch prints natively for the same code."""
import os
import subprocess
import sys

from _printout import assert_same_printout

CODE = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from torch.optim.lr_scheduler import StepLR
from torch.cuda.amp import GradScaler, autocast

torch.manual_seed(0)
torch.backends.cudnn.benchmark = True
device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"

x = torch.linspace(-2, 2, 48).unsqueeze(1)
y = torch.cat([torch.sin(x), torch.cos(2 * x)], dim=1)
model = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 2))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(0.4 * torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 1.3 + i).view_as(p))
model = model.to(device)
opt = torch.optim.Adam(model.parameters(), lr=0.05)
sched = StepLR(opt, step_size=2, gamma=0.5)
for epoch in range(4):
    total = 0.0
    for xb, yb in DataLoader(TensorDataset(x, y), batch_size=16):
        xb, yb = xb.to(device), yb.to(device)
        loss = F.mse_loss(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    sched.step()
    print(f"epoch {epoch} loss {total / 3:.5f}")
print(torch.float32, torch.LongTensor([1, 2]).type(), isinstance(torch.ones(2), torch.FloatTensor))
print(model[0].weight.grad.shape, list(model.state_dict())[:2])
print(model(torch.tensor([[0.5]]).to(device)).detach().cpu())
print(issubclass(autocast, torch.amp.autocast), issubclass(GradScaler, torch.amp.GradScaler))
'''


def test_import_torch_prints_what_pytorch_prints(playground, webtorch_loaded):
    got = playground.run_ok(CODE)["stdout"]
    # real torch, natively, in its own process (PyTorch's test suite, imported by the OpInfo tier
    # in the same worker, freezes torch.backends.cudnn flags, which the code sets)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    ref = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env, timeout=300)
    assert ref.returncode == 0, ref.stderr
    assert_same_printout(got, ref.stdout, rtol=2e-3, atol=2e-4)
