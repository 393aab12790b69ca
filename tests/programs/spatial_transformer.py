"""Spatial transformer network (Jaderberg et al.): a localization net predicts an affine theta,
affine_grid + grid_sample warp the input, a small CNN classifies the warped image. Images and
weights are built by formula (no RNG); SGD with momentum."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_data(n=8, size=12):
    """Class 1: a bright bar across the image; class 0: a bright blob; both shifted per sample."""
    ys, xs = torch.meshgrid(torch.arange(size, dtype=torch.float32), torch.arange(size, dtype=torch.float32),
                            indexing="ij")
    images, labels = [], []
    for i in range(n):
        cx, cy = 3 + (i * 5) % 6, 4 + (i * 3) % 5
        if i % 2:
            img = torch.exp(-((ys - cy) ** 2) / 2.0) * (xs > 1).float()
        else:
            img = torch.exp(-((xs - cx) ** 2 + (ys - cy) ** 2) / 4.0)
        images.append(img)
        labels.append(i % 2)
    return torch.stack(images).unsqueeze(1), torch.tensor(labels)


class STN(nn.Module):
    def __init__(self):
        super().__init__()
        self.localization = nn.Sequential(nn.Conv2d(1, 4, 3), nn.MaxPool2d(2), nn.ReLU())
        self.fc_loc = nn.Sequential(nn.Linear(4 * 5 * 5, 16), nn.Tanh(), nn.Linear(16, 6))
        self.conv = nn.Conv2d(1, 6, 3, padding=1)
        self.fc = nn.Linear(6 * 6 * 6, 2)

    def stn(self, x, mode, padding_mode):
        xs = self.localization(x).flatten(1)
        theta = self.fc_loc(xs).view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        return F.grid_sample(x, grid, mode=mode, padding_mode=padding_mode, align_corners=False)

    def forward(self, x, mode="bilinear", padding_mode="zeros"):
        x = self.stn(x, mode, padding_mode)
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return self.fc(x.flatten(1))


def init_weights(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(0.3 * torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 0.61 + i).view_as(p))
        model.fc_loc[2].weight.zero_()  # start near the identity transform (the tutorial starts at it)
        model.fc_loc[2].bias.copy_(torch.tensor([0.9, 0.05, 0.02, -0.04, 1.1, 0.03]))


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    images, labels = make_data()
    images, labels = images.to(device), labels.to(device)
    model = STN()
    init_weights(model)
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(6):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        print(f"epoch {epoch} loss {loss.item():.5f}")
    model.eval()
    with torch.no_grad():
        theta = model.fc_loc(model.localization(images).flatten(1)).view(-1, 2, 3)
        print("theta[0]", [round(v, 4) for v in theta[0].flatten().tolist()])
        for mode, pad in (("bilinear", "zeros"), ("nearest", "border"), ("bicubic", "reflection")):
            out = model(images, mode, pad)
            print(mode, pad, [round(v, 4) for v in out[:3].flatten().tolist()])
        rot = torch.tensor([[[math.cos(0.3), -math.sin(0.3), 0.1], [math.sin(0.3), math.cos(0.3), -0.2]]],
                           device=device)
        warped = F.grid_sample(images[:1], F.affine_grid(rot, [1, 1, 12, 12], align_corners=True), align_corners=True)
        print("rotated sum", round(warped.sum().item(), 4), "max", round(warped.max().item(), 4))


if __name__ == "__main__":
    main()
