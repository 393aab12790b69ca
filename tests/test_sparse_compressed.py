"""Sparse compressed tensors (CSR, CSC, BSR, BSC) and the sparse Tensor methods against PyTorch, on every device:
construction (every constructor, int32 indices, inferred sizes, the invariant errors), conversions both ways and
between layouts, repr, the compressed and plain indices, values gradients through to_dense and mm, t(), add/mul,
torch.smm/hsmm/hspmm/dsmm/saddmm/sspaddmm, sparse_mask, sparse_resize_(_and_clear_), resize_as_sparse_, the *_copy
functions, and each layout method's error on the other layouts."""
import re

import numpy as np
import pytest
import torch

import webtorch as wt

pytestmark = [pytest.mark.filterwarnings("ignore:Sparse invariant checks"),
              pytest.mark.filterwarnings("ignore:Sparse CSR tensor support")]
D = np.array([[0, 1, 0, 2], [3, 0, 0, 0], [0, 0, 0, 4], [0, 5, 6, 0]], np.float32)
M = np.arange(8, dtype=np.float32).reshape(4, 2)
LAYOUTS = ("csr", "csc", "bsr", "bsc")


def _conv(T, x, lo):
    return getattr(x, f"to_sparse_{lo}")(*((2,) if lo[0] == "b" else ()))


def _same(w, t):
    """The same layout, size, nnz, index arrays and values."""
    assert w.layout is getattr(wt, str(t.layout)[6:]) and tuple(w.shape) == tuple(t.shape) and w._nnz() == t._nnz()
    if t.layout is torch.sparse_coo:
        assert w._indices().tolist() == t._indices().tolist() and w.is_coalesced() == t.is_coalesced()
        np.testing.assert_allclose(w._values().detach().cpu().numpy(), t._values().detach().numpy(), rtol=1e-6)
        return
    a, b = ("crow_indices", "col_indices") if t.layout in (torch.sparse_csr, torch.sparse_bsr) else \
        ("ccol_indices", "row_indices")
    for name in (a, b):
        assert getattr(w, name)().tolist() == getattr(t, name)().tolist()
        assert str(getattr(w, name)().dtype) == str(getattr(t, name)().dtype)
    np.testing.assert_allclose(w.values().detach().cpu().numpy(), t.values().detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("lo", LAYOUTS)
def test_conversions_and_repr(lo, device):
    t, w = _conv(torch, torch.tensor(D), lo), _conv(wt, wt.tensor(D, device=device), lo)
    _same(w, t)
    if device == "cpu":
        assert repr(w) == repr(t)
    assert w.to_dense().tolist() == D.tolist() and not w.is_sparse and w.is_sparse_csr == (lo == "csr")
    assert (w.sparse_dim(), w.dense_dim()) == (t.sparse_dim(), t.dense_dim())
    _same(w.t(), t.t())
    np.testing.assert_allclose((w * 2).to_dense().cpu().numpy(), (t * 2).to_dense().numpy())
    if lo == "bsc":
        with pytest.raises(RuntimeError, match=r"computation on CPU is not implemented for Strided \+ SparseBsc"):
            w @ wt.tensor(M, device=device)
    else:
        np.testing.assert_allclose((w @ wt.tensor(M, device=device)).cpu().numpy(), (t @ torch.tensor(M)).numpy())
    if lo[0] == "c":
        _same(w.to_sparse_coo(), t.to_sparse_coo())
        _same(w + w, t + t)
        other = "csc" if lo == "csr" else "csr"
        _same(_conv(wt, w, other), _conv(torch, t, other))
        _same(w.to_sparse_bsr(2), t.to_sparse_bsr(2))
        _same(wt.tensor(D, device=device).to_sparse().to_sparse_csc(), torch.tensor(D).to_sparse().to_sparse_csc())
    else:
        with pytest.raises(RuntimeError, match="sparse_compressed_to_sparse_csr: expected SparseCsr or SparseCsc "
                                               f"layout but got Sparse{lo.capitalize()}"):
            w.to_sparse_csr()


def test_hybrid_and_errors(device):
    x = np.ones((2, 3, 2), np.float32)
    x[0, 1] = 0
    _same(wt.tensor(x, device=device).to_sparse_csr(dense_dim=1), torch.tensor(x).to_sparse_csr(dense_dim=1))
    _same(wt.tensor(x, device=device).to_sparse_csc(dense_dim=1), torch.tensor(x).to_sparse_csc(dense_dim=1))
    assert wt.tensor(x, device=device).to_sparse_csr(dense_dim=1).to_dense().tolist() == x.tolist()
    with pytest.raises(NotImplementedError, match="batched sparse compressed"):
        wt.tensor(x).to_sparse_csr()
    with pytest.raises(RuntimeError, match=r"tensor sparse size \(4,4\) must be divisible by given blocksize \(3,3\)"):
        wt.tensor(D).to_sparse_bsr(3)
    errors = (("csr", "ccol_indices", "ccol_indices expected sparse column compressed tensor layout but got SparseCsr"),
              ("csc", "crow_indices", "crow_indices expected sparse row compressed tensor layout but got SparseCsc"),
              ("dense", "col_indices", "col_indices expected sparse row compressed tensor layout but got Strided"),
              ("coo", "row_indices", "row_indices expected sparse column compressed tensor layout but got Sparse"),
              ("dense", "values", "values expected sparse tensor layout but got Strided"),
              ("dense", "indices", "indices expected sparse coordinate tensor layout but got Strided"),
              ("csr", "indices", "indices expected sparse coordinate tensor layout but got SparseCsr"),
              ("csr", "coalesce", "coalesce expected sparse coordinate tensor layout but got SparseCsr"),
              ("dense", "is_coalesced", "is_coalesced expected sparse coordinate tensor layout but got Strided"))
    for T in (torch, wt):
        d = T.tensor(D)
        x = {"dense": d, "coo": d.to_sparse(), "csr": d.to_sparse_csr(), "csc": d.to_sparse_csc()}
        for kind, method, msg in errors:
            with pytest.raises(RuntimeError, match=msg):
                getattr(x[kind], method)()
        assert (d.sparse_dim(), d.dense_dim()) == (0, 2)


CTOR = [  # (function, compressed, plain, values, size)
    ("sparse_csr_tensor", [0, 1, 2], [1, 0], [1.0, 2.0], None),
    ("sparse_csr_tensor", [0, 2, 2, 3], [0, 3, 1], [1.0, 2.0, 3.0], (3, 4)),
    ("sparse_csc_tensor", [0, 1, 2], [1, 0], [1.0, 2.0], None),
    ("sparse_bsr_tensor", [0, 1], [1], np.arange(4.0).reshape(1, 2, 2), None),
    ("sparse_bsc_tensor", [0, 1, 1], [1], np.arange(4.0).reshape(1, 2, 2), (4, 4)),
    ("sparse_csr_tensor", [0, 2, 1], [1, 0], [1.0, 2.0], None),
    ("sparse_csr_tensor", [0, 1, 2], [1, 5], [1.0, 2.0], (2, 2)),
    ("sparse_csr_tensor", [1, 1, 2], [1, 0], [1.0, 2.0], (2, 2)),
    ("sparse_csr_tensor", [0, 2, 2], [1, 1], [1.0, 2.0], (2, 2)),
    ("sparse_csr_tensor", [0, 1, 2], [1, 0], [1.0, 2.0], (3, 2)),
    ("sparse_csc_tensor", [0, 1, 2], [1, 0], [1.0, 2.0, 3.0], (2, 2)),
]


@pytest.mark.parametrize("case", range(len(CTOR)))
def test_constructors(case, device):
    fn, ci, pi, v, size = CTOR[case]

    def args(T, dt=None):
        return (T.tensor(ci, dtype=dt), T.tensor(pi, dtype=dt), T.tensor(np.asarray(v, np.float32))) + \
            ((size,) if size else ())
    try:
        want = getattr(torch, fn)(*args(torch), check_invariants=True)
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match=re.escape(str(e).split("\n")[0])):
            getattr(wt, fn)(*args(wt), device=device)
        return
    _same(getattr(wt, fn)(*args(wt), device=device), want)
    dt = "float64" if device == "cpu" else "float32"  # no float64 on webgpu
    _same(getattr(wt, fn)(*args(wt, wt.int32), dtype=getattr(wt, dt), device=device),
          getattr(torch, fn)(*args(torch, torch.int32), dtype=getattr(torch, dt)))
    layout = getattr(wt, "sparse_" + fn.split("_")[1])
    _same(wt.sparse_compressed_tensor(*args(wt), layout=layout, device=device), want)
    if device == "cpu":
        assert repr(getattr(wt, fn)(*args(wt, wt.int32))) == repr(getattr(torch, fn)(*args(torch, torch.int32)))


def test_gradients(device):
    g = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    grads = []
    for T, dev in ((torch, "cpu"), (wt, device)):
        v = T.tensor([1.0, 2.0], requires_grad=True, device=dev)
        x = T.sparse_csr_tensor(T.tensor([0, 1, 2]), T.tensor([1, 0]), v, (2, 2), device=dev)
        assert x.requires_grad and x.grad_fn.name() == "SparseCompressedTensorBackward0" and not x.is_leaf
        (x.to_dense() * T.tensor(g, device=dev)).sum().backward()
        y = T.tensor([[1.0, 0.0], [2.0, 3.0]], requires_grad=True, device=dev)
        z = y.to_sparse_csc()
        assert z.grad_fn.name() == "ToSparseCscBackward0"
        (z.to_dense() * T.tensor(g, device=dev)).sum().backward()
        leaf = T.sparse_csr_tensor(T.tensor([0, 1, 2]), T.tensor([1, 0]), T.tensor([1.0, 2.0]), (2, 2),
                                   requires_grad=True, device=dev)
        (leaf.to_dense() * T.tensor(g, device=dev)).sum().backward()
        assert leaf.grad.layout is T.sparse_csr and leaf.is_leaf
        grads.append((v.grad.tolist(), y.grad.tolist(), leaf.grad.values().tolist()))
    assert grads[0] == grads[1]


def _coo(T, device="cpu"):
    return T.sparse_coo_tensor(T.tensor([[0, 2, 2], [1, 0, 1]]), T.tensor([1.0, 2.0, 3.0]), (3, 4), device=device)


SPMM = {
    "smm": lambda T, s, m: T.smm(s, m), "hsmm": lambda T, s, m: T.hsmm(s, m), "hspmm": lambda T, s, m: T.hspmm(s, m),
    "dsmm": lambda T, s, m: T.dsmm(s, m), "method smm": lambda T, s, m: s.smm(m),
    "sspaddmm": lambda T, s, m: T.sspaddmm(T.zeros(3, 2, device=m.device).to_sparse(), s, m, beta=2, alpha=3),
    "saddmm": lambda T, s, m: T.saddmm((T.eye(3, 2, device=m.device) * 5).to_sparse(), s, m),
    "method sspaddmm": lambda T, s, m: (T.eye(3, 2, device=m.device)).to_sparse().sspaddmm(s, m, alpha=0.5),
    "sparse_mask": lambda T, s, m: T.arange(12.0, device=m.device).reshape(3, 4).sparse_mask(s),
    "sparse_mask csr": lambda T, s, m: T.arange(12.0, device=m.device).reshape(3, 4).sparse_mask(
        s.to_dense().to_sparse_csr()),
}


@pytest.mark.parametrize("name", SPMM)
def test_sparse_products_and_mask(name, device):
    want = SPMM[name](torch, _coo(torch), torch.tensor(M))
    got = SPMM[name](wt, _coo(wt, device), wt.tensor(M, device=device))
    if isinstance(want, torch.Tensor) and want.layout is torch.strided:
        assert got.tolist() == want.tolist()
    else:
        _same(got, want)


def test_sparse_products_errors_and_resizes():
    for T in (torch, wt):
        with pytest.raises(RuntimeError, match="sspaddmm: Argument #1: Expected dim 1 size 2, got 4"):
            T.sspaddmm(_coo(T), _coo(T), T.tensor(M))
        with pytest.raises(RuntimeError, match=r"tensor.sspaddmm\(...\) can only be called on sparse tensors"):
            T.smm(T.ones(3, 4), T.tensor(M))
        with pytest.raises(RuntimeError, match="_internal_get_SparseTensorImpl: not a sparse tensor"):
            T.sspaddmm(T.ones(3, 2), _coo(T), T.tensor(M))
        with pytest.raises(RuntimeError, match="_internal_get_SparseTensorImpl: not a sparse tensor"):
            T.ones(3, 2).resize_as_sparse_(_coo(T))
        with pytest.raises(NotImplementedError, match="Could not run 'aten::hspmm' with arguments from the 'CPU'"):
            T.hspmm(T.ones(3, 4), T.tensor(M))
    for fn in (lambda T, x: x.sparse_resize_((5, 6), 2, 0), lambda T, x: x.resize_as_sparse_(T.zeros(4, 5).to_sparse()),
               lambda T, x: x.sparse_resize_((2, 6), 2, 0), lambda T, x: x.sparse_resize_and_clear_((2, 2), 2, 0)):
        try:
            want = fn(torch, _coo(torch))
        except RuntimeError as e:
            with pytest.raises(RuntimeError, match=re.escape(str(e)[:40])):
                fn(wt, _coo(wt))
            continue
        got = fn(wt, _coo(wt))
        assert tuple(got.shape) == tuple(want.shape) and got._nnz() == want._nnz()
        assert got.to_dense().tolist() == want.to_dense().tolist()


def test_copies(device):
    d = torch.tensor(D)
    w = wt.tensor(D, device=device)
    for name, lo in (("crow_indices_copy", "csr"), ("col_indices_copy", "csr"), ("ccol_indices_copy", "csc"),
                     ("row_indices_copy", "csc"), ("values_copy", "csr"), ("values_copy", "bsc")):
        want, got = getattr(torch, name)(_conv(torch, d, lo)), getattr(wt, name)(_conv(wt, w, lo))
        assert got.tolist() == want.tolist() and str(got.dtype) == str(want.dtype)
    for name in ("indices_copy", "values_copy"):
        for T, x in ((torch, d), (wt, w)):
            with pytest.raises(NotImplementedError, match=f"Could not run 'aten::{name}' with arguments from the "
                                                          "'SparseCPU' backend"):
                getattr(T, name)(x.to_sparse())
