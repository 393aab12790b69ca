"""Hinton's forward-forward training (pytorch/examples' mnist_forward_forward structure): each layer is an
nn.Linear subclass with its own Adam whose train(x_pos, x_neg) overrides Module.train, labels overlaid on the
first pixels with `x_[range(n), y] = x.max()`, goodness = mean of squares, loss log1p(exp(...)), prediction by the
label of greatest summed goodness (Python's sum over tensors); the device choice through torch.xpu and
torch.backends.mps. Data and initial weights by formula (no RNG)."""
import argparse

import torch
import torch.nn as nn
from torch.optim import Adam


def overlay_y_on_x(x, y, classes=10):
    x_ = x.clone()
    x_[:, :classes] *= 0.0
    x_[range(x.shape[0]), y] = x.max()
    return x_


class Layer(nn.Linear):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, bias, device, dtype)
        with torch.no_grad():
            for i, p in enumerate(self.parameters()):
                p.copy_(0.05 * torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.37 + i).view_as(p))
        self.relu = torch.nn.ReLU()
        self.opt = Adam(self.parameters(), lr=args.lr)
        self.threshold = args.threshold

    def forward(self, x):
        x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
        return self.relu(torch.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))

    def train(self, x_pos, x_neg):
        for i in range(args.epochs):
            g_pos = self.forward(x_pos).pow(2).mean(1)
            g_neg = self.forward(x_neg).pow(2).mean(1)
            loss = torch.log1p(torch.exp(torch.cat([-g_pos + self.threshold, g_neg - self.threshold]))).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            if i % 5 == 0:
                print("Loss: ", loss.item())
        return self.forward(x_pos).detach(), self.forward(x_neg).detach()


class Net(torch.nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.layers = [Layer(dims[d], dims[d + 1]).to(device) for d in range(len(dims) - 1)]

    def predict(self, x):
        goodness_per_label = []
        for label in range(10):
            h = overlay_y_on_x(x, label)
            goodness = []
            for layer in self.layers:
                h = layer(h)
                goodness = goodness + [h.pow(2).mean(1)]
            goodness_per_label += [sum(goodness).unsqueeze(1)]
        return torch.cat(goodness_per_label, 1).argmax(1)

    def train(self, x_pos, x_neg):
        h_pos, h_neg = x_pos, x_neg
        for i, layer in enumerate(self.layers):
            print("training layer: ", i)
            h_pos, h_neg = layer.train(h_pos, h_neg)


def data(n, offset):
    y = (torch.arange(n) * 7 + offset) % 10
    pix = torch.arange(64, dtype=torch.float32)
    x = torch.cos(pix.view(1, 64) * (0.1 + 0.05 * y.view(n, 1)) + torch.arange(n).view(n, 1) * 0.01)
    return (x - 0.1307) / 0.3081, y


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--lr", type=float, default=0.03)
    parser.add_argument("--threshold", type=float, default=2)
    args = parser.parse_args()
    use_cuda = torch.cuda.is_available()
    use_xpu = torch.xpu.is_available()
    use_mps = torch.backends.mps.is_available()
    device = torch.device("cuda" if use_cuda else "xpu" if use_xpu else "mps" if use_mps else "cpu")
    x, y = data(60, 0)
    x, y = x.to(device), y.to(device)
    net = Net([64, 32, 32])
    x_pos = overlay_y_on_x(x, y)
    x_neg = overlay_y_on_x(x, (y + 3) % 10)
    net.train(x_pos, x_neg)
    print("train error:", 1.0 - net.predict(x).eq(y).float().mean().item())
    x_te, y_te = data(30, 5)
    print("test error:", 1.0 - net.predict(x_te.to(device)).eq(y_te.to(device)).float().mean().item())
