"""webtorch: PyTorch's programming model in pure Python, on cpu and on WebGPU.

    import webtorch as torch
"""
import importlib as _importlib
import math as _math
import warnings as _warnings

from .version import __version__  # "2.13.0+webtorch.0.1.0": PyTorch's API release, webtorch's own as local part
from . import _dtype
from ._dtype import (dtype, bool_ as bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32,  # noqa: A004
                     float64, complex32, complex64, complex128, get_default_dtype, set_default_dtype, promote_types)
from ._dtype import (float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu,  # noqa: F401
                     float4_e2m1fn_x2, uint16, uint32, uint64, bit)
globals().update({d.name: d for d in _dtype.SUB_BYTE + _dtype.OPAQUE})  # torch.int4, torch.uint4, torch.qint8, ...
from ._device import device, set_default_device, get_default_device
from ._device import device as _device_cls
from . import _late
from ._tensor import Tensor, Size
from ._legacy import TYPES as _LEGACY_TYPES
globals().update(_LEGACY_TYPES)  # torch.FloatTensor, torch.LongTensor, ...
from .autograd import (no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled,
                       is_inference_mode_enabled)
from . import autograd
from .ops import _creation
from .ops._common import can_cast as _can_cast
from .ops._creation import (tensor, as_tensor, asarray, from_numpy, empty, full, zeros, ones, empty_like, zeros_like,
                        ones_like, full_like, arange, linspace, logspace, eye, rand, randn, randint, randperm,
                        rand_like, randn_like, randint_like, normal, bernoulli)
from . import ops
from .ops import *  # noqa: F401,F403
from .ops.reduction import multinomial, return_types
linalg = _importlib.import_module(".linalg", __name__)  # torch.linalg, not ops/linalg.py
fft = _importlib.import_module(".fft", __name__)  # torch.fft
from .random import (Generator, manual_seed, seed, initial_seed, get_rng_state, set_rng_state, default_generator,
                     thread_safe_generator)
from . import random
from ._tensor_str import set_printoptions
from . import overrides
from .overrides import _assert  # noqa: F401
from ._layout import layout, strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc
from ._layout import jagged  # torch.nested's layout
from .storage import UntypedStorage
from . import sparse
from . import special
from . import signal  # torch.signal.windows
from . import masked  # torch.masked
from . import webgpu  # the device module; attaches the fused kernels to the webgpu backend
from .sparse import sparse_coo_tensor, spmm
from ._settings import (get_num_threads, set_num_threads, get_num_interop_threads, set_num_interop_threads,
                        init_num_threads, use_deterministic_algorithms, are_deterministic_algorithms_enabled,
                        is_deterministic_algorithms_warn_only_enabled, set_deterministic_debug_mode,
                        get_deterministic_debug_mode, set_warn_always, is_warn_always_enabled, set_flush_denormal,
                        is_vulkan_available, has_lapack, has_spectral, has_mkl, has_openmp)
from ._symbolic import sym_int, sym_float, sym_max, sym_min, sym_not, sym_ite, sym_sqrt, sym_sum
from ._symbolic import (SymInt, SymFloat, SymBool, sym_constrain_range, sym_constrain_range_for_size,
                        sym_fresh_size)
from ._layout import memory_format, contiguous_format, preserve_format, channels_last, channels_last_3d
from ._errors import AcceleratorError, OutOfMemoryError, FatalError
from ._streams import Stream, Event
from ._higher_order_ops import cond
from ._script_types import ModuleDict, ParameterDict, BufferDict, Capsule
from .futures import Future, fork, wait
from .overrides import DisableTorchFunction, DisableTorchFunctionSubclass
from .autograd.anomaly_mode import is_anomaly_enabled, is_anomaly_check_nan_enabled, set_anomaly_enabled
from ._lobpcg import lobpcg
from ._lowrank import pca_lowrank, svd_lowrank

ops.bind_methods(Tensor, _creation)
_late.Tensor, _late.creation, _late.shape = Tensor, _creation, ops.shape   # what the lower layers call of these
_late.linalg = linalg
_late.vmap = lambda *args, **kwargs: _lazy("_functorch.vmap").vmap(*args, **kwargs)   # imported when used
Tensor.to_sparse = sparse.to_sparse
from . import _sparse_compressed
for _name, _method in _sparse_compressed.METHODS.items():
    setattr(Tensor, _name, _method)
globals().update(_sparse_compressed.FUNCTIONS)  # torch.sparse_csr_tensor, torch.smm, torch.crow_indices_copy, ...
from . import _typed_storage
for _name, _method in _typed_storage.METHODS.items():
    setattr(Tensor, _name, _method)
from ._typed_storage import TypedStorage, is_storage, from_file, set_default_tensor_type
globals().update(_typed_storage._LEGACY)  # torch.FloatStorage, torch.LongStorage, ...

float = float32  # noqa: A001
double = float64
half = float16
int = int32  # noqa: A001
long = int64
short = int16
cfloat = complex64
cdouble = complex128
chalf = complex32
range = _creation.range_  # noqa: A001
abs = ops.pointwise.abs  # noqa: A001
max = ops.reduction.max  # noqa: A001
min = ops.reduction.min  # noqa: A001
sum = ops.reduction.sum  # noqa: A001
all = ops.reduction.all  # noqa: A001
any = ops.reduction.any  # noqa: A001
round = ops.pointwise.round  # noqa: A001
pow = ops.pointwise.pow  # noqa: A001
e, pi, inf, nan, newaxis = _math.e, _math.pi, _math.inf, _math.nan, None


def is_tensor(obj):
    return isinstance(obj, Tensor)


_float32_matmul_precision = ["highest"]


def set_float32_matmul_precision(precision):
    """"highest" (the default), "high" or "medium", stored and returned by get_float32_matmul_precision. webtorch
    computes float32 matmuls in float32 whatever the setting (PyTorch's "highest"); another value warns and changes
    nothing, as in PyTorch."""
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}")
    if precision not in ("highest", "high", "medium"):
        _warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the "
                       "currentsetFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _float32_matmul_precision[0] = precision


def get_float32_matmul_precision():
    return _float32_matmul_precision[0]


def is_floating_point(t):
    return t.dtype.is_floating_point


def is_complex(t):
    return t.dtype.is_complex


def numel(t):
    return t.numel()


def result_type(tensor1, tensor2):
    return _dtype.result_type(tensor1, tensor2)


def can_cast(from_, to):
    return _can_cast(from_, to)


def typename(t):
    return t.type() if isinstance(t, Tensor) else type(t).__name__


class finfo:
    _data = {"float16": (65504.0, 6.103515625e-05, 0.0009765625, 5.960464477539063e-08, 16, 3),
             "bfloat16": (3.3895313892515355e38, 1.1754943508222875e-38, 0.0078125, 9.183549615799121e-41, 16, 2),
             "float32": (3.4028234663852886e38, 1.1754943508222875e-38, 1.1920928955078125e-07,
                         1.401298464324817e-45, 32, 6),
             "float64": (1.7976931348623157e308, 2.2250738585072014e-308, 2.220446049250313e-16, 5e-324, 64, 15),
             "float8_e4m3fn": (448.0, 0.015625, 0.125, 0.001953125, 8, 0),
             "float8_e4m3fnuz": (240.0, 0.0078125, 0.125, 0.0009765625, 8, 0),
             "float8_e5m2": (57344.0, 6.103515625e-05, 0.25, 1.52587890625e-05, 8, 0),
             "float8_e5m2fnuz": (57344.0, 3.0517578125e-05, 0.125, 7.62939453125e-06, 8, 0),
             "float8_e8m0fnu": (1.7014118346046923e38, 5.877471754111438e-39, 1.0, 5.877471754111438e-39, 8, 0)}

    def __init__(self, type=None):
        type = (type or get_default_dtype()).to_real()  # PyTorch: finfo(complex64) is finfo(float32)
        if not type.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        if type.name not in self._data:
            raise NotImplementedError(f'"max" not implemented for \'{type.name.capitalize()}\'')
        self.max, self.tiny, self.eps, self.smallest_subnormal, self.bits, self.resolution_digits = \
            self._data[type.name]
        self.min = self.tiny if type.name == "float8_e8m0fnu" else -self.max  # e8m0: exponents only, no sign
        self.smallest_normal = self.tiny
        self.dtype = type.name
        self.resolution = 10.0 ** -self.resolution_digits


class iinfo:
    def __init__(self, type):
        if type.name == "bool":
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if type.kind != "i" or type in _dtype.SUB_BYTE:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        bits = type.itemsize * 8
        self.bits = bits
        if type.is_signed:
            self.min, self.max = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        else:
            self.min, self.max = 0, (1 << bits) - 1
        self.dtype = type.name


def get_device_module(device=None):  # noqa: F811 (PyTorch's parameter name)
    """The module of a device type (torch.cpu, torch.webgpu, torch.cuda); without device, the accelerator's
    (webgpu where an adapter exists) or the cpu's."""
    if isinstance(device, (str, _device_cls)):
        kind = _device_cls(device).type
    elif device is None:
        kind = "webgpu" if webgpu.is_available() else "cpu"
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or None")
    module = _lazy(kind) if kind in ("cpu", "cuda") else globals().get(kind)
    if module is None:
        raise RuntimeError(f"Device '{kind}' does not have a corresponding module registered as 'torch.{kind}'.")
    return module


_AUTOCAST = ("autocast", "is_autocast_enabled", "get_autocast_dtype", "set_autocast_enabled", "set_autocast_dtype",
             "autocast_increment_nesting", "autocast_decrement_nesting", "clear_autocast_cache",
             "is_autocast_cache_enabled", "set_autocast_cache_enabled") + tuple(
    f"{verb}_autocast_{d}_{what}" for d in ("cpu", "gpu", "ipu", "xla") for verb, what in
    (("get", "dtype"), ("set", "dtype"), ("is", "enabled"), ("set", "enabled")) if d != "gpu" or what == "dtype")


def _lazy(name):
    return _importlib.import_module("." + name, __name__)


def __getattr__(name):
    if name in ("nn", "optim", "utils", "amp", "backends", "serialization", "cuda", "examples",
                "accelerator", "distributed", "onnx", "export", "jit", "fx", "_dynamo", "compiler", "_inductor",
                "_functorch", "_logging", "distributions", "types", "func", "library", "cpu", "futures",
                "profiler", "hub", "multiprocessing", "nested", "testing"):
        mod = _lazy(name)
        globals()[name] = mod
        return mod
    if name == "vmap":
        return _lazy("func").vmap
    if name in ("save", "load"):
        return getattr(_lazy("serialization"), name)
    if name in ("PyTorchFileReader", "PyTorchFileWriter", "SerializationStorageContext",
                "DeserializationStorageContext"):
        return getattr(_lazy("_file_records"), name)
    if name == "compile":
        fn = globals()["compile"] = _lazy("_compile").compile
        return fn
    if name in _AUTOCAST:
        return getattr(_lazy("amp.autocast_mode"), name)
    if name == "GradScaler":
        return _lazy("amp").GradScaler
    if name in ("xpu", "mps", "mtia", "testing"):  # xpu, mps, mtia: devices this machine lacks
        mod = globals()[name] = _lazy(name)
        return mod
    if name in ops.registry.FUNCTIONS:  # an op declared after import (`backends.elementwise.define`)
        return ops.registry.FUNCTIONS[name]
    if not name.startswith("__") and name != "F":  # torch.conv2d, torch.dropout, ...: nn.functional's ops
        try:
            aliases = _lazy("_nn_aliases")
        except ImportError:  # asked while nn itself is being imported
            aliases = None
        if hasattr(aliases, name):
            return getattr(aliases, name)
    raise AttributeError(f"module 'webtorch' has no attribute '{name}'")
