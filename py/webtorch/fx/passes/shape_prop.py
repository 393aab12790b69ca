"""torch.fx.passes.shape_prop.ShapeProp: run a GraphModule on example inputs and record each node's tensor
metadata in node.meta["tensor_meta"] (and its value's type in node.meta["type"])."""
from typing import NamedTuple

from ..._tensor import Tensor
from ..interpreter import Interpreter
from ..node import map_aggregate

__all__ = ["TensorMetadata", "ShapeProp"]


class TensorMetadata(NamedTuple):
    shape: object
    dtype: object
    requires_grad: bool
    stride: tuple
    memory_format: object
    is_quantized: bool
    qparams: dict


def _extract_tensor_metadata(result, include_contiguity=True):
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, result.stride(), None, False, {})


class ShapeProp(Interpreter):
    def __init__(self, gm, fake_mode=None):
        super().__init__(gm)

    def run_node(self, n):
        result = super().run_node(n)
        found = [False]

        def extract(obj):
            if isinstance(obj, Tensor):
                found[0] = True
                return _extract_tensor_metadata(obj)
            return obj
        meta = map_aggregate(result, extract)
        if found[0]:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        return self.run(*args)
