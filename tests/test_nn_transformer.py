"""nn.Transformer, its decoder (and encoder) stacks and layers, and nn.MultiheadAttention with every mask
form, against PyTorch with torch's weights copied in: outputs, input and parameter gradients, on every
device; PyTorch's errors and warnings for bad masks."""
import warnings

import numpy as np
import pytest
import torch

from _nn_util import NoGrad, check, assert_close, same_error
import webtorch as wt

R = np.random.RandomState(9)


def X(*shape):
    return R.standard_normal(shape).astype(np.float32)


def kpm(n, s, float_=False):
    m = np.zeros((n, s), dtype=bool)
    m[0, -1] = True
    m[-1, 0] = True
    return np.where(m, -np.inf, 0.0).astype(np.float32) if float_ else m


def causal(n, float_=False):
    m = np.triu(np.ones((n, n), dtype=bool), 1)
    return np.where(m, -np.inf, 0.0).astype(np.float32) if float_ else m


def mask3(n, L, S, float_=False):
    m = R.rand(n, L, S) < 0.3
    m[..., 0] = False                       # no fully masked row
    return np.where(m, -1e4, R.standard_normal(m.shape)).astype(np.float32) if float_ else m


def mha_call(**kw):
    """Self-attention when given one input, else (query, key, value), then masks by name."""
    def call(m, T, *xs):
        names = [k for k in ("key_padding_mask", "attn_mask") if kw.get(k)]
        qkv, masks = xs[:len(xs) - len(names)], xs[len(xs) - len(names):]
        q, k, v = qkv * 3 if len(qkv) == 1 else qkv
        opts = {k: v for k, v in kw.items() if k not in names}
        return m(q, k, v, **dict(zip(names, masks)), **opts)
    return call


MHA = lambda *a, **k: (lambda nn, T: nn.MultiheadAttention(*a, **k))  # noqa: E731

CASES = [
    # MultiheadAttention (seq 3 or 4, batch 2, embed 4, 2 heads)
    ("mha_3d_bool_mask", MHA(4, 2), [X(3, 2, 4), NoGrad(mask3(4, 3, 3))], {"call": mha_call(attn_mask=1)}),
    ("mha_3d_float_mask_float_kpm_noweights", MHA(4, 2, batch_first=True),
     [X(2, 3, 4), NoGrad(kpm(2, 3, True)), NoGrad(mask3(4, 3, 3, True))],
     {"call": mha_call(key_padding_mask=1, attn_mask=1, need_weights=False)}),
    ("mha_float_kpm_per_head", MHA(4, 2), [X(3, 2, 4), NoGrad(kpm(2, 3, True))],
     {"call": mha_call(key_padding_mask=1, average_attn_weights=False)}),
    ("mha_bool_both_weights", MHA(4, 2), [X(4, 2, 4), X(3, 2, 4), X(3, 2, 4), NoGrad(kpm(2, 3)),
                                          NoGrad(mask3(1, 4, 3)[0])],
     {"call": mha_call(key_padding_mask=1, attn_mask=1)}),
    ("mha_is_causal_sdpa", MHA(4, 2, batch_first=True), [X(2, 4, 4), NoGrad(causal(4))],
     {"call": mha_call(attn_mask=1, is_causal=True, need_weights=False)}),
    ("mha_is_causal_with_kpm", MHA(4, 2), [X(4, 2, 4), NoGrad(kpm(2, 4)), NoGrad(causal(4))],
     {"call": mha_call(key_padding_mask=1, attn_mask=1, is_causal=True, need_weights=False)}),
    ("mha_kdim_vdim_masks_bf", MHA(4, 2, kdim=3, vdim=5, batch_first=True),
     [X(2, 2, 4), X(2, 3, 3), X(2, 3, 5), NoGrad(kpm(2, 3)), NoGrad(mask3(4, 2, 3))],
     {"call": mha_call(key_padding_mask=1, attn_mask=1, average_attn_weights=False)}),
    ("mha_bias_kv_zero_attn_masks", MHA(4, 2, add_bias_kv=True, add_zero_attn=True),
     [X(3, 2, 4), X(3, 2, 4), X(3, 2, 4), NoGrad(kpm(2, 3)), NoGrad(causal(3, True))],
     {"call": mha_call(key_padding_mask=1, attn_mask=1)}),
    ("mha_nobias_bias_kv", MHA(4, 1, bias=False, add_bias_kv=True), [X(3, 2, 4)],
     {"call": mha_call(need_weights=False)}),
    ("mha_unbatched_masks", MHA(4, 2), [X(3, 4), X(2, 4), X(2, 4), NoGrad(np.array([False, True])),
                                        NoGrad(mask3(2, 3, 2, True))],
     {"call": mha_call(key_padding_mask=1, attn_mask=1)}),
    ("mha_eval_dropout", MHA(4, 2, dropout=0.3), [X(3, 2, 4)], {"train": False, "call": mha_call()}),
    # decoder layers, stacks and the whole Transformer (d_model 4, 2 heads)
    ("decoder_layer", lambda nn, T: nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0), [X(3, 2, 4), X(4, 2, 4)], {}),
    ("decoder_layer_normfirst_gelu_bf_masks",
     lambda nn, T: nn.TransformerDecoderLayer(4, 2, 6, dropout=0.0, activation="gelu", norm_first=True,
                                              batch_first=True, layer_norm_eps=1e-3),
     [X(2, 3, 4), X(2, 4, 4), NoGrad(causal(3, True)), NoGrad(kpm(2, 4)), NoGrad(kpm(2, 3))],
     {"call": lambda m, T, t, mem, tm, mkpm, tkpm: m(t, mem, tgt_mask=tm, memory_key_padding_mask=mkpm,
                                                       tgt_key_padding_mask=tkpm)}),
    ("decoder_layer_callable_nobias_causal",
     lambda nn, T: nn.TransformerDecoderLayer(4, 1, 6, dropout=0.0, activation=T.tanh, bias=False),
     [X(3, 2, 4), X(2, 2, 4), NoGrad(causal(3)), NoGrad(X(3, 2))],
     {"call": lambda m, T, t, mem, tm, mm: m(t, mem, tgt_mask=tm, memory_mask=mm, tgt_is_causal=True)}),
    ("decoder_stack", lambda nn, T: nn.TransformerDecoder(nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0), 2,
                                                          norm=nn.LayerNorm(4)),
     [X(3, 2, 4), X(2, 2, 4), NoGrad(causal(3, True))], {"call": lambda m, T, t, mem, tm: m(t, mem, tgt_mask=tm)}),
    ("decoder_unbatched", lambda nn, T: nn.TransformerDecoder(nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0), 1),
     [X(3, 4), X(2, 4)], {}),
    ("encoder_stack_masks_bf", lambda nn, T: nn.TransformerEncoder(
        nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True), 2, enable_nested_tensor=False),
     [X(2, 3, 4), NoGrad(causal(3)), NoGrad(kpm(2, 3))],
     {"call": lambda m, T, x, am, kp: m(x, mask=am, src_key_padding_mask=kp)}),
    ("transformer", lambda nn, T: nn.Transformer(4, 2, 1, 1, 8, dropout=0.0),
     [X(3, 2, 4), X(2, 2, 4), NoGrad(kpm(2, 3)), NoGrad(kpm(2, 3))],
     {"call": lambda m, T, s, t, skp, mkp: m(s, t, tgt_mask=T.nn.Transformer.generate_square_subsequent_mask(2),
                                            src_key_padding_mask=skp, memory_key_padding_mask=mkp)}),
    ("transformer_bf_normfirst_nobias_causal", lambda nn, T: nn.Transformer(
        4, 2, 2, 1, 6, dropout=0.0, batch_first=True, norm_first=True, bias=False, activation="gelu",
        layer_norm_eps=1e-4),
     [X(2, 3, 4), X(2, 3, 4), NoGrad(causal(3))],
     {"call": lambda m, T, s, t, tm: m(s, t, src_mask=tm, tgt_mask=tm, tgt_is_causal=True, src_is_causal=True)}),
    ("transformer_unbatched_eval_dropout", lambda nn, T: nn.Transformer(4, 2, 1, 1, 8, dropout=0.2),
     [X(3, 4), X(2, 4)], {"train": False}),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_attention_and_transformer_match_torch(case, device):
    name, make, inputs, opts = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the enable_nested_tensor warning, both libraries
        check(device, make, inputs, name=name, **opts)


def test_train_mode_shapes(device):
    wt.manual_seed(0)
    m = wt.nn.Transformer(8, 2, 1, 1, 16, dropout=0.5, batch_first=True).to(device)
    src, tgt = wt.randn(2, 5, 8, device=device), wt.randn(2, 3, 8, device=device)
    a = m(src, tgt)
    b = m(src, tgt)
    assert tuple(a.shape) == (2, 3, 8)
    assert not np.allclose(np.array(a.tolist()), np.array(b.tolist()))
    a.sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.eval()
    assert np.allclose(np.array(m(src, tgt).tolist()), np.array(m(src, tgt).tolist()))


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
def test_square_subsequent_mask_state_dict_and_repr():
    for args, kw in (((3,), {}), ((4,), {"dtype": torch.float64}), ((2,), {"device": "cpu"})):
        wkw = {k: getattr(wt, str(v).split(".")[-1]) if k == "dtype" else v for k, v in kw.items()}
        want = torch.nn.Transformer.generate_square_subsequent_mask(*args, **kw)
        got = wt.nn.Transformer.generate_square_subsequent_mask(*args, **wkw)
        assert str(got.dtype) == str(want.dtype) and got.tolist() == want.tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for make in (lambda nn: nn.Transformer(8, 2, 2, 1, 16), lambda nn: nn.Transformer(8, 2, 1, 1, 16, bias=False),
                     lambda nn: nn.TransformerDecoderLayer(8, 2, 16, norm_first=True),
                     lambda nn: nn.MultiheadAttention(8, 2, kdim=3, vdim=5, add_bias_kv=True)):
            tm, wm = make(torch.nn), make(wt.nn)
            assert repr(wm) == repr(tm)
            tsd, wsd = tm.state_dict(), wm.state_dict()
            assert list(wsd) == list(tsd)
            assert all(tuple(wsd[k].shape) == tuple(tsd[k].shape) for k in tsd)
            # webtorch's weights load into torch and give torch's numbers back
            tm.load_state_dict({k: torch.tensor(np.array(v.tolist(), dtype=np.float32)) for k, v in wsd.items()})
    t = wt.nn.Transformer(8, 2, 1, 1, 16)
    for p in t.parameters():   # xavier_uniform_ on every matrix
        if p.dim() > 1:
            bound = (6 / sum(p.shape)) ** 0.5
            assert float(p.detach().abs().max()) <= bound


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
def test_errors_and_warnings_match_torch():
    both = same_error

    def mha(T, q, k, v, **kw):
        T.manual_seed(0)
        return T.nn.MultiheadAttention(4, 2)(q, k, v, **kw)
    both(lambda T: mha(T, T.ones(3, 2, 4), T.ones(3, 4), T.ones(3, 4)))
    both(lambda T: mha(T, T.ones(3, 4), T.ones(3, 4), T.ones(3, 4), key_padding_mask=T.ones(1, 3, dtype=T.bool)))
    both(lambda T: mha(T, T.ones(3, 2, 4), T.ones(3, 2, 4), T.ones(3, 2, 4), attn_mask=T.ones(1, 1, 3, 3)))
    both(lambda T: mha(T, T.ones(3, 4), T.ones(3, 4), T.ones(3, 4), attn_mask=T.ones(3, 3, 3)))
    both(lambda T: mha(T, T.ones(3, 2, 4), T.ones(3, 2, 4), T.ones(3, 2, 4), attn_mask=T.ones(3, 2)))
    both(lambda T: mha(T, T.ones(3, 2, 4), T.ones(3, 2, 4), T.ones(3, 2, 4), attn_mask=T.ones(5, 3, 3)))
    both(lambda T: mha(T, T.ones(3, 2, 4), T.ones(3, 2, 4), T.ones(3, 2, 4), key_padding_mask=T.ones(2, 4)))
    both(lambda T: mha(T, T.ones(3, 2, 4), T.ones(3, 2, 4), T.ones(3, 2, 4),
                       key_padding_mask=T.ones(2, 3, dtype=T.int32)))
    both(lambda T: mha(T, T.ones(3, 2, 4), T.ones(3, 2, 4), T.ones(2, 2, 4)))
    both(lambda T: mha(T, T.ones(3, 2, 4), T.ones(3, 2, 4), T.ones(3, 2, 4), is_causal=True))
    both(lambda T: mha(T, T.ones(1, 3, 2, 4), T.ones(3, 2, 4), T.ones(3, 2, 4)))
    both(lambda T: T.nn.Transformer(4, 2, 1, 1, 8)(T.ones(3, 2, 4), T.ones(3, 1, 4)))
    both(lambda T: T.nn.Transformer(4, 2, 1, 1, 8)(T.ones(3, 2, 4), T.ones(3, 2, 5)))
    both(lambda T: T.nn.TransformerDecoderLayer(4, 2, 8, activation="tanh"))
    with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and attn_mask is deprecated"):
        wt.nn.MultiheadAttention(4, 2)(wt.ones(3, 2, 4), wt.ones(3, 2, 4), wt.ones(3, 2, 4),
                                       key_padding_mask=wt.zeros(2, 3, dtype=wt.bool), attn_mask=wt.zeros(3, 3))
    with pytest.warns(UserWarning, match="because encoder_layer.self_attn.batch_first was not True"):
        wt.nn.Transformer(4, 2, 1, 1, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wt.nn.TransformerEncoder(wt.nn.TransformerEncoderLayer(4, 2, 8, batch_first=True), 1)


def test_causal_mask_detection(device):
    """An explicit causal float mask is recognized as causal, as PyTorch does, and gives the same numbers."""
    from webtorch.nn.modules.transformer import _detect_is_causal_mask
    m = wt.nn.Transformer.generate_square_subsequent_mask(4, device=device)
    assert _detect_is_causal_mask(m, None, 4) is True
    assert _detect_is_causal_mask(m, None, 3) is False
    assert _detect_is_causal_mask(m, False, 4) is False
    assert_close(m, torch.nn.Transformer.generate_square_subsequent_mask(4), device)


def test_encoder_inference_with_padding_matches_nested_tensor_path(device):
    """In inference without gradients PyTorch runs a padded batch as a nested tensor and returns zeros at
    the padded positions (before the final norm); webtorch gives the same numbers."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for norm, mask_check in ((False, True), (True, False)):   # mask_check=False: padding taken as trailing
            def make(nn):
                layer = nn.TransformerEncoderLayer(4, 2, 8, batch_first=True)
                return nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(4) if norm else None, mask_check=mask_check)
            tm = make(torch.nn).eval()
            wm = make(wt.nn).eval()
            wm.load_state_dict({k: wt.tensor(v.numpy()) for k, v in tm.state_dict().items()})
            wm.to(device)
            x = X(2, 4, 4)
            for k in (kpm(2, 4), np.array([[False, False, True, True], [False, False, False, True]])):
                with torch.no_grad():
                    want = tm(torch.tensor(x), src_key_padding_mask=torch.tensor(k))
                with wt.no_grad():
                    got = wm(wt.tensor(x, device=device), src_key_padding_mask=wt.tensor(k, device=device))
                assert_close(got, want, device, f"norm={norm} mask_check={mask_check} {k}")
