"""A small VAE (pytorch/examples' vae structure) written with torch.distributions: the encoder's q(z|x) is an
Independent(Normal), the prior Normal(0, 1), the ELBO's KL term is kl_divergence(q, p) and the likelihood is
Bernoulli(logits=...).log_prob. The reparameterization draws its noise from a fixed sequence (not q.rsample():
webtorch's generator is not PyTorch's), so the printed losses are PyTorch's."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Bernoulli, Independent, Normal, kl_divergence


class VAE(nn.Module):
    def __init__(self, d=16, h=12, z=3):
        super().__init__()
        self.fc1 = nn.Linear(d, h)
        self.fc21 = nn.Linear(h, z)
        self.fc22 = nn.Linear(h, z)
        self.fc3 = nn.Linear(z, h)
        self.fc4 = nn.Linear(h, d)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return Independent(Normal(self.fc21(h1), (0.5 * self.fc22(h1)).exp()), 1)

    def decode(self, z):
        return Independent(Bernoulli(logits=self.fc4(F.relu(self.fc3(z)))), 1)


def data(n, d=16):
    t = torch.arange(n * d, dtype=torch.float32).view(n, d)
    return (torch.sin(t * 0.37) + torch.cos(t * 0.11) > 0.3).float()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()
    model = VAE()
    for i, p in enumerate(model.parameters()):
        with torch.no_grad():
            p.copy_(0.25 * torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 0.9 + i).view_as(p))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x = data(24)
    eps = torch.sin(torch.arange(24 * 3, dtype=torch.float32) * 1.3).view(24, 3)
    prior = Independent(Normal(torch.zeros(3), torch.ones(3)), 1)
    for epoch in range(args.epochs):
        for batch in range(3):
            xb, eb = x[batch * 8:(batch + 1) * 8], eps[batch * 8:(batch + 1) * 8]
            q = model.encode(xb)
            z = q.mean + q.stddev * eb            # q.rsample() with fixed noise
            recon = model.decode(z).log_prob(xb)
            kl = kl_divergence(q, prior)
            loss = -(recon - kl).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch} loss {loss.item():.5f} recon {recon.mean().item():.5f} kl {kl.mean().item():.5f}")
    with torch.no_grad():
        q = model.encode(x[:4])
        print("q batch/event shape", q.batch_shape, q.event_shape, "has_rsample", q.has_rsample)
        print("q entropy", [round(v, 4) for v in q.entropy().tolist()])
        print("log q(mean)", [round(v, 4) for v in q.log_prob(q.mean).tolist()])
        print("kl to prior", [round(v, 4) for v in kl_divergence(q, prior).tolist()])
        print("kl Normal(0,1) || Normal(1,2)", round(kl_divergence(Normal(0.0, 1.0), Normal(1.0, 2.0)).item(), 6))
