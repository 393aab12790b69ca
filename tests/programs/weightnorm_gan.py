"""A small GAN on 2-D points with weight-normalized layers (nn.utils.parametrizations.weight_norm on
the generator, the old nn.utils.weight_norm hook on the discriminator), a spectral-normed
discriminator layer whose power-iteration vectors are set by formula, BCEWithLogits, two Adam
optimizers. Data, noise and weights are built by formula (no RNG)."""
import warnings

import torch
import torch.nn as nn
from torch.nn.utils import parametrizations, parametrize

warnings.simplefilter("ignore", FutureWarning)


def real_batch(step, n=16):
    t = torch.arange(n, dtype=torch.float32) * 0.39 + step
    return torch.stack([torch.cos(t) * 2, torch.sin(t) * 1], 1)


def noise(step, n=16, dim=3):
    return torch.sin(torch.arange(n * dim, dtype=torch.float32).view(n, dim) * 0.71 + step * 1.3)


def init_weights(model, phase):
    with torch.no_grad():
        for i, (name, p) in enumerate(model.named_parameters()):
            p.copy_(0.4 * torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 0.53 + i + phase).view_as(p))
        for name, b in model.named_buffers():
            b.copy_(torch.nn.functional.normalize(torch.cos(torch.arange(b.numel(), dtype=torch.float32) + 1.0),
                                                  dim=0))


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    G = nn.Sequential(parametrizations.weight_norm(nn.Linear(3, 16)), nn.LeakyReLU(0.2),
                      parametrizations.weight_norm(nn.Linear(16, 2), dim=None))
    D = nn.Sequential(nn.utils.weight_norm(nn.Linear(2, 16)), nn.LeakyReLU(0.2),
                      parametrizations.spectral_norm(nn.Linear(16, 8)), nn.ReLU(), nn.Linear(8, 1))
    init_weights(G, 0.0)
    init_weights(D, 1.0)
    G.to(device)
    D.to(device)
    print(G)
    print(sorted(D.state_dict().keys()))
    print("parametrized", parametrize.is_parametrized(G[0]), type(G[0]).__name__,
          parametrize.type_before_parametrizations(G[0]).__name__)
    opt_g = torch.optim.Adam(G.parameters(), lr=0.01, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(D.parameters(), lr=0.01, betas=(0.5, 0.999))
    bce = nn.BCEWithLogitsLoss()
    ones, zeros = torch.ones(16, 1, device=device), torch.zeros(16, 1, device=device)
    for step in range(8):
        real, z = real_batch(step).to(device), noise(step).to(device)
        opt_d.zero_grad()
        d_loss = bce(D(real), ones) + bce(D(G(z).detach()), zeros)
        d_loss.backward()
        opt_d.step()
        opt_g.zero_grad()
        g_loss = bce(D(G(z)), ones)
        g_loss.backward()
        opt_g.step()
        print(f"step {step} d_loss {d_loss.item():.5f} g_loss {g_loss.item():.5f}")
    with torch.no_grad():
        print("g norm", [round(v, 4) for v in G[0].parametrizations.weight.original0.flatten()[:4].tolist()])
        print("samples", [round(v, 4) for v in G(noise(99, 4).to(device)).flatten().tolist()])
        print("sigma u", [round(v, 4) for v in D[2].parametrizations.weight[0]._u[:4].tolist()])
    parametrize.remove_parametrizations(G[0], "weight")
    nn.utils.remove_weight_norm(D[0])
    print(type(G[0]).__name__, sorted(G[0].state_dict().keys()), sorted(D[0].state_dict().keys()))


if __name__ == "__main__":
    main()
