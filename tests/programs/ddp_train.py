"""A DDP training script as users write it (tests/test_distributed.py launches it with torchrun, and with
`python -m webtorch.distributed.run`): torchrun's environment, gloo on cpu, DistributedDataParallel, all_reduce."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    assert int(os.environ["LOCAL_RANK"]) == rank and int(os.environ["WORLD_SIZE"]) == world
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    with torch.no_grad():  # the same weights in both libraries, whatever their generators draw
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1))
    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    x = torch.arange(24, dtype=torch.float32).reshape(6, 4) / 10 + rank
    y = x.sum(1, keepdim=True).sin()
    for step in range(3):
        loss = nn.functional.mse_loss(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total = loss.detach().clone()
        dist.all_reduce(total)
        print(f"rank {rank} step {step} loss {loss.item():.6f} total {total.item():.6f}", flush=True)
    w = [round(v, 6) for v in model[0].weight.reshape(-1).tolist()]
    print(f"rank {rank} weight {w} on {torch.__name__}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
