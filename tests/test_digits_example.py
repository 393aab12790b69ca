"""The native digits example: trains, prints a progress bar, reaches the accuracy its PyTorch
twin (same architecture, same initial weights, same split) reaches, and its checkpoint loads
in real PyTorch and gives the same test accuracy there."""
import io
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch

import webtorch as wt
from webtorch.examples import digits

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINE = re.compile(r"^epoch (\d+)/(\d+) \[[#-]{20}\] loss \d+\.\d{4} acc \d+\.\d%$")


def torch_twin():
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 2 * 2, 10))


def _split_arrays(seed=0):
    train_set, test_set = digits.split(seed)
    X, y = digits.load_digits_tensors()
    Xn, yn = np.array(X.tolist(), dtype=np.float32), np.array(y.tolist(), dtype=np.int64)
    tr, te = np.array(train_set.indices), np.array(test_set.indices)
    return (torch.from_numpy(Xn[tr]), torch.from_numpy(yn[tr])), (torch.from_numpy(Xn[te]), torch.from_numpy(yn[te]))


def _torch_accuracy(model, test):
    model.eval()
    with torch.no_grad():
        return (model(test[0]).argmax(1) == test[1]).float().mean().item()


def test_trains_and_matches_pytorch_twin(tmp_path):
    epochs, lr, bs = 3, 0.01, 64
    wt.manual_seed(0)
    model = digits.make_model()
    init = tmp_path / "init.pt"
    wt.save(model.state_dict(), init)
    out = io.StringIO()
    r = digits.train("cpu", epochs=epochs, batch_size=bs, lr=lr, seed=0, out=out, model=model)
    lines = out.getvalue().splitlines()
    epoch_lines = [ln for ln in lines if ln.startswith("epoch")]
    assert len(epoch_lines) == epochs and all(LINE.match(ln) for ln in epoch_lines), lines
    assert r["test_acc"] >= 0.9 and r["losses"][-1] < r["losses"][0]

    # the PyTorch twin: same initial weights (through webtorch.save -> torch.load), same split, same recipe
    torch.manual_seed(0)
    twin = torch_twin()
    twin.load_state_dict(torch.load(init, weights_only=True))
    (Xtr, ytr), test = _split_arrays(0)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(Xtr, ytr), batch_size=bs, shuffle=True)
    opt = torch.optim.Adam(twin.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=epochs * len(loader))
    for _ in range(epochs):
        for xb, yb in loader:
            loss = torch.nn.functional.cross_entropy(twin(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
    acc = _torch_accuracy(twin, test)
    assert acc >= 0.9
    assert abs(acc - r["test_acc"]) < 0.05, (acc, r["test_acc"])


@pytest.mark.parametrize("device", ["cpu", "webgpu"])
def test_cli_and_checkpoint_in_pytorch(device, tmp_path, request):
    if device == "webgpu":
        request.getfixturevalue("webgpu")
    ck = tmp_path / "digits.pt"
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "py") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "webtorch.examples.digits", "--device", device, "--epochs", "2",
                        "--save", str(ck)], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    lines = p.stdout.splitlines()
    assert any(LINE.match(ln) for ln in lines), p.stdout
    acc = float(re.search(r"test accuracy (\d+\.\d)%", p.stdout).group(1))
    assert acc >= 85.0
    twin = torch_twin()
    twin.load_state_dict(torch.load(ck, weights_only=True))
    _, test = _split_arrays(0)
    assert abs(100 * _torch_accuracy(twin, test) - acc) <= 0.6  # same weights, same answers in PyTorch
