"""webtorch.utils.data: datasets, samplers, DataLoader batching, shuffling determinism, collate."""
from collections import OrderedDict, namedtuple

import numpy as np
import pytest

import webtorch as wt
from webtorch.utils.data import (DataLoader, Dataset, TensorDataset, ConcatDataset, Subset, random_split,
                                 default_collate, BatchSampler, SequentialSampler, RandomSampler, IterableDataset)


def test_tensor_dataset_loader_batches(device):
    x = wt.arange(10, dtype=wt.float32, device=device).reshape(10, 1)
    y = wt.arange(10, device=device)
    ds = TensorDataset(x, y)
    assert len(ds) == 10 and ds[3][1].item() == 3
    dl = DataLoader(ds, batch_size=4)
    assert len(dl) == 3
    batches = list(dl)
    assert [b[0].shape[0] for b in batches] == [4, 4, 2]
    assert batches[2][1].tolist() == [8, 9] and batches[0][0].device.type == wt.device(device).type
    assert len(DataLoader(ds, batch_size=4, drop_last=True)) == 2
    assert [b[1].tolist() for b in DataLoader(ds, batch_size=4, drop_last=True)] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    with pytest.raises(ValueError, match="Size mismatch"):
        TensorDataset(x, wt.zeros(3))


def test_shuffle_determinism_and_coverage():
    ds = TensorDataset(wt.arange(20))
    order = lambda dl: [v for (b,) in dl for v in b.tolist()]  # noqa: E731
    a = order(DataLoader(ds, batch_size=6, shuffle=True, generator=wt.Generator().manual_seed(5)))
    b = order(DataLoader(ds, batch_size=6, shuffle=True, generator=wt.Generator().manual_seed(5)))
    c = order(DataLoader(ds, batch_size=6, shuffle=True, generator=wt.Generator().manual_seed(6)))
    assert a == b and a != c and sorted(a) == list(range(20))
    # one loader, two epochs: different orders; same global seed -> same orders
    wt.manual_seed(0)
    dl = DataLoader(ds, batch_size=6, shuffle=True)
    e1, e2 = order(dl), order(dl)
    wt.manual_seed(0)
    dl = DataLoader(ds, batch_size=6, shuffle=True)
    assert (order(dl), order(dl)) == (e1, e2) and e1 != e2


class Dicts(Dataset):
    def __len__(self):
        return 5

    def __getitem__(self, i):
        return {"x": wt.full((2,), float(i)), "label": i, "w": 0.5 * i, "name": f"s{i}",
                "pair": (i, wt.tensor([i, i]))}


def test_collate_structures():
    b = next(iter(DataLoader(Dicts(), batch_size=3)))
    assert b["x"].shape == (3, 2) and b["x"][2].tolist() == [2.0, 2.0]
    assert b["label"].dtype == wt.int64 and b["label"].tolist() == [0, 1, 2]
    assert b["w"].dtype == wt.float64 and b["name"] == ["s0", "s1", "s2"]
    assert isinstance(b["pair"], list) and b["pair"][0].tolist() == [0, 1, 2] and b["pair"][1].shape == (3, 2)
    P = namedtuple("P", "a b")
    r = default_collate([P(1, 2.0), P(3, 4.0)])
    assert isinstance(r, P) and r.a.tolist() == [1, 3]
    od = default_collate([OrderedDict(a=1), OrderedDict(a=2)])
    assert isinstance(od, OrderedDict) and od["a"].tolist() == [1, 2]
    assert default_collate([True, False]).dtype == wt.bool
    assert default_collate([np.array([1.0, 2.0], dtype=np.float32)] * 2).shape == (2, 2)
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [1]])
    with pytest.raises(TypeError, match="default_collate"):
        default_collate([object()])


def test_custom_collate_sampler_batch_sampler_and_no_batching():
    ds = TensorDataset(wt.arange(7))
    dl = DataLoader(ds, batch_size=3, collate_fn=lambda batch: [int(s[0]) for s in batch])
    assert list(dl) == [[0, 1, 2], [3, 4, 5], [6]]
    dl = DataLoader(ds, batch_sampler=BatchSampler(SequentialSampler(ds), 2, drop_last=True))
    assert [b[0].tolist() for b in dl] == [[0, 1], [2, 3], [4, 5]] and len(dl) == 3
    dl = DataLoader(ds, sampler=[6, 0, 3], batch_size=2)
    assert [b[0].tolist() for b in dl] == [[6, 0], [3]]
    dl = DataLoader(ds, batch_size=None)
    assert [x[0].item() for x in dl] == list(range(7))
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(ds, sampler=[0], shuffle=True)
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(ds, batch_sampler=[[0]], batch_size=2)
    rs = RandomSampler(ds, replacement=True, num_samples=40, generator=wt.Generator().manual_seed(1))
    v = list(rs)
    assert len(v) == 40 and all(0 <= i < 7 for i in v)


def test_iterable_dataset():
    class It(IterableDataset):
        def __iter__(self):
            return iter(range(7))

        def __len__(self):
            return 7

    assert [b.tolist() for b in DataLoader(It(), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(DataLoader(It(), batch_size=3, drop_last=True)) == 2
    with pytest.raises(ValueError, match="shuffle"):
        DataLoader(It(), shuffle=True)


def test_random_split_subset_concat():
    ds = TensorDataset(wt.arange(10))
    a, b = random_split(ds, [7, 3], generator=wt.Generator().manual_seed(42))
    assert len(a) == 7 and len(b) == 3
    got = sorted([int(a[i][0]) for i in range(7)] + [int(b[i][0]) for i in range(3)])
    assert got == list(range(10))
    a2, _ = random_split(ds, [7, 3], generator=wt.Generator().manual_seed(42))
    assert a.indices == a2.indices
    parts = random_split(range(11), [0.5, 0.3, 0.2], generator=wt.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [6, 3, 2]
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(ds, [3, 3])
    s = Subset(ds, [9, 1])
    assert len(s) == 2 and int(s[0][0]) == 9
    c = ConcatDataset([ds, Subset(ds, [0, 1])])
    assert len(c) == 12 and int(c[10][0]) == 0 and int(c[-1][0]) == 1
    assert len(ds + ds) == 20
    batches = list(DataLoader(s, batch_size=2))
    assert batches[0][0].tolist() == [9, 1]
