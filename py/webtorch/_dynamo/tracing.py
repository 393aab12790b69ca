"""What a compiled function's first call records: the op graph of the whole step (_StepTracer), the user's frames
and the reason at each graph break, and what the call reaches besides its arguments (modules, optimizers, globals
and cells, the tensors they hold)."""
import operator
import os
import traceback

from .. import fx
from ..nn import Module
from ..optim import Optimizer
from . import guards

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


_REASONS = {
    "item": "Unsupported Tensor.item() call with capture_scalar_outputs=False",
    "__bool__": "Data-dependent branching: bool() of a tensor",
    "tolist": "Unsupported Tensor.tolist() call",
    "numpy": "Unsupported Tensor.numpy() call",
    "__repr__": "Unsupported Tensor.__repr__() call (printing a tensor)",
    "__disabled__": "Skip calling `torch.compiler.disable()`d function",
    "__host_read__": "a read to the host inside an op (its result depends on the data, as nonzero's size)",
}


class GraphCompileReason:
    """Why a graph ended: reason, user_stack (FrameSummary list), graph_break (PyTorch's fields)."""

    def __init__(self, reason, user_stack, graph_break=True):
        self.reason, self.user_stack, self.graph_break = reason, user_stack, graph_break

    def __repr__(self):
        return f"GraphCompileReason(reason={self.reason!r}, user_stack={self.user_stack!r}, " \
               f"graph_break={self.graph_break})"


def _user_frame():
    """The innermost frame outside webtorch's package: the user's line that caused what is being reported."""
    return _user_stack(None)[-1]


def _user_stack(code):
    """The user's frames (outside webtorch's package) from the outermost running `code` (the compiled frame) to the
    innermost, as PyTorch's user_stack; just the innermost when no frame runs `code`."""
    frames = [f for f, _ in traceback.walk_stack(None)][::-1]
    start = next((i for i, f in enumerate(frames) if f.f_code is code), None) if code is not None else None
    user = [f for f in frames[start or 0:] if not os.path.abspath(f.f_code.co_filename).startswith(_PKG)]
    user = (user if start is not None else user[-1:]) or frames[:1]
    return traceback.StackSummary.extract((f, f.f_lineno) for f in user)


class _StepTracer(fx.OpTracer):
    """fx.OpTracer for a whole step: also reports .tolist(), .numpy() and printing as value reads, and an alias
    the graph cannot express (a view saved for backward, a tensor stale after an optimizer's in-place write)
    becomes a constant instead of an error: the call itself runs eagerly and must never fail for the graph's
    sake."""
    value_reads = fx.OpTracer.value_reads + ("tolist", "numpy", "__repr__")

    def __enter__(self):
        super().__enter__()
        self._hooked = Optimizer.__dict__["_hooked"]
        tracer = self

        def hooked(opt, step, closure):
            out = tracer._hooked(opt, step, closure)
            tracer._record_step(opt)
            return out
        Optimizer._hooked = hooked
        return self

    def __exit__(self, *exc):
        Optimizer._hooked = self._hooked
        return super().__exit__(*exc)

    def _record_step(self, opt):
        """optimizer.step() (backend primitives, unseen by the tracer) as one node that writes the parameters in
        place: step_(params, grads), named torch.optim.<Class>.step."""
        params = [p for g in opt.param_groups for p in g["params"] if p.grad is not None]
        if not params:
            return

        def step_(params, grads):
            opt.step()
        step_._fx_target_name = f"torch.optim.{type(opt).__name__}.step"
        node = self.graph.call_function(step_, ([self.node_of(p) for p in params],
                                                [self.node_of(p.grad) for p in params]),
                                        meta={"val": fx._meta(params)})
        for i, p in enumerate(params):
            self._rebind(p, self.graph.call_function(operator.getitem, (node, i), meta={"val": fx._meta(p)}))

    def node_of(self, t):
        try:
            return super().node_of(t)
        except RuntimeError:
            node = self.graph._constant(t, {"val": fx.TensorMeta(t.shape, t.dtype)})
            self._bind(t, node)
            return node


def _reached(code_fn, root):
    """(name prefix, object) of what a call reaches besides its arguments: self (and a plain object's attributes),
    and the globals and closure cells its code names."""
    out = []
    if root is not None:
        out.append(("", root))
        if not isinstance(root, Module) and isinstance(getattr(root, "__dict__", None), dict):
            out += [(k + "_", v) for k, v in vars(root).items()]
    code = getattr(code_fn, "__code__", None)
    if code is not None:
        names = guards.code_names(code)
        out += [(n + "_", v) for n, v in code_fn.__globals__.items() if n in names]
        for n, c in zip(code.co_freevars, code_fn.__closure__ or ()):
            try:
                out.append((n + "_", c.cell_contents))
            except ValueError:  # an empty cell
                pass
    return out


def _trainable(reached):
    """The leaf tensors whose .grad a call may set: the parameters of the modules and optimizers it reaches."""
    found = {}
    for _, v in reached:
        if isinstance(v, Module):
            found.update((id(p), p) for p in v.parameters())
        elif isinstance(v, Optimizer):
            found.update((id(p), p) for g in v.param_groups for p in g["params"])
    return list(found.values())


def _named_tensors(reached, code_fn, root, args, kwargs):
    """(placeholder name, tensor) for the parameters and buffers of the modules the call reaches, then its tensor
    arguments (named after the function's parameters)."""
    seen = set()
    for prefix, m in reached:
        if not isinstance(m, Module):
            continue
        for kind, items in (("p_", m.named_parameters()), ("b_", m.named_buffers())):
            for path, t in items:
                if id(t) not in seen:
                    seen.add(id(t))
                    yield kind + prefix + path.replace(".", "_"), t
    names = guards.arg_names(code_fn, root)
    flat = [(names[i] if i < len(names) else f"arg{i}", a) for i, a in enumerate(args)] + sorted(kwargs.items())
    for name, a in flat:
        for j, t in enumerate(fx.flatten_inputs((a,), {})):
            if id(t) not in seen:
                seen.add(id(t))
                yield (name if j == 0 else f"{name}_{j}"), t


def _split(graph, n):
    """The graph's nodes in n graphs, split at the breaks (each with the placeholders and constants it uses)."""
    parts = []
    for k in range(n):
        g = fx.Graph()
        g._recorded = True
        ops = [node for node in graph.nodes if node.op == "call_function" and node.meta.get("graph_id") == k]
        used = {a.name for node in ops for a in node.all_input_nodes}
        g._nodes = [node for node in graph.nodes if node.op in ("placeholder", "get_attr") and node.name in used] + ops
        g.constants = {k2: v for k2, v in graph.constants.items() if k2 in used}
        parts.append(g)
    return parts


def _ops(graphs):
    return [[node.target for node in g.nodes if node.op == "call_function"] for g in graphs]
