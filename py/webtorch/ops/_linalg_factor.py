"""torch.linalg's differentiable primitives: LU, Cholesky, triangular solve, QR, eigh, eig and SVD. Each
runs a device's kernel (`webgpu/linalg.py`, `webgpu/linalg_orth.py`) or a host kernel
(`backends/linalg_host.py`: numpy's LAPACK, or pure Python where numpy is absent) on the tensor's
matrices, batched over the leading dims, and has its derivative row in
`autograd/linalg_derivatives.py`. Every other linalg op is composed of these (`ops/_linalg_ops.py`)."""
from .. import _dtype
from .._geometry import numel as _numel
from ..backends import linalg_host
from ..backends.cpu.pure import PureBackend
from . import _prims
from ._common import formula_node, name_of, recording
from .reduction import _rt

int32 = _dtype.int32


class _LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a factorization or solve failed on its input (PyTorch's
    torch._C._LinAlgError, a RuntimeError)."""


_LinAlgError.__module__ = "torch._C"
LinAlgError = _LinAlgError


class return_types:
    linalg_lu_factor = _rt("linalg_lu_factor", "LU pivots")
    linalg_lu_factor_ex = _rt("linalg_lu_factor_ex", "LU pivots info")
    linalg_lu = _rt("linalg_lu", "P L U")
    lu_unpack = _rt("lu_unpack", "P L U")
    linalg_cholesky_ex = _rt("linalg_cholesky_ex", "L info")
    linalg_inv_ex = _rt("linalg_inv_ex", "inverse info")
    linalg_solve_ex = _rt("linalg_solve_ex", "result info")
    linalg_qr = _rt("linalg_qr", "Q R")
    qr = _rt("qr", "Q R")
    geqrf = _rt("geqrf", "a tau")
    linalg_eigh = _rt("linalg_eigh", "eigenvalues eigenvectors")
    linalg_svd = _rt("linalg_svd", "U S Vh")
    svd = _rt("svd", "U S V")
    linalg_slogdet = _rt("linalg_slogdet", "sign logabsdet")
    slogdet = _rt("slogdet", "sign logabsdet")
    linalg_lstsq = _rt("linalg_lstsq", "solution residuals rank singular_values")
    linalg_ldl_factor = _rt("linalg_ldl_factor", "LD pivots")
    linalg_ldl_factor_ex = _rt("linalg_ldl_factor_ex", "LD pivots info")
    linalg_eig = _rt("linalg_eig", "eigenvalues eigenvectors")
    triangular_solve = _rt("triangular_solve", "solution cloned_coefficient")


# ---- checks -------------------------------------------------------------------------------------

def check_float(op, A, name="A"):
    """PyTorch's checks of a linalg op's input: a floating or complex tensor of at least 2 dims."""
    if A.dtype.kind not in "fc":
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got {name_of(A.dtype)}")
    if A.dim() < 2:
        raise RuntimeError(f"{op}: The input tensor {name} must have at least 2 dimensions.")
    if A.dtype.to_real().itemsize == 2:
        raise NotImplementedError(f"\"{op}\" not implemented for '{name_of(A.dtype)}'")


def check_square(op, A, name="A"):
    check_float(op, A, name)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: {name} must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def raise_info(info, message):
    """LinAlgError for the first nonzero `info` (PyTorch's message, with the batch element when batched)."""
    flat = info.reshape(-1).tolist()
    bad = next((k for k, v in enumerate(flat) if v), None)
    if bad is not None:
        pre = f"(Batch element {bad}): " if info.dim() else ""
        op, _, rest = message.partition(": ")
        raise LinAlgError(f"{op}: {pre}{rest.format(info=flat[bad])}")


# ---- the host bridge ----------------------------------------------------------------------------

def _numpy_here(backend):
    if isinstance(backend, PureBackend):
        return False
    try:
        import numpy  # noqa: F401  (an optional dependency)
    except ImportError:
        return False
    return True


def _result(values, shape, dtype, device):
    return _prims.from_flat(values, shape, dtype, device)


def _flat(x):
    """(shape, values) of a pure kernel's result: a matrix (list of rows), a vector or a number."""
    if isinstance(x, list):
        if x and isinstance(x[0], list):
            return (len(x), len(x[0])), [v for r in x for v in r]
        return (len(x),), x
    return (), [x]


# (device type, kernel name) -> a device's own kernel (`webgpu/linalg.py`), taking the inputs and
# params as `host` does and returning its results, or None where it does not apply
DEVICE_KERNELS = {}


def _out_dtype(name, k, dt, integer):
    """The dtype of result k of host kernel `name` on a `dt` input: int32, the real dtype of a complex
    input's eigenvalues and singular values, else dt."""
    return int32 if integer else dt.to_real() if k in linalg_host.REAL_OUTPUTS.get(name, ()) else dt


def host(name, inputs, *params):
    """The host kernel `name` on the matrices of `inputs` (Tensors [*batch, m, n], one batch): its
    results as Tensors on the inputs' device (`_out_dtype`). Both paths compute in float64 (complex128
    for a complex input) and round once. A complex input takes the host path on every device (the
    device kernels are real); in pure Python only the kernels of `linalg_host.PY_COMPLEX`."""
    a = inputs[0]
    complex_ = a.dtype.kind == "c"
    kernel = None if complex_ else DEVICE_KERNELS.get((a.device.type, name))
    res = kernel(*inputs, *params) if kernel is not None else None
    if res is not None:
        return res
    batch, dt, dev, be = tuple(a.shape[:-2]), a.dtype, a.device, a._backend
    B = _numel(batch)
    empty = any(t.numel() == 0 for t in inputs)
    if _numpy_here(be) or empty:  # empty matrices: their shapes are numpy's (the page has none: an error)
        wide = "complex128" if complex_ else "float64"
        arrs = [be.to_numpy(_prims.contiguous(t)._strided()).reshape((B,) + tuple(t.shape[-2:])).astype(
            wide if t.dtype.kind in "fc" else "float64") for t in inputs]
        outs = linalg_host.NP[name](*arrs, *params)
        return tuple(_result(o.reshape(-1), batch + tuple(o.shape[1:]), _out_dtype(name, k, dt, o.dtype.kind in "iu"),
                             dev) for k, o in enumerate(outs))
    if complex_ and name not in linalg_host.PY_COMPLEX:
        raise NotImplementedError(f"linalg: the '{name}' kernel of a complex matrix needs numpy (LAPACK); webtorch "
                                  f"has no pure-Python complex {name}")
    mats = []
    for t in inputs:
        m, n = t.shape[-2:]
        flat = be.to_flat(_prims.contiguous(t)._strided())
        mats.append([[flat[(b * m + i) * n:(b * m + i + 1) * n] for i in range(m)] for b in range(B)])
    per = linalg_host.PY[name](*mats, *params)
    res = []
    for k in range(len(per[0])):
        shape = _flat(per[0][k])[0]
        values = [v for r in per for v in _flat(r[k])[1]]
        res.append(_result(values, batch + shape, _out_dtype(name, k, dt, bool(values) and type(values[0]) is int),
                           dev))
    return tuple(res)


# ---- LU -----------------------------------------------------------------------------------------

def _lu_kernel(A, pivot):
    LU, piv, info = host("lu", [A])
    return LU, piv, info


LuFactorEx = formula_node("LinalgLuFactorExBackward0", _lu_kernel, ("A", "pivot"), outputs=("LU", "pivots", "info"))


def lu_factor_ex(A, pivot=True):
    check_float("torch.linalg.lu_factor_ex", A)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    return LuFactorEx.apply(A, pivot) if recording(A) else _lu_kernel(A, pivot)


def row_order(pivots, m):
    """perm [*batch, m] (int64) of LAPACK's 1-based pivots [*batch, k]: row i of P^T A is row perm[i]
    of A (A = P L U)."""
    batch = tuple(pivots.shape[:-1])
    perms = []
    for row in pivots.reshape(_numel(batch), pivots.shape[-1]).tolist():
        p = list(range(m))
        for i, v in enumerate(row):
            p[i], p[v - 1] = p[v - 1], p[i]
        perms += p
    return _prims.from_flat(perms, batch + (m,), _dtype.int64, pivots.device)


def permutation(pivots, m, dtype):
    """P (A = P L U) from LAPACK's pivots: [*batch, m, m] of `dtype`, P[perm[i], i] = 1."""
    perm = row_order(pivots, m)
    rows = _prims.arange(m, 0, 1, _dtype.int64, pivots.device)
    return (perm.unsqueeze(-2) == rows.unsqueeze(-1)).to(dtype)


# ---- Cholesky -----------------------------------------------------------------------------------

def _cholesky_kernel(A, upper):
    L, info = host("cholesky", [A.mT if upper else A])
    return (L.mT.contiguous() if upper else L), info


CholeskyEx = formula_node("LinalgCholeskyExBackward0", _cholesky_kernel, ("A", "upper"), outputs=("L", "info"))


def cholesky_ex(A, upper=False):
    return CholeskyEx.apply(A, upper) if recording(A) else _cholesky_kernel(A, upper)


# ---- triangular solve ---------------------------------------------------------------------------

def _trisolve_kernel(A, B, upper, left, unitriangular):
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return _trisolve_kernel(A.mT, B.mT, not upper, True, unitriangular).mT.contiguous()
    batch = _prims.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    A = A.expand(batch + tuple(A.shape[-2:]))
    B = B.expand(batch + tuple(B.shape[-2:]))
    return host("trisolve", [A, B], upper, unitriangular)[0]


SolveTriangular = formula_node("LinalgSolveTriangularBackward0", _trisolve_kernel,
                               ("A", "B", "upper", "left", "unitriangular"), outputs=("X",))


def solve_triangular(A, B, upper, left=True, unitriangular=False):
    if recording(A, B):
        return SolveTriangular.apply(A, B, upper, left, unitriangular)
    return _trisolve_kernel(A, B, upper, left, unitriangular)


# ---- QR, eigh, SVD ------------------------------------------------------------------------------

def _qr_kernel(A, mode):
    Q, R = host("qr", [A], mode)
    return (A.new_zeros((0,)) if mode == "r" else Q), R   # mode 'r': PyTorch's empty Q


Qr = formula_node("LinalgQrBackward0", _qr_kernel, ("A", "mode"), outputs=("Q", "R"))


def qr(A, mode="reduced"):
    return Qr.apply(A, mode) if recording(A) else _qr_kernel(A, mode)


def geqrf(A):
    return host("geqrf", [A])


def _eigh_kernel(A, upper):
    return host("eigh", [A], upper)


Eigh = formula_node("LinalgEighBackward0", _eigh_kernel, ("A", "upper"), outputs=("L", "V"))


def eigh(A, upper=False):
    return Eigh.apply(A, upper) if recording(A) else _eigh_kernel(A, upper)


def _eig_kernel(A):
    """L, V of a square A (LAPACK's geev through numpy, as PyTorch: unit-norm eigenvector columns), complex:
    computed in complex128 and rounded once to A's complex dtype. On the host for every device."""
    if not _numpy_here(A._backend):
        raise NotImplementedError("linalg.eig: needs numpy (LAPACK's geev); webtorch has no non-symmetric "
                                  "eigensolver in pure Python")
    import numpy as np  # an optional dependency (checked above)
    ct = A.dtype.to_complex()
    n, batch = A.shape[-1], tuple(A.shape[:-2])
    a = A._backend.to_numpy(_prims.contiguous(A)._strided()).reshape((_numel(batch), n, n))
    a = a.astype(np.complex128 if A.dtype.kind == "c" else np.float64)  # a real A: the real geev, as PyTorch
    L, V = np.linalg.eig(a) if a.size else (np.zeros(a.shape[:-1], a.dtype), a.copy())
    return (_result(L.astype(np.complex128).reshape(-1), batch + (n,), ct, A.device),
            _result(V.astype(np.complex128).reshape(-1), batch + (n, n), ct, A.device))


def solve_host(A, B):
    """X of A X = B (square A, complex too) on the host through numpy, in A's dtype, without a graph: for
    linalg.eig's gradient."""
    import numpy as np  # eig's gradient runs only where eig ran: numpy is here
    wide = np.complex128 if A.dtype.kind == "c" else np.float64
    a, b = (t._backend.to_numpy(_prims.contiguous(t)._strided()).astype(wide) for t in (A, B))
    X = np.linalg.solve(a, b)
    return _result(X.reshape(-1), X.shape, A.dtype, A.device)


LinalgEig = formula_node("LinalgEigBackward0", _eig_kernel, ("A",), outputs=("L", "V"))


def eig(A):
    return LinalgEig.apply(A) if recording(A) else _eig_kernel(A)


def _svd_kernel(A, full_matrices):
    return host("svd", [A], full_matrices)


Svd = formula_node("LinalgSvdBackward0", _svd_kernel, ("A", "full_matrices"), outputs=("U", "S", "Vh"))


def svd(A, full_matrices=True):
    return Svd.apply(A, full_matrices) if recording(A) else _svd_kernel(A, full_matrices)
