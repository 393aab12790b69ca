"""torch.distributed, answered honestly: webtorch has no distributed backend.

`is_available()` and `is_initialized()` are False, so code guarded by them runs on one device;
`get_rank()`/`get_world_size()` raise as PyTorch's do before `init_process_group`, which raises
NO_BACKEND_MSG. A model that needs several machines graduates to PyTorch (state dicts load both ways).
"""

NO_BACKEND_MSG = (
    "webtorch has no distributed backend (torch.distributed.is_available() is False): train on one device "
    "here, or graduate the model to PyTorch's distributed stack: torch.save(model.state_dict(), 'model.pt'), "
    "then under PyTorch build the same model, model.load_state_dict(torch.load('model.pt')), call "
    "torch.distributed.init_process_group and wrap it in torch.nn.parallel.DistributedDataParallel.")

_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group.")


def is_available():
    return False


def is_initialized():
    return False


def init_process_group(*args, **kwargs):
    raise RuntimeError(NO_BACKEND_MSG)


def get_rank(group=None):
    raise ValueError(_NOT_INITIALIZED)


def get_world_size(group=None):
    raise ValueError(_NOT_INITIALIZED)
