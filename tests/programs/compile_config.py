"""The preamble real torch.compile programs have (config knobs, matmul precision, logging, set_stance), then a
compiled training step with an explicit graph break and a value read after it."""
import logging

import torch
import torch._dynamo
import torch._functorch.config
import torch._inductor.config
import torch.nn as nn

torch.set_float32_matmul_precision("high")
torch._dynamo.config.suppress_errors = True
torch._dynamo.config.cache_size_limit = 16
torch._dynamo.config.capture_scalar_outputs = False
torch._dynamo.config.optimize_ddp = False
torch._inductor.config.coordinate_descent_tuning = True
torch._inductor.config.triton.unique_kernel_names = True
torch._inductor.config.fx_graph_cache = True
torch._functorch.config.enable_autograd_cache = False
torch._logging.set_logs(dynamo=logging.WARNING)
print(torch.get_float32_matmul_precision(), torch._dynamo.config.recompile_limit,
      torch._inductor.config.triton.cudagraphs, torch._inductor.config.max_autotune)

model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1) / 3)
device = next(model.parameters()).device
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
losses = []


@torch.compile(backend="eager")
def train_step(x, y):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    torch._dynamo.graph_break()
    losses.append(loss.item())
    return loss


x = torch.linspace(-1, 1, 32, device=device).reshape(8, 4)
y = x.sum(1, keepdim=True).sin()
for i in range(6):
    torch.compiler.cudagraph_mark_step_begin()
    print(i, f"{train_step(x, y).item():.5f}")
print("losses", [round(v, 5) for v in losses])
with torch.compiler.set_stance("force_eager"):
    print("eager step", f"{train_step(x, y).item():.5f}")
with torch._dynamo.config.patch(recompile_limit=1):
    print("patched", torch._dynamo.config.cache_size_limit)
print("restored", torch._dynamo.config.cache_size_limit)
