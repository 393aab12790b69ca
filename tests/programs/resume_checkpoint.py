"""Checkpoint and resume, the way training scripts do it: a small 3-D CNN (Conv3d, BatchNorm3d,
MaxPool3d, AdaptiveAvgPool3d) on synthetic volumes, SGD with momentum and OneCycleLR. Run A
trains 6 epochs straight; run B trains 3, saves {epoch, model, optimizer, scheduler, loss} with
torch.save, builds everything anew, torch.load's the checkpoint and trains 3 more. Both must end
with the same weights."""
import os
import sys
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F

EPOCHS, STEPS = 6, 2


def volumes(n):
    """Blobs whose centre is in the front (class 0) or the back (class 1) half of an 6^3 volume."""
    g = torch.arange(6, dtype=torch.float32)
    z, y, x = torch.meshgrid(g, g, g, indexing="ij")
    xs, ys = [], []
    for i in range(n):
        cz = 1.0 + 3.0 * (i % 2) + 0.3 * ((i * 5) % 3)
        cy, cx = 1.5 + (i * 3) % 3, 2.5 + (i * 7) % 2
        xs.append(torch.exp(-((z - cz) ** 2 + (y - cy) ** 2 + (x - cx) ** 2) / 4.0))
        ys.append(i % 2)
    return torch.stack(xs).unsqueeze(1), torch.tensor(ys)


class Net3d(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv3d(1, 4, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm3d(4)
        self.conv2 = nn.Conv3d(4, 6, kernel_size=(3, 2, 2), stride=(1, 2, 2))
        self.pool = nn.AdaptiveAvgPool3d(1)
        self.fc = nn.Linear(6, 2)

    def forward(self, x):
        x = F.max_pool3d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.relu(self.conv2(x))
        return self.fc(torch.flatten(self.pool(x), 1))


def build(device):
    model = Net3d().to(device)
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(0.3 * torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 1.1 + 0.5 * i).view_as(p))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, epochs=EPOCHS, steps_per_epoch=STEPS)
    return model, optimizer, scheduler


def train_epoch(model, optimizer, scheduler, data, labels):
    model.train()
    total = 0.0
    for s in range(STEPS):
        xb, yb = data[s::STEPS], labels[s::STEPS]
        optimizer.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
        scheduler.step()
        total += loss.item()
    return total / STEPS


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    data, labels = volumes(8)
    data, labels = data.to(device), labels.to(device)

    model, optimizer, scheduler = build(device)
    for epoch in range(EPOCHS):
        loss = train_epoch(model, optimizer, scheduler, data, labels)
        print(f"A epoch {epoch} loss {loss:.5f} lr {scheduler.get_last_lr()[0]:.5f}")
    straight = {k: v.clone() for k, v in model.state_dict().items()}

    path = os.path.join(tempfile.mkdtemp(), "checkpoint.pt")
    model, optimizer, scheduler = build(device)
    for epoch in range(EPOCHS // 2):
        loss = train_epoch(model, optimizer, scheduler, data, labels)
        print(f"B epoch {epoch} loss {loss:.5f}")
    torch.save({"epoch": epoch, "model_state_dict": model.state_dict(),
                "optimizer_state_dict": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                "loss": loss}, path)
    del model, optimizer, scheduler

    model, optimizer, scheduler = build(device)
    checkpoint = torch.load(path, map_location=device)
    model.load_state_dict(checkpoint["model_state_dict"])
    optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
    scheduler.load_state_dict(checkpoint["scheduler"])
    start = checkpoint["epoch"] + 1
    print(f"resumed at epoch {start}, saved loss {checkpoint['loss']:.5f}, keys {sorted(checkpoint)}")
    print("momentum buffers", len(optimizer.state_dict()["state"]), "num_batches_tracked",
          model.bn1.num_batches_tracked.item())
    for epoch in range(start, EPOCHS):
        loss = train_epoch(model, optimizer, scheduler, data, labels)
        print(f"B epoch {epoch} loss {loss:.5f} lr {scheduler.get_last_lr()[0]:.5f}")
    diff = max((model.state_dict()[k].float() - v.float()).abs().max().item() for k, v in straight.items())
    print("max difference from the straight run: %.1e" % diff, "same" if diff < 1e-4 else "DIFFERENT")
    model.eval()
    with torch.no_grad():
        print("eval probs", [round(p, 4) for p in model(data).softmax(1)[:, 1].tolist()])
    os.remove(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
