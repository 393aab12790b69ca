"""Fit y = sin(3x) + x^2 with an MLP: argparse, DataLoader, SGD with momentum, StepLR."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
import torch.backends.cudnn as cudnn


class MLP(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.fc1 = nn.Linear(1, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        return self.out(x)


def init_weights(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(0.2 * torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 1.7 + i).reshape(p.shape))


def main():
    parser = argparse.ArgumentParser(description="MLP regression")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=0.02)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--hidden", type=int, default=32)
    args = parser.parse_args()

    torch.manual_seed(0)
    cudnn.benchmark = True
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    x = torch.linspace(-1, 1, 64).unsqueeze(1)
    y = torch.sin(3 * x) + x ** 2
    loader = DataLoader(TensorDataset(x, y), batch_size=args.batch_size, shuffle=False)

    model = MLP(args.hidden)
    init_weights(model)
    model = nn.DataParallel(model).to(device)
    print("parameters:", sum(p.numel() for p in model.parameters()))
    print("keys:", list(model.state_dict().keys())[:2])

    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    for epoch in range(1, args.epochs + 1):
        model.train()
        total = 0.0
        for batch_idx, (data, target) in enumerate(loader):
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            loss = F.mse_loss(model(data), target)
            loss.backward()
            optimizer.step()
            total += loss.item() * data.size(0)
        scheduler.step()
        print(f"epoch {epoch} loss {total / len(loader.dataset):.5f} lr {scheduler.get_last_lr()[0]:.4f}")

    model.eval()
    with torch.no_grad():
        pred = model(torch.tensor([[0.5], [-0.25]]).to(device))
    print("pred", [round(v, 4) for v in pred.squeeze(1).tolist()])


if __name__ == "__main__":
    main()
