"""torch._dynamo.explain: compile a function afresh, run it once, and report its graphs, breaks and guards."""
import warnings

from .. import fx
from .eval_frame import OptimizedModule, _inner, compile_callable, compiled_state, reset
from .tracing import _ops


class ExplainOutput:
    """What torch._dynamo.explain returns (PyTorch's fields; graphs are fx.Graph objects)."""

    def __init__(self, graphs, graph_count, graph_break_count, break_reasons, op_count, ops_per_graph=None,
                 out_guards=None, compile_times=None):
        self.graphs, self.graph_count, self.graph_break_count = graphs, graph_count, graph_break_count
        self.break_reasons, self.op_count, self.ops_per_graph = break_reasons, op_count, ops_per_graph
        self.out_guards, self.compile_times = out_guards, compile_times

    def __str__(self):
        output = f"Graph Count: {self.graph_count}\nGraph Break Count: {self.graph_break_count}\n"
        output += f"Op Count: {self.op_count}\nBreak Reasons:\n"
        for idx, br in enumerate(self.break_reasons):
            output += f"  Break Reason {idx + 1}:\n    Reason: {br.reason}\n    User Stack:\n"
            for frame_summary in br.user_stack:
                output += f"      {frame_summary}\n"
        if self.ops_per_graph is not None:
            output += "Ops per Graph:\n"
            for idx, ops in enumerate(self.ops_per_graph):
                output += f"  Ops {idx + 1}:\n"
                for op in ops:
                    output += f"    {fx.target_name(op)}\n"
        if self.out_guards is not None:
            output += "Out Guards:\n"
            for i, guard in enumerate(self.out_guards):
                output += f"  Guard {i + 1}:\n    {guard}"
        if self.compile_times is not None:
            output += f"Compile Times: {self.compile_times}\n"
        return output


def explain(f, *extra_args, **extra_kwargs):
    """torch._dynamo.explain(f)(*args, **kwargs): compile f afresh, run it once, report graphs and breaks."""
    def inner(*args, **kwargs):
        reset()
        target = f._orig_mod if isinstance(f, OptimizedModule) else _inner(f)
        compiled = compile_callable(target)
        state = compiled_state(compiled)
        compiled(*args, **kwargs)
        entry = next(iter(state.entries.values()))
        reset()
        return ExplainOutput(entry.graphs, len(entry.graphs), len(entry.graphs) - 1, list(entry.breaks),
                             sum(len(o) for o in _ops(entry.graphs)), _ops(entry.graphs), entry.out_guards(), None)
    if extra_args or extra_kwargs:
        warnings.warn("explain(f, *args, **kwargs) is deprecated, use explain(f)(*args, **kwargs) instead.  If you "
                      "don't migrate, we may break your explain call in the future if your user defined kwargs "
                      "conflict with future kwargs added to explain(f).", FutureWarning, stacklevel=2)
        return inner(*extra_args, **extra_kwargs)
    return inner
