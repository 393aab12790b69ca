"""torch.utils.data.backward_compatibility: a deprecated worker_init_fn (the DataLoader shards by itself)."""
import warnings


def worker_init_fn(worker_id):
    warnings.warn("Usage of `backward_compatibility.worker_init_fn` is deprecated as `DataLoader` automatically "
                  "applies sharding in every worker", FutureWarning, stacklevel=2)
