"""A compiled call whose outputs require grad and whose backward runs later, outside it: AOTAutograd's split.

`model = torch.compile(model)` followed by `loss_fn(model(x), y).backward()` in the user's loop: the compiled
call returns outputs with a graph, and the backward runs after the call has returned. On webgpu, calls 2 and 3
record the forward (as every capture does) and then the backward of that graph alone, `autograd.grad` of the
outputs with respect to the leaves it reaches (parameters) and the inputs that require grad, on placeholder output
gradients: two programs.
A replay runs the forward program and returns its outputs through one `CompiledFunctionBackward` node (PyTorch's
name) whose backward replays the backward program on the incoming gradients and hands the leaves' gradients to
the engine (AccumulateGrad adds them to .grad as for any node).

The programs share the buffers the forward leaves for its backward (activations, saved outputs), which a replay
overwrites. So before a replay, the graph whose values are in those buffers, if it can still be backpropagated
(its node alive and not freed by a backward without retain_graph: `out = model(x)` kept by an inference loop
without no_grad, two forwards before one backward), gets a copy of them (a GPU copy per buffer), and its backward
copies them back first, after saving the values of the graph then in the buffers the same way. Call 3's graph
(recorded eagerly: its nodes read the buffers directly) cannot be moved: while it can still be backpropagated,
calls run eagerly. Double backward through the node raises PyTorch's error.
"""
import weakref

from ..autograd import grad_mode
from ..autograd.function import Function
from ..autograd.graph import AccumulateGrad

DOUBLE_BACKWARD = "torch.compile with aot_autograd does not currently support double backward"


def graph_leaves(outs, stops):
    """The leaf tensors (AccumulateGrad) the graph of outs reaches before the nodes `stops` (the inputs' clones), or
    why its backward cannot be recorded apart (hooks run in backward: recording would run them an extra time)."""
    seen, leaves, todo = set(), [], [o.grad_fn for o in outs]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen or node in stops:
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
    """A recorded backward: its program (inputs: the output gradients; outputs: the gradients of the leaves, then
    of the inputs at positions `at` (those that require grad), that are not None), which of the forward's outputs
    are differentiable, and `saved`: the (buffer, size) pairs the forward leaves that the backward reads."""

    def __init__(self, be, forward, program, leaves, at, used, diff):
        self.be, self.program, self.leaves, self.at, self.used, self.diff = be, program, leaves, at, used, diff
        flag = be._i64_flag.handle if be._i64_flag is not None else None
        self.saved = [(h, n) for h, n in forward.kept if id(h) in program.reads and h is not flag]
        self.eager = []   # weakrefs to call 3's nodes: they read the buffers directly
        self.live = None  # weakref to the CompiledFunctionBackward node whose values are in the buffers

    def pending(self):
        """Whether call 3's graph may still be backpropagated (then calls run eagerly)."""
        return any(_pending(r) for r in self.eager)

    def vacate(self):
        """Copy the values of the node in the buffers, if it may still be backpropagated, to its own buffers."""
        node = self.live() if _pending(self.live) else None
        if node is not None:
            node.snapshot = [self.be.empty(n // 4, "int32") for _, n in self.saved]
            for (h, n), b in zip(self.saved, node.snapshot):
                self.be.commands.copy_buffer(h, 0, b.handle, 0, n)
        self.live = None

    def restore(self, node):
        """Put node's values back in the buffers (after vacating whoever is there)."""
        if node.snapshot is not None:
            self.vacate()
            for (h, n), b in zip(self.saved, node.snapshot):
                self.be.commands.copy_buffer(b.handle, 0, h, 0, n)
            node.snapshot = None
            self.live = weakref.ref(node)


def _pending(ref):
    node = ref() if ref is not None else None
    return node is not None and not node._freed


class CompiledFunction(Function):
    """forward: the forward program's replay; backward: the backward program's."""
    _node_name = "CompiledFunctionBackward"

    @staticmethod
    def forward(ctx, program, bwd, inputs, *leaves_and_inputs):
        bwd.vacate()
        outs = program.replay(inputs)
        ctx.bwd, ctx.snapshot = bwd, None
        bwd.live = weakref.ref(ctx)
        ctx.mark_non_differentiable(*[o for o, d in zip(outs, bwd.diff) if not d])
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        if grad_mode.is_grad_enabled():
            raise RuntimeError(DOUBLE_BACKWARD)
        bwd = ctx.bwd
        bwd.restore(ctx)
        got = iter(bwd.program.replay([g for g, d in zip(grads, bwd.diff) if d]))
        return (None, None, None) + tuple(next(got) if u else None for u in bwd.used)


def replay(program, bwd, inputs):
    """The forward program's outputs, wired to the backward program."""
    return list(CompiledFunction.apply(program, bwd, inputs, *bwd.leaves, *[inputs[i] for i in bwd.at]))
