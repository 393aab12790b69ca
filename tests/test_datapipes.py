"""torch.utils.data's DataPipes against PyTorch: the functional forms (map, filter, batch, unbatch, collate,
concat, zip, shuffle, sharding_filter), MapDataPipes, DataChunk, lengths and errors, the one-iterator rule, and
the decorators (functional_datapipe, non_deterministic, guaranteed_datapipes_determinism, runtime_validation,
argument_validation)."""
import warnings

import pytest
import torch

import webtorch as wt


def _pipes(T):
    d = T.utils.data
    W = d.datapipes.iter.IterableWrapper
    m = d.datapipes.map.SequenceWrapper(list(range(5)))
    out = [list(W(range(10)).map(lambda x: x * 2).filter(lambda x: x % 3 == 0)),
           [list(b) for b in W(range(10)).batch(3)], type(next(iter(W(range(3)).batch(2)))).__name__,
           list(W(range(10)).batch(3, drop_last=True)),
           list(W(range(10)).concat(W(range(3)))) + list(W(range(10)).zip(W("ab"))),
           list(W(range(10)).batch(4).unbatch()), [t.tolist() for t in W(range(4)).batch(2).collate()],
           [len(W(range(10)).map(abs)), len(W(range(10)).batch(3)), len(W(range(10)).batch(3, drop_last=True)),
            len(W(range(10)).zip(W("ab"))), len(W(range(10)).concat(W("ab")))]]
    for f in (lambda: len(W(range(3)).filter(bool)), lambda: len(W(range(3)).batch(2).unbatch()),
              lambda: W(range(3)).foo):
        try:
            f()
        except (TypeError, AttributeError) as e:
            out.append((type(e).__name__, str(e)))
    c = d.DataChunk([1, 2, 3])
    out += [[repr(c), list(c.raw_iterator()), isinstance(c, list), c.as_str("  ")],
            [m[2], len(m), list(m.map(lambda x: x + 1)), m.batch(2)[0], len(m.batch(2)), list(m.concat(m)),
             list(m.zip(m))[:2], repr(m), repr(m.batch(2))],
            list(W([(1, 2), (3, 4)]).map(lambda x: x * 10, input_col=0))
            + list(W([(1, 2), (3, 4)]).map(lambda x: x * 10, input_col=0, output_col=-1))
            + list(W([{"a": 1}, {"a": 3}]).map(lambda x: x * 10, input_col="a", output_col="b")),
            [list(W(range(10)).sharding_filter()), repr(W(range(3)).map(abs)), str(W(range(3))),
             sorted(W(range(10)).shuffle()), sorted(m.shuffle())]]
    dp = W(range(3))
    it1 = iter(dp)
    next(it1)
    it2 = iter(dp)
    out.append(next(it1))
    next(it2)
    with pytest.raises(RuntimeError) as e:
        next(it1)
    out.append(str(e.value).split(":")[0])
    sh = W(range(5)).sharding_filter()
    sh.apply_sharding(2, 1)
    out.append([list(sh), len(sh)])
    return out


def test_datapipes_as_pytorch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _pipes(wt) == _pipes(torch)


def _decorators(T):
    d = T.utils.data
    out = []

    @d.functional_datapipe("times_two_" + T.__name__)
    class TimesTwo(d.IterDataPipe):
        def __init__(self, dp):
            self.dp = dp

        def __iter__(self):
            for x in self.dp:
                yield x * 2
    out.append(list(getattr(d.datapipes.iter.IterableWrapper([1, 2]), "times_two_" + T.__name__)()))

    @d.non_deterministic
    class Random(d.IterDataPipe):
        def __iter__(self):
            yield 1
    out.append(list(Random()))
    with d.guaranteed_datapipes_determinism():
        with pytest.raises(TypeError, match="Random is non-deterministic, but you set"):
            Random()
    with pytest.raises(TypeError, match="Only `IterDataPipe` can be decorated with `non_deterministic`"):
        d.non_deterministic(int)

    class Ints(d.IterDataPipe[int]):
        def __init__(self, items):
            self.items = items

        @d.runtime_validation
        def __iter__(self):
            yield from self.items
    with pytest.raises(AttributeError, match="object has no attribute 'type"):
        list(Ints([1, 2]))
    with d.runtime_validation_disabled():
        out.append(list(Ints([1, "a"])))
    with pytest.raises(TypeError, match="Can not decorate function f with 'runtime_validation'"):
        d.runtime_validation(_named_f())

    @d.argument_validation
    def take(dp: d.IterDataPipe[int], n: int):
        return n
    out.append(take(Ints([1]), 2))
    return out


def _named_f():
    def f():
        pass
    return f


def test_datapipe_decorators():
    assert _decorators(wt) == _decorators(torch)
    assert issubclass(wt.utils.data.DFIterDataPipe, wt.utils.data.IterDataPipe)
