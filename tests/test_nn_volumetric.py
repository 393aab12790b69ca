"""3-D (volumetric) layers against PyTorch: Conv3d/ConvTranspose3d, Max/Avg/Adaptive pooling 3-D, and
the 1/2/3-D generic paths they share with the 2-D ones; values, input and parameter gradients on
every device; float64 gradcheck on cpu."""
import numpy as np
import pytest
import torch

from _nn_util import check, assert_close
import webtorch as wt

R = np.random.RandomState(11)


def X(*shape):
    return R.standard_normal(shape).astype(np.float32)


LAYERS = [
    ("conv3d", lambda nn, T: nn.Conv3d(2, 3, 3), [X(1, 2, 4, 5, 4)]),
    ("conv3d_stride_pad_dil_groups", lambda nn, T: nn.Conv3d(2, 4, (2, 3, 2), stride=(2, 1, 1), padding=(1, 0, 2),
                                                             dilation=(1, 2, 1), groups=2, bias=False),
     [X(2, 2, 5, 6, 3)]),
    ("conv3d_same", lambda nn, T: nn.Conv3d(1, 2, (2, 3, 4), padding="same"), [X(1, 1, 3, 4, 5)]),
    ("conv3d_valid_unbatched", lambda nn, T: nn.Conv3d(2, 2, 2, padding="valid"), [X(2, 3, 3, 3)]),
    ("conv3d_reflect", lambda nn, T: nn.Conv3d(1, 2, 3, padding=1, padding_mode="reflect"), [X(1, 1, 3, 4, 4)]),
    ("conv3d_replicate", lambda nn, T: nn.Conv3d(1, 1, 2, padding=(1, 0, 1), padding_mode="replicate"),
     [X(1, 1, 3, 3, 3)]),
    ("conv3d_circular", lambda nn, T: nn.Conv3d(1, 1, 3, padding=(0, 1, 2), padding_mode="circular"),
     [X(1, 1, 3, 3, 4)]),
    ("conv3d_1x1", lambda nn, T: nn.Conv3d(3, 2, 1), [X(1, 3, 2, 2, 3)]),
    ("conv_transpose3d", lambda nn, T: nn.ConvTranspose3d(2, 2, 3, stride=2, padding=1, output_padding=(1, 0, 1)),
     [X(1, 2, 2, 3, 2)]),
    ("conv_transpose3d_groups_dil", lambda nn, T: nn.ConvTranspose3d(2, 4, 2, groups=2, dilation=(2, 1, 1)),
     [X(1, 2, 2, 2, 2)]),
    ("maxpool3d", lambda nn, T: nn.MaxPool3d(2), [X(1, 2, 4, 4, 4)]),
    ("maxpool3d_pad_ceil_dil", lambda nn, T: nn.MaxPool3d(3, stride=2, padding=1, dilation=(1, 1, 2), ceil_mode=True),
     [X(1, 1, 5, 6, 7)]),
    ("maxpool3d_unbatched", lambda nn, T: nn.MaxPool3d((1, 2, 2)), [X(2, 2, 4, 4)]),
    ("avgpool3d", lambda nn, T: nn.AvgPool3d(2), [X(1, 2, 4, 4, 4)]),
    ("avgpool3d_pad_ceil", lambda nn, T: nn.AvgPool3d(3, stride=2, padding=1, ceil_mode=True), [X(1, 1, 5, 6, 4)]),
    ("avgpool3d_no_pad_count", lambda nn, T: nn.AvgPool3d((3, 2, 3), stride=2, padding=(1, 1, 0),
                                                          count_include_pad=False), [X(1, 1, 5, 4, 5)]),
    ("avgpool3d_divisor", lambda nn, T: nn.AvgPool3d(2, divisor_override=3), [X(1, 1, 2, 4, 4)]),
    ("adaptive_avgpool3d", lambda nn, T: nn.AdaptiveAvgPool3d((2, 3, 2)), [X(1, 2, 5, 7, 3)]),
    ("adaptive_avgpool3d_even_none", lambda nn, T: nn.AdaptiveAvgPool3d((2, None, 1)), [X(1, 2, 4, 3, 4)]),
    ("adaptive_maxpool3d", lambda nn, T: nn.AdaptiveMaxPool3d((2, 3, 2)), [X(1, 2, 5, 7, 3)]),
    ("adaptive_avgpool1d_uneven", lambda nn, T: nn.AdaptiveAvgPool1d(3), [X(2, 2, 7)]),
    ("batchnorm3d", lambda nn, T: nn.BatchNorm3d(2), [X(2, 2, 2, 3, 2)]),
]


@pytest.mark.parametrize("case", LAYERS, ids=[c[0] for c in LAYERS])
def test_layer_3d_matches_torch(case, device):
    name, make, inputs = case
    check(device, make, inputs, name=name)


@pytest.mark.parametrize("fn", ["max_pool3d", "adaptive_max_pool3d"])
def test_pool3d_indices(fn, device):
    x = X(2, 2, 5, 6, 4)
    args = dict(kernel_size=(2, 3, 2), stride=(2, 2, 1), padding=(1, 1, 0), ceil_mode=True) \
        if fn == "max_pool3d" else dict(output_size=(2, 4, 3))
    tv, ti = getattr(torch.nn.functional, fn)(torch.tensor(x), return_indices=True, **args)
    wv, wi = getattr(wt.nn.functional, fn)(wt.tensor(x, device=device), return_indices=True, **args)
    assert_close(wv, tv, device)
    assert wi.dtype is wt.int64 and wi.tolist() == ti.tolist()


def test_conv3d_gradcheck_float64():
    x = wt.randn(1, 2, 2, 3, 2, dtype=wt.float64, requires_grad=True)
    w = wt.randn(2, 1, 2, 2, 2, dtype=wt.float64, requires_grad=True)
    b = wt.randn(2, dtype=wt.float64, requires_grad=True)
    F = wt.nn.functional
    assert wt.autograd.gradcheck(lambda x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=1, groups=2),
                                 (x, w, b))
    wt_ = wt.randn(2, 1, 2, 2, 2, dtype=wt.float64, requires_grad=True)
    assert wt.autograd.gradcheck(lambda x, w: F.conv_transpose3d(x, w, stride=2, padding=(1, 0, 0)), (x, wt_))
    assert wt.autograd.gradcheck(lambda x: F.avg_pool3d(x, 2, padding=1, count_include_pad=False), (x,))


def test_3d_grad_fn_names_and_errors():
    F = wt.nn.functional
    x = wt.randn(1, 1, 4, 4, 4, requires_grad=True)
    assert F.conv3d(x, wt.randn(1, 1, 2, 2, 2)).grad_fn.name() == "ConvolutionBackward0"
    assert F.max_pool3d(x, 2).grad_fn.name() == "MaxPool3DWithIndicesBackward0"
    assert F.avg_pool3d(x, 2).grad_fn.name() == "AvgPool3DBackward0"
    r = wt.randn
    for fn, args in ((F.conv3d, (r(1, 1, 4, 4, 4), r(1, 1, 5, 1, 1))),
                     (F.conv3d, (r(1, 2, 4, 4, 4), r(1, 1, 1, 1, 1))),
                     (F.conv3d, (r(4, 4), r(1, 1, 1, 1, 1))),
                     (F.conv_transpose3d, (r(4, 4), r(1, 1, 1, 1, 1))),
                     (F.conv2d, (r(4, 4), r(1, 1, 1, 1))),
                     (F.max_pool3d, (r(1, 1, 1, 4, 4), 2)),
                     (F.max_pool3d, (r(4, 4), 2)),
                     (F.max_pool3d, (r(1, 1, 4, 4, 4), (2, 3, 2), 2, (1, 2, 1))),
                     (F.max_pool2d, (r(1, 1, 4, 4), 2, 2, 2)),
                     (F.avg_pool2d, (r(1, 1, 4, 4), 2, 2, 2)),
                     (F.avg_pool3d, (r(1, 1, 4, 4, 4), 2, 2, 2)),
                     (F.avg_pool3d, (r(1, 1, 1, 4, 4), 2)),
                     (F.adaptive_max_pool3d, (r(4), 2)),
                     (F.adaptive_avg_pool3d, (r(4, 4), 2))):
        targs = [torch.tensor(a.tolist()) if isinstance(a, wt.Tensor) else a for a in args]
        with pytest.raises(RuntimeError) as te:
            getattr(torch.nn.functional, fn.__name__)(*targs)
        with pytest.raises(RuntimeError) as we:
            fn(*args)
        assert str(we.value) == str(te.value)


def _interp(F, T, x, kw):
    return F.interpolate(x, **kw)


INTERP = [
    ("bicubic_up", (1, 2, 3, 4), dict(size=(7, 5), mode="bicubic")),
    ("bicubic_up_ac", (1, 2, 3, 4), dict(size=(7, 9), mode="bicubic", align_corners=True)),
    ("bicubic_down_scale", (1, 1, 7, 6), dict(scale_factor=0.6, mode="bicubic")),
    ("bicubic_scale_recompute", (2, 1, 3, 5), dict(scale_factor=(1.7, 2.3), mode="bicubic",
                                                   recompute_scale_factor=True)),
    ("bicubic_tiny", (1, 1, 1, 2), dict(size=(3, 5), mode="bicubic")),
    ("trilinear", (1, 2, 2, 3, 4), dict(size=(3, 5, 2), mode="trilinear")),
    ("trilinear_ac_scale", (1, 1, 3, 2, 3), dict(scale_factor=(1.5, 2, 0.7), mode="trilinear", align_corners=True)),
    ("nearest_3d_scale", (1, 1, 2, 3, 4), dict(scale_factor=1.7)),
    ("nearest_same_size_scale", (1, 1, 2, 3), dict(scale_factor=1.4)),
    ("nearest_exact_3d", (1, 1, 3, 2, 5), dict(size=(4, 5, 3), mode="nearest-exact")),
    ("area_3d", (1, 2, 5, 4, 6), dict(size=(2, 3, 4), mode="area")),
    ("area_scale", (1, 1, 6, 5), dict(scale_factor=0.5, mode="area")),
]


@pytest.mark.parametrize("case", INTERP, ids=[c[0] for c in INTERP])
def test_interpolate_matches_torch(case, device):
    name, shape, kw = case
    check(device, lambda nn, T: nn.Upsample(**kw), [X(*shape)], name=name)


def test_interpolate_deprecated_aliases_and_errors():
    x = X(1, 1, 2, 3)
    for fn, kw in (("upsample", dict(scale_factor=2, mode="bicubic", align_corners=False)),
                   ("upsample_nearest", dict(size=(3, 4))), ("upsample_bilinear", dict(scale_factor=1.5))):
        with pytest.warns(UserWarning) as tw:
            t = getattr(torch.nn.functional, fn)(torch.tensor(x), **kw)
        with pytest.warns(UserWarning) as ww:
            w = getattr(wt.nn.functional, fn)(wt.tensor(x), **kw)
        assert str(ww[0].message) == str(tw[0].message)
        assert_close(w, t, "cpu")
    for shape, kw in (((1, 1, 2, 3), dict(size=3, scale_factor=2)),
                      ((1, 1, 2, 3), dict(size=(2, 3), recompute_scale_factor=True)),
                      ((1, 1, 2, 3), dict(scale_factor=(2, 2, 2))),
                      ((1, 1, 2, 3), dict(size=3, mode="nearest", align_corners=True)),
                      ((1, 1, 2, 3, 3), dict(size=3, mode="bilinear", antialias=True)),
                      ((1, 1, 2, 3), dict(size=3, mode="bicubic", antialias=False, align_corners=None)),
                      ((1, 1, 2), dict(size=3, mode="bicubic")),
                      ((1, 1, 2, 3), dict(size=3, mode="trilinear")),
                      ((2, 3), dict(size=3)),
                      ((1, 1, 2, 3), dict(size=3, mode="lanczos"))):
        x = X(*shape)
        try:
            want = torch.nn.functional.interpolate(torch.tensor(x), **kw)
        except Exception as e:  # noqa: BLE001 - the exception type is what is compared
            with pytest.raises(type(e)) as we:
                wt.nn.functional.interpolate(wt.tensor(x), **kw)
            assert str(we.value) == str(e)
        else:
            assert_close(wt.nn.functional.interpolate(wt.tensor(x), **kw), want, "cpu")
    assert repr(wt.nn.Upsample(scale_factor=2, mode="trilinear")) == \
        repr(torch.nn.Upsample(scale_factor=2, mode="trilinear"))
