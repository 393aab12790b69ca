"""A compiled call whose outputs require grad and whose backward runs later, outside it: AOTAutograd's split.

`model = torch.compile(model)` followed by `loss_fn(model(x), y).backward()` in the user's loop: the compiled
call returns outputs with a graph, and the backward runs after the call has returned. On webgpu, calls 2 and 3
record the forward (as every capture does) and then the backward of that graph alone, `autograd.grad` of the
outputs with respect to the leaves it reaches (parameters), on placeholder output gradients: two programs.
A replay runs the forward program and returns its outputs through one `CompiledFunctionBackward` node (PyTorch's
name) whose backward replays the backward program on the incoming gradients and hands the leaves' gradients to
the engine (AccumulateGrad adds them to .grad as for any node).

The programs share the buffers the forward saves for backward: a replay overwrites them. So a call replays only
when no earlier graph on those buffers can still be backpropagated (its nodes are gone or freed by a backward
without retain_graph); otherwise it runs eagerly. Double backward through the node raises PyTorch's error.
"""
import weakref

from ..autograd import grad_mode
from ..autograd.function import Function
from ..autograd.graph import AccumulateGrad

DOUBLE_BACKWARD = "torch.compile with aot_autograd does not currently support double backward"


def graph_leaves(outs):
    """The leaf tensors (AccumulateGrad) the graph of outs reaches, or why its backward cannot be recorded apart
    (hooks run in backward: recording would run them an extra time)."""
    seen, leaves, todo = set(), [], [o.grad_fn for o in outs]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if node._hooks or node._pre_hooks or node._tensor_hooks or node._retained:
            return "a backward hook or retain_grad() in the compiled graph"
        if isinstance(node, AccumulateGrad):
            v = node.variable
            if v is None:
                return "a leaf of the graph is gone"
            if v._hooks or v._post_hooks:
                return "a hook on a parameter"
            leaves.append(v)
        todo.extend(e[0] for e in node._edges if e is not None)
    return leaves


class Backward:
    """A recorded backward: its program (inputs: the output gradients; outputs: the leaves' gradients that are
    not None), the leaves, and which of the forward's outputs are differentiable."""

    def __init__(self, program, leaves, used, diff):
        self.program, self.leaves, self.used, self.diff = program, leaves, used, diff
        self.live = []  # weakrefs to the nodes whose saved tensors are the programs' buffers

    def pending(self):
        """Whether a graph on the programs' buffers may still be backpropagated."""
        return any(n is not None and not n._freed for n in (r() for r in self.live))


class CompiledFunction(Function):
    """forward: the forward program's replay; backward: the backward program's."""
    _node_name = "CompiledFunctionBackward"

    @staticmethod
    def forward(ctx, program, bwd, inputs, *leaves):
        outs = program.replay(inputs)
        ctx.bwd = bwd
        ctx.mark_non_differentiable(*[o for o, d in zip(outs, bwd.diff) if not d])
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        if grad_mode.is_grad_enabled():
            raise RuntimeError(DOUBLE_BACKWARD)
        bwd = ctx.bwd
        got = iter(bwd.program.replay([g for g, d in zip(grads, bwd.diff) if d]))
        return (None, None, None) + tuple(next(got) if u else None for u in bwd.used)


def replay(program, bwd, inputs):
    """The forward program's outputs, wired to the backward program."""
    outs = CompiledFunction.apply(program, bwd, inputs, *bwd.leaves)
    node = next((o.grad_fn for o in outs if o.grad_fn is not None), None)
    bwd.live = [weakref.ref(node)] if node is not None else []
    return list(outs)
