"""torch._dynamo._trace_wrapped_higher_order_op: the mode libraries enter to index with 0-d tensors under vmap
(transformers' masks). PyTorch's turns `x[t]` with tensor indices into aten.index (no `.item()` under vmap);
webtorch's indexing with 0-d tensors already works under its vmap, so the mode passes each call through."""
from ..overrides import TorchFunctionMode


class TransformGetItemToIndex(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))
