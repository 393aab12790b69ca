"""The Tensor: a strided view onto a Storage, plus its autograd metadata.

The math methods (`t.exp()`, `t + u`, ...) are attached from `webtorch.ops` at import time,
so each op has one definition that serves `torch.f(t)` and `t.f()` alike.
"""
import warnings
import weakref

from . import _dtype, _late
from ._device import backend_for, cuda_alias
from ._geometry import is_contiguous, numel as _numel
from ._layout import strided
from ._tensor_str import tensor_repr
from .autograd import backward, function as _function, grad_mode
from .autograd.graph import AccumulateGrad, _DictHandle, _RemovableHandle
from .backends.base import Strided

_NON_LEAF_GRAD_MSG = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf "
    "Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
    "you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information.")


_NO_GRAD_VIEW_HINT = (
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving "
    "both the view and the inplace either both inside the no_grad block (if you don't want the inplace to be "
    "tracked) or both outside (if you want the inplace to be tracked).")


class Size(tuple):
    def __repr__(self):
        return f"torch.Size([{', '.join(map(str, self))}])"

    __str__ = __repr__

    def numel(self):
        return _numel(self)

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))


class Storage:
    """A device buffer of `numel` elements, shared by every view onto it."""
    __slots__ = ("buf", "dtype", "device", "backend", "numel", "version", "__weakref__")

    def __init__(self, buf, dtype, device, numel, backend=None):
        self.buf = buf
        self.dtype = dtype
        self.device = device
        self.backend = backend or backend_for(device)
        self.numel = numel
        self.version = 0

    # what code asks of PyTorch's UntypedStorage (`t.untyped_storage()`): its identity and size in bytes
    def data_ptr(self):
        """The buffer's address in this process's memory where it has one (numpy, array.array: what ctypes readers
        such as safetensors' save read), 0 on the meta device, else a number unique to the buffer (a GPU buffer)."""
        buf = self.buf
        if buf is None:
            return 0
        if hasattr(buf, "ctypes"):
            return buf.ctypes.data
        return buf.buffer_info()[0] if hasattr(buf, "buffer_info") else id(buf)

    def nbytes(self):
        return self.numel * self.dtype.itemsize

    size = nbytes

    def element_size(self):
        return 1


class Tensor:
    __torch_function_enabled__ = True

    def __new__(cls, *args, **kwargs):
        return object.__new__(cls)

    def __init__(self, *args, **kwargs):
        # torch.Tensor(2, 3) -> uninitialized float tensor; torch.Tensor([1, 2]) -> data
        if not args and not kwargs:
            args = (0,)
        if len(args) == 1 and not isinstance(args[0], int):
            t = _late.creation.tensor(args[0], dtype=_dtype.get_default_dtype())
        else:
            t = _late.creation.empty(*args, **kwargs)
        self._set_from(t)

    @classmethod
    def _make(cls, storage, shape, stride, offset):
        t = object.__new__(cls)
        t._storage = storage
        t._shape = shape if type(shape) is Size else Size(shape)
        t._stride = stride if type(stride) is tuple else tuple(stride)
        t._offset = offset
        t._requires_grad = False
        t._grad_fn = None
        t._fn_version = 0
        t._output_nr = 0
        t._base = None
        t._grad = None
        t._accumulator = None
        t._hooks = None
        t._post_hooks = None
        if grad_mode._state["inference"]:
            t._inference = True
        return t

    def _set_from(self, t):
        self._storage, self._shape, self._stride, self._offset = t._storage, t._shape, t._stride, t._offset
        self._requires_grad = False
        self.grad_fn = None
        self._output_nr = 0
        self._base = None
        self._grad = None
        self._accumulator = None
        self._hooks = None
        self._post_hooks = None

    def _alias(self):
        """A new Tensor object over the same memory, with no autograd history."""
        t = Tensor._make(self._storage, self._shape, self._stride, self._offset)
        if self._base is not None:
            t._base = self._base
        return t

    def _strided(self):
        return Strided(self._storage.buf, self._shape, self._stride, self._offset, self._storage.dtype.name)

    _backend = property(lambda self: self._storage.backend)
    _version = property(lambda self: self._storage.version)

    def _bump(self):
        self._storage.version += 1

    # ---- metadata -----------------------------------------------------------------
    @property
    def shape(self):
        return self._shape

    def size(self, dim=None):
        if dim is None:
            return self._shape
        return self._shape[_wrap_dim(dim, len(self._shape))]

    dtype = property(lambda self: self._storage.dtype)
    device = property(lambda self: self._storage.device)

    @property
    def is_cuda(self):
        """False, as in PyTorch without CUDA; under the cuda alias True on webgpu (cuda names it)."""
        return cuda_alias() and self._storage.device.type == "webgpu"

    @property
    def is_xpu(self):
        return False

    is_mps = is_xpu  # webtorch's GPU is "webgpu": never these devices

    is_meta, is_webgpu, is_cpu = (property(lambda self, t=t: self._storage.device.type == t)
                                  for t in ("meta", "webgpu", "cpu"))

    @property
    def layout(self):
        return strided

    is_sparse = False
    is_quantized = is_nested = is_mkldnn = is_ipu = is_maia = is_mtia = is_vulkan = is_xla = False
    is_sparse_csr = False

    def to_dense(self, dtype=None, *, masked_grad=None):
        return self if dtype is None else self.to(dtype)

    @property
    def ndim(self):
        return len(self._shape)

    def dim(self):
        return len(self._shape)

    ndimension = dim

    def numel(self):
        return _numel(self._shape)

    nelement = numel

    def stride(self, dim=None):
        if dim is None:
            return self._stride
        return self._stride[_wrap_dim(dim, len(self._shape))]

    def storage_offset(self):
        return self._offset

    def element_size(self):
        return self.dtype.itemsize

    itemsize = property(element_size)
    nbytes = property(lambda self: self.numel() * self.dtype.itemsize)

    def is_contiguous(self, memory_format=None):
        return is_contiguous(self._shape, self._stride)

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return self._storage.dtype.kind == "c"

    def is_signed(self):
        return self.dtype.is_signed

    def data_ptr(self):
        return self._storage.data_ptr() + self._offset * self.dtype.itemsize if self._storage.buf is not None else 0

    def untyped_storage(self):
        return self._storage

    def is_inference(self):
        return getattr(self, "_inference", False)

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __hash__(self):
        return id(self)

    # ---- autograd metadata ----------------------------------------------------------
    @property
    def requires_grad(self):
        if self._requires_grad or self._base is None:
            return self._requires_grad
        if getattr(self, "_no_grad_view", False):  # as PyTorch's: its base's flag, no history
            return self._base._requires_grad
        return self.grad_fn is not None  # a view whose base gained history in place gains it too

    @requires_grad.setter
    def requires_grad(self, value):
        if self.grad_fn is not None:
            if not value:
                raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to "
                                   "use a computed variable in a subgraph that doesn't require differentiation "
                                   "use var_no_grad = var.detach().")
            return
        if value and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if value and getattr(self, "_inference", False) and not grad_mode._state["inference"]:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad=True):
        self.requires_grad = requires_grad
        return self

    @property
    def grad_fn(self):
        fn = self._grad_fn
        if self._fn_version != self._storage.version and self._base is not None \
                and getattr(self, "_diff_view", False) and (fn is not None or self._base._requires_grad):
            if getattr(self, "_no_grad_view", False):
                raise RuntimeError(f"A view was created in no_grad mode and its base or another view of its base "
                                   f"has been modified inplace with grad mode enabled. {_NO_GRAD_VIEW_HINT}")
            fn = self._regenerate_view_fn()
        return fn

    @grad_fn.setter
    def grad_fn(self, value):
        self._grad_fn = value
        self._fn_version = self._storage.version

    def _regenerate_view_fn(self):
        """A view's history after its memory was written in place (through its base or another
        view): as in PyTorch, it becomes AsStridedBackward0 of the base's current history."""
        base = self._base
        if base._requires_grad:
            with grad_mode.enable_grad():
                v = base.as_strided(self._shape, self._stride, self._offset)
            self._grad_fn, self._output_nr, self._requires_grad = v._grad_fn, v._output_nr, True
        self._fn_version = self._storage.version
        return self._grad_fn

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def grad(self):
        if self.grad_fn is not None and self._grad is None and not self.retains_grad:
            warnings.warn(_NON_LEAF_GRAD_MSG, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError("assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value.device != self.device:
                raise RuntimeError("assigned grad has data located on a different device")
            want = getattr(self, "_grad_dtype", self.dtype)
            if want is not None and value.dtype != want:
                raise RuntimeError("assigned grad has data of a different type")
            if tuple(value.shape) != tuple(self.shape):
                raise RuntimeError("assigned grad has data of a different size")
        self._grad = value

    @property
    def grad_dtype(self):
        """The dtype the engine casts a leaf's incoming gradients to (None: any; default: the leaf's dtype)."""
        if not self.is_leaf:
            raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
        return getattr(self, "_grad_dtype", self.dtype)

    @grad_dtype.setter
    def grad_dtype(self, value):
        if not self.is_leaf:
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        if value is not None and not isinstance(value, _dtype.dtype):
            raise RuntimeError(f"grad_dtype must be a torch.dtype or None, but got {type(value).__name__}")
        self._grad_dtype = value

    @property
    def name(self):
        """A named tensor's name (PyTorch's prototype): webtorch has no named tensors, so always None."""
        return None

    @property
    def volatile(self):
        warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
        return False

    @volatile.setter
    def volatile(self, value):
        warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                      UserWarning, stacklevel=2)

    @property
    def data(self):
        """The same memory, detached, requires_grad False. As PyTorch's `.data` has a version
        counter of its own, an in-place write through it is invisible to autograd (no "modified
        by an inplace operation" error): a floating tensor's `.data` gets its own Storage record
        over the same buffer."""
        st = self._storage
        if st.dtype.is_floating_point:
            st = Storage(st.buf, st.dtype, st.device, st.numel, st.backend)
        return Tensor._make(st, self._shape, self._stride, self._offset)

    @data.setter
    def data(self, value):
        self._storage, self._shape, self._stride, self._offset = (value._storage, value._shape, value._stride,
                                                                  value._offset)

    @property
    def output_nr(self):
        return self._output_nr

    def _get_accumulator(self):
        if self._accumulator is None:
            self._accumulator = AccumulateGrad(self)
        return self._accumulator

    def _leaf_hooks(self):
        return list(self._hooks or ())

    def _post_accumulate_hooks(self):
        return list(self._post_hooks or ())

    def detach(self):
        t = self._alias()
        t._base = self if self._base is None else self._base
        return t

    def detach_(self):
        if self._base is not None and self._base.requires_grad:
            raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are using "
                               "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                               "as True, gradients are views of DDP buckets, and hence detach_() cannot be called "
                               "on these gradients. To fix this error, please refer to the Optimizer.zero_grad() "
                               "function in torch/optim/optimizer.py as the solution.")
        self.grad_fn = None
        self._requires_grad = False
        return self

    def retain_grad(self):
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None:
            return
        node = self.grad_fn
        if node._retained is None:
            node._retained = {}
        node._retained[self._output_nr] = weakref.ref(self)

    @property
    def retains_grad(self):
        n = self.grad_fn
        return bool(n is not None and n._retained and self._output_nr in n._retained)

    def register_hook(self, hook):
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is None:
            if self._hooks is None:
                self._hooks = []
            self._hooks.append(hook)
            return _RemovableHandle(self._hooks, hook)
        node = self.grad_fn
        if node._tensor_hooks is None:
            node._tensor_hooks = {}
        node._tensor_hooks.setdefault(self._output_nr, []).append(hook)
        return _DictHandle(node._tensor_hooks, self._output_nr, hook)

    def register_post_accumulate_grad_hook(self, hook):
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._post_hooks is None:
            self._post_hooks = []
        self._post_hooks.append(hook)
        return _RemovableHandle(self._post_hooks, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # ---- host interop -------------------------------------------------------------
    def tolist(self):
        flat = self._backend.to_flat(self._strided())
        if not self._shape:
            return flat[0]
        return _nest(flat, self._shape)

    def item(self):
        n = self.numel()
        if n != 1:
            raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
        if self.is_meta:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return self._backend.to_flat(self._strided())[0]

    def numpy(self, force=False):
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if self.device.type != "cpu" and not force:
            raise TypeError(f"can't convert {self.device.type}:0 device type tensor to numpy. Use Tensor.cpu() to "
                            "copy the tensor to host memory first.")
        if self.dtype.name == "bfloat16":  # numpy has no bfloat16
            raise TypeError("Got unsupported ScalarType BFloat16")
        be = self._backend
        if be.numpy_buffers:  # shares memory, as in PyTorch
            return be.as_ndarray(self._strided())
        return be.to_numpy(self._strided())

    def __array__(self, dtype=None, copy=None):
        a = self.detach().cpu().numpy()
        return a.astype(dtype) if dtype is not None else a

    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self.dtype.kind == "f" or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __complex__(self):
        return complex(self.item())

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __repr__(self, *, tensor_contents=None):
        return tensor_repr(self)

    def __format__(self, spec):
        if self.dim() == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, proto):
        return (_rebuild, (self.tolist(), self.dtype.name, str(self.device), self._requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        with grad_mode.no_grad():
            t = self.clone()
        t = t.as_subclass(type(self)) if type(self) is not Tensor else t
        t._requires_grad = self._requires_grad
        if type(self) is not Tensor:
            t.__dict__.update({k: v for k, v in self.__dict__.items() if not k.startswith("_") and k != "grad_fn"})
        if self._grad is not None:
            t._grad = self._grad.clone()
        memo[id(self)] = t
        return t

    def as_subclass(self, cls):
        t = cls.__new__(cls)
        Tensor._set_from(t, self)
        t._requires_grad = self._requires_grad
        t.grad_fn = self.grad_fn
        t._output_nr = self._output_nr
        return t

    # ---- __torch_function__ ----------------------------------------------------------
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        with _DisableTorchFunction():
            ret = func(*args, **kwargs)
        if cls is Tensor:
            return ret
        return _convert(ret, cls)


def _convert(ret, cls):
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        return ret.as_subclass(cls)
    if isinstance(ret, tuple) and hasattr(type(ret), "_fields"):  # return_types (values, indices)
        return type(ret)(*(_convert(r, cls) for r in ret))
    if isinstance(ret, (tuple, list)):
        return type(ret)(_convert(r, cls) for r in ret) if type(ret) in (tuple, list) else ret
    return ret


_dtype._Tensor.append(Tensor)
_function._Tensor.append(Tensor)
_tf_state = {"disabled": 0}


class _DisableTorchFunction:
    def __enter__(self):
        _tf_state["disabled"] += 1

    def __exit__(self, *a):
        _tf_state["disabled"] -= 1


def _rebuild(data, dtype, dev, requires_grad):
    return _late.creation.tensor(data, dtype=_dtype.BY_NAME[dtype], device=dev, requires_grad=requires_grad)


def _nest(flat, shape):
    if len(shape) == 1:
        return list(flat)
    step = _numel(shape[1:])
    return [_nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def _wrap_dim(dim, ndim):
    lo, hi = (-ndim, ndim - 1) if ndim > 0 else (-1, 0)
    if not isinstance(dim, int):
        dim = int(dim)
    if dim < lo or dim > hi:
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})")
    return dim + ndim if dim < 0 and ndim > 0 else (0 if dim < 0 else dim)
