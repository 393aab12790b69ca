"""torch.linalg: the linear-algebra namespace. Its ops are defined in ops/_linalg_ops.py (composed of
the factorizations of ops/_linalg_factor.py) and ops/linalg.py (matmul, cross); this module gives
them PyTorch's linalg names and signatures where those differ."""
from .ops._linalg_ops import (  # noqa: F401
    LinAlgError,
    cholesky,
    cholesky_ex,
    cond,
    det,
    diagonal,
    eig,
    eigh,
    eigvals,
    eigvalsh,
    householder_product,
    inv,
    inv_ex,
    ldl_factor,
    ldl_factor_ex,
    ldl_solve,
    lstsq,
    lu,
    lu_factor,
    lu_factor_ex,
    lu_solve,
    matrix_exp,
    matrix_norm,
    matrix_power,
    matrix_rank,
    multi_dot,
    norm,
    pinv,
    qr,
    slogdet,
    solve,
    solve_ex,
    solve_triangular,
    svd,
    svdvals,
    tensorinv,
    tensorsolve,
    vander,
    vecdot,
    vector_norm,
)
from .ops.linalg import cross as _cross, matmul  # noqa: F401
from .overrides import torch_function

common_notes = {
    "experimental_warning": 'This function is "experimental" and it may change in a future PyTorch release.',
    "sync_note": "When inputs are on a CUDA device, this function synchronizes that device with the CPU.",
    "sync_note_ex": "When the inputs are on a CUDA device, this function synchronizes only when "
                    ":attr:`check_errors`\\ `= True`.",
    "sync_note_has_ex": "When inputs are on a CUDA device, this function synchronizes that device with the CPU. "
                        "For a version of this function that does not synchronize, see :func:`{}`.",
}


@torch_function
def cross(input, other, *, dim=-1):
    """linalg.cross: the product along `dim`, the last one by default (torch.cross without dim
    takes the first dim of size 3)."""
    return _cross(input, other, dim)
