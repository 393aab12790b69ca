"""DataLoader: batches from a dataset through a sampler and a collate function (in-process;
`num_workers` is accepted and ignored: Pyodide has no processes and the tensors are already
in memory)."""
from ... import _dtype
from ...ops import _creation
from ._utils.collate import default_collate, default_convert
from .dataset import IterableDataset, TensorDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler


class _InfiniteConstantSampler:
    def __iter__(self):
        while True:
            yield None



def _check_iterable_options(shuffle, sampler, batch_sampler):
    """An IterableDataset orders itself: shuffle, sampler and batch_sampler must be left unspecified."""
    for name, value, given in (("shuffle", shuffle, shuffle not in (None, False)),
                               ("sampler", sampler, sampler is not None),
                               ("batch_sampler", batch_sampler, batch_sampler is not None)):
        if given:
            raise ValueError(f"DataLoader with IterableDataset: expected unspecified {name} option, but got "
                             f"{name}={value}")

class DataLoader:
    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        self.dataset = dataset
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.generator = generator
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            _check_iterable_options(shuffle, sampler, batch_sampler)
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)

    @property
    def _dataset_kind(self):
        return _DatasetKind.Iterable if self._iterable else _DatasetKind.Map

    def _get_iterator(self):
        return _SingleProcessDataLoaderIter(self) if self.num_workers == 0 else _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        return self._get_iterator()

    def _iter_map(self, indices):
        ds = self.dataset
        fast = (type(ds) is TensorDataset and self.collate_fn is default_collate and self._auto_collation)
        getitems = getattr(ds, "__getitems__", None)
        for idx in indices:
            if not self._auto_collation:
                yield self.collate_fn(ds[idx])
            elif fast:
                # one gather per tensor instead of len(batch) indexing ops and a stack
                yield [t[_creation.tensor(idx, dtype=_dtype.int64, device=t.device)] for t in ds.tensors]
            elif callable(getitems):
                yield self.collate_fn(getitems(idx))
            else:
                yield self.collate_fn([ds[i] for i in idx])

    def _iter_iterable(self):
        it = iter(self.dataset)
        if not self._auto_collation:
            for x in it:
                yield self.collate_fn(x)
            return
        while True:
            batch = []
            for x in it:
                batch.append(x)
                if len(batch) == self.batch_size:
                    break
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield self.collate_fn(batch)
            if len(batch) < self.batch_size:
                return


class _DatasetKind:
    Map = 0
    Iterable = 1


class _BaseDataLoaderIter:
    """The iterator a DataLoader returns (PyTorch's protocol: __next__ is _next_data(), counted in _num_yielded)."""

    def __init__(self, loader):
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._pin_memory = False  # no pinned memory without an accelerator, as PyTorch on a CPU-only machine
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        # the workers' base seed: PyTorch's cpu draw, whatever the default device
        self._base_seed = _creation.empty((), dtype=_dtype.int64, device="cpu").random_(
            generator=loader.generator).item()
        self._persistent_workers = False
        self._num_yielded = 0
        self._profile_name = f"enumerate(DataLoader)#{self.__class__.__name__}.__next__"

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0

    def _next_index(self):
        return next(self._sampler_iter)

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._loader = loader
        self._reset(loader)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._batches = loader._iter_iterable() if loader._iterable else loader._iter_map(self._sampler_iter)

    def _next_data(self):
        return next(self._batches)


class _MultiProcessingDataLoaderIter(_SingleProcessDataLoaderIter):
    """The iterator of a DataLoader with num_workers > 0: webtorch loads in the main process (the browser has no
    processes to fork), in the sampler's order, which is PyTorch's in_order result."""


def get_worker_info():
    return None


__all__ = ["DataLoader", "get_worker_info"]
