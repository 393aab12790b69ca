"""Train a small CNN on scikit-learn's bundled 8x8 digits (no download), natively.

    python -m webtorch.examples.digits [--device cpu|webgpu] [--epochs N] [--amp] [--save model.pt]

It uses the pieces a PyTorch user expects: `nn` layers, `optim.Adam` with a OneCycleLR
schedule, `utils.data` (TensorDataset, random_split, DataLoader with a seeded shuffle),
`amp.autocast` + `GradScaler` (with --amp) and `webtorch.save` (the checkpoint also loads
in real PyTorch with `torch.load(path, weights_only=True)`).
"""
import argparse
import sys
import time

import webtorch as torch
import webtorch.nn as nn
import webtorch.nn.functional as F
from webtorch.backends import webgpu
from webtorch.utils.data import DataLoader, TensorDataset, random_split


def load_digits_tensors():
    """(X [1797, 1, 8, 8] float32 in [0, 1], y [1797] int64) from sklearn's bundled copy."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:  # pragma: no cover
        sys.exit("this example needs scikit-learn (its digits data set ships inside the package)")
    d = load_digits()
    X = torch.tensor(d.data, dtype=torch.float32).reshape(-1, 1, 8, 8) / 16.0
    y = torch.tensor(d.target, dtype=torch.int64)
    return X, y


def make_model():
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),    # 16 x 4 x 4
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),   # 32 x 2 x 2
        nn.Flatten(), nn.Linear(32 * 2 * 2, 10))


def progress(epoch, epochs, done, total, loss, acc=None, width=20):
    fill = int(round(width * done / max(total, 1)))
    s = f"epoch {epoch}/{epochs} [{'#' * fill}{'-' * (width - fill)}] loss {loss:.4f}"
    if acc is not None:
        s += f" acc {100 * acc:.1f}%"
    return s


def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            correct += (model(xb).argmax(1) == yb).sum().item()
            total += yb.shape[0]
    model.train()
    return correct / total


def split(seed=0, test_fraction=0.2):
    X, y = load_digits_tensors()
    ds = TensorDataset(X, y)
    n_test = int(len(ds) * test_fraction)
    return random_split(ds, [len(ds) - n_test, n_test], generator=torch.Generator().manual_seed(seed))


def train(device="cpu", epochs=10, batch_size=64, lr=0.01, seed=0, amp=False, save=None, out=None, model=None):
    """Train and return {'model', 'test_acc', 'losses', 'accs', 'seconds'}; prints a progress bar."""
    out = out or sys.stdout
    tty = hasattr(out, "isatty") and out.isatty()
    torch.manual_seed(seed)
    train_set, test_set = split(seed)
    train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True,
                              generator=torch.Generator().manual_seed(seed))
    test_loader = DataLoader(test_set, batch_size=512)
    model = (model or make_model()).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=epochs * len(train_loader))
    scaler = torch.amp.GradScaler(device, enabled=amp)
    print(f"digits: {len(train_set)} train / {len(test_set)} test images, {sum(p.numel() for p in model.parameters())}"
          f" parameters, device {device}" + (" (autocast float16)" if amp else ""), file=out)
    losses, accs = [], []
    t0 = time.time()
    for epoch in range(1, epochs + 1):
        running, seen = 0.0, 0
        for i, (xb, yb) in enumerate(train_loader, 1):
            xb, yb = xb.to(device), yb.to(device)
            with torch.autocast(device, enabled=amp):
                loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            sched.step()
            running += loss.item() * yb.shape[0]
            seen += yb.shape[0]
            if tty:
                print("\r" + progress(epoch, epochs, i, len(train_loader), running / seen), end="", file=out,
                      flush=True)
        acc = evaluate(model, test_loader, device)
        losses.append(running / seen)
        accs.append(acc)
        line = progress(epoch, epochs, len(train_loader), len(train_loader), running / seen, acc)
        print(("\r" if tty else "") + line, file=out, flush=True)
    secs = time.time() - t0
    print(f"test accuracy {100 * accs[-1]:.1f}% after {epochs} epochs ({secs:.1f} s)", file=out)
    if save:
        torch.save(model.state_dict(), save)
        print(f"saved the state dict to {save} (loads in PyTorch with torch.load(path, weights_only=True))",
              file=out)
    return {"model": model, "test_acc": accs[-1], "losses": losses, "accs": accs, "seconds": secs}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m webtorch.examples.digits", description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cpu", help="cpu or webgpu (default cpu)")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--amp", action="store_true", help="autocast to float16 (webgpu with shader-f16)")
    ap.add_argument("--save", default=None, help="write the trained state dict here")
    a = ap.parse_args(argv)
    if a.device == "webgpu" and not webgpu.is_available():
        ap.exit(2, "no WebGPU adapter here (natively: install mesa-vulkan-drivers for lavapipe)\n")
    r = train(a.device, a.epochs, a.batch_size, a.lr, a.seed, a.amp, a.save)
    return r


if __name__ == "__main__":
    main()
