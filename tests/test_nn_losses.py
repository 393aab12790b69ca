"""Every loss against PyTorch (module form, every reduction): same value and same input gradient."""
import warnings

import numpy as np
import pytest
import torch

from _nn_util import NoGrad, check, assert_close
import webtorch as wt

R = np.random.RandomState(5)


def X(*shape, scale=1.0):
    return (R.standard_normal(shape) * scale).astype(np.float32)


def P(*shape, axis=1):
    e = np.exp(R.standard_normal(shape))
    return (e / e.sum(axis=axis, keepdims=True)).astype(np.float32)


def U(*shape):
    return R.uniform(0.05, 0.95, shape).astype(np.float32)


TGT = np.array([1, 0, 4, 2], dtype=np.int64)
TGT_IGN = np.array([1, 2, 4, 2], dtype=np.int64)
TGT_KD = np.array([[0, 2, 1], [2, 2, 0]], dtype=np.int64)
W5 = [0.5, 1.0, 2.0, 0.3, 1.2]

LOSSES = [
    ("mse", lambda nn, T: nn.MSELoss(), [X(3, 4), NoGrad(X(3, 4))]),
    ("l1", lambda nn, T: nn.L1Loss(), [X(3, 4), NoGrad(X(3, 4))]),
    ("smooth_l1", lambda nn, T: nn.SmoothL1Loss(beta=0.5), [X(3, 4), NoGrad(X(3, 4))]),
    ("smooth_l1_beta0", lambda nn, T: nn.SmoothL1Loss(beta=0.0), [X(3, 4), NoGrad(X(3, 4))]),
    ("huber", lambda nn, T: nn.HuberLoss(delta=0.7), [X(3, 4), NoGrad(X(3, 4))]),
    ("mse_target_grad", lambda nn, T: nn.MSELoss(), [X(2, 3), X(2, 3)]),
    ("ce", lambda nn, T: nn.CrossEntropyLoss(), [X(4, 5), NoGrad(TGT)]),
    ("ce_weight_ignore", lambda nn, T: nn.CrossEntropyLoss(weight=T.tensor(W5), ignore_index=2),
     [X(4, 5), NoGrad(TGT_IGN)]),
    ("ce_smoothing", lambda nn, T: nn.CrossEntropyLoss(label_smoothing=0.1), [X(4, 5), NoGrad(TGT)]),
    ("ce_smoothing_weight_ignore", lambda nn, T: nn.CrossEntropyLoss(weight=T.tensor(W5), ignore_index=2,
                                                                     label_smoothing=0.2),
     [X(4, 5), NoGrad(TGT_IGN)]),
    ("ce_kdim", lambda nn, T: nn.CrossEntropyLoss(), [X(2, 3, 3), NoGrad(TGT_KD)]),
    ("ce_unbatched", lambda nn, T: nn.CrossEntropyLoss(), [X(5), NoGrad(np.array(3, dtype=np.int64))]),
    ("ce_probs", lambda nn, T: nn.CrossEntropyLoss(), [X(4, 5), NoGrad(P(4, 5))]),
    ("ce_probs_smoothing_weight", lambda nn, T: nn.CrossEntropyLoss(weight=T.tensor(W5), label_smoothing=0.15),
     [X(4, 5), NoGrad(P(4, 5))]),
    ("nll", lambda nn, T: nn.NLLLoss(), [X(4, 5), NoGrad(TGT)]),
    ("nll_weight_ignore", lambda nn, T: nn.NLLLoss(weight=T.tensor(W5), ignore_index=2), [X(4, 5), NoGrad(TGT_IGN)]),
    ("bce", lambda nn, T: nn.BCELoss(), [U(3, 4), NoGrad(U(3, 4))]),
    ("bce_weight", lambda nn, T: nn.BCELoss(weight=T.tensor([0.5, 1.0, 2.0, 1.5])), [U(3, 4), NoGrad(U(3, 4))]),
    ("bce_logits", lambda nn, T: nn.BCEWithLogitsLoss(), [X(3, 4, scale=3), NoGrad(U(3, 4))]),
    ("bce_logits_pos_weight", lambda nn, T: nn.BCEWithLogitsLoss(pos_weight=T.tensor([1.0, 2.0, 0.5, 3.0]),
                                                                 weight=T.tensor([1.0, 0.5, 2.0, 1.0])),
     [X(3, 4, scale=3), NoGrad(U(3, 4))]),
    ("kl_div_batchmean", lambda nn, T: nn.KLDivLoss(reduction="batchmean"), [X(3, 4), NoGrad(P(3, 4))]),
    ("kl_div_log_target", lambda nn, T: nn.KLDivLoss(reduction="sum", log_target=True),
     [X(3, 4), NoGrad(np.log(P(3, 4)))]),
    ("kl_div_target_grad", lambda nn, T: nn.KLDivLoss(reduction="batchmean"), [X(3, 4), P(3, 4)]),
    ("soft_margin", lambda nn, T: nn.SoftMarginLoss(), [X(3, 4), NoGrad(np.sign(X(3, 4)))]),
    ("multilabel_soft_margin", lambda nn, T: nn.MultiLabelSoftMarginLoss(), [X(3, 4), NoGrad(U(3, 4).round())]),
    ("poisson_nll", lambda nn, T: nn.PoissonNLLLoss(), [X(3, 4), NoGrad(U(3, 4) * 3)]),
    ("gaussian_nll", lambda nn, T: nn.GaussianNLLLoss(), [X(3, 4), NoGrad(X(3, 4)), U(3, 4)]),
    ("margin_ranking", lambda nn, T: nn.MarginRankingLoss(0.2), [X(5), X(5), NoGrad(np.sign(X(5)))]),
    ("hinge_embedding", lambda nn, T: nn.HingeEmbeddingLoss(), [X(5), NoGrad(np.sign(X(5)))]),
    ("cosine_embedding", lambda nn, T: nn.CosineEmbeddingLoss(0.1), [X(3, 4), X(3, 4),
                                                                     NoGrad(np.array([1., -1., 1.], np.float32))]),
    ("triplet", lambda nn, T: nn.TripletMarginLoss(), [X(3, 4), X(3, 4), X(3, 4)]),
]


def _with_reduction(make, reduction):
    def f(nn, T):
        m = make(nn, T)
        m.reduction = reduction
        return m
    return f


# kl_div with reduction="mean" has its own test (test_kl_div_mean)
_LOSS_PARAMS = [pytest.param(c, r, id=f"{c[0]}-{r}") for r in ("mean", "sum", "none") for c in LOSSES
                if not ("kl_div" in c[0] and r == "mean")]


@pytest.mark.parametrize("case,reduction", _LOSS_PARAMS)
def test_loss_matches_torch(case, reduction, device):
    name, make, inputs = case
    if name.startswith("kl_div") and reduction != "none":
        make_r = make if reduction == "mean" else _with_reduction(make, reduction)
    else:
        make_r = _with_reduction(make, reduction)
    check(device, make_r, inputs, name=name + reduction, rand_params=False)


def test_kl_div_mean(device):
    x, t = X(3, 4), P(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(device, lambda nn, T: nn.KLDivLoss(), [x, NoGrad(t)], name="kl_mean", rand_params=False)


def test_cross_entropy_all_ignored_is_nan(device):
    x = wt.tensor(X(2, 3), device=device)
    t = wt.tensor([-100, -100], device=device)
    assert np.isnan(wt.nn.functional.cross_entropy(x, t).item())
    assert torch.isnan(torch.nn.functional.cross_entropy(torch.tensor(X(2, 3)), torch.tensor([-100, -100])))


def test_loss_errors():
    F = wt.nn.functional
    with pytest.raises(ValueError, match="Expected input batch_size \\(3\\) to match target batch_size \\(2\\)"):
        F.cross_entropy(wt.randn(3, 4), wt.tensor([0, 1]))
    with pytest.raises(ValueError, match="Using a target size"):
        F.binary_cross_entropy(wt.rand(3), wt.rand(3, 1))
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        F.mse_loss(wt.randn(2), wt.randn(2), reduction="avg")
    with pytest.warns(UserWarning, match="Using a target size"):
        F.mse_loss(wt.randn(2, 3), wt.randn(3))


def test_legacy_size_average_reduce():
    x, t = X(3, 4), X(3, 4)
    for sa, rd in ((False, None), (None, False), (True, True)):
        tl = torch.nn.MSELoss(size_average=sa, reduce=rd)
        wl = wt.nn.MSELoss(size_average=sa, reduce=rd)
        assert tl.reduction == wl.reduction
        assert_close(wl(wt.tensor(x), wt.tensor(t)), tl(torch.tensor(x), torch.tensor(t)), "cpu")


def test_loss_repr_and_state():
    assert repr(wt.nn.CrossEntropyLoss()) == repr(torch.nn.CrossEntropyLoss()) == "CrossEntropyLoss()"
    w = wt.nn.CrossEntropyLoss(weight=wt.tensor(W5))
    t = torch.nn.CrossEntropyLoss(weight=torch.tensor(W5))
    assert list(w.state_dict()) == list(t.state_dict()) == ["weight"]
    tb = torch.nn.BCEWithLogitsLoss(pos_weight=torch.ones(2))
    wb = wt.nn.BCEWithLogitsLoss(pos_weight=wt.ones(2))
    assert list(wb.state_dict()) == list(tb.state_dict())
