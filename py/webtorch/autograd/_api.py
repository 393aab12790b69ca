"""torch.autograd.backward and torch.autograd.grad: the entry points that run the graph (graph.run_backward)."""
from .. import _late
from . import graph


def _tensors(x):
    Tensor = _late.Tensor
    if x is None:
        return None
    if isinstance(x, (Tensor, graph.GradientEdge)):
        return (x,)
    return tuple(x)


def _make_grads(outputs, grads, is_grads_batched=False):
    _creation = _late.creation
    out = []
    grads = grads if grads is not None else (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError("grad can be implicitly created only for scalar outputs")
    for i, (o, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if o.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not o.dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got "
                                   f"{o.dtype}")
            g = _creation.ones_like(o)
        elif not hasattr(g, "shape"):
            g = _creation.full_like(o, g)
        elif is_grads_batched and tuple(g.shape[1:]) != tuple(o.shape):
            raise RuntimeError(f"If `is_grads_batched=True`, we interpret the first dimension of each grad_output as "
                               f"the batch dimension. The sizes of the remaining dimensions are expected to match the "
                               f"shape of corresponding output, but a mismatch was detected: grad_output[{i}] has a "
                               f"shape of {g.shape[2:]} and output[{i}] has a shape of {o.shape}. If you only want "
                               "some tensors in `grad_output` to be considered batched, consider using vmap.")
        elif not is_grads_batched and tuple(g.shape) != tuple(o.shape):
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] has a "
                               f"shape of {o.shape}.")
        out.append(g)
    return out


def _check_requires_grad(tensors):
    for i, o in enumerate(tensors):
        if not o.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    tensors = _tensors(tensors)
    grad_tensors = _tensors(grad_tensors) if grad_tensors is not None else None
    if retain_graph is None:
        retain_graph = create_graph
    _check_requires_grad(tensors)
    grads = _make_grads(tensors, grad_tensors)
    inputs = _tensors(inputs)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    graph.run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs, accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    outputs = _tensors(outputs)
    inputs = _tensors(inputs)
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    _check_requires_grad(outputs)
    grads = _make_grads(outputs, _tensors(grad_outputs), is_grads_batched)
    if is_grads_batched:
        res = _batched_vjps(outputs, grads, retain_graph, create_graph, inputs, allow_unused)
    else:
        res = graph.run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs,
                                 allow_unused=allow_unused, accumulate=False)
    if materialize_grads:
        _creation = _late.creation
        res = [r if r is not None else _creation.zeros_like(x) for r, x in zip(res, inputs)]
    return tuple(res)


def _batched_vjps(outputs, grads, retain_graph, create_graph, inputs, allow_unused):
    """is_grads_batched: one backward vmapped over the grad_outputs' first dim (an unused input's: None)."""
    unused = []

    def vjp(*gs):
        res = graph.run_backward(outputs, gs, retain_graph, create_graph, inputs=inputs, allow_unused=allow_unused,
                                 accumulate=False)
        unused[:] = [r is None for r in res]
        return tuple(_late.creation.zeros(()) if r is None else r for r in res)
    res = _late.vmap(vjp)(*grads)
    return [None if u else r for r, u in zip(res, unused)]
