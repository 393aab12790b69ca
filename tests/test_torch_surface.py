"""Top-level torch names and Tensor methods without an OpInfo of their own (issue #22), against
PyTorch on cpu, cpu-pure and webgpu: the constants and process settings, torch.<nn op> with ATen's
signatures (torch.dropout(input, p, train), torch.embedding(weight, indices), int reductions),
in-place forms and aliases, the view-copy / view-scatter forms, forward and gradient. The ops with
an OpInfo (diff, rot90, kron, cdist, histc, searchsorted, scatter_reduce, ...) run in tests/opinfo."""
import math

import numpy as np
import pytest
import torch
from core_util import arr, check_same, cmp, raises_like, to_wt

import webtorch as wt


def grads_like(device, fn, *arrays, seed=0):
    """fn(lib, *tensors) on tensors requiring grad, backward with one random cotangent: webtorch's
    result and input gradients equal PyTorch's."""
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    ws = [to_wt(a, device).requires_grad_() for a in arrays]
    t, w = fn(torch, *ts), fn(wt, *ws)
    cot = np.asarray(np.random.RandomState(seed).rand(*t.shape), "float32")
    t.backward(torch.tensor(cot))
    w.backward(to_wt(cot, device))
    check_same(w, t, device=device)
    for i, (a, b) in enumerate(zip(ws, ts)):
        check_same(a.grad, b.grad, device=device, what=f"grad[{i}]")


def test_constants_and_settings():
    for n in ("e", "pi", "inf", "nan", "newaxis", "has_lapack", "has_mkl", "has_openmp"):
        assert hasattr(wt, n)
    assert (wt.e, wt.pi, wt.inf, wt.newaxis) == (torch.e, torch.pi, torch.inf, torch.newaxis)
    assert math.isnan(wt.nan)
    n = wt.get_num_threads()
    wt.set_num_threads(3)
    assert wt.get_num_threads() == 3
    wt.set_num_threads(n)
    for lib in (wt, torch):
        with pytest.raises(RuntimeError, match="set_num_threads expects a positive integer"):
            lib.set_num_threads(0)
        with pytest.raises(RuntimeError, match="set_num_threads expects an int, but got float"):
            lib.set_num_threads(1.5)
    # PyTorch's values (not asked of torch here: its use_deterministic_algorithms imports inductor, 13 s)
    for mode, want in (("warn", (True, True, 1)), ("error", (True, False, 2)), (0, (False, False, 0))):
        wt.set_deterministic_debug_mode(mode)
        assert (wt.are_deterministic_algorithms_enabled(), wt.is_deterministic_algorithms_warn_only_enabled(),
                wt.get_deterministic_debug_mode()) == want
    assert wt.set_flush_denormal(True) is False  # no backend here flushes denormals
    assert wt.is_vulkan_available() is False


def test_functional_aliases_are_nn_functional():
    for n in ("conv1d", "conv2d", "conv3d", "conv_transpose2d", "pixel_shuffle", "pdist", "cosine_similarity",
              "pairwise_distance", "bilinear", "avg_pool1d", "adaptive_avg_pool1d"):
        assert getattr(wt, n) is getattr(wt.nn.functional, n), n


def test_functional_aliases_aten_signatures(device):
    x, w4, idx = arr((2, 4, 3, 3)), arr((4,)), np.array([[0, 2], [1, 0]])
    cmp(device, lambda L, x, w, b: L.layer_norm(x, (3, 3), None, None, 1e-5, True), x, w4, w4)
    cmp(device, lambda L, x, w, b: L.group_norm(x, 2, w, b, 1e-5, True), x, w4, w4)
    cmp(device, lambda L, x, w, b: L.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, True), x, w4, w4)
    cmp(device, lambda L, x, w, b: L.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, True), x, w4, w4)
    cmp(device, lambda L, w, i: L.embedding(w, i), arr((3, 5)), idx)
    cmp(device, lambda L, w, i: L.embedding(w, i, 1), arr((3, 5)), idx)
    cmp(device, lambda L, x: L.dropout(x, 0.5, False), x)
    cmp(device, lambda L, x: L.channel_shuffle(x, 2), x)
    cmp(device, lambda L, x: L.constant_pad_nd(x, [1, 2], 3.5), x)
    cmp(device, lambda L, x: L.max_pool1d_with_indices(x, 2), arr((2, 3, 6)))
    cmp(device, lambda L, x: L.adaptive_max_pool1d(x, 2), arr((2, 3, 6)))
    cmp(device, lambda L, x, k: L.convolution(x, k, None, [1, 1], [1, 0], [1, 1], False, [0, 0], 1), x,
        arr((2, 4, 3, 2)))
    cmp(device, lambda L, x, k: L.convolution(x, k, None, [2], [0], [1], True, [1], 1), arr((1, 2, 5)),
        arr((2, 3, 3)))
    a, b, y = arr((4, 3)), arr((4, 3)), np.array([1.0, -1.0, 1.0, -1.0], "float32")
    for r in (0, 1, 2):
        cmp(device, lambda L, a, t, r=r: L.binary_cross_entropy_with_logits(a, t, None, None, r), a,
            arr((4, 3), lo=0, hi=1))
        cmp(device, lambda L, a, b, y, r=r: L.cosine_embedding_loss(a, b, y, 0.1, r), a, b, y)
        cmp(device, lambda L, a, b, r=r: L.kl_div(a.log_softmax(1), b.softmax(1), r), a, b)
        cmp(device, lambda L, a, b, y, r=r: L.margin_ranking_loss(a[:, 0], b[:, 0], y, 0.2, r), a, b, y)
        cmp(device, lambda L, a, b, r=r: L.poisson_nll_loss(a, b.abs(), True, False, 1e-8, r), a, b)


def test_functional_alias_gradients(device):
    rows = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [-2.0, 1.0, 0.0], [0.3, 0.9, -1.2]], "float32")  # spread
    grads_like(device, lambda L, x, w: L.layer_norm(x, (3,), w, None, 1e-5, True), rows, arr((3,)))
    grads_like(device, lambda L, w: L.embedding(w, L.tensor([[0, 2, 0]], device=w.device)), arr((3, 4)))
    grads_like(device, lambda L, x: L.channel_shuffle(x, 3), arr((1, 6, 2)))


INPLACE = [  # (method, input shape, args as arrays or values): self.<method>(...) vs PyTorch's
    ("addmm_", (3, 4), [(3, 2), (2, 4)]), ("addmv_", (3,), [(3, 4), (4,)]), ("addr_", (3, 4), [(3,), (4,)]),
    ("baddbmm_", (2, 3, 4), [(2, 3, 5), (2, 5, 4)]), ("addbmm_", (3, 4), [(2, 3, 5), (2, 5, 4)]),
    ("cumsum_", (3, 4), [1]), ("cumprod_", (3, 4), [0]), ("renorm_", (3, 4), [2, 0, 1.0]),
    ("index_fill_", (3, 4), [1, np.array([0, 2]), -1.5]), ("square_", (3, 4), []), ("deg2rad_", (3, 4), []),
    ("rad2deg_", (3, 4), []), ("nan_to_num_", (3, 4), []), ("negative_", (3, 4), []), ("fix_", (3, 4), []),
    ("arctan_", (3, 4), []), ("arcsinh_", (3, 4), []), ("sgn_", (3, 4), []), ("absolute_", (3, 4), []),
    ("greater_", (3, 4), [(3, 4)]), ("less_equal_", (3, 4), [(3, 4)]), ("not_equal_", (3, 4), [(3, 4)]),
    ("arctan2_", (3, 4), [(3, 4)]), ("put_", (3, 4), [np.array([1, -1, 5]), (3,)]),
    ("fill_diagonal_", (5, 3), [2.5, True]), ("index_copy_", (3, 4), [1, np.array([3, 0]), (3, 2)]),
]


@pytest.mark.parametrize("name,shape,args", INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_forms(device, name, shape, args):
    args = [arr(a) if isinstance(a, tuple) else a for a in args]
    cmp(device, lambda L, x, *a: getattr(x, name)(*a), arr(shape), *args)
    differentiable = name not in ("greater_", "less_equal_", "not_equal_", "fill_diagonal_", "put_", "index_fill_",
                                  "index_copy_", "fix_", "sgn_", "arcsinh_")  # PyTorch: no asinh_ derivative
    floats = [k for k, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]

    def on_copy(L, x, *fa):  # the in-place op on a non-leaf; the float arguments require grad too
        it = iter(fa)
        return getattr(x * 1, name)(*[next(it) if k in floats else a for k, a in enumerate(args)])
    if differentiable:
        grads_like(device, on_copy, arr(shape), *[args[k] for k in floats])


@pytest.mark.parametrize("name,args", [
    ("alias_copy", ()), ("t_copy", ()), ("transpose_copy", (0, 1)), ("permute_copy", ((1, 0),)),
    ("diagonal_copy", (1,)), ("select_copy", (1, 2)), ("slice_copy", (1, 1, 3)), ("unsqueeze_copy", (0,)),
    ("view_copy", ((4, 3),)), ("expand_copy", ((2, 3, 4),)), ("unfold_copy", (1, 2, 1)),
    ("narrow_copy", (1, 1, 2)), ("as_strided_copy", ((2, 2), (1, 2), 1)), ("detach_copy", ())])
def test_view_copies(device, name, args):
    got, _ = cmp(device, lambda L, x: getattr(L, name)(x, *args), arr((3, 4)))
    assert got.is_contiguous()
    if name != "detach_copy":
        grads_like(device, lambda L, x: getattr(L, name)(x, *args), arr((3, 4)))


def test_view_scatters_gradients(device):
    grads_like(device, lambda L, x, s: L.diagonal_scatter(x, s, 1), arr((3, 4)), arr((3,)))
    grads_like(device, lambda L, x, s: L.select_scatter(x, s, 1, -1), arr((3, 4)), arr((3,)))
    grads_like(device, lambda L, x, s: L.slice_scatter(x, s, 0, 1, 3), arr((4, 2)), arr((2, 2)))
    raises_like(device, lambda L, x, s: L.slice_scatter(x, s, 0, 1), arr((4, 2)), arr((2, 2)),
                phrase="expected src to have a size equal to the slice of self")


def test_predicates_and_small_ops(device):
    x = np.array([0.0, -0.0, 1.5, -math.inf, math.inf, math.nan, 1e-40], "float32")
    for n in ("isposinf", "isneginf", "isreal", "ravel", "frexp"):
        cmp(device, lambda L, x, n=n: getattr(L, n)(x), x)
    cmp(device, lambda L, a, b: (L.is_same_size(a, b), a.is_same_size(b[:1])), arr((2, 3)), arr((2, 3)))
    cmp(device, lambda L, a: (L.is_nonzero(a[:1]), L.is_signed(a), a.is_signed()), arr((2,), lo=1, hi=2))
    raises_like(device, lambda L, a: L.is_nonzero(a), arr((2,)), phrase="more than one value is ambiguous")
    i, j = np.array([12, -18, 0, 7, 0]), np.array([8, 27, 5, 0, 0])
    cmp(device, lambda L, a, b: (L.gcd(a, b), L.lcm(a, b)), i, j)
    cmp(device, lambda L, x: (L.hsplit(x, 2), L.vsplit(x, [1]), L.dsplit(x, 2)), arr((2, 4, 2)))
    cmp(device, lambda L, x: (L.dist(x, x * 2, 3), L.diagflat(x[0], -1), L.split_with_sizes(x, [1, 2], 1)),
        arr((2, 3)))
    grads_like(device, lambda L, x, y: L.dist(x, y, 3) + L.renorm(x, 1, 1, 0.5).sum(), arr((2, 3)), arr((2, 3)))
    grads_like(device, lambda L, x, a, b: L.addr(x, a, b, beta=0.5, alpha=2), arr((2, 3)), arr((2,)), arr((3,)))


def test_python_callbacks(device):
    x = arr((2, 3))
    if device == "webgpu":
        with pytest.raises(TypeError, match="apply_ is only implemented on CPU tensors"):
            to_wt(x, device).apply_(abs)
        return
    cmp(device, lambda L, x, y: (x.clone().apply_(lambda v: v * 2 + 1), x.clone().map_(y, max),
                                 x.clone().map2_(x, y[0], lambda a, b, c: a * b - c)), x, arr((2, 3)))
    raises_like(device, lambda L, x: x.requires_grad_().apply_(abs), x, phrase="Can't call apply_()")


def test_integer_histc_on_webgpu_follows_cuda(device):
    """PyTorch's CPU histc refuses integers, its CUDA kernel counts them (bin (x - min) * bins / (max - min)
    in integer arithmetic), and MoE code written for CUDA counts expert ids with it: webgpu follows CUDA,
    the cpu device PyTorch's CPU. On integers that bin is exact, so it equals PyTorch's float histc."""
    x = np.array([0, 1, 1, 3, 2, 7, -1, 5, 5, 6], dtype=np.int32)
    if device != "webgpu":
        raises_like(device, lambda T, x: T.histc(x, bins=4), x)
        return
    for bins, lo, hi in ((4, 0, 3), (3, 0, 7), (5, 0, 0), (8, 0, 7)):
        want = torch.histc(torch.tensor(x).float(), bins=bins, min=lo, max=hi)
        for dt in ("int32", "int64"):
            got = wt.histc(to_wt(x, device).to(getattr(wt, dt)), bins=bins, min=lo, max=hi)
            check_same(got, want.to(getattr(torch, dt)), device=device)


def test_sgn_node_and_complex_in_place(device):
    """A real sgn records PyTorch's SgnBackward0 (not sign's node), and sgn_ of a complex tensor is z/|z|
    in place (it once ran sign, which refuses complex)."""
    x = np.array([1.5, -2.0, 0.0], dtype=np.float32)
    for lib, t in ((torch, torch.tensor(x, requires_grad=True)), (wt, to_wt(x, device).requires_grad_())):
        assert type(lib.sgn(t * 2).grad_fn).__name__ == "SgnBackward0"
    cmp(device, lambda T, x: (x * 2).sgn_(), x)
    cmp(device, lambda T, z: z.clone().sgn_(), np.array([1 + 1j, -2, 0], dtype=np.complex64))
