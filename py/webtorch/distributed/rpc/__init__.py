"""torch.distributed.rpc: webtorch has no RPC framework (PyTorch's runs on torch tensors only), so `is_available()`
is False and its API raises what PyTorch raises before `init_rpc` (which itself raises, naming the way out)."""
import enum

__all__ = ["is_available", "init_rpc", "shutdown", "rpc_sync", "rpc_async", "remote", "get_worker_info", "RRef",
           "BackendType", "TensorPipeRpcBackendOptions", "WorkerInfo", "functions"]

_NOT_INITIALIZED = "RPC has not been initialized. Call torch.distributed.rpc.init_rpc first."
_NO_RPC = ("webtorch has no RPC framework (torch.distributed.rpc.is_available() is False): run the RPC parts of a "
           "program under PyTorch")


def is_available():
    return False


def init_rpc(name, backend=None, rank=-1, world_size=None, rpc_backend_options=None):
    raise RuntimeError(_NO_RPC)


def _not_initialized(*args, **kwargs):
    raise RuntimeError(_NOT_INITIALIZED)


def shutdown(graceful=True, timeout=0):
    _not_initialized()


def rpc_sync(to, func, args=None, kwargs=None, timeout=-1.0):
    _not_initialized()


def rpc_async(to, func, args=None, kwargs=None, timeout=-1.0):
    _not_initialized()


def remote(to, func, args=None, kwargs=None, timeout=-1.0):
    _not_initialized()


def get_worker_info(worker_name=None):
    _not_initialized()


class RRef:
    def __init__(self, value, type_hint=None):
        raise RuntimeError("Current RPC agent is not set! Did you initialize the RPC framework (e.g. by calling "
                           "`rpc.init_rpc`)?")


class WorkerInfo:
    def __init__(self, *args, **kwargs):
        raise RuntimeError(_NO_RPC)


class TensorPipeRpcBackendOptions:
    def __init__(self, *args, **kwargs):
        raise RuntimeError(_NO_RPC)


BackendType = enum.Enum("BackendType", {"TENSORPIPE": "TENSORPIPE"})


class functions:
    """torch.distributed.rpc.functions: `async_execution` marks a function (it returns a Future under RPC)."""

    @staticmethod
    def async_execution(fn):
        fn._wrapped_async_rpc_function = fn
        return fn
