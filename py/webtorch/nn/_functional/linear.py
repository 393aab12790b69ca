"""torch.nn.functional's linear layers."""
from ...ops import linalg as _la
from ...ops._common import dispatching

__all__ = ["linear", "bilinear"]


# ---- linear ----------------------------------------------------------------------------------
def linear(input, weight, bias=None):
    # as PyTorch: addmm for a matrix; a contiguous batch is viewed as a matrix around one addmm
    # (ViewBackward0 / AddmmBackward0 / ViewBackward0); else matmul (which folds a batch into rows)
    if bias is not None and input.dim() == 2:
        return _la.addmm(bias, input, weight.t())
    if bias is not None and bias.dim() == 1 and input.is_contiguous():
        out = _la.addmm(bias, input.view(-1, input.shape[-1]), weight.t())
        return out.view(tuple(input.shape[:-1]) + (weight.shape[0],))
    out = _la.matmul(input, weight.t())
    return out + bias if bias is not None else out


def bilinear(input1, input2, weight, bias=None):
    # y_k = x1 W_k x2^T + b_k
    out = _la.einsum("...i,kij,...j->...k", input1, weight, input2)
    return out + bias if bias is not None else out


dispatching(globals(), __all__)
