"""Logistic regression trained by hand: .data updates, size= keywords, range indexing, an exit code."""
import sys
import argparse

import torch


def make_data(n):
    t = torch.arange(n, dtype=torch.float32)
    x = torch.stack([torch.sin(t * 0.7), torch.cos(t * 1.3)], dim=1)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).float()
    return x, y


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("steps", type=int)
    parser.add_argument("--lr", type=float, default=0.5)
    parser.add_argument("--fail-above", type=float, default=None)
    args = parser.parse_args()

    x, y = make_data(40)
    w = torch.zeros(size=(2,), requires_grad=True)
    b = torch.full(size=(1,), fill_value=0.1, requires_grad=True)
    for step in range(args.steps):
        p = torch.sigmoid(x @ w + b)
        loss = torch.nn.functional.binary_cross_entropy(p, y)
        loss.backward()
        w.data.add_(w.grad.data, alpha=-args.lr)
        b.data -= args.lr * b.grad
        w.grad.zero_()
        b.grad.zero_()
        if step % 5 == 0:
            print(f"step {step:2d} loss {loss.item():.5f}")
    print("first rows", x[range(2)].tolist())
    x[range(0, 40, 2)] = 0.0
    print("zeroed even rows, sum %.4f" % x.sum().item())
    print("w", [round(v, 4) for v in w.tolist()], "b %.4f" % b.item(), w.requires_grad, w.data.requires_grad)
    if args.fail_above is not None and loss.item() > args.fail_above:
        print("loss too high", file=sys.stderr)
        sys.exit(3)
