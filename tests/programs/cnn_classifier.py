"""A small CNN on synthetic 8x8 "images": Conv2d(bias=False) + BatchNorm + ReLU(inplace=True) +
MaxPool, CrossEntropyLoss, Adam; torch.accelerator picks the device; legacy tensor types."""
import argparse
import sys

import torch
from torch import nn, optim
from torch.utils.data import Dataset, DataLoader


class Stripes(Dataset):
    """Images of horizontal (class 0) or vertical (class 1) stripes with a phase, no RNG."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        label = i % 2
        grid = torch.arange(8, dtype=torch.float32)
        wave = torch.cos(grid * 0.9 + i * 0.37)
        img = wave.unsqueeze(1).expand(8, 8) if label == 0 else wave.unsqueeze(0).expand(8, 8)
        return img.unsqueeze(0).contiguous(), label


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 4, 3, padding=1, bias=False),
            nn.BatchNorm2d(4),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Linear(4 * 4 * 4, 2)

    def forward(self, x):
        x = self.features(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=1e-2)
    args = parser.parse_args(argv)

    torch.manual_seed(1)
    torch.backends.cudnn.deterministic = True
    torch.backends.cuda.matmul.allow_tf32 = False
    device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")

    model = Net()
    for i, p in enumerate(model.parameters()):
        nn.init.constant_(p, 0.0)
        with torch.no_grad():
            p.add_(0.3 * torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 2.3 + i).view_as(p))
    model.to(device)

    loader = DataLoader(Stripes(48), batch_size=12, shuffle=False)
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        running, correct = 0.0, 0
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            optimizer.zero_grad()
            outputs = model(images)
            loss = criterion(outputs, labels)
            loss.backward()
            optimizer.step()
            running += loss.item()
            correct += (outputs.argmax(dim=1) == labels).sum().item()
        print("[%d] loss: %.4f acc: %d/%d" % (epoch + 1, running / len(loader), correct, len(loader.dataset)))

    weights = torch.FloatTensor([1.0, 2.0])
    counts = torch.LongTensor([3, 5]).type(torch.FloatTensor)
    print(isinstance(weights, torch.FloatTensor), counts.type(), weights.dot(counts).item())
    print("conv grad norm: %.4f" % model.features[0].weight.grad.norm().item())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
