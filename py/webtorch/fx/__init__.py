"""torch.fx: programs as graphs of Nodes.

PyTorch's symbolic tracing (`symbolic_trace`, `Tracer`, `Proxy`: leaf modules as call_module, Tensor methods as
call_method, functions as call_function, parameters as get_attr), `GraphModule` with generated code, the Graph
editing API, `Interpreter`/`Transformer`, `replace_pattern` and `passes.shape_prop`. The op recorder behind
export, jit, onnx and torch.compile (`_recorder.py`) builds the same Graph and Node."""
from . import passes, subgraph_rewriter  # noqa: F401
from ._recorder import (  # noqa: F401  # noqa: F401
           GraphRunner,
           LiftedGraphModule,
           OpTracer,
           _active,
           _get_path,
           _meta,
           _tensors,
           flatten_inputs,
           trace_module,
)
from ._symbolic_trace import PH, ProxyableClassMeta, Tracer, symbolic_trace, wrap  # noqa: F401
from .graph import Graph, PythonCode  # noqa: F401
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, Sym, TensorMeta, _fmt, has_side_effect, map_aggregate, map_arg, target_name  # noqa: F401
from .proxy import Proxy
from .subgraph_rewriter import replace_pattern

__all__ = ["symbolic_trace", "Tracer", "wrap", "Graph", "GraphModule", "Interpreter", "Transformer", "Node",
           "Proxy", "replace_pattern", "has_side_effect"]
