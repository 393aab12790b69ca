"""PyTorch's IterDataPipes (torch.utils.data.datapipes.iter), each registered as its functional form. The
file-reading ones (FileLister, FileOpener, StreamReader, RoutedDecoder) and Demultiplexer / Forker / Grouper
are not here."""
import copy
import itertools

from .._utils.collate import default_collate
from ..sampler import SequentialSampler
from .datapipe import DataChunk, IterDataPipe, _Batching, _Shuffling, functional_datapipe, non_deterministic

__all__ = ["Batcher", "Collator", "Concater", "Filter", "IterableWrapper", "Mapper", "Multiplexer", "Sampler",
           "ShardingFilter", "Shuffler", "UnBatcher", "Zipper"]


class IterableWrapperIterDataPipe(IterDataPipe):
    def __init__(self, iterable, deepcopy=True):
        self.iterable, self.deepcopy = iterable, deepcopy

    def __iter__(self):
        source = self.iterable
        if self.deepcopy:
            try:
                source = copy.deepcopy(self.iterable)
            except TypeError:  # not deep-copyable: iterate the object itself, as PyTorch
                pass
        yield from source

    def __len__(self):
        return len(self.iterable)


def _apply(fn, data, input_col, output_col):
    """fn on data, or on its input_col entries (written back at output_col, or at input_col), as PyTorch's Mapper."""
    if input_col is None and output_col is None:
        return fn(data)
    cols = input_col if isinstance(input_col, (list, tuple)) else [input_col]
    res = fn(*(data[c] for c in cols)) if input_col is not None else fn(data)
    out = list(data) if isinstance(data, tuple) else copy.copy(data)
    if output_col is None:
        if isinstance(input_col, (list, tuple)):
            out[input_col[0]] = res
            for c in sorted(input_col[1:], reverse=True):
                del out[c]
        else:
            out[input_col] = res
    elif output_col == -1 and not isinstance(out, dict):
        out.append(res)
    else:
        out[output_col] = res
    return tuple(out) if isinstance(data, tuple) else out


@functional_datapipe("map")
class MapperIterDataPipe(IterDataPipe):
    def __init__(self, datapipe, fn, input_col=None, output_col=None):
        if input_col is None and output_col is not None:
            raise ValueError("`output_col` must be None when `input_col` is None.")
        if isinstance(output_col, (list, tuple)):
            if len(output_col) > 1:
                raise ValueError("`output_col` must be a single-element list or tuple")
            output_col = output_col[0]
        self.datapipe, self.fn, self.input_col, self.output_col = datapipe, fn, input_col, output_col

    def __iter__(self):
        for data in self.datapipe:
            yield _apply(self.fn, data, self.input_col, self.output_col)

    def __len__(self):
        return len(self.datapipe)


@functional_datapipe("filter")
class FilterIterDataPipe(IterDataPipe):
    def __init__(self, datapipe, filter_fn, input_col=None):
        self.datapipe, self.filter_fn, self.input_col = datapipe, filter_fn, input_col

    def __iter__(self):
        for data in self.datapipe:
            cols = self.input_col if isinstance(self.input_col, (list, tuple)) else [self.input_col]
            keep = self.filter_fn(data) if self.input_col is None else self.filter_fn(*(data[c] for c in cols))
            if not isinstance(keep, bool):
                raise ValueError(f"Boolean output is required for `filter_fn` of FilterIterDataPipe, got {type(keep)}")
            if keep:
                yield data


@functional_datapipe("batch")
class BatcherIterDataPipe(_Batching, IterDataPipe):
    def __init__(self, datapipe, batch_size, drop_last=False, wrapper_class=DataChunk):
        super().__init__(datapipe, batch_size, drop_last, wrapper_class)

    def __iter__(self):
        batch = []
        for x in self.datapipe:
            batch.append(x)
            if len(batch) == self.batch_size:
                yield self.wrapper_class(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.wrapper_class(batch)


@functional_datapipe("unbatch")
class UnBatcherIterDataPipe(IterDataPipe):
    def __init__(self, datapipe, unbatch_level=1):
        self.datapipe, self.unbatch_level = datapipe, unbatch_level

    def __iter__(self):
        for element in self.datapipe:
            yield from self._dive(element, self.unbatch_level)

    def _dive(self, element, level):
        if level < -1:
            raise ValueError("unbatch_level must be -1 or >= 0")
        if level == -1:
            if isinstance(element, (list, DataChunk)):
                for item in element:
                    yield from self._dive(item, -1)
            else:
                yield element
        elif level == 0:
            yield element
        elif isinstance(element, (list, DataChunk)):
            for item in element:
                yield from self._dive(item, level - 1)
        else:
            raise IndexError(f"unbatch_level {self.unbatch_level} exceeds the depth of the DataPipe")


@functional_datapipe("collate")
class CollatorIterDataPipe(MapperIterDataPipe):
    def __init__(self, datapipe, conversion=default_collate, collate_fn=None):
        super().__init__(datapipe, collate_fn if collate_fn is not None else conversion)


@functional_datapipe("concat")
class ConcaterIterDataPipe(IterDataPipe):
    def __init__(self, *datapipes):
        if len(datapipes) == 0:
            raise ValueError("Expected at least one DataPipe, but got nothing")
        if not all(isinstance(dp, IterDataPipe) for dp in datapipes):
            raise TypeError("Expected all inputs to be `IterDataPipe`")
        self.datapipes = datapipes

    def __iter__(self):
        return itertools.chain.from_iterable(self.datapipes)

    def __len__(self):
        return sum(map(len, self.datapipes))


@functional_datapipe("zip")
class ZipperIterDataPipe(IterDataPipe):
    def __init__(self, *datapipes):
        if not all(isinstance(dp, IterDataPipe) for dp in datapipes):
            raise TypeError("All inputs are required to be `IterDataPipe` for `ZipIterDataPipe`.")
        self.datapipes = datapipes

    def __iter__(self):
        yield from zip(*self.datapipes)

    def __len__(self):
        return min(len(dp) for dp in self.datapipes)


@functional_datapipe("mux")
class MultiplexerIterDataPipe(IterDataPipe):
    """One element of each DataPipe in turn, until the shortest is exhausted."""

    def __init__(self, *datapipes):
        self.datapipes = datapipes

    def __iter__(self):
        iterators = [iter(dp) for dp in self.datapipes]
        while iterators:
            row = []
            for it in iterators:
                try:
                    row.append(next(it))
                except StopIteration:
                    return
            yield from row

    def __len__(self):
        return min(len(dp) for dp in self.datapipes) * len(self.datapipes)


@functional_datapipe("shuffle")
@non_deterministic
class ShufflerIterDataPipe(_Shuffling, IterDataPipe):
    """A buffer of buffer_size elements, each yielded at a random place (see _Shuffling)."""

    def __init__(self, datapipe, *, buffer_size=10000, unbatch_level=0):
        if buffer_size <= 0:
            raise AssertionError("buffer_size should be larger than 0")
        self.datapipe = datapipe if unbatch_level == 0 else datapipe.unbatch(unbatch_level=unbatch_level)
        self.buffer_size = buffer_size

    def __iter__(self):
        if not self._enabled:
            yield from self.datapipe
            return
        rng, buffer = self._rng(), []
        for x in self.datapipe:
            if len(buffer) == self.buffer_size:
                idx = rng.randint(0, len(buffer) - 1)
                val, buffer[idx] = buffer[idx], x
                yield val
            else:
                buffer.append(x)
        while buffer:
            idx = rng.randint(0, len(buffer) - 1)
            yield buffer.pop(idx)

    def __len__(self):
        return len(self.datapipe)


@functional_datapipe("sharding_filter")
class ShardingFilterIterDataPipe(IterDataPipe):
    """Every num_of_instances-th element from instance_id (all of them until apply_sharding is called)."""

    def __init__(self, source_datapipe, sharding_group_filter=None):
        self.source_datapipe, self.num_of_instances, self.instance_id = source_datapipe, 1, 0

    def apply_sharding(self, num_of_instances, instance_id, sharding_group=None):
        self.num_of_instances, self.instance_id = num_of_instances, instance_id

    def __iter__(self):
        for i, item in enumerate(self.source_datapipe):
            if i % self.num_of_instances == self.instance_id:
                yield item

    def __len__(self):
        n = len(self.source_datapipe)
        return n // self.num_of_instances + (1 if self.instance_id < n % self.num_of_instances else 0)


class SamplerIterDataPipe(IterDataPipe):
    def __init__(self, datapipe, sampler=SequentialSampler, sampler_args=None, sampler_kwargs=None):
        self.datapipe = datapipe
        self.sampler = sampler(*(sampler_args or ()), data_source=datapipe, **(sampler_kwargs or {}))

    def __iter__(self):
        return iter(self.sampler)

    def __len__(self):
        return len(self.sampler)


IterableWrapper, Mapper, Filter, Batcher, UnBatcher, Collator = (
    IterableWrapperIterDataPipe, MapperIterDataPipe, FilterIterDataPipe, BatcherIterDataPipe, UnBatcherIterDataPipe,
    CollatorIterDataPipe)
Concater, Zipper, Multiplexer, Shuffler, ShardingFilter, Sampler = (
    ConcaterIterDataPipe, ZipperIterDataPipe, MultiplexerIterDataPipe, ShufflerIterDataPipe,
    ShardingFilterIterDataPipe, SamplerIterDataPipe)
