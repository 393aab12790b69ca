"""Differentiable physics (pytorch/examples' differentiable_physics/mass_spring structure): a spring system
stepped by semi-implicit Euler inside the graph, forces accumulated by in-place writes into slices of non-leaf
tensors (`forces[i] += f`, `forces[:, 1] -= g`), a fixed particle re-pinned by `positions[0] = origin`, the
initial positions an nn.Parameter trained through every step by Adam; the result through .numpy(). Initial
positions by formula (no RNG)."""
import argparse

import torch
import torch.nn as nn
import torch.optim as optim


class MassSpringSystem(nn.Module):
    def __init__(self, num_particles, springs, mass=1.0, dt=0.01, gravity=9.81, device="cpu"):
        super().__init__()
        self.mass, self.springs, self.dt, self.gravity = mass, springs, dt, gravity
        self.initial_position_0 = torch.tensor([0.0, 0.0], device=device)
        start = torch.stack([torch.arange(1, num_particles, dtype=torch.float32) * 0.8,
                             torch.full((num_particles - 1,), -0.3)], 1)
        self.initial_positions_rest = nn.Parameter(start.to(device))
        self.velocities = torch.zeros(num_particles, 2, device=device)

    def forward(self, steps):
        positions = torch.cat([self.initial_position_0.unsqueeze(0), self.initial_positions_rest], dim=0)
        velocities = self.velocities
        for _ in range(steps):
            forces = torch.zeros_like(positions)
            for (i, j, rest_length, stiffness) in self.springs:
                dir_vec = positions[j] - positions[i]
                dist = dir_vec.norm()
                force = stiffness * (dist - rest_length) * dir_vec / (dist + 1e-6)
                forces[i] += force
                forces[j] -= force
            forces[:, 1] -= self.gravity * self.mass
            velocities = velocities + forces / self.mass * self.dt
            positions = positions + velocities * self.dt
            positions[0] = self.initial_position_0
            velocities[0] = torch.tensor([0.0, 0.0], device=positions.device)
        return positions


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--steps", type=int, default=6)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    system = MassSpringSystem(3, [(0, 1, 1.0, 10.0), (1, 2, 1.0, 8.0)], device=device)
    optimizer = optim.Adam(system.parameters(), lr=0.05)
    target_positions = torch.tensor([[0.0, 0.0], [1.0, 0.0], [2.0, -0.2]], device=device)
    for epoch in range(args.epochs):
        optimizer.zero_grad()
        final_positions = system(args.steps)
        loss = (final_positions - target_positions).pow(2).mean()
        loss.backward()
        optimizer.step()
        if (epoch + 1) % 4 == 0:
            print(f"Epoch {epoch+1}/{args.epochs}, Loss: {loss.item():.6f}")
    print("Final positions:", final_positions.detach().cpu().numpy().round(5).tolist())
    print("Initial positions:", system.initial_positions_rest.detach().cpu().numpy().round(5).tolist())
