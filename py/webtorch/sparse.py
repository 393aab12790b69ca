"""torch.sparse: sparse COO tensors, kept small.

A sparse COO tensor is int64 `indices` (sparse_dim, nnz) and `values` (nnz, *dense_shape) of a
`size`. It is a Tensor subclass with no storage of its own: each op it supports lowers to dense
webtorch ops on its indices and values, so every device runs it and autograd differentiates it
(w.r.t. the values and the dense operand); any other op raises NotImplementedError naming it.

    sparse.mm(S, D) = zeros(n, k).index_add(0, rows, D.index_select(0, cols) * values[:, None])
    S.to_dense()    = zeros(numel).index_add(0, flat index, values).reshape(size)
    S.coalesce()    = sorted unique indices, duplicate values summed (index_add)
"""
import math

from . import _dtype
from ._geometry import contiguous_strides
from ._layout import sparse_coo, sparse_csr
from ._tensor import Size, Tensor
from ._tensor_str import PRINT_OPTS, tensor_repr
from .autograd import grad_mode
from .ops._common import composite_node, name_of
from .ops._creation import tensor as _tensor, zeros as _zeros
from .ops.shape import cat

__all__ = ["mm", "sum", "addmm", "softmax", "log_softmax", "check_sparse_tensor_invariants", "as_sparse_gradcheck"]

int64 = _dtype.int64


def _unsupported(name):
    return NotImplementedError(f"webtorch: '{name}' is not supported for sparse COO tensors "
                               "(layout=torch.sparse_coo); call .to_dense() first")


class SparseTensor(Tensor):
    """A sparse COO tensor (see the module docstring). Build one with torch.sparse_coo_tensor or
    Tensor.to_sparse()."""
    is_sparse = True

    @classmethod
    def _new(cls, indices, values, size, coalesced=False, leaf=False):
        t = object.__new__(cls)
        t._sp_indices, t._sp_values, t._sp_size = indices, values, Size(size)
        t._coalesced, t._sp_leaf = coalesced, leaf  # leaf: values is this tensor's own leaf (requires_grad=True)
        return t

    @property
    def _storage(self):
        raise _unsupported("this operation")

    # ---- metadata ------------------------------------------------------------------------
    @property
    def shape(self):
        return self._sp_size

    def size(self, dim=None):
        return self._sp_size if dim is None else self._sp_size[dim]

    @property
    def dtype(self):
        return self._sp_values.dtype

    @property
    def device(self):
        return self._sp_values.device

    @property
    def layout(self):
        return sparse_coo

    def dim(self):
        return len(self._sp_size)

    @property
    def ndim(self):
        return len(self._sp_size)

    def numel(self):
        return self._sp_size.numel()

    def _nnz(self):
        return self._sp_indices.shape[1]

    def sparse_dim(self):
        return self._sp_indices.shape[0]

    def dense_dim(self):
        return self._sp_values.dim() - 1

    def is_coalesced(self):
        return self._coalesced

    def _indices(self):
        return self._sp_indices

    def _values(self):
        return self._sp_values

    def indices(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._sp_indices

    def values(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._sp_values

    # ---- autograd (carried by the values) ---------------------------------------------------
    @property
    def requires_grad(self):
        return self._sp_values.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        if not self.is_leaf:
            raise RuntimeError("you can only change requires_grad flags of leaf variables.")
        if requires_grad and not self._sp_leaf:
            self._sp_values, self._sp_leaf = self._sp_values.detach(), True
        self._sp_values.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self):
        return None if self._sp_leaf else self._sp_values.grad_fn

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def grad(self):
        """A leaf's gradient as PyTorch gives it: sparse, on the coalesced indices."""
        g = self._sp_values.grad if self._sp_leaf else None
        if g is None:
            return None
        idx, inv = _unique_indices(self)
        return SparseTensor._new(idx, g.new_zeros((idx.shape[1],) + tuple(g.shape[1:])).index_copy(0, inv, g),
                                 self._sp_size)  # PyTorch does not flag it coalesced

    def detach(self):
        return type(self)._new(self._sp_indices, self._sp_values.detach(), self._sp_size, self._coalesced)

    # ---- conversions ---------------------------------------------------------------------
    def to(self, *args, **kwargs):
        v = self._sp_values.to(*args, **kwargs)
        return type(self)._new(self._sp_indices.to(v.device), v, self._sp_size, self._coalesced)

    def cpu(self):
        return self.to("cpu")

    def webgpu(self):
        return self.to("webgpu")

    def to_dense(self, dtype=None, *, masked_grad=None):
        dense = tuple(self._sp_values.shape[1:])
        flat = self._sp_values.new_zeros((math.prod(self._sp_size[:self.sparse_dim()]),) + dense)
        if self._nnz():
            flat = flat.index_add(0, _flat_index(self), self._sp_values)
        out = flat.reshape(tuple(self._sp_size))
        return out if dtype is None else out.to(dtype)

    def to_sparse(self, sparse_dim=None):
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise _unsupported("to_sparse(sparse_dim) of a sparse tensor")
        return self

    def coalesce(self):
        if self._coalesced:
            return self
        idx, inv = _unique_indices(self)
        return SparseTensor._new(idx, _Coalesce.call(self._sp_values, inv, idx.shape[1]), self._sp_size,
                                 coalesced=True)

    def sparse_resize_(self, size, sparse_dim, dense_dim):
        """The size changed in place: sparse dims may grow (or shrink while there are no entries), dense dims stay."""
        size = tuple(size)
        if sparse_dim != self.sparse_dim() or dense_dim != self.dense_dim():
            raise _unsupported("sparse_resize_ to other numbers of sparse and dense dims")
        if tuple(size[sparse_dim:]) != tuple(self._sp_size[sparse_dim:]) and self._nnz():
            raise RuntimeError(f"resizing dense dimensions (from {list(self._sp_size[sparse_dim:])} to "
                               f"{list(size[sparse_dim:])}) on a non-empty sparse tensor is not supported.")
        if any(n < o for n, o in zip(size[:sparse_dim], self._sp_size)) and self._nnz():
            raise RuntimeError(f"shrinking the size of sparse dimensions (from {list(self._sp_size[:sparse_dim])} to "
                               f"{list(size[:sparse_dim])}) on a non-empty sparse tensor is not supported.")
        self._sp_size = Size(size)
        if self._nnz() == 0:
            self._sp_values = self._sp_values.new_zeros((0,) + size[sparse_dim:])
        return self

    def sparse_resize_and_clear_(self, size, sparse_dim, dense_dim):
        """Resized to size (sparse_dim + dense_dim dims) with no entries."""
        size = tuple(size)
        self._sp_indices = self._sp_indices.new_zeros((sparse_dim, 0))
        self._sp_values = self._sp_values.detach().new_zeros((0,) + size[sparse_dim:])
        self._sp_size, self._coalesced, self._sp_leaf = Size(size), True, self.requires_grad
        return self

    def resize_as_sparse_(self, src):
        return self.sparse_resize_(src.shape, src.sparse_dim(), src.dense_dim())

    def t(self):
        if self.sparse_dim() != 2 or self.dense_dim():
            raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but got "
                               f"{self.sparse_dim()} sparse and {self.dense_dim()} dense dimensions")
        i = self._sp_indices
        return SparseTensor._new(i.flip(0), self._sp_values, (self._sp_size[1], self._sp_size[0]))

    def __neg__(self):
        return SparseTensor._new(self._sp_indices, -self._sp_values, self._sp_size, self._coalesced)

    def _repr_parts(self):
        return [("indices=tensor(", self._sp_indices), ("values=tensor(", self._sp_values)]

    def __repr__(self, *, tensor_contents=None):
        s = "tensor(" + ",\n       ".join(tensor_repr(t.detach().cpu(), prefix, 7 + len(prefix), bare=True)
                                         for prefix, t in self._repr_parts())
        suffixes = [] if self.device.type == "cpu" else [f"device='{self.device}'"]
        suffixes += [f"size={tuple(self._sp_size)}", f"nnz={self._nnz()}"]
        if self.dtype is not _dtype.get_default_dtype():
            suffixes.append(f"dtype={self.dtype}")
        suffixes.append(f"layout={self.layout}")
        if self.grad_fn is not None:
            suffixes.append(f"grad_fn=<{type(self.grad_fn).__name__}>")
        elif self.requires_grad:
            suffixes.append("requires_grad=True")
        last, newline = len(s) - s.rfind("\n") + 1, self.is_sparse  # as PyTorch: COO's first suffix on a new line
        for suf in suffixes:
            if newline or last + len(suf) + 2 > PRINT_OPTS.linewidth:
                s += ",\n       " + suf
                last, newline = 7 + len(suf), False
            else:
                s += ", " + suf
                last += len(suf) + 2
        return s + ")"

    # ---- every other op --------------------------------------------------------------------
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", str(func))
        impl = _OPS.get(name)
        if impl is None:
            raise _unsupported(name)
        return impl(*args, **(kwargs or {}))


class check_sparse_tensor_invariants:
    """PyTorch's switch for checking sparse constructors' invariants (a flag, off by default; a
    context manager and a decorator). webtorch's sparse_coo_tensor checks its indices either way."""
    _enabled = [False]

    @staticmethod
    def is_enabled():
        return check_sparse_tensor_invariants._enabled[0]

    @staticmethod
    def enable():
        check_sparse_tensor_invariants._enabled[0] = True

    @staticmethod
    def disable():
        check_sparse_tensor_invariants._enabled[0] = False

    def __init__(self, enable=True):
        self.state, self.saved_state = enable, None

    def __enter__(self):
        if self.saved_state is not None:
            raise RuntimeError("This context manager instance is already activated. Use a different context manager "
                               "instance for context nesting.")
        self.saved_state = self.is_enabled()
        self._enabled[0] = self.state

    def __exit__(self, *exc):
        self._enabled[0], self.saved_state = self.saved_state, None

    def __call__(self, mth):
        def test_mth(*args, **kwargs):
            with type(self)(self.state):
                return mth(*args, **kwargs)
        return test_mth


def _flat_index(s):
    """int64 (nnz,) row-major position of each entry in the sparse dims."""
    idx = s._sp_indices
    out = None
    for d, pitch in enumerate(contiguous_strides(tuple(s._sp_size[:s.sparse_dim()]))):
        t = idx[d] * pitch
        out = t if out is None else out + t
    return out


def _sum_duplicates(v, inv, n):
    return v.new_zeros((n,) + tuple(v.shape[1:])).index_add(0, inv, v)


_Coalesce = composite_node("CoalesceBackward0", _sum_duplicates, no_edges=(1,))


def _unique_indices(s):
    """(coalesced indices (sparse_dim, n), int64 (nnz,) position of each entry among them): one host read."""
    cols = list(zip(*s._sp_indices.tolist())) if s._nnz() else []
    uniq = sorted(set(cols))
    pos = {c: k for k, c in enumerate(uniq)}
    dev = s._sp_indices.device
    idx = _tensor([list(r) for r in zip(*uniq)] if uniq else [[]] * s.sparse_dim(), dtype=int64, device=dev)
    return idx.reshape(s.sparse_dim(), len(uniq)), _tensor([pos[c] for c in cols], dtype=int64, device=dev)


# ---- construction ----------------------------------------------------------------------------
def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False, requires_grad=False,
                      check_invariants=None, is_coalesced=None):
    if not isinstance(values, Tensor):
        values = _tensor(values, dtype=dtype)
    if not isinstance(indices, Tensor):
        indices = _tensor(indices, dtype=int64)
    if indices.dtype is not int64:
        raise RuntimeError(f"indices must be an int64 tensor, but got {indices.dtype}")
    if indices.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if values.dim() == 0:
        raise RuntimeError("values must be at least 1-dimensional")  # PyTorch: a 1-element values is (nnz,)
    if indices.shape[1] != values.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {indices.shape[1]}, "
                           f"nnz from values: {values.shape[0]}")
    values = values.to(device=device if device is not None else values.device, dtype=dtype or values.dtype)
    indices = indices.to(values.device)
    sd = indices.shape[0]
    if indices.shape[1]:
        lo, hi = indices.amin(1).tolist(), indices.amax(1).tolist()
    else:
        lo = hi = [-1] * sd
    size = tuple(h + 1 for h in hi) + tuple(values.shape[1:]) if size is None else _checked_size(size, hi, values)
    for d in range(sd):
        if lo[d] < 0 and indices.shape[1]:
            raise RuntimeError(f"found negative index {lo[d]} for dim {d}")
    if requires_grad:
        values = values.detach().requires_grad_()
    elif values.requires_grad and grad_mode.is_grad_enabled():
        values = _SparseCoo.call(values)
    return SparseTensor._new(indices, values, size, coalesced=bool(is_coalesced), leaf=requires_grad)



def _checked_size(size, hi, values):
    """sparse_coo_tensor's size: sparse dims that hold the largest indices `hi`, then values' dense dims."""
    size, sd = tuple(size), len(hi)
    if len(size) != sd + values.dim() - 1:
        raise RuntimeError(f"number of dimensions must be sparse_dim ({sd}) + dense_dim ({values.dim() - 1}), "
                           f"but got {len(size)}")
    for d in range(sd):
        if hi[d] >= size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found "
                               f"index {hi[d]}")
    if tuple(values.shape[1:]) != size[sd:]:
        raise RuntimeError(f"values has incorrect size, expected {[values.shape[0]] + list(size[sd:])}, got "
                           f"{list(values.shape)}")
    return size

_SparseCoo = composite_node("SparseCooTensorWithDimsAndTensorsBackward0", lambda v: v.view(v.shape))


def to_sparse(t, sparse_dim=None):
    """Tensor.to_sparse(): the nonzero entries (rows of the first sparse_dim dims with any nonzero)."""
    sd = t.dim() if sparse_dim is None else sparse_dim
    if not 0 < sd <= t.dim():
        raise RuntimeError(f"sparse_dim must be in [1, {t.dim()}], but got {sd}")
    mask = t != 0
    if sd < t.dim():
        mask = mask.any(tuple(range(sd, t.dim())))
    idx = mask.nonzero().t()
    values = t[tuple(idx[d] for d in range(sd))]
    return SparseTensor._new(idx.contiguous(), values, t.shape, coalesced=True)


# ---- ops -------------------------------------------------------------------------------------
def _spmm_impl(values, dense, indices, n_rows, dense_left=False):
    """sparse @ dense, or dense @ sparse (dense_left) as (sparse^T @ dense^T)^T."""
    if dense_left:
        return _spmm_impl(values, dense.t(), indices.flip(0), n_rows).t()
    contrib = dense.index_select(0, indices[1]) * values.reshape((-1,) + (1,) * (dense.dim() - 1))
    out = _zeros((n_rows,) + tuple(dense.shape[1:]), dtype=contrib.dtype, device=dense.device)
    return out.index_add(0, indices[0], contrib)


_SparseAddmm = composite_node("SparseAddmmBackward0", _spmm_impl, no_edges=(2,))
_Mm = composite_node("MmBackward0", _spmm_impl, no_edges=(2,))  # torch.mm / @ / spmm name their node so


def mm(mat1, mat2, reduce="sum"):
    """torch.sparse.mm: sparse (n, m) @ dense (m, k) -> dense (n, k), or dense @ sparse."""
    if reduce != "sum":
        raise _unsupported(f"sparse.mm(reduce='{reduce}')")
    return _mm(mat1, mat2, _SparseAddmm)


def _mm(mat1, mat2, node=_Mm):
    a_sp, b_sp = isinstance(mat1, SparseTensor), isinstance(mat2, SparseTensor)
    if a_sp and b_sp:
        raise _unsupported("mm of two sparse tensors")
    if not (a_sp or b_sp):
        return mat1.mm(mat2)
    sp = mat1 if a_sp else mat2
    if sp.sparse_dim() != 2 or sp.dense_dim() or mat1.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError(f"mm: expected a 2-D sparse matrix and a 2-D dense matrix, but got sizes "
                           f"{list(mat1.shape)} and {list(mat2.shape)}")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(f"expected mat1 and mat2 to have the same dtype, but got: {mat1.dtype} != {mat2.dtype}")
    if mat1.device != mat2.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{mat1.device} and {mat2.device}!")
    if a_sp:
        return node.call(sp._sp_values, mat2, sp._sp_indices, sp.shape[0])
    return node.call(sp._sp_values, mat1, sp._sp_indices, sp.shape[1], True)


def _matmul(input, other, *, out=None):
    if out is not None:
        raise _unsupported("matmul(out=)")
    if isinstance(input, SparseTensor) and isinstance(other, Tensor) and not isinstance(other, SparseTensor) \
            and other.dim() == 1:
        return _mm(input, other.unsqueeze(1)).squeeze(1)
    return _mm(input, other)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """beta * mat + alpha * (mat1 @ mat2), mat1 sparse."""
    return mat * beta + mm(mat1, mat2) * alpha


def sampled_addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0, out=None):
    """beta * input + alpha * (mat1 @ mat2) at input's entries only (a sparse CSR result of input's pattern): each
    entry (i, j) is the dot product of mat1's row i and mat2's column j."""
    if input.layout is not sparse_csr:
        raise _unsupported("sampled_addmm of a non-CSR input")
    if out is not None:
        raise _unsupported("sampled_addmm(out=)")
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m.dim() != 2:
            raise RuntimeError(f"sampled_addmm: Expected {name} to be a matrix, got {m.dim()}-D tensor")
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError("sampled_addmm: Expected mat1 and mat2 to have the same dtype, but got "
                           f"{name_of(mat1.dtype)} and {name_of(mat2.dtype)}")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"sampled_addmm: mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x"
                           f"{mat1.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    rows, cols = input._sp_indices
    dots = (mat1.index_select(0, rows) * mat2.t().index_select(0, cols)).sum(-1)
    return input._like(input._sp_indices, input._sp_values * beta + dots * alpha)


def sum(input, dim=None, dtype=None):  # noqa: A001 - torch.sparse.sum
    """The sum over all dims (a dense 0-d tensor) or over `dim` (sparse while sparse dims remain)."""
    v = input._sp_values if dtype is None else input._sp_values.to(dtype)
    if dim is None:
        return v.sum()
    nd, sd = input.dim(), input.sparse_dim()
    dims = sorted({(d + nd) % nd if -nd <= d < nd else _bad_dim(d, nd)
                   for d in (dim if isinstance(dim, (list, tuple)) else (dim,))})
    dense = tuple(d - sd + 1 for d in dims if d >= sd)
    if dense:
        v = v.sum(dense)
    keep = [d for d in range(sd) if d not in dims]
    if not keep:
        return v.sum(0)
    size = [input.shape[d] for d in keep] + [input.shape[d] for d in range(sd, nd) if d not in dims]
    idx = input._sp_indices.index_select(0, _tensor(keep, dtype=int64, device=input.device))
    return SparseTensor._new(idx, v, size).coalesce()


def _bad_dim(d, nd):
    raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {d})")


def _mul(input, other):
    """sparse * scalar, and sparse * dense of the same size (the dense entries at the sparse ones)."""
    s, k = (input, other) if isinstance(input, SparseTensor) else (other, input)
    if isinstance(k, Tensor) and (isinstance(k, SparseTensor) or k.dim()):
        if isinstance(k, SparseTensor) or tuple(k.shape) != tuple(s.shape):
            raise _unsupported("mul of a sparse tensor by a sparse tensor or a dense one of another size")
        k = k[tuple(s._sp_indices[d] for d in range(s.sparse_dim()))]
    return type(s)._new(s._sp_indices, s._sp_values * k, s.shape, s._coalesced)


def _div(input, other, *, rounding_mode=None):
    if not isinstance(input, SparseTensor) or isinstance(other, Tensor) and other.dim():
        raise _unsupported("div by a sparse tensor or by a tensor")
    return type(input)._new(input._sp_indices, input._sp_values.div(other, rounding_mode=rounding_mode),
                            input.shape, input._coalesced)


def _add(input, other, *, alpha=1, out=None):
    """dense + sparse -> dense; sparse + sparse -> sparse (coalesced), as PyTorch; sparse + dense raises."""
    if out is not None:
        raise _unsupported("add(out=)")
    if not isinstance(other, SparseTensor):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    if not isinstance(input, SparseTensor):
        return input.add(_dense_of_same_size(input, other), alpha=alpha)
    if tuple(input.shape) != tuple(other.shape):
        raise RuntimeError(f"add: expected sizes of 'self' and 'other' to match, but {list(input.shape)} != "
                           f"{list(other.shape)}")
    values = other._sp_values if alpha == 1 else other._sp_values * alpha
    return SparseTensor._new(cat([input._sp_indices, other._sp_indices], 1), cat([input._sp_values, values]),
                             input.shape).coalesce()


def _dense_of_same_size(dense, sparse):
    if tuple(dense.shape) != tuple(sparse.shape):
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size "
                           f"{list(dense.shape)} while other has size {list(sparse.shape)} (FYI: dense-sparse "
                           "addition does not currently support broadcasting)")
    return sparse.to_dense()


def _sub(input, other, *, alpha=1, out=None):
    return _add(input, other, alpha=-alpha, out=out)


def _add_(input, other, *, alpha=1):
    """dense.add_(sparse) (and `dense += sparse`)."""
    if isinstance(input, SparseTensor) or not isinstance(other, SparseTensor):
        raise _unsupported("in-place add_ on a sparse tensor")
    return input.add_(_dense_of_same_size(input, other), alpha=alpha)


def _softmax(input, dim, dtype, log):
    """Softmax over the specified entries of each slice along dim (the others count as -inf), as
    torch.sparse.softmax: the result has input's indices."""
    s = input.coalesce()
    values = s._sp_values if dtype is None else s._sp_values.to(dtype)
    s = SparseTensor._new(s._sp_indices, values, s.shape, True)
    present = SparseTensor._new(s._sp_indices, values.detach().new_ones(values.shape), s.shape, True).to_dense()
    x = s.to_dense().masked_fill(present == 0, -math.inf)
    y = x.log_softmax(dim) if log else x.softmax(dim)
    return SparseTensor._new(s._sp_indices, y[tuple(s._sp_indices[d] for d in range(s.sparse_dim()))], s.shape, True)


def softmax(input, dim, *, dtype=None):
    """torch.sparse.softmax: softmax over the specified entries of each slice along dim."""
    return _softmax(input, dim, dtype, log=False)


def log_softmax(input, dim, *, dtype=None):
    """torch.sparse.log_softmax: log_softmax over the specified entries of each slice along dim."""
    return _softmax(input, dim, dtype, log=True)


def _red_sum(input, dim=None, keepdim=False, *, dtype=None):
    if keepdim:
        raise _unsupported("sum(keepdim=True)")
    return sum(input, dim, dtype)


def spmm(input, mat2):
    """torch.spmm: sparse @ dense."""
    return _mm(input, mat2)


_OPS = {"mm": _mm, "spmm": _mm, "matmul": _matmul, "mul": _mul, "sum": _red_sum, "add": _add, "sub": _sub,
        "add_": _add_, "div": _div, "divide": _div, "true_divide": _div}



def as_sparse_gradcheck(gradcheck):
    """gradcheck extended to sparse COO inputs and outputs: a sparse input is checked through its values (its
    indices fixed), a sparse output through its dense form; gradcheck itself sees strided tensors only."""
    def gradcheck_with_sparse_support(func, inputs, **kwargs):
        kwargs.pop("masked", None)
        inputs = tuple(inputs) if isinstance(inputs, (list, tuple)) else (inputs,)
        sparse = [isinstance(a, SparseTensor) and a.requires_grad for a in inputs]
        coalesced = [a.coalesce().detach() if s else a for a, s in zip(inputs, sparse)]

        def dense_func(*args):
            rebuilt = [sparse_coo_tensor(c._sp_indices, v, c.shape) if s else v
                       for c, v, s in zip(coalesced, args, sparse)]
            out = func(*rebuilt)
            outs = out if isinstance(out, (list, tuple)) else (out,)
            return tuple(o.to_dense() if isinstance(o, SparseTensor) else o for o in outs)

        flat = [c._sp_values.requires_grad_() if s else c for c, s in zip(coalesced, sparse)]
        return gradcheck(dense_func, tuple(flat), **kwargs)
    return gradcheck_with_sparse_support
