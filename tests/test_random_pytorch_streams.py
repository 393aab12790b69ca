"""The cpu device draws PyTorch's CPU random streams bit for bit (mt19937 and PyTorch's CPU
transformations), on both cpu backends: numpy and pure Python (as in Pyodide)."""
import warnings

import numpy as np
import pytest
import torch

import webtorch as wt

pytestmark = pytest.mark.parametrize("device", ["cpu", "cpu-pure"], indirect=True)

SEEDS = (0, 7, 2**40 + 5)


def same(w, t):
    """A webtorch result (tensor, list, number) equals PyTorch's bit for bit."""
    a = np.asarray(w.numpy() if isinstance(w, wt.Tensor) else w)
    b = np.asarray(t.numpy() if isinstance(t, torch.Tensor) else t)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    np.testing.assert_array_equal(a, b)


def both(fn, seeds=SEEDS):
    """fn(module) run after manual_seed(seed) in webtorch and PyTorch: every result equal."""
    for seed in seeds:
        wt.manual_seed(seed)
        torch.manual_seed(seed)
        w, t = fn(wt), fn(torch)
        for a, b in zip(w, t) if isinstance(w, (list, tuple)) else [(w, t)]:
            same(a, b)


def test_state_bytes_are_pytorchs(device):
    for seed in (0, 1, 2**40 + 5, -1):
        wt.manual_seed(seed)
        torch.manual_seed(seed)
        same(wt.get_rng_state(), torch.get_rng_state())
        assert wt.initial_seed() == torch.initial_seed()
        wt.randn(3), torch.randn(3)  # a cached second Box-Muller sample is part of the state
        wt.rand(5), torch.rand(5)
        same(wt.get_rng_state(), torch.get_rng_state())
    # a state saved by PyTorch loads in webtorch and back
    torch.manual_seed(3)
    torch.randn(7)
    wt.set_rng_state(wt.tensor(torch.get_rng_state().tolist(), dtype=wt.uint8))
    same(wt.randn(5), torch.randn(5))
    torch.set_rng_state(torch.tensor(wt.get_rng_state().tolist(), dtype=torch.uint8))
    same(wt.rand(700), torch.rand(700))
    with pytest.raises(RuntimeError, match="Expected a CPUGeneratorImplState of size 5056"):
        wt.set_rng_state(wt.zeros(10, dtype=wt.uint8))
    with pytest.raises(RuntimeError, match="ByteTensor"):
        wt.set_rng_state(wt.zeros(5056))


@pytest.mark.parametrize("n", [1, 3, 15, 16, 17, 33, 1000])
def test_uniform_and_normal(device, n):
    both(lambda m: [m.rand(n), m.rand(n, dtype=m.float64), m.rand(n, dtype=m.float16),
                    m.empty(n).uniform_(-0.3, 0.7), m.empty(n, dtype=m.float64).uniform_(-2, 5),
                    m.randn(n), m.randn(n, dtype=m.float64), m.randn(n, dtype=m.float16), m.randn(3),
                    m.empty(n).normal_(0.5, 0.02), m.empty(n, dtype=m.float64).normal_(-1.5, 3.0)])


def test_complex_draws_are_pairs_of_reals(device):
    both(lambda m: [m.randn(20, dtype=m.complex64), m.rand(5, dtype=m.complex128), m.randn(3, 2, dtype=m.cdouble),
                    m.empty(17, dtype=m.complex64).normal_(0, 2.0), m.randn_like(m.ones(4, dtype=m.complex64))])


def test_integers_and_permutations(device):
    both(lambda m: [m.randint(0, 10, (50,)), m.randint(-5, 2**40, (7,)), m.randint(3, 1000, (4, 5), dtype=m.int32),
                    m.randint(6, (3,), dtype=m.uint8), m.empty((), dtype=m.int64).random_(),
                    m.empty(5, dtype=m.int32).random_(), m.empty(4).random_(), m.empty(4, dtype=m.float64).random_(),
                    m.empty(6).random_(10), m.empty(6, dtype=m.int64).random_(-3, 4),
                    m.empty(3, dtype=m.bool).random_(),
                    m.randperm(0), m.randperm(1), m.randperm(10), m.randperm(500), m.randperm(9, dtype=m.int32)])


def test_distributions_and_bernoulli(device):
    both(lambda m: [m.empty(40).exponential_(2.0), m.empty(5, dtype=m.float64).exponential_(),
                    m.empty(40).geometric_(0.3), m.empty(40).cauchy_(), m.empty(9, dtype=m.float64).cauchy_(1.0, 2.0),
                    m.empty(21).log_normal_(), m.empty(5, dtype=m.float64).log_normal_(0.5, 0.25),
                    m.empty(100).bernoulli_(0.3), m.empty(20, dtype=m.float64).bernoulli_(m.rand(20, dtype=m.float64)),
                    m.empty(20).bernoulli_(m.rand(20)), m.bernoulli(m.rand(30)), m.bernoulli(m.rand(3, 4), 0.2),
                    m.multinomial(m.rand(3, 10), 5, replacement=True), m.multinomial(m.rand(10), 4),
                    m.multinomial(m.rand(2, 7), 1), m.multinomial(m.rand(6, dtype=m.float64), 12, replacement=True)])


def test_fills_of_views_follow_memory_order(device):
    both(lambda m: [m.empty(5, 7).t().uniform_(), m.empty(4, 6)[:, ::2].normal_(), m.empty(20, 3).t().normal_(),
                    m.empty(3, 5, dtype=m.float64).t().bernoulli_(m.rand(5, 3, dtype=m.float64)),
                    m.empty(4, 5).t().random_(3, 9), m.empty(4, 5).t().exponential_()])


def test_generator_objects_have_their_own_streams(device):
    def draw(m):
        g = m.Generator().manual_seed(2**40 + 7)
        out = [m.rand(5, generator=g), m.randn(40, generator=g), m.randperm(8, generator=g), m.rand(2)]
        return out + [g.get_state(), m.Generator().get_state()]
    both(draw, seeds=(0,))
    g = wt.Generator()
    assert g.initial_seed() == torch.Generator().initial_seed() == 67280421310721


def test_dropout_and_initializers(device):
    def draw(m):
        f = m.nn.functional
        lin = m.nn.Linear(20, 7)
        w = m.empty(30, 20)
        return [lin.weight.detach(), lin.bias.detach(), f.dropout(m.ones(40), 0.3),
                f.dropout(m.ones(8, dtype=m.float64)),
                f.dropout2d(m.ones(2, 3, 4, 4), 0.5), f.alpha_dropout(m.ones(20), 0.2, training=True),
                m.nn.init.xavier_uniform_(w).clone(), m.nn.init.xavier_normal_(w).clone(),
                m.nn.init.kaiming_normal_(w).clone(), m.nn.init.trunc_normal_(w, std=0.02).clone(),
                m.nn.init.trunc_normal_(w, a=1.0, b=3.0).clone(), m.nn.Embedding(10, 4).weight.detach(),
                f.feature_alpha_dropout(m.ones(2, 3, 4), 0.5, training=True), f.rrelu(m.randn(30), training=True)]
    both(draw)
    # gumbel_softmax draws PyTorch's exponential_ noise; its float32 log and softmax agree within an ulp or two
    wt.manual_seed(0)
    torch.manual_seed(0)
    np.testing.assert_allclose(wt.nn.functional.gumbel_softmax(wt.arange(10.0).reshape(2, 5), tau=0.5).numpy(),
                               torch.nn.functional.gumbel_softmax(torch.arange(10.0).reshape(2, 5), tau=0.5).numpy(),
                               rtol=1e-6, atol=1e-7)


def test_normal_of_tensors(device):
    both(lambda m: [m.normal(0.3, 1.7, (40,)), m.normal(m.arange(20.0), 2.5), m.normal(0.5, m.arange(1, 21.0)),
                    m.normal(m.zeros(4, 1) + 0.1, m.ones(5) * 3), m.normal(m.zeros(3, dtype=m.float64), 0.7)])
    for m in (wt, torch):  # PyTorch's nodes: the draw does not depend on mean and std
        mean, std = m.zeros(3, requires_grad=True), m.ones(3, requires_grad=True)
        y = m.normal(mean, std)
        y.sum().backward()
        assert type(y.grad_fn).__name__ == "NormalBackward3" and mean.grad.tolist() == std.grad.tolist() == [0.0] * 3


def test_data_loader_shuffles_as_pytorch(device):
    def draw(m):
        data = m.utils.data
        DL, TD, RS, split = data.DataLoader, data.TensorDataset, data.RandomSampler, data.random_split
        ds = TD(m.arange(20))
        dl = DL(ds, batch_size=6, shuffle=True)
        order = [b[0].tolist() for b in dl] + [b[0].tolist() for b in dl]
        with_gen = [b[0].tolist() for b in DL(ds, batch_size=6, shuffle=True, generator=m.Generator().manual_seed(5))]
        picks = list(RS(range(10), replacement=True, num_samples=40))
        order = [x for batch in order for x in batch]
        with_gen = [x for batch in with_gen for x in batch]
        parts = [i for p in split(range(10), [3, 7], generator=m.Generator().manual_seed(1)) for i in p]
        return [order, with_gen, picks, parts, m.rand(2)]
    both(draw)


def test_seeded_training_step_prints_pytorchs_numbers(device):
    """A tiny seeded model: initialization, data and dropout masks equal PyTorch's bit for bit; the
    loss and updated weights as PyTorch prints them."""
    def run(m):
        m.manual_seed(0)
        model = m.nn.Sequential(m.nn.Linear(8, 16), m.nn.ReLU(), m.nn.Dropout(0.25), m.nn.Linear(16, 2))
        init = [p.detach().clone() for p in model.parameters()]
        x, y = m.randn(4, 8), m.randint(0, 2, (4,))
        opt = m.optim.SGD(model.parameters(), lr=0.1)
        loss = m.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return init + [x, y], [loss.detach()] + [p.detach() for p in model.parameters()], m.rand(3)
    (w_exact, w_step, w_after), (t_exact, t_step, t_after) = run(wt), run(torch)
    for a, b in zip(w_exact, t_exact):
        same(a, b)
    for a, b in zip(w_step, t_step):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    assert repr(w_step[0]) == repr(t_step[0])
    same(w_after, t_after)  # the stream is where PyTorch's is: dropout drew as many words


def test_generator_methods_as_pytorchs(device):
    for m in (wt, torch):
        g = m.Generator().manual_seed(4)
        m.rand(3, generator=g)
        c = g.clone_state()
        assert c is not g and c.get_state().tolist() == g.get_state().tolist()
        with pytest.raises(RuntimeError, match="CPU Generator does not use offset"):
            g.get_offset()
        with pytest.raises(RuntimeError, match="CPU Generator does not use offset"):
            g.set_offset(1)
        with pytest.raises(NotImplementedError, match="graphsafe_get_state is not supported"):
            g.graphsafe_get_state()
        assert m.random.thread_safe_generator() is None
    same(wt.rand(4, generator=wt.Generator().manual_seed(4).clone_state()),
         torch.rand(4, generator=torch.Generator().manual_seed(4).clone_state()))


def test_module_initialization_is_pytorchs(device):
    def params(m):
        mods = [m.nn.Conv2d(3, 8, 3), m.nn.LSTM(10, 20, 2), m.nn.GRU(5, 7, bidirectional=True),
                m.nn.TransformerEncoderLayer(16, 4, 32), m.nn.Bilinear(3, 4, 5), m.nn.Embedding(50, 8, padding_idx=0)]
        return [p.detach() for mod in mods for p in mod.parameters()]
    both(params, seeds=(0,))


def test_feature_dropout_any_rank_as_pytorch(device):
    """dropout1d/2d/3d draw one value per (N, C) of the input as PyTorch's feature_dropout does: a 2-D
    input to dropout2d (pytorch/examples' mnist_rnn), a 3-D one as (N, C, L), unbatched 1d/3d inputs; the
    deprecation warnings; in place on the input."""
    shapes = [("dropout2d", (4, 6)), ("dropout2d", (2, 3, 5)), ("dropout2d", (2, 3, 4, 4)), ("dropout1d", (3, 4)),
              ("dropout1d", (2, 3, 4)),
               ("dropout3d", (3, 2, 2, 2)), ("dropout3d", (2, 3, 2, 2, 2)), ("dropout3d", (4, 5))]

    def draw(m):
        out = []
        for name, shape in shapes:
            x = m.ones(shape)
            out += [getattr(m.nn.functional, name)(m.ones(shape), 0.5), x]
            assert getattr(m.nn.functional, name)(x, 0.3, inplace=True) is x
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both(draw)
    for name, shape, msg in [("dropout2d", (4, 6), "Received a 2-D input to dropout2d"),
                             ("dropout2d", (2, 3, 5), "Received a 3D input to dropout2d"),
                             ("dropout3d", (4, 5), "Received a 2-D input to dropout3d")]:
        with pytest.warns(UserWarning, match=msg):
            getattr(wt.nn.functional, name)(wt.ones(shape))
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 4D input"):
        wt.nn.functional.dropout1d(wt.ones(1, 2, 3, 4))
