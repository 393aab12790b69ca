"""torch.linalg: the linear-algebra namespace. Its ops are defined once in ops/linalg.py; this
module gives them PyTorch's linalg signatures where those differ."""
from .ops._common import write_out
from .ops.linalg import cross as _cross, matmul  # noqa: F401
from .ops.reduction import norm as _norm
from .overrides import torch_function


@torch_function
def cross(input, other, *, dim=-1):
    """linalg.cross: the product along `dim`, the last one by default (torch.cross without dim
    takes the first dim of size 3)."""
    return _cross(input, other, dim)


@torch_function
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    return write_out(_norm(x, ord, dim, keepdim, dtype=dtype), out)
