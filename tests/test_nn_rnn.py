"""nn.RNN / LSTM / GRU, their cells and nn.utils.rnn against PyTorch: torch's weights copied in, same
inputs -> same outputs, final states, input gradients and every parameter's gradient, on every device."""
import warnings

import numpy as np
import pytest
import torch

from _nn_util import check, assert_close, same_error
import webtorch as wt

R = np.random.RandomState(5)


def X(*shape):
    return R.standard_normal(shape).astype(np.float32)


def packed_call(lengths, batch_first=False, enforce_sorted=False, with_state=True):
    """Pack x, run the module on it (with the given initial state), pad the output back."""
    def call(m, T, x, *state):
        U = T.nn.utils.rnn
        p = U.pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
        hx = None if not state else (state[0] if len(state) == 1 else tuple(state))
        out, h = m(p, hx) if with_state else m(p)
        assert isinstance(out, U.PackedSequence)
        padded, lens = U.pad_packed_sequence(out, batch_first=batch_first)
        assert lens.tolist() == sorted(lengths, reverse=True) or not enforce_sorted
        return padded, h
    return call


def with_state(m, T, x, *state):
    return m(x, state[0] if len(state) == 1 else tuple(state))


# (id, make(nn, T), inputs, options); T=3 steps, batch 2, input 3, hidden 4 unless stated
CASES = [
    ("lstm", lambda nn, T: nn.LSTM(3, 4), [X(3, 2, 3)], {}),
    ("lstm_2layer_bidir_bf_state", lambda nn, T: nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True),
     [X(2, 3, 3), X(4, 2, 4), X(4, 2, 4)], {"call": with_state}),
    ("lstm_proj_bidir", lambda nn, T: nn.LSTM(3, 4, proj_size=2, bidirectional=True, num_layers=2),
     [X(3, 2, 3), X(4, 2, 2), X(4, 2, 4)], {"call": with_state}),
    ("lstm_nobias", lambda nn, T: nn.LSTM(3, 4, bias=False), [X(3, 2, 3)], {}),
    ("lstm_unbatched_state", lambda nn, T: nn.LSTM(3, 4, num_layers=2), [X(3, 3), X(2, 4), X(2, 4)],
     {"call": with_state}),
    ("lstm_packed_bidir_proj", lambda nn, T: nn.LSTM(3, 4, proj_size=3, bidirectional=True, num_layers=2),
     [X(4, 3, 3), X(4, 3, 3), X(4, 3, 4)], {"call": packed_call([2, 4, 1])}),
    ("lstm_packed_sorted_bf", lambda nn, T: nn.LSTM(3, 4, batch_first=True, bidirectional=True),
     [X(3, 4, 3)], {"call": packed_call([4, 2, 2], batch_first=True, enforce_sorted=True)}),
    ("lstm_dropout_eval", lambda nn, T: nn.LSTM(3, 4, num_layers=2, dropout=0.5), [X(3, 2, 3)], {"train": False}),
    ("gru", lambda nn, T: nn.GRU(3, 4), [X(3, 2, 3)], {}),
    ("gru_2layer_bidir_state", lambda nn, T: nn.GRU(3, 4, num_layers=2, bidirectional=True),
     [X(3, 2, 3), X(4, 2, 4)], {"call": with_state}),
    ("gru_packed_bf_nobias", lambda nn, T: nn.GRU(3, 4, batch_first=True, bias=False, bidirectional=True),
     [X(3, 4, 3), X(2, 3, 4)], {"call": packed_call([1, 4, 3], batch_first=True)}),
    ("gru_unbatched", lambda nn, T: nn.GRU(3, 4, batch_first=True), [X(3, 3)], {}),
    ("rnn_tanh_2layer", lambda nn, T: nn.RNN(3, 4, 2), [X(3, 2, 3), X(2, 2, 4)], {"call": with_state}),
    ("rnn_relu_bidir_bf", lambda nn, T: nn.RNN(3, 4, nonlinearity="relu", bidirectional=True, batch_first=True),
     [X(2, 3, 3)], {}),
    ("rnn_packed", lambda nn, T: nn.RNN(3, 4, bidirectional=True), [X(3, 3, 3)],
     {"call": packed_call([3, 1, 2], with_state=False)}),
    ("rnn_unbatched_state", lambda nn, T: nn.RNN(3, 4, bias=False), [X(3, 3), X(1, 4)], {"call": with_state}),
    # cells
    ("rnncell", lambda nn, T: nn.RNNCell(3, 4), [X(2, 3), X(2, 4)], {}),
    ("rnncell_relu_nobias", lambda nn, T: nn.RNNCell(3, 4, bias=False, nonlinearity="relu"), [X(2, 3)], {}),
    ("lstmcell", lambda nn, T: nn.LSTMCell(3, 4), [X(2, 3), X(2, 4), X(2, 4)],
     {"call": lambda m, T, x, h, c: m(x, (h, c))}),
    ("lstmcell_unbatched", lambda nn, T: nn.LSTMCell(3, 4, bias=False), [X(3)], {}),
    ("grucell", lambda nn, T: nn.GRUCell(3, 4), [X(2, 3), X(2, 4)], {}),
    ("grucell_unbatched", lambda nn, T: nn.GRUCell(3, 4), [X(3), X(4)], {}),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_recurrent_matches_torch(case, device):
    name, make, inputs, opts = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # torch: "LSTM with projections is not supported with oneDNN"
        check(device, make, inputs, name=name, **opts)


def test_gradcheck_float64():
    lstm = wt.nn.LSTM(2, 3, bidirectional=True, proj_size=1).double()
    gru = wt.nn.GRU(2, 3, num_layers=2).double()
    x = wt.randn(3, 2, 2, dtype=wt.float64, requires_grad=True)
    h0 = wt.randn(2, 2, 1, dtype=wt.float64, requires_grad=True)
    c0 = wt.randn(2, 2, 3, dtype=wt.float64, requires_grad=True)
    g0 = wt.randn(2, 2, 3, dtype=wt.float64, requires_grad=True)
    assert wt.autograd.gradcheck(lambda x, h0, c0: lstm(x, (h0, c0))[0], (x, h0, c0))
    assert wt.autograd.gradcheck(lambda x, g0: gru(x, g0)[1], (x, g0))


def test_parameters_state_dict_repr_and_init():
    for kw in ({}, {"num_layers": 2, "bidirectional": True, "proj_size": 2}, {"bias": False, "proj_size": 1}):
        tm, wm = torch.nn.LSTM(3, 4, **kw), wt.nn.LSTM(3, 4, **kw)
        assert [(n, tuple(p.shape)) for n, p in wm.named_parameters()] == \
            [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
        assert repr(wm) == repr(tm)
        assert [[tuple(p.shape) for p in ws] for ws in wm.all_weights] == \
            [[tuple(p.shape) for p in ws] for ws in tm.all_weights]
        assert wm._flat_weights_names == tm._flat_weights_names
        wm.flatten_parameters()
        bound = 1 / 2.0   # 1/sqrt(hidden_size)
        for p in wm.parameters():
            v = np.array(p.detach().tolist())
            assert np.all(np.abs(v) <= bound) and v.std() > 0.1
        # webtorch -> torch
        tm.load_state_dict({k: torch.tensor(np.array(v.tolist(), dtype=np.float32))
                            for k, v in wm.state_dict().items()})
        x = X(2, 1, 3)
        assert_close(wm(wt.tensor(x))[0], tm(torch.tensor(x))[0], "cpu")
    for make in (lambda nn: nn.GRU(3, 5, 2, dropout=0.25, batch_first=True),
                 lambda nn: nn.RNN(3, 5, nonlinearity="relu", bias=False), lambda nn: nn.RNNCell(2, 3, False, "relu"),
                 lambda nn: nn.LSTMCell(2, 3), lambda nn: nn.GRUCell(2, 3, bias=False)):
        assert repr(make(wt.nn)) == repr(make(torch.nn))
        assert sorted(make(wt.nn).state_dict()) == sorted(make(torch.nn).state_dict())


def test_dropout_train_mode(device):
    m = wt.nn.GRU(3, 4, num_layers=3, dropout=0.5).to(device)
    x = wt.tensor(X(5, 2, 3), device=device)
    wt.manual_seed(0)
    a = m(x)[0]
    b = m(x)[0]
    assert tuple(a.shape) == (5, 2, 4)
    assert not np.allclose(np.array(a.tolist()), np.array(b.tolist()))   # dropout differs call to call
    m.eval()
    assert np.allclose(np.array(m(x)[0].tolist()), np.array(m(x)[0].tolist()))


def test_errors_match_torch():
    both = same_error
    both(lambda T: T.nn.LSTM(3, 4, proj_size=4))
    both(lambda T: T.nn.GRU(3, 4, proj_size=2))
    both(lambda T: T.nn.RNN(3, 4, nonlinearity="gelu"))
    both(lambda T: T.nn.LSTM(3, 4, dropout=1.5))
    both(lambda T: T.nn.LSTM(3, 0))
    both(lambda T: T.nn.LSTM(3, 4)(T.ones(2, 2, 5)))
    both(lambda T: T.nn.LSTM(3, 4)(T.ones(2, 2, 2, 3)))
    both(lambda T: T.nn.LSTM(3, 4)(T.ones(2, 2, 3), (T.zeros(1, 3, 4), T.zeros(1, 2, 4))))
    both(lambda T: T.nn.LSTM(3, 4)(T.ones(2, 2, 3), (T.zeros(1, 2, 4), T.zeros(2, 4))))
    both(lambda T: T.nn.GRU(3, 4)(T.ones(2, 3), T.zeros(1, 1, 4)))
    both(lambda T: T.nn.RNN(3, 4)(T.ones(2, 2, 3), T.zeros(2, 2, 4)))
    both(lambda T: T.nn.RNN(3, 4)(T.ones(2, 2, 3, dtype=T.float64)))
    both(lambda T: T.nn.LSTMCell(3, 4)(T.ones(1, 2, 3)))
    both(lambda T: T.nn.GRUCell(3, 4)(T.ones(2, 3), T.ones(1, 1, 4)))
    both(lambda T: T.nn.utils.rnn.pack_padded_sequence(T.ones(3, 2), [1, 2]))
    both(lambda T: T.nn.utils.rnn.pack_padded_sequence(T.ones(3, 2), [3, 0]))
    both(lambda T: T.nn.utils.rnn.pad_packed_sequence(T.nn.utils.rnn.pack_sequence([T.ones(3)]), total_length=2))
    both(lambda T: T.nn.utils.rnn.pad_sequence([T.ones(2)], padding_side="top"))
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        wt.nn.GRU(3, 4, dropout=0.3)


def test_packing_helpers(device):
    seqs = [X(2, 3), X(4, 3), X(1, 3)]

    def make(nn, T):
        return nn.Identity()

    def call(m, T, a, b, c):
        U = T.nn.utils.rnn
        outs = [U.pad_sequence([a, b, c], batch_first=True, padding_value=-1.5),
                U.pad_sequence([a, b, c], padding_side="left")]
        p = U.pack_sequence([a, b, c], enforce_sorted=False)
        assert p.sorted_indices.tolist() == [1, 0, 2] and p.unsorted_indices.tolist() == [1, 0, 2]
        assert p.batch_sizes.device.type == "cpu" and p.batch_sizes.tolist() == [3, 2, 1, 1]
        outs.append(p.data)
        outs.append(U.pad_packed_sequence(p, batch_first=True, padding_value=7.0, total_length=6)[0])
        outs.extend(U.unpack_sequence(p))
        q = U.pack_sequence([b, a, c])
        assert q.sorted_indices is None
        outs.append(U.pad_packed_sequence(q)[0])
        return outs
    check(device, make, seqs, call=call, name="packing", rand_params=False)


def test_packed_sequence_namedtuple():
    P = wt.nn.utils.rnn.PackedSequence
    p = wt.nn.utils.rnn.pack_sequence([wt.ones(2, 1), wt.ones(1, 1)])
    data, batch_sizes, sorted_indices, unsorted_indices = p
    assert P._fields == torch.nn.utils.rnn.PackedSequence._fields
    assert p.data is data and batch_sizes.tolist() == [2, 1] and sorted_indices is None and unsorted_indices is None
    assert p.double().data.dtype is wt.float64 and p.to("cpu") is p
    assert wt.nn.utils.rnn.invert_permutation(wt.tensor([2, 0, 1])).tolist() == [1, 2, 0]


@pytest.mark.usefixtures("webgpu")
def test_lstm_step_dispatches():
    """On webgpu an LSTM time step is one matmul (h @ W_hh^T), one fused kernel for the gate math and
    one copy into the output sequence; the input projection is one matmul for all steps."""
    from webtorch import webgpu
    dev = "webgpu"

    def count(T, grad):
        m = wt.nn.LSTM(8, 16).to(dev)
        x = wt.randn(T, 4, 8, device=dev)
        webgpu.synchronize()
        d0 = webgpu.dispatch_count()
        with wt.set_grad_enabled(grad):
            out, (h, c) = m(x)
        webgpu.synchronize()
        return webgpu.dispatch_count() - d0
    for grad in (False, True):
        per_step = (count(12, grad) - count(4, grad)) / 8
        assert per_step <= 3, (grad, per_step)


def test_packing_under_a_default_device(device):
    """batch_sizes and pad_packed_sequence's lengths live on cpu whatever the default device, as
    in PyTorch (`python -m webtorch --device webgpu` sets the default device: an LSTM over a
    packed batch failed there)."""
    U = wt.nn.utils.rnn
    prev = wt.get_default_device()
    wt.set_default_device(device)
    try:
        x = wt.tensor([[[1.0], [2.0], [3.0]], [[4.0], [5.0], [0.0]]])
        p = U.pack_padded_sequence(x, wt.tensor([3, 2]), batch_first=True, enforce_sorted=False)
        assert p.batch_sizes.device.type == "cpu" and p.data.device.type == device.split(":")[0]
        out, (h, c) = wt.nn.LSTM(1, 2, batch_first=True)(p)
        padded, lengths = U.pad_packed_sequence(out, batch_first=True)
        assert lengths.device.type == "cpu" and lengths.tolist() == [3, 2] and padded.shape == (2, 3, 2)
        assert padded[1, 2].tolist() == [0.0, 0.0] and out.batch_sizes.tolist() == [2, 2, 1]
    finally:
        wt.set_default_device(prev)
