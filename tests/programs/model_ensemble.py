"""A model ensemble with torch.func: stack_module_state + functional_call under vmap, each model on its own
minibatch and all on the same one, checked against running the models one by one; then ensemble gradients."""
import copy

import torch
import torch.nn as nn
from torch.func import functional_call, grad, stack_module_state, vmap


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 12)
        self.fc2 = nn.Linear(12, 3)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


num_models = 4
models = []
for m in range(num_models):
    net = MLP()
    with torch.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(torch.cos(torch.arange(p.numel(), dtype=torch.float32) * (0.21 + 0.1 * m + i)).reshape(p.shape)
                    * 0.4)
    models.append(net)

minibatches = torch.sin(torch.arange(num_models * 5 * 6, dtype=torch.float32) * 0.07).reshape(num_models, 5, 6)
minibatch = minibatches[0]
predictions_diff_minibatch_loop = [model(mb) for model, mb in zip(models, minibatches)]
predictions2 = [model(minibatch) for model in models]

params, buffers = stack_module_state(models)
base_model = copy.deepcopy(models[0])


def fmodel(params, buffers, x):
    return functional_call(base_model, (params, buffers), (x,))


predictions1_vmap = vmap(fmodel)(params, buffers, minibatches)
predictions2_vmap = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
print("stacked:", {k: tuple(v.shape) for k, v in params.items()})
print("different minibatches match:", torch.allclose(predictions1_vmap, torch.stack(predictions_diff_minibatch_loop),
                                                     atol=1e-3, rtol=1e-5))
print("same minibatch match:", torch.allclose(predictions2_vmap, torch.stack(predictions2), atol=1e-3, rtol=1e-5))
print("ensemble mean prediction:", [round(v, 4) for v in predictions2_vmap.mean(0)[0].tolist()])


def loss(params, buffers, x):
    return fmodel(params, buffers, x).pow(2).mean()


grads = vmap(grad(loss), in_dims=(0, 0, None))(params, buffers, minibatch)
for name, g in grads.items():
    print(f"{name:10s} {tuple(g.shape)} per-model |g|: {[round(v, 4) for v in g.flatten(1).norm(dim=1).tolist()]}")
