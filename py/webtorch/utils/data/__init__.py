"""webtorch.utils.data: datasets, samplers and the DataLoader, as torch.utils.data."""
from .dataset import (Dataset, IterableDataset, TensorDataset, StackDataset, ConcatDataset, ChainDataset, Subset,
                      random_split)
from .sampler import Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler, BatchSampler
from .dataloader import DataLoader, get_worker_info
from ._collate import default_collate, default_convert

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset",
           "Subset", "random_split", "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "BatchSampler", "DataLoader", "get_worker_info", "default_collate", "default_convert"]
