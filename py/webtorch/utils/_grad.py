"""Module.zero_grad and Optimizer.zero_grad: one definition, PyTorch's."""


def zero_grads(params, set_to_none):
    """Each parameter's .grad set to None, or (set_to_none=False) detached in place and zeroed."""
    for p in params:
        g = p.grad
        if g is None:
            continue
        if set_to_none:
            p.grad = None
            continue
        if g.grad_fn is not None:
            g.detach_()
        else:
            g.requires_grad_(False)
        g.zero_()
