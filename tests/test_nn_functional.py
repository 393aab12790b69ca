"""nn.functional against torch.nn.functional: attention, padding, resampling, im2col/col2im and the
rest, values and gradients on every device."""

import numpy as np
import pytest
import torch

from _nn_util import NoGrad, assert_close, rng_for, randn
import webtorch as wt

R = np.random.RandomState(9)


def X(*shape, scale=1.0):
    return (R.standard_normal(shape) * scale).astype(np.float32)


def _run(device, fn, arrays, name):
    """fn(F, T, *tensors) in both libraries; compare outputs and gradients of float inputs."""
    rng = rng_for(name)
    ins = {}
    for lib in (torch, wt):
        ts = []
        for a in arrays:
            grad = True
            if isinstance(a, NoGrad):
                a, grad = a.a, False
            t = torch.tensor(a) if lib is torch else wt.tensor(a, device=device)
            if grad and a.dtype.kind == "f":
                t.requires_grad_(True)
            ts.append(t)
        F = torch.nn.functional if lib is torch else wt.nn.functional
        out = fn(F, lib, *ts)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        ins[lib] = (ts, outs)
    (tt, to), (wts, wo) = ins[torch], ins[wt]
    cots = []
    for k, (w, t) in enumerate(zip(wo, to)):
        assert_close(w, t, device, f"output {k}")
        cots.append(randn(rng, *t.shape))
    fl = [(w, t, c) for w, t, c in zip(wo, to, cots) if t.requires_grad]
    if fl:
        sum((t * torch.tensor(c)).sum() for _, t, c in fl).backward()
        sum((w * wt.tensor(c, device=device)).sum() for w, _, c in fl).backward()
        for k, (w, t) in enumerate(zip(wts, tt)):
            if t.requires_grad:
                assert_close(w.grad, t.grad, device, f"grad of input {k}")


BOOL_MASK = np.array([[True, False, True, True], [True, True, False, True], [False, True, True, True]])

CASES = [
    ("sdpa", lambda F, T, q, k, v: F.scaled_dot_product_attention(q, k, v), [X(2, 3, 4), X(2, 4, 4), X(2, 4, 4)]),
    ("sdpa_causal", lambda F, T, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3),
     [X(1, 2, 4, 3), X(1, 2, 4, 3), X(1, 2, 4, 5)]),
    ("sdpa_bool_mask", lambda F, T, q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
     [X(2, 3, 4), X(2, 4, 4), X(2, 4, 2), NoGrad(BOOL_MASK)]),
    ("sdpa_dead_row", lambda F, T, q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
     [X(1, 2, 3), X(1, 2, 3), X(1, 2, 3), NoGrad(np.array([[True, True], [False, False]]))]),
    ("sdpa_float_mask", lambda F, T, q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
     [X(2, 3, 4), X(2, 4, 4), X(2, 4, 2), X(3, 4)]),
    ("sdpa_gqa", lambda F, T, q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
     [X(1, 4, 3, 2), X(1, 2, 3, 2), X(1, 2, 3, 2)]),
    ("pad_constant", lambda F, T, x: F.pad(x, (1, 2, 0, 1), value=0.5), [X(2, 3, 4)]),
    ("pad_negative", lambda F, T, x: F.pad(x, (-1, 2, 1, -1)), [X(2, 3, 4)]),
    ("pad_reflect", lambda F, T, x: F.pad(x, (2, 1, 1, 2), mode="reflect"), [X(1, 2, 3, 4)]),
    ("pad_replicate", lambda F, T, x: F.pad(x, (2, 3), mode="replicate"), [X(1, 2, 3)]),
    ("pad_circular", lambda F, T, x: F.pad(x, (1, 2, 2, 1), mode="circular"), [X(1, 1, 3, 4)]),
    ("interp_nearest_scale", lambda F, T, x: F.interpolate(x, scale_factor=2.5), [X(1, 2, 3, 2)]),
    ("interp_nearest_size", lambda F, T, x: F.interpolate(x, size=(5, 3)), [X(1, 2, 3, 4)]),
    ("interp_nearest_exact", lambda F, T, x: F.interpolate(x, size=(5, 3), mode="nearest-exact"), [X(1, 1, 3, 4)]),
    ("interp_bilinear", lambda F, T, x: F.interpolate(x, size=(5, 7), mode="bilinear"), [X(1, 2, 3, 4)]),
    ("interp_bilinear_ac", lambda F, T, x: F.interpolate(x, size=(5, 7), mode="bilinear", align_corners=True),
     [X(1, 2, 3, 4)]),
    ("interp_bilinear_down", lambda F, T, x: F.interpolate(x, scale_factor=0.5, mode="bilinear"), [X(1, 1, 6, 5)]),
    ("interp_linear", lambda F, T, x: F.interpolate(x, scale_factor=1.7, mode="linear"), [X(2, 2, 4)]),
    ("interp_area", lambda F, T, x: F.interpolate(x, size=(2, 3), mode="area"), [X(1, 1, 5, 7)]),
    ("unfold", lambda F, T, x: F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), [X(2, 2, 5, 6)]),
    ("fold", lambda F, T, x: F.fold(x, (4, 5), (2, 2), padding=1, stride=2), [X(2, 8, 9)]),
    ("fold_overlap", lambda F, T, x: F.fold(x, (4, 4), 3), [X(1, 9, 4)]),
    ("conv2d_fn", lambda F, T, x, w, b: F.conv2d(x, w, b, stride=2, padding=1, groups=2),
     [X(1, 4, 5, 5), X(2, 2, 3, 3), X(2)]),
    ("conv_transpose2d_fn", lambda F, T, x, w: F.conv_transpose2d(x, w, stride=(2, 1), padding=(1, 0)),
     [X(1, 2, 3, 3), X(2, 3, 3, 2)]),
    ("conv1d_fn", lambda F, T, x, w: F.conv1d(x, w, padding="valid"), [X(2, 3, 6), X(4, 3, 2)]),
    ("linear_fn", lambda F, T, x, w, b: F.linear(x, w, b), [X(2, 3, 4), X(5, 4), X(5)]),
    ("normalize", lambda F, T, x: F.normalize(x, dim=-1), [X(3, 4)]),
    ("normalize_p1", lambda F, T, x: F.normalize(x, p=1, dim=0), [X(3, 4)]),
    ("one_hot_mul", lambda F, T, x, i: x * F.one_hot(i, 4), [X(3, 4), NoGrad(np.array([0, 3, 1]))]),
    ("embedding_fn", lambda F, T, w, i: F.embedding(i, w, padding_idx=2),
     [X(4, 3), NoGrad(np.array([[2, 1], [3, 2]]))]),
    ("batch_norm_fn", lambda F, T, x, w, b: F.batch_norm(x, None, None, w, b, training=True),
     [X(4, 3, 2), X(3), X(3)]),
    ("batch_norm_eval_fn", lambda F, T, x, rm, rv: F.batch_norm(x, rm, rv, training=False, eps=1e-3),
     [X(4, 3), NoGrad(X(3)), NoGrad(np.abs(X(3)) + 0.5)]),
    ("layer_norm_fn", lambda F, T, x, w: F.layer_norm(x, (4,), w), [X(2, 4), X(4)]),
    ("group_norm_fn", lambda F, T, x: F.group_norm(x, 3), [X(2, 6, 2)]),
    ("rms_norm_fn", lambda F, T, x, w: F.rms_norm(x, [4], w, eps=1e-4), [X(2, 4), X(4)]),
    ("instance_norm_fn", lambda F, T, x: F.instance_norm(x), [X(2, 3, 4)]),
    ("avg_pool1d_fn", lambda F, T, x: F.avg_pool1d(x, 2), [X(1, 2, 6)]),
    ("adaptive_avg_pool1d_fn", lambda F, T, x: F.adaptive_avg_pool1d(x, 3), [X(1, 2, 7)]),
    ("adaptive_max_pool1d_fn", lambda F, T, x: F.adaptive_max_pool1d(x, 3), [X(1, 2, 7)]),
    ("lp_pool2d_fn", lambda F, T, x: F.lp_pool2d(x, 2, 2), [np.abs(X(1, 1, 4, 4)) + 0.1]),
    ("pixel_unshuffle", lambda F, T, x: F.pixel_unshuffle(x, 2), [X(1, 2, 4, 6)]),
    ("cosine_similarity", lambda F, T, a, b: F.cosine_similarity(a, b, dim=-1), [X(3, 4), X(3, 4)]),
    ("pairwise_distance", lambda F, T, a, b: F.pairwise_distance(a, b), [X(3, 4), X(3, 4)]),
    ("glu_fn", lambda F, T, x: F.glu(x), [X(3, 4)]),
    ("softmax_implicit_dim", lambda F, T, x: F.softmax(x, dim=None), [X(2, 3, 4)]),
    ("log_softmax_dtype", lambda F, T, x: F.log_softmax(x, 1), [X(3, 4)]),
    ("local_response_norm", lambda F, T, x: F.local_response_norm(x, 3), [X(1, 4, 2, 2)]),
    ("local_response_norm_3d", lambda F, T, x: F.local_response_norm(x, 2), [X(1, 4, 3)]),
]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_functional_matches_torch(case, device):
    name, fn, arrays = case
    _run(device, fn, arrays, name)


def test_one_hot():
    t = torch.tensor([[0, 2], [1, 1]])
    w = wt.tensor([[0, 2], [1, 1]])
    assert wt.nn.functional.one_hot(w).tolist() == torch.nn.functional.one_hot(t).tolist()
    assert wt.nn.functional.one_hot(w, 5).tolist() == torch.nn.functional.one_hot(t, 5).tolist()
    assert wt.nn.functional.one_hot(w).dtype is wt.int64


def test_sdpa_dropout_is_random_but_unbiased(device):
    wt.manual_seed(1)
    q = wt.zeros(1, 64, 2, device=device)
    v = wt.ones(1, 64, 1, device=device)
    out = wt.nn.functional.scaled_dot_product_attention(q, q, v, dropout_p=0.5)
    vals = np.array(out.cpu().tolist()).ravel()
    assert 0.6 < vals.mean() < 1.4 and vals.std() > 0


def test_functional_errors():
    F = wt.nn.functional
    with pytest.raises(RuntimeError, match=r"Given groups=1, weight of size \[4, 3, 3, 3\], expected "
                                           r"input\[1, 2, 5, 5\] to have 3 channels, but got 2 channels instead"):
        F.conv2d(wt.randn(1, 2, 5, 5), wt.randn(4, 3, 3, 3))
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        F.cross_entropy(wt.randn(2, 5), wt.tensor([1, 5]))
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        F.dropout(wt.randn(2), 1.5)
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(wt.randn(2, 2), (1,))
    with pytest.raises(ValueError, match="only one of size or scale_factor should be defined"):
        F.interpolate(wt.randn(1, 1, 2, 2), size=3, scale_factor=2)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        wt.nn.BatchNorm1d(3)(wt.randn(1, 3))
    with pytest.raises(ValueError, match="expected 4D input \\(got 3D input\\)"):
        wt.nn.BatchNorm2d(3)(wt.randn(1, 3, 2))
    with pytest.raises(RuntimeError, match="Given normalized_shape=\\[4\\], expected input with shape \\[\\*, 4\\]"):
        F.layer_norm(wt.randn(2, 3), (4,))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input size"):
        F.conv2d(wt.randn(1, 1, 2, 2), wt.randn(1, 1, 3, 3))
