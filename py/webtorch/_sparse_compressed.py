"""Sparse compressed tensors: torch.sparse_csr / sparse_csc / sparse_bsr / sparse_bsc (2-D, no batch dims).

A compressed tensor keeps its specified entries as SparseTensor does, as int64 (row, column) pairs
(`_sp_indices`, (2, nnz): element coordinates for CSR/CSC, block coordinates for BSR/BSC) and values
(nnz, *dense) or (nnz, bh, bw, *dense), in the layout's order: row-major for CSR/BSR, column-major for
CSC/BSC. crow_indices/ccol_indices are computed from them (an index_add and a cumsum), so every op
lowers to dense webtorch ops on every device, and autograd reaches the values.
"""
import warnings

from . import _dtype
from ._layout import sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr, strided
from ._tensor import Size, Tensor
from .autograd import grad_mode
from .ops._common import composite_node
from .ops._creation import tensor as _tensor, zeros as _zeros
from .ops.reduction import argsort
from .ops.shape import cat
from .sparse import SparseTensor, _add, _mm, _unsupported, to_sparse

int64 = _dtype.int64
_LAYOUT_NAME = {strided: "Strided", sparse_coo: "Sparse", sparse_csr: "SparseCsr", sparse_csc: "SparseCsc",
                sparse_bsr: "SparseBsr", sparse_bsc: "SparseBsc"}
_ROW_MAJOR = (sparse_csr, sparse_bsr)
_BLOCKED = (sparse_bsr, sparse_bsc)
_NAMES = {sparse_csr: ("crow_indices", "col_indices"), sparse_bsr: ("crow_indices", "col_indices"),
          sparse_csc: ("ccol_indices", "row_indices"), sparse_bsc: ("ccol_indices", "row_indices")}


def _layout_error(name, what, t):
    return RuntimeError(f"{name} expected {what} layout but got {_LAYOUT_NAME[t.layout]}")


def _compress(idx, n, dtype):
    """The compressed form of sorted int64 indices idx in [0, n): (n + 1,) running counts."""
    counts = _zeros(n + 1, dtype=int64, device=idx.device).index_add(0, idx + 1, idx.new_ones(idx.shape))
    return counts.cumsum(0).to(dtype)


class SparseCompressedTensor(SparseTensor):
    """A 2-D sparse compressed tensor (see the module docstring); one subclass per layout."""
    is_sparse = False
    _idx_dtype = int64

    @property
    def layout(self):
        return self._layout

    @property
    def is_sparse_csr(self):
        return self._layout is sparse_csr

    def _blocksize(self):
        return tuple(self._sp_values.shape[1:3]) if self._layout in _BLOCKED else (1, 1)

    def _grid(self):
        bh, bw = self._blocksize()
        return self._sp_size[0] // bh, self._sp_size[1] // bw

    def dense_dim(self):
        return self._sp_values.dim() - (3 if self._layout in _BLOCKED else 1)

    def _major(self):
        """(the compressed dimension's indices, its length in blocks)."""
        row = self._layout in _ROW_MAJOR
        return self._sp_indices[0 if row else 1], self._grid()[0 if row else 1]

    def _compressed(self, name):
        if self._layout not in (_ROW_MAJOR if name.startswith("crow") else (sparse_csc, sparse_bsc)):
            raise _layout_error(name, f"sparse {'row' if name.startswith('crow') else 'column'} compressed tensor",
                                self)
        idx, n = self._major()
        return _compress(idx, n, self._idx_dtype)

    def _plain(self, name):
        if self._layout not in (_ROW_MAJOR if name.startswith("col") else (sparse_csc, sparse_bsc)):
            raise _layout_error(name, f"sparse {'row' if name.startswith('col') else 'column'} compressed tensor",
                                self)
        return self._sp_indices[1 if self._layout in _ROW_MAJOR else 0].to(self._idx_dtype)

    def crow_indices(self):
        return self._compressed("crow_indices")

    def ccol_indices(self):
        return self._compressed("ccol_indices")

    def col_indices(self):
        return self._plain("col_indices")

    def row_indices(self):
        return self._plain("row_indices")

    def values(self):
        return self._sp_values

    def indices(self):
        raise _layout_error("indices", "sparse coordinate tensor", self)

    def is_coalesced(self):
        raise _layout_error("is_coalesced", "sparse coordinate tensor", self)

    def coalesce(self):
        raise _layout_error("coalesce", "sparse coordinate tensor", self)

    @property
    def grad(self):
        g = self._sp_values.grad if self._sp_leaf else None
        return None if g is None else self._like(self._sp_indices, g)

    def _like(self, indices, values, size=None, cls=None):
        t = (cls or type(self))._new(indices, values, self._sp_size if size is None else size, coalesced=True)
        t._idx_dtype = self._idx_dtype
        return t

    def detach(self):
        return self._like(self._sp_indices, self._sp_values.detach())

    def to(self, *args, **kwargs):
        v = self._sp_values.to(*args, **kwargs)
        return self._like(self._sp_indices.to(v.device), v)

    # ---- conversions ---------------------------------------------------------------------
    def to_dense(self, dtype=None, *, masked_grad=None):
        if self._layout not in _BLOCKED:
            return super().to_dense(dtype)
        grid, v = self._grid(), self._sp_values
        blocks = SparseTensor._new(self._sp_indices, v, grid + tuple(v.shape[1:])).to_dense(dtype)
        dense = tuple(range(4, blocks.dim()))
        return blocks.permute((0, 2, 1, 3) + dense).reshape(tuple(self._sp_size))

    def to_sparse(self, sparse_dim=None):
        if self._layout in _BLOCKED:
            return self.to_dense().to_sparse(sparse_dim)
        if sparse_dim is not None and sparse_dim != 2:
            raise _unsupported(f"to_sparse({sparse_dim}) of a {self._layout} tensor")
        return SparseTensor._new(self._sp_indices, self._sp_values, self._sp_size,
                                 coalesced=self._layout is sparse_csr)

    def t(self):
        to = {sparse_csr: sparse_csc, sparse_csc: sparse_csr, sparse_bsr: sparse_bsc, sparse_bsc: sparse_bsr}
        v = self._sp_values.transpose(1, 2) if self._layout in _BLOCKED else self._sp_values
        size = (self._sp_size[1], self._sp_size[0]) + tuple(self._sp_size[2:])
        return self._like(self._sp_indices.flip(0), v, size, _CLASSES[to[self._layout]])

    def _repr_parts(self):
        compressed, plain = _NAMES[self._layout]
        return [(f"{compressed}=tensor(", self._compressed(compressed)), (f"{plain}=tensor(", self._plain(plain)),
                ("values=tensor(", self._sp_values)]

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", str(func))
        kwargs = kwargs or {}
        if name in ("add", "sub") and all(isinstance(a, SparseCompressedTensor) for a in args[:2]):
            a, b = args[:2]
            if a.layout is not b.layout:
                raise _unsupported(f"{name} of {a.layout} and {b.layout} tensors")
            return _convert(_add(a.to_sparse(), b.to_sparse(), alpha=kwargs.get("alpha", 1) * (-1 if name == "sub"
                                                                                              else 1)), a.layout)
        if name in ("mm", "spmm", "matmul", "addmm") or any(isinstance(a, SparseCompressedTensor) and
                                                             a.layout in _BLOCKED for a in args):
            if name not in ("mm", "spmm", "matmul", "mul", "div", "true_divide", "divide") or \
                    name in ("mul", "div", "true_divide", "divide") and isinstance(args[1], Tensor) and args[1].dim():
                raise _unsupported(f"{name} of a {cls._layout} tensor")
            if cls._layout is sparse_bsc and name != "mul":  # as PyTorch's cpu kernels
                raise RuntimeError("addmm: computation on CPU is not implemented for Strided + SparseBsc @ Strided")
            if name not in ("mul", "div", "true_divide", "divide"):
                args = [a.to_sparse() if isinstance(a, SparseCompressedTensor) else a for a in args]
        return super().__torch_function__(func, types, args, kwargs)


class SparseCsrTensor(SparseCompressedTensor):
    _layout = sparse_csr


class SparseCscTensor(SparseCompressedTensor):
    _layout = sparse_csc


class SparseBsrTensor(SparseCompressedTensor):
    _layout = sparse_bsr


class SparseBscTensor(SparseCompressedTensor):
    _layout = sparse_bsc


_CLASSES = {c._layout: c for c in (SparseCsrTensor, SparseCscTensor, SparseBsrTensor, SparseBscTensor)}


# ---- construction ----------------------------------------------------------------------------
def _check_invariants(layout, compressed, plain, nnz, n_major, n_minor):
    """PyTorch's check_invariants messages (PyTorch checks only on request; webtorch always: a tensor that breaks
    them would read wrong elements)."""
    cname, pname = _NAMES[layout]
    if len(plain) != nnz:
        raise RuntimeError(f"{pname}.shape[-1] must be equal to nnz (={nnz}) as defined by values.shape[0], but got "
                           f"{len(plain)}")
    if len(compressed) != n_major + 1:
        what = "rows" if layout in _ROW_MAJOR else "columns"
        raise RuntimeError(f"{cname}.shape[-1] must be equal to the number of {what} + 1 (={n_major + 1}), but got "
                           f"{len(compressed)}")
    if compressed[0] != 0:
        raise RuntimeError(f"`{cname}[..., 0] == 0` is not satisfied.")
    if compressed[-1] != nnz:
        raise RuntimeError(f"`{cname}[..., -1] == nnz` is not satisfied.")
    if any(not 0 <= b - a <= n_minor for a, b in zip(compressed, compressed[1:])):
        raise RuntimeError(f"`0 <= {cname}[..., 1:] - {cname}[..., :-1] <= {'ncols' if cname[0] == 'c' else 'nrows'}`"
                           " is not satisfied.")
    minor = "ncols" if layout in _ROW_MAJOR else "nrows"
    if any(not 0 <= p < n_minor for p in plain):
        raise RuntimeError(f"`0 <= {pname} < {minor}` is not satisfied.")
    for a, b in zip(compressed, compressed[1:]):
        seg = plain[a:b]
        if any(x >= y for x, y in zip(seg, seg[1:])):
            raise RuntimeError(f"`{pname}[..., {cname}[..., i - 1]:{cname}[..., i]] for all i = 1, ..., "
                               f"{'nrows' if layout in _ROW_MAJOR else 'ncols'} are sorted and distinct along the "
                               "last dimension values` is not satisfied.")


def _index_tensor(x, device):
    t = x if isinstance(x, Tensor) else _tensor(x, dtype=int64)
    if t.dtype not in (int64, _dtype.int32):
        raise RuntimeError(f"compressed_indices and plain_indices expected to be int32 or int64, but got {t.dtype}")
    if t.dim() != 1:
        raise NotImplementedError("webtorch: batched sparse compressed tensors (indices of more than 1 dimension)")
    return t.to(device)


def sparse_compressed_tensor(compressed_indices, plain_indices, values, size=None, *, dtype=None, layout=None,
                             device=None, pin_memory=False, requires_grad=False, check_invariants=None):
    """torch.sparse_compressed_tensor: a CSR/CSC/BSR/BSC tensor of 2 sparse dims from its compressed form."""
    if layout not in _CLASSES:
        got = "none" if layout is None else _LAYOUT_NAME[layout]
        raise RuntimeError(f"sparse_compressed_tensor expected sparse compressed tensor layout but got {got}")
    if not isinstance(values, Tensor):
        values = _tensor(values, dtype=dtype)
    values = values.to(device=device if device is not None else values.device, dtype=dtype or values.dtype)
    ci, pi = _index_tensor(compressed_indices, values.device), _index_tensor(plain_indices, values.device)
    if ci.dtype is not pi.dtype:
        raise RuntimeError(f"compressed_indices and plain_indices must have the same dtype, bot got {ci.dtype} and "
                           f"{pi.dtype}")
    bh, bw = tuple(values.shape[1:3]) if layout in _BLOCKED else (1, 1)
    comp, plain = ci.tolist(), pi.tolist()
    row = layout in _ROW_MAJOR
    if size is None:
        minor = (max(plain) + 1) if plain else 0
        grid = (len(comp) - 1, minor) if row else (minor, len(comp) - 1)
        size = (grid[0] * bh, grid[1] * bw) + tuple(values.shape[3 if layout in _BLOCKED else 1:])
    size = tuple(size)
    if len(size) < 2:
        raise RuntimeError(f"{layout}: expected a size of at least 2 dimensions, got {list(size)}")
    grid = (size[0] // bh, size[1] // bw)
    _check_invariants(layout, comp, plain, values.shape[0] if values.dim() else 0, grid[0 if row else 1],
                      grid[1 if row else 0])
    major = [k for k, (a, b) in enumerate(zip(comp, comp[1:])) for _ in range(b - a)]
    idx = _tensor([major, plain] if row else [plain, major], dtype=int64, device=values.device).reshape(2, len(plain))
    if requires_grad:
        values = values.detach().requires_grad_()
    elif values.requires_grad and grad_mode.is_grad_enabled():
        values = _SparseCompressed.call(values)
    t = _CLASSES[layout]._new(idx, values, Size(size), coalesced=True, leaf=requires_grad)
    t._idx_dtype = ci.dtype
    return t


_SparseCompressed = composite_node("SparseCompressedTensorBackward0", lambda v: v.view(v.shape))


def _layout_constructor(layout, doc):
    def construct(compressed_indices, plain_indices, values, size=None, *, dtype=None, device=None,
                  pin_memory=False, requires_grad=False, check_invariants=None):
        return sparse_compressed_tensor(compressed_indices, plain_indices, values, size, dtype=dtype, layout=layout,
                                        device=device, requires_grad=requires_grad)
    construct.__name__ = construct.__qualname__ = f"sparse_{layout.name[7:]}_tensor"
    construct.__doc__ = doc
    return construct


sparse_csr_tensor = _layout_constructor(sparse_csr, "torch.sparse_csr_tensor(crow_indices, col_indices, values, size)")
sparse_csc_tensor = _layout_constructor(sparse_csc, "torch.sparse_csc_tensor(ccol_indices, row_indices, values, size)")
sparse_bsr_tensor = _layout_constructor(sparse_bsr, "torch.sparse_bsr_tensor(crow_indices, col_indices, values, size)")
sparse_bsc_tensor = _layout_constructor(sparse_bsc, "torch.sparse_bsc_tensor(ccol_indices, row_indices, values, size)")


# ---- conversions -----------------------------------------------------------------------------------
def _from_coo(s, layout):
    """A COO tensor of 2 sparse dims (entries, or blocks with (bh, bw) leading dense dims) in a compressed layout."""
    s = s.coalesce()
    idx, v = s._sp_indices, s._sp_values
    if layout not in _ROW_MAJOR and idx.shape[1]:
        order = argsort(idx[1] * s.shape[0] + idx[0])
        idx, v = idx.index_select(1, order), v.index_select(0, order)
    return _CLASSES[layout]._new(idx, v, s.shape, coalesced=True)


def _convert(t, layout, blocksize=None, dense_dim=None):
    out = _convert_impl(t, layout, blocksize, dense_dim)
    if not isinstance(t, SparseTensor) and out._sp_values.requires_grad and grad_mode.is_grad_enabled():
        out._sp_values = _TO_NODES[layout].call(out._sp_values)  # PyTorch's node: ToSparseCsrBackward0, ...
    return out


_TO_NODES = {lo: composite_node(f"ToSparse{lo.name[7:].capitalize()}Backward0", lambda v: v.view(v.shape))
             for lo in _CLASSES}


def _convert_impl(t, layout, blocksize, dense_dim):
    name = f"to_sparse_{layout.name[7:]}"
    if isinstance(t, SparseCompressedTensor):
        if t.layout is layout and blocksize is None:
            return t
        if t.layout in _BLOCKED and layout not in _BLOCKED:
            raise RuntimeError(f"sparse_compressed_to_sparse_{layout.name[7:]}: expected SparseCsr or SparseCsc "
                               f"layout but got {_LAYOUT_NAME[t.layout]}")
        t = t.to_sparse() if layout not in _BLOCKED else t.to_dense()
    if isinstance(t, SparseTensor) and layout in _BLOCKED:
        t = t.to_dense()
    if isinstance(t, SparseTensor):
        if t.sparse_dim() != 2:
            raise _unsupported(f"{name} of a COO tensor of {t.sparse_dim()} sparse dims")
        return _from_coo(t, layout)
    dd = dense_dim or 0
    if t.dim() - dd != 2:
        raise NotImplementedError(f"webtorch: {name} of a {t.dim()}-D tensor with dense_dim={dense_dim} (batched "
                                  "sparse compressed tensors)")
    if layout not in _BLOCKED:
        return _from_coo(to_sparse(t, 2), layout)
    bh, bw = (blocksize, blocksize) if isinstance(blocksize, int) else tuple(blocksize)
    if t.shape[0] % bh or t.shape[1] % bw:
        raise RuntimeError(f"dense_to_sparse_{layout.name[7:]}: tensor sparse size ({t.shape[0]},{t.shape[1]}) must "
                           f"be divisible by given blocksize ({bh},{bw})")
    dense = tuple(t.shape[2:])
    blocks = t.reshape((t.shape[0] // bh, bh, t.shape[1] // bw, bw) + dense)
    blocks = blocks.permute((0, 2, 1, 3) + tuple(range(4, 4 + len(dense))))
    out = _from_coo(to_sparse(blocks, 2), layout)
    out._sp_size = Size(t.shape)
    return out


def _warn_beta():
    """PyTorch's warning on the first CSR tensor of the process."""
    if not _beta_warned:
        _beta_warned.append(True)
        warnings.warn("Sparse CSR tensor support is in beta state. If you miss a functionality in the sparse tensor "
                      "support, please submit a feature request to https://github.com/pytorch/pytorch/issues.",
                      stacklevel=3)


_beta_warned = []


def to_sparse_csr(self, dense_dim=None):
    """Tensor.to_sparse_csr(): a 2-D dense, COO or CSC tensor in CSR layout."""
    _warn_beta()
    return _convert(self, sparse_csr, dense_dim=dense_dim)


def to_sparse_csc(self, dense_dim=None):
    return _convert(self, sparse_csc, dense_dim=dense_dim)


def to_sparse_bsr(self, blocksize, dense_dim=None):
    return _convert(self, sparse_bsr, blocksize, dense_dim)


def to_sparse_bsc(self, blocksize, dense_dim=None):
    return _convert(self, sparse_bsc, blocksize, dense_dim)


def to_sparse_coo(self):
    return self.to_sparse()



# ---- the sparse Tensor methods of every layout (a dense tensor's: PyTorch's errors) ------------------------------
def _needs(name, what):
    def method(self, *args, **kwargs):
        raise _layout_error(name, what, self)
    method.__name__ = name
    return method


def _not_sparse(*args):
    raise RuntimeError("self.is_sparse() INTERNAL ASSERT FAILED: _internal_get_SparseTensorImpl: not a sparse tensor")


def sparse_dim(self):
    return 0


def dense_dim(self):
    return self.dim()


def sparse_mask(self, mask):
    """The elements of self (dense) at mask's specified entries, in mask's sparse layout."""
    if not isinstance(mask, SparseTensor):
        raise RuntimeError(f"sparse_mask expects mask to be sparse, got {_LAYOUT_NAME[mask.layout]}")
    if tuple(self.shape) != tuple(mask.shape):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size {list(self.shape)} but "
                           f"mask has size {list(mask.shape)}")
    if isinstance(mask, SparseCompressedTensor):
        if mask.layout in _BLOCKED:
            raise _unsupported(f"sparse_mask with a {mask.layout} mask")
        values = self[tuple(mask._sp_indices)]
        return mask._like(mask._sp_indices, values)
    return SparseTensor._new(mask._sp_indices, self[tuple(mask._sp_indices)], mask.shape, coalesced=mask._coalesced)


def _hspmm_parts(mat1, mat2, name):
    """(the rows of sparse mat1 that hold entries (int64, sorted), the dense rows of mat1 @ mat2 there)."""
    if not isinstance(mat1, SparseTensor) or isinstance(mat1, SparseCompressedTensor):
        if name != "hspmm":  # smm and sspaddmm run PyTorch's sspaddmm kernel
            raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
        raise NotImplementedError(f"Could not run 'aten::{name}' with arguments from the "
                                  f"'{'CPU' if mat1.device.type == 'cpu' else mat1.device.type.upper()}' backend.")
    m = mat1.detach().coalesce()
    rows = m._sp_indices[0].unique() if m._nnz() else m._sp_indices[0]
    return rows, _mm(m, mat2.detach()).index_select(0, rows)


def hspmm(mat1, mat2):
    """torch.hspmm: sparse @ dense as a hybrid COO tensor: one sparse dim (the rows of mat1 with entries) and their
    dense rows of the product (not differentiable in PyTorch)."""
    rows, values = _hspmm_parts(mat1, mat2, "hspmm")
    return SparseTensor._new(rows.reshape(1, -1), values, (mat1.shape[0], mat2.shape[1]))


def _smm_parts(mat1, mat2, name):
    rows, values = _hspmm_parts(mat1, mat2, name)
    k = mat2.shape[1]
    idx = cat([rows.repeat_interleave(k).reshape(1, -1), rows.new_ones(rows.shape[0], k).cumsum(1).sub(1)
               .reshape(1, -1)], 0)
    return idx, values.reshape(-1)


def smm(input, mat2):
    """torch.smm: sparse @ dense as a COO tensor (every column of each row of input that holds entries)."""
    idx, values = _smm_parts(input, mat2, "smm")
    return SparseTensor._new(idx, values, (input.shape[0], mat2.shape[1]))


def sspaddmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """torch.sspaddmm: beta * input + alpha * (mat1 @ mat2), sparse input and mat1, a COO result holding input's
    entries then the product's (not coalesced)."""
    if not isinstance(input, SparseTensor):
        _not_sparse()
    for d, n in enumerate((mat1.shape[0], mat2.shape[1])):
        if input.shape[d] != n:
            raise RuntimeError(f"sspaddmm: Argument #1: Expected dim {d} size {n}, got {input.shape[d]}")
    idx, values = _smm_parts(mat1, mat2, "sspaddmm")
    return SparseTensor._new(cat([input._sp_indices, idx], 1), cat([input._sp_values * beta, values * alpha]),
                             input.shape)


def saddmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    return sspaddmm(input, mat1, mat2, beta=beta, alpha=alpha)


def dsmm(input, mat2):
    """torch.dsmm: sparse (or dense) @ dense -> dense."""
    return _mm(input, mat2)


def _copy_of(name):
    def copy(input, *, out=None):
        if type(input) is SparseTensor and name in ("indices", "values"):
            raise NotImplementedError(f"Could not run 'aten::{name}_copy' with arguments from the 'SparseCPU' backend.")
        return getattr(input, name)().clone()
    copy.__name__ = f"{name}_copy"
    return copy


COPIES = {f"{n}_copy": _copy_of(n) for n in ("crow_indices", "col_indices", "ccol_indices", "row_indices",
                                               "indices", "values")}
FUNCTIONS = {"sparse_compressed_tensor": sparse_compressed_tensor, "sparse_csr_tensor": sparse_csr_tensor,
             "sparse_csc_tensor": sparse_csc_tensor, "sparse_bsr_tensor": sparse_bsr_tensor,
             "sparse_bsc_tensor": sparse_bsc_tensor, "smm": smm, "hsmm": hspmm, "hspmm": hspmm, "dsmm": dsmm,
             "saddmm": saddmm, "sspaddmm": sspaddmm,
             "resize_as_sparse_": lambda input, the_template: input.resize_as_sparse_(the_template), **COPIES}
METHODS = {"to_sparse_csr": to_sparse_csr, "to_sparse_csc": to_sparse_csc, "to_sparse_bsr": to_sparse_bsr,
           "to_sparse_bsc": to_sparse_bsc, "to_sparse_coo": to_sparse_coo, "sparse_dim": sparse_dim,
           "dense_dim": dense_dim, "sparse_mask": sparse_mask, "smm": smm, "sspaddmm": sspaddmm,
           "crow_indices": _needs("crow_indices", "sparse row compressed tensor"),
           "col_indices": _needs("col_indices", "sparse row compressed tensor"),
           "ccol_indices": _needs("ccol_indices", "sparse column compressed tensor"),
           "row_indices": _needs("row_indices", "sparse column compressed tensor"),
           "values": _needs("values", "sparse tensor"), "indices": _needs("indices", "sparse coordinate tensor"),
           "is_coalesced": _needs("is_coalesced", "sparse coordinate tensor"),
           "coalesce": _needs("coalesce", "sparse coordinate tensor"),
           "sparse_resize_": _needs("sparse_resize_", "sparse coordinate tensor"),
           "sparse_resize_and_clear_": _needs("sparse_resize_and_clear_", "sparse coordinate tensor"),
           "resize_as_sparse_": lambda self, src: _not_sparse()}
