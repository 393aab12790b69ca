"""torch._dynamo._trace_wrapped_higher_order_op: the mode libraries import for indexing with 0-d tensors under
vmap (transformers' masks); a torch function mode, so entering it raises (see overrides.TorchFunctionMode)."""
from ..overrides import TorchFunctionMode


class TransformGetItemToIndex(TorchFunctionMode):
    pass
