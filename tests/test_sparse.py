"""Sparse COO tensors against PyTorch: construction, repr, coalesce, to_dense/to_sparse,
torch.sparse.mm / torch.mm / @ / spmm (values and gradients w.r.t. the dense operand and the sparse
values), torch.sparse.sum, and a 2-layer GCN trained one step with copied weights, on every device."""
import numpy as np
import pytest
import torch

from _nn_util import assert_close
import webtorch as wt

pytestmark = [pytest.mark.filterwarnings("ignore:Sparse invariant checks"), pytest.mark.filterwarnings("ignore:Sparse CSR tensor support")]
R = np.random.RandomState(5)
IDX = [[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]]  # (0, 2) twice: uncoalesced


def _both(device, idx, vals, *size, **kw):
    t = torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(vals), *size, **kw)
    w = wt.sparse_coo_tensor(wt.tensor(idx), wt.tensor(vals), *size, device=device, **kw)
    return t, w


def _same_sparse(w, t, device):
    assert w.is_sparse and w.layout is wt.sparse_coo and tuple(w.shape) == tuple(t.shape)
    assert w.is_coalesced() == t.is_coalesced() and w._nnz() == t._nnz()
    assert w._indices().tolist() == t._indices().tolist()
    assert_close(w._values(), t._values(), device)


def test_repr_and_metadata():
    v = np.array([3, 4, 5, 1, 2], np.float32)
    for kw in ({}, {"size": (3, 4)}, {"requires_grad": True}):
        t, w = _both("cpu", IDX, v, **kw)
        assert repr(w) == repr(t)
        assert repr(w.coalesce()) == repr(t.coalesce())
    t, w = _both("cpu", IDX, v.astype(np.float64), requires_grad=True)
    assert repr(w) == repr(t)
    tv, wv = torch.tensor(v, requires_grad=True), wt.tensor(v, requires_grad=True)
    ts, ws = torch.sparse_coo_tensor(torch.tensor(IDX), tv), wt.sparse_coo_tensor(wt.tensor(IDX), wv)
    assert repr(ws) == repr(ts) and ws.is_leaf == ts.is_leaf and ws.requires_grad
    assert repr(wt.randn(2).layout) == "torch.strided" and not wt.randn(2).is_sparse
    assert (ws.sparse_dim(), ws.dense_dim(), ws.dim(), ws.shape) == (2, 0, 2, wt.Size([3, 3]))


def test_errors():
    with pytest.raises(RuntimeError, match="size is inconsistent with indices: for dim 1, size is 2 but found index 2"):
        wt.sparse_coo_tensor(IDX, [1.0] * 5, (3, 2))
    s = wt.sparse_coo_tensor(IDX, [1.0] * 5)
    with pytest.raises(RuntimeError, match=r"Cannot get indices on an uncoalesced tensor, please call \.coalesce"):
        s.indices()
    for op in (lambda: s.exp(), lambda: s.view(9), lambda: s * s, lambda: wt.cat([s, s])):
        with pytest.raises(NotImplementedError, match="is not supported for sparse COO tensors"):
            op()
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(3x3 and 4x2\)"):
        wt.sparse.mm(s, wt.randn(4, 2))


def test_coalesce_to_dense_to_sparse_sum(device):
    v = R.standard_normal((5, 2)).astype(np.float32)  # a dense dim: values (nnz, 2)
    t, w = _both(device, IDX, v)
    _same_sparse(w.coalesce(), t.coalesce(), device)
    assert_close(w.to_dense(), t.to_dense(), device)
    x = np.where(R.rand(3, 4) > 0.5, R.standard_normal((3, 4)), 0).astype(np.float32)
    _same_sparse(wt.tensor(x, device=device).to_sparse(), torch.tensor(x).to_sparse(), device)
    x3 = np.where(R.rand(3, 2, 2) > 0.6, 1.0, 0).astype(np.float32)
    _same_sparse(wt.tensor(x3, device=device).to_sparse(1), torch.tensor(x3).to_sparse(1), device)
    assert_close(wt.sparse.sum(w), torch.sparse.sum(t), device)
    for dim in (0, 1, 2, (0, 2), (0, 1)):
        got, want = wt.sparse.sum(w, dim), torch.sparse.sum(t, dim)
        if want.is_sparse:
            _same_sparse(got, want, device)
        else:
            assert_close(got, want, device)


@pytest.mark.parametrize("how", ["sparse.mm", "mm", "matmul", "spmm", "dense@sparse"])
def test_mm_values_and_grads(how, device):
    v = R.standard_normal(5).astype(np.float32)
    d = R.standard_normal((3, 4)).astype(np.float32)
    g = R.standard_normal((3, 4)).astype(np.float32)
    res = {}
    for lib in (torch, wt):
        vals = lib.tensor(v, device=device if lib is wt else "cpu").requires_grad_()
        dense = lib.tensor(d, device=device if lib is wt else "cpu").requires_grad_()
        S = lib.sparse_coo_tensor(lib.tensor(IDX), vals, (3, 3))
        if how == "dense@sparse":
            out = dense.t() @ S
        else:
            out = {"sparse.mm": lambda: lib.sparse.mm(S, dense), "mm": lambda: lib.mm(S, dense),
                   "matmul": lambda: S @ dense, "spmm": lambda: lib.spmm(S, dense)}[how]()
        gg = lib.tensor(g.T if how == "dense@sparse" else g, device=device if lib is wt else "cpu")
        (out * gg).sum().backward()
        res[lib] = (out, vals.grad, dense.grad, out.grad_fn.name() if lib is wt else type(out.grad_fn).__name__)
    for k, what in enumerate(("output", "grad of values", "grad of dense")):
        assert_close(res[wt][k], res[torch][k], device, what)
    assert res[wt][3] == res[torch][3]


def test_sparse_leaf_grad(device):
    v = R.standard_normal(5).astype(np.float32)
    d = R.standard_normal((3, 2)).astype(np.float32)
    t, w = _both(device, IDX, v, (3, 3), requires_grad=True)
    assert w.is_leaf and w.requires_grad and w.grad_fn is None
    torch.sparse.mm(t, torch.tensor(d)).sum().backward()
    wt.sparse.mm(w, wt.tensor(d, device=device)).sum().backward()
    _same_sparse(w.grad, t.grad, device)


def test_sparse_mm_gradcheck_float64():
    idx = wt.tensor(IDX)
    vals = wt.randn(5, dtype=wt.float64, requires_grad=True)
    dense = wt.randn(3, 2, dtype=wt.float64, requires_grad=True)
    assert wt.autograd.gradcheck(lambda v, d: wt.sparse.mm(wt.sparse_coo_tensor(idx, v, (3, 3)), d), (vals, dense))
    assert wt.autograd.gradcheck(lambda v: wt.sparse_coo_tensor(idx, v, (3, 3)).to_dense(), (vals,))


def _gcn_graph(n=7, p=0.35):
    a = np.triu((R.rand(n, n) < p).astype(np.float32), 1)
    a = a + a.T + np.eye(n, dtype=np.float32)  # A + I
    dinv = 1.0 / np.sqrt(a.sum(1))
    idx = np.array(np.nonzero(a))
    return idx, (dinv[idx[0]] * dinv[idx[1]]).astype(np.float32), n


@pytest.mark.parametrize("learned_edges", [False, True])
def test_gcn_two_layers_matches_torch(learned_edges, device):
    """Kipf & Welling's GCN: log_softmax(Â relu(Â X W1) W2) with Â = D^-1/2 (A + I) D^-1/2 sparse."""
    idx, norm, n = _gcn_graph()
    feats = R.standard_normal((n, 5)).astype(np.float32)
    labels = R.randint(0, 3, n)

    def run(lib, dev):
        nn, F = lib.nn, lib.nn.functional
        lib.manual_seed(0)
        l1, l2 = nn.Linear(5, 8), nn.Linear(8, 3)
        if lib is wt:  # torch's weights copied in
            for mine, theirs in ((l1, run.t_layers[0]), (l2, run.t_layers[1])):
                mine.load_state_dict({k: wt.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
        else:
            run.t_layers = (l1, l2)
        l1, l2 = l1.to(dev), l2.to(dev)
        edge = lib.tensor(norm, device=dev).requires_grad_(learned_edges)
        adj = lib.sparse_coo_tensor(lib.tensor(idx, device=dev), edge, (n, n))
        x = lib.tensor(feats, device=dev).requires_grad_()
        h = F.relu(lib.sparse.mm(adj, l1(x)))
        out = F.log_softmax(adj @ l2(h), dim=1)
        loss = F.nll_loss(out, lib.tensor(labels, device=dev))
        loss.backward()
        grads = [x.grad, l1.weight.grad, l1.bias.grad, l2.weight.grad, l2.bias.grad]
        return [out, loss] + grads + ([edge.grad] if learned_edges else [])

    want = run(torch, "cpu")
    got = run(wt, device)
    for k, (g, w) in enumerate(zip(got, want)):
        assert_close(g, w, device, f"result {k}")


MIXES = {  # T: torch or webtorch; D dense (3, 3); S sparse (3, 3), uncoalesced, values requiring grad
    "dense+sparse": lambda T, D, S: D + S, "dense-sparse": lambda T, D, S: D - S,
    "add_alpha": lambda T, D, S: T.add(D, S, alpha=2.5), "add_": lambda T, D, S: D.clone().add_(S),
    "sparse+sparse": lambda T, D, S: S + S * 3, "sparse*scalar": lambda T, D, S: 2 * S * 3, "sparse/scalar": lambda T, D, S: S / 4,
    "sparse*dense": lambda T, D, S: S * D, "softmax": lambda T, D, S: T.sparse.softmax(S, 1),
    "log_softmax": lambda T, D, S: T.sparse.log_softmax(S, 0), "addmm": lambda T, D, S: T.sparse.addmm(D, S, D, beta=0.5),
    "csr_mm": lambda T, D, S: T.sparse.mm(S.detach().to_sparse_csr(), D), "csr*scalar": lambda T, D, S: S.to_sparse_csr() * 2,
}


@pytest.mark.parametrize("name", MIXES)
def test_dense_sparse_mixes(name, device):
    """dense + sparse -> dense, sparse*scalar, sparse.softmax/log_softmax/addmm, CSR: values and grads as PyTorch."""
    d = R.randn(3, 3).astype(np.float32)
    v = np.array([3, 4, 5, 1, 2], np.float32)
    out = {}
    for T, dev in ((torch, "cpu"), (wt, device)):
        D = T.tensor(d, device=dev, requires_grad=True)
        V = T.tensor(v, device=dev, requires_grad=True)
        S = T.sparse_coo_tensor(T.tensor(IDX, device=dev), V, (3, 3))
        r = MIXES[name](T, D, S)
        dense = r.to_dense() if r.layout is not T.strided else r
        if dense.requires_grad:
            (dense * T.arange(9.0, device=dev).reshape(3, 3)).sum().backward()
        out[T] = r, dense, D.grad, V.grad
    (tr, td, tdg, tvg), (wr, wd, wdg, wvg) = out[torch], out[wt]
    assert str(wr.layout) == str(tr.layout) and tuple(wr.shape) == tuple(tr.shape)
    if tr.layout is torch.sparse_csr:
        assert wr.crow_indices().tolist() == tr.crow_indices().tolist() and repr(wr.detach().cpu()) == repr(tr.detach())
    assert_close(wd, td.detach(), device)
    for w, t in ((wdg, tdg), (wvg, tvg)):
        assert (w is None) == (t is None)
        if t is not None:  # sparse*dense: PyTorch's dense grad is sparse, webtorch's dense (the same values)
            assert_close(w, t.to_dense() if t.layout is not torch.strided else t, device)


def test_mix_errors_as_pytorch():
    for T in (torch, wt):
        S = T.sparse_coo_tensor(T.tensor(IDX), T.ones(5), (3, 3))
        with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported. Use add\(dense, sparse\)"):
            S + T.eye(3)
        with pytest.raises(RuntimeError, match="add: expected 'self' and 'other' to have same size, but self has size"):
            T.ones(2, 3) + S
        assert not S.is_sparse_csr and S.to_sparse_csr().is_sparse_csr and not S.to_sparse_csr().is_sparse


def test_check_sparse_tensor_invariants_as_pytorch():
    for T in (torch, wt):
        c = T.sparse.check_sparse_tensor_invariants
        assert not c.is_enabled()
        with c():
            assert c.is_enabled()
            with c(False):
                assert not c.is_enabled()
        assert not c.is_enabled() and c(True)(c.is_enabled)()
        c.enable()
        assert c.is_enabled()
        c.disable()
        ctx = c()
        with ctx, pytest.raises(RuntimeError, match="already activated"):
            ctx.__enter__()
