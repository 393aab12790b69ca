"""Late bindings: what the lower layers (autograd, Tensor's own code, printing, random) call of the layers above
them, set by webtorch/__init__.py once those have loaded. The lower layers cannot import them (the ops import
Tensor, and Tensor imports autograd), so they read these names when they run."""
Tensor = None       # webtorch._tensor.Tensor
creation = None     # webtorch.ops._creation: tensor, empty, zeros_like, ...
shape = None        # webtorch.ops.shape: cat, stack, ...
forward_ad = None   # autograd.forward_ad's hook while a dual level is open: every routed op calls it
vmap = None         # torch.func.vmap: autograd.grad(is_grads_batched=True), autograd.functional.jacobian(vectorize)
linalg = None       # webtorch.linalg: torch.norm's nuclear norm (linalg.matrix_norm)
