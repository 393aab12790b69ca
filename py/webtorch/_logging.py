"""torch._logging: set_logs takes PyTorch 2.13's keyword arguments. A component's level sets the level of webtorch's
logger for it (webtorch._dynamo logs torch.compile's recompile-limit warning); webtorch has no artifact logs
(graph_breaks, recompiles, output_code, ...): those flags are accepted and print nothing."""
import logging

_COMPONENTS = {"all": "webtorch", "dynamo": "webtorch._dynamo", "aot": "webtorch._functorch",
               "autograd": "webtorch.autograd", "dynamic": "webtorch.fx", "inductor": "webtorch._inductor",
               "distributed": "webtorch.distributed", "c10d": "webtorch.distributed", "ddp": "webtorch.distributed",
               "fsdp": "webtorch.distributed", "dtensor": "webtorch.distributed", "onnx": "webtorch.onnx",
               "export": "webtorch.export"}
_ARTIFACTS = ("bytecode", "aot_graphs", "aot_joint_graph", "ddp_graphs", "graph", "graph_code", "graph_code_verbose",
              "graph_breaks", "side_effects", "graph_sizes", "guards", "recompiles", "recompiles_verbose",
              "trace_source", "trace_call", "trace_bytecode", "output_code", "kernel_code", "schedule", "perf_hints",
              "pre_grad_graphs", "post_grad_graphs", "ir_pre_fusion", "ir_post_fusion", "onnx_diagnostics", "fusion",
              "overlap", "cudagraphs", "sym_node", "compiled_autograd", "compiled_autograd_verbose",
              "cudagraph_static_inputs", "benchmarking", "autotuning", "incremental", "graph_region_expansion",
              "inductor_metrics", "hierarchical_compile", "compute_dependencies", "caching")


def set_logs(*, modules=None, **kwargs):
    """torch._logging.set_logs(dynamo=logging.DEBUG, modules={"my.module": logging.INFO}, graph_breaks=True, ...)."""
    for name, value in kwargs.items():
        if name in _COMPONENTS:
            if value is not None:
                logging.getLogger(_COMPONENTS[name]).setLevel(value)
        elif name not in _ARTIFACTS:
            raise TypeError(f"set_logs() got an unexpected keyword argument '{name}'")
    for name, level in (modules or {}).items():
        if not isinstance(level, bool):
            logging.getLogger(name).setLevel(level)
