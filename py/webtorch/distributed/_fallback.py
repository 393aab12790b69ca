"""torch.distributed's classes where PyTorch's engine is absent (the page; `python -m webtorch`).

The reduction and backend names exist (code uses them in default arguments); the error classes are
PyTorch's hierarchy; constructing a store, process group or option object raises NO_BACKEND_MSG.
"""
NO_BACKEND_MSG = (
    "webtorch has no distributed backend of its own (torch.distributed.is_available() is False: PyTorch is not "
    "importable here, or `torch` names webtorch under `python -m webtorch`): train on one device here, run "
    "natively with PyTorch installed (a script importing webtorch, launched with torchrun: webtorch's "
    "torch.distributed then runs on PyTorch's c10d), or graduate the model to PyTorch's distributed stack: "
    "torch.save(model.state_dict(), 'model.pt'), then under PyTorch build the same model, "
    "model.load_state_dict(torch.load('model.pt')), call torch.distributed.init_process_group and wrap it in "
    "torch.nn.parallel.DistributedDataParallel.")

class DistError(RuntimeError):
    pass


class DistBackendError(DistError):
    pass


class DistNetworkError(DistError):
    pass


class DistStoreError(DistError):
    pass


class QueueEmptyError(DistStoreError):
    pass


class _NamesOf(type):
    def __getattr__(cls, name):
        if name in cls._names:
            return name
        raise AttributeError(name)


class ReduceOp(metaclass=_NamesOf):
    """PyTorch's reduction names where the engine is absent (SUM, AVG, ...)."""
    _names = ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM")


class DebugLevel(metaclass=_NamesOf):
    _names = ("OFF", "INFO", "DETAIL")


class Backend(str):
    UNDEFINED, GLOO, NCCL, XCCL, UCC, MPI, FAKE = "undefined", "gloo", "nccl", "xccl", "ucc", "mpi", "fake"
    backend_list = [UNDEFINED, GLOO, NCCL, XCCL, UCC, MPI, FAKE]

    def __new__(cls, name):
        return str.__new__(cls, name.lower())


class GroupMember:
    WORLD = None
    NON_GROUP_MEMBER = -100


class group:
    WORLD = None


class _Unavailable:
    """A PyTorch distributed class without the engine: constructing one raises NO_BACKEND_MSG."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError(NO_BACKEND_MSG)


def _unavailable(name):
    return type(name, (_Unavailable,), {"__module__": "torch.distributed"})


# PyTorch's own classes where the engine is; without it, these construct nothing
ENGINE_CLASSES = (
    "AllToAllOptions", "AllreduceCoalescedOptions", "AllreduceOptions", "BackendConfig", "BarrierOptions",
    "BroadcastOptions", "BuiltinCommHookType", "DeviceMesh", "FileStore", "GatherOptions", "GradBucket",
    "HashStore", "Logger", "P2POp", "PrefixStore", "ProcessGroup", "ProcessGroupGloo", "ReduceOptions",
    "ReduceScatterOptions", "Reducer", "ScatterOptions", "Store", "TCPStore", "Work")
globals().update({name: _unavailable(name) for name in ENGINE_CLASSES})
reduce_op = ReduceOp
GroupName = str
RankType = int
# every name whose engine form is PyTorch's own object (exceptions too, so `except dist.DistError` catches)
NAMES = ENGINE_CLASSES + ("ReduceOp", "DebugLevel", "Backend", "GroupMember", "group", "DistError", "DistBackendError",
                          "DistNetworkError", "DistStoreError", "QueueEmptyError", "reduce_op", "GroupName", "RankType")
