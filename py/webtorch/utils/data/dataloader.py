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

    def __iter__(self):
        # PyTorch's iterator draws its workers' base seed first (a cpu draw, whatever the default device)
        _creation.empty((), dtype=_dtype.int64, device="cpu").random_(generator=self.generator)
        if self._iterable:
            return self._iter_iterable()
        return self._iter_map()

    def _iter_map(self):
        ds = self.dataset
        fast = (type(ds) is TensorDataset and self.collate_fn is default_collate and self._auto_collation)
        getitems = getattr(ds, "__getitems__", None)
        for idx in self._index_sampler:
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


def get_worker_info():
    return None


__all__ = ["DataLoader", "get_worker_info"]
