"""PyTorch's MapDataPipes (torch.utils.data.datapipes.map), each registered as its functional form."""
import copy

from .datapipe import DataChunk, IterDataPipe, MapDataPipe, _Batching, _Shuffling, functional_datapipe

__all__ = ["Batcher", "Concater", "Mapper", "SequenceWrapper", "Shuffler", "Zipper"]


class SequenceWrapperMapDataPipe(MapDataPipe):
    def __init__(self, sequence, deepcopy=True):
        self.sequence = copy.deepcopy(sequence) if deepcopy else sequence

    def __getitem__(self, index):
        return self.sequence[index]

    def __len__(self):
        return len(self.sequence)


@functional_datapipe("map")
class MapperMapDataPipe(MapDataPipe):
    def __init__(self, datapipe, fn):
        self.datapipe, self.fn = datapipe, fn

    def __getitem__(self, index):
        return self.fn(self.datapipe[index])

    def __len__(self):
        return len(self.datapipe)


@functional_datapipe("batch")
class BatcherMapDataPipe(_Batching, MapDataPipe):
    def __init__(self, datapipe, batch_size, drop_last=False, wrapper_class=DataChunk):
        super().__init__(datapipe, batch_size, drop_last, wrapper_class)

    def __getitem__(self, index):
        start = index * self.batch_size
        items = [self.datapipe[i] for i in range(start, min(start + self.batch_size, len(self.datapipe)))]
        if not items or (self.drop_last and len(items) < self.batch_size):
            raise IndexError(f"Index {index} is out of bound.")
        return self.wrapper_class(items)


def _map_pipes(datapipes):
    if len(datapipes) == 0:
        raise ValueError("Expected at least one DataPipe, but got nothing")
    if not all(isinstance(dp, MapDataPipe) for dp in datapipes):
        raise TypeError("Expected all inputs to be `MapDataPipe`")
    return datapipes


@functional_datapipe("concat")
class ConcaterMapDataPipe(MapDataPipe):
    def __init__(self, *datapipes):
        self.datapipes = _map_pipes(datapipes)

    def __getitem__(self, index):
        offset = 0
        for dp in self.datapipes:
            if index - offset < len(dp):
                return dp[index - offset]
            offset += len(dp)
        raise IndexError(f"Index {index} is out of range.")

    def __len__(self):
        return sum(len(dp) for dp in self.datapipes)


@functional_datapipe("zip")
class ZipperMapDataPipe(MapDataPipe):
    def __init__(self, *datapipes):
        self.datapipes = _map_pipes(datapipes)

    def __getitem__(self, index):
        return tuple(dp[index] for dp in self.datapipes)

    def __len__(self):
        return min(len(dp) for dp in self.datapipes)


class ShufflerIterDataPipe(_Shuffling, IterDataPipe):
    """A MapDataPipe's shuffle: an IterDataPipe over its indices in a random order (see _Shuffling)."""

    def __init__(self, datapipe, *, indices=None):
        self.datapipe, self.indices = datapipe, indices

    def __iter__(self):
        order = list(self.indices if self.indices is not None else range(len(self.datapipe)))
        if self._enabled:
            self._rng().shuffle(order)
        for i in order:
            yield self.datapipe[i]

    def __len__(self):
        return len(self.datapipe)


MapDataPipe.register_datapipe_as_function("shuffle", ShufflerIterDataPipe)
SequenceWrapper, Mapper, Batcher, Concater, Zipper, Shuffler = (
    SequenceWrapperMapDataPipe, MapperMapDataPipe, BatcherMapDataPipe, ConcaterMapDataPipe, ZipperMapDataPipe,
    ShufflerIterDataPipe)
