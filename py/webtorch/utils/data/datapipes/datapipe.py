"""torch.utils.data's DataPipes: composable datasets, pure Python as in PyTorch.

`IterDataPipe` / `MapDataPipe` are an IterableDataset / Dataset whose functional forms (`dp.map(fn)`,
`dp.filter(fn)`, `dp.batch(4)`, ...) are the DataPipes registered under those names with `functional_datapipe`
(iter.py and map.py register PyTorch's). As in PyTorch, an IterDataPipe serves one iterator at a time: starting a
second invalidates the first. `IterDataPipe[int]` is an annotation only, as PyTorch 2.13's typing of DataPipes."""
import functools
import inspect
import random
import types
import typing

from .... import _late
from ..dataset import Dataset, IterableDataset

__all__ = ["DataChunk", "DFIterDataPipe", "IterDataPipe", "MapDataPipe", "argument_validation", "functional_datapipe",
           "guaranteed_datapipes_determinism", "non_deterministic", "runtime_validation",
           "runtime_validation_disabled"]


class _DataPipeBase:
    functions: dict = {}

    def __class_getitem__(cls, param):  # IterDataPipe[int]: an annotation only, as in PyTorch 2.13
        return types.GenericAlias(cls, param)

    @classmethod
    def register_datapipe_as_function(cls, function_name, cls_to_register, enable_df_api_tracing=False):
        if function_name in cls.functions:
            raise Exception(f"Unable to add DataPipe function name {function_name} as it is already taken")
        cls.functions[function_name] = cls_to_register

    def __getattr__(self, attribute_name):
        fn = type(self).functions.get(attribute_name) if not attribute_name.startswith("__") else None
        if fn is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attribute_name}")
        return functools.partial(fn, self)

    def __repr__(self):
        return type(self).__name__

    __str__ = __repr__


class IterDataPipe(_DataPipeBase, IterableDataset):
    functions = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__iter__" in cls.__dict__:
            cls.__iter__ = _one_iterator(cls.__dict__["__iter__"])


def _one_iterator(iter_fn):
    """PyTorch's rule: an iterator of a DataPipe, once started, invalidates the ones started before it."""
    @functools.wraps(iter_fn)
    def __iter__(self):
        def gen():
            token = self._valid_iterator = object()  # when it starts, as PyTorch's
            for item in iter_fn(self):
                if self._valid_iterator is not token:
                    raise RuntimeError("This iterator has been invalidated because another iterator has been created "
                                       f"from the same IterDataPipe: {self!r}\nThis may be caused by multiple "
                                       "references to the same IterDataPipe. We recommend using `.fork()` if that "
                                       "is necessary.")
                yield item
        return gen()
    return __iter__


class DFIterDataPipe(IterDataPipe):
    """An IterDataPipe of DataFrames (PyTorch's marker class for its DataFrame API)."""

    def _is_dfpipe(self):
        return True


class MapDataPipe(_DataPipeBase, Dataset):
    functions = {}


class _Batching:
    """Batcher's arguments and length, for the Iter and Map forms."""

    def __init__(self, datapipe, batch_size, drop_last=False, wrapper_class=None):
        if batch_size <= 0:
            raise AssertionError("Batch size is required to be larger than 0!")
        self.datapipe, self.batch_size, self.drop_last = datapipe, batch_size, drop_last
        self.wrapper_class = DataChunk if wrapper_class is None else wrapper_class

    def __len__(self):
        n = len(self.datapipe)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


class _Shuffling:
    """The shuffle switches of the Shufflers; their generator is seeded from webtorch's global one (which draws
    other numbers than PyTorch's: the orders differ from PyTorch's)."""
    _enabled, _seed = True, None

    def set_shuffle(self, shuffle=True):
        self._enabled = shuffle
        return self

    def set_seed(self, seed):
        self._seed = seed
        return self

    def _rng(self):
        return random.Random(self._seed if self._seed is not None else
                             int(_late.creation.randint(0, 2 ** 62, ()).item()))


class DataChunk(list):
    """A batch as a list (the items Batcher yields)."""

    def __init__(self, items):
        items = list(items)
        super().__init__(items)
        self.items = items

    def as_str(self, indent=""):
        return indent + "[" + ", ".join(str(i) for i in iter(self)) + "]"

    def raw_iterator(self):
        yield from self.items


class functional_datapipe:
    """Class decorator: registers a DataPipe as the functional form `name` of IterDataPipe or MapDataPipe."""

    def __init__(self, name, enable_df_api_tracing=False):
        self.name, self.enable_df_api_tracing = name, enable_df_api_tracing

    def __call__(self, cls):
        target = getattr(cls, "cls", None) if isinstance(cls, non_deterministic) else cls
        if isinstance(target, type) and issubclass(target, IterDataPipe):
            IterDataPipe.register_datapipe_as_function(self.name, cls, self.enable_df_api_tracing)
        elif isinstance(target, type) and issubclass(target, MapDataPipe):
            MapDataPipe.register_datapipe_as_function(self.name, cls)
        else:
            raise TypeError("`functional_datapipe` can only decorate IterDataPipe")
        return cls


_flags = {"determinism": False, "runtime_validation": True}


class _FlagBlock:
    """Sets one of _flags from construction until the block exits."""
    key = value = None

    def __init__(self):
        self.prev, _flags[self.key] = _flags[self.key], self.value

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _flags[self.key] = self.prev


class guaranteed_datapipes_determinism(_FlagBlock):
    """Inside the block, constructing a non_deterministic DataPipe raises TypeError."""
    key, value = "determinism", True


class non_deterministic:
    """Marks an IterDataPipe class (or, given a function of its arguments, its calls where that returns True) as
    non-deterministic."""
    cls = None

    def __init__(self, arg):
        if isinstance(arg, type):
            if not issubclass(arg, IterDataPipe):
                raise TypeError(f"Only `IterDataPipe` can be decorated with `non_deterministic`, but {arg.__name__} "
                                "is found")
            self.cls = arg
        elif callable(arg):
            self.deterministic_fn = arg
        else:
            raise TypeError(f"{arg} can not be decorated by non_deterministic")

    def __call__(self, *args, **kwargs):
        if self.cls is not None:
            if _flags["determinism"]:
                raise TypeError(f"{self.cls.__name__} is non-deterministic, but you set "
                                "'guaranteed_datapipes_determinism'. You can turn off determinism for this DataPipe if "
                                "that is acceptable for your application")
            return self.cls(*args, **kwargs)
        if not (isinstance(args[0], type) and issubclass(args[0], IterDataPipe)):
            raise TypeError(f"Only `IterDataPipe` can be decorated, but {args[0].__name__} is found")
        self.cls = args[0]
        return self.deterministic_wrapper_fn

    def deterministic_wrapper_fn(self, *args, **kwargs):
        res = self.deterministic_fn(*args, **kwargs)
        if not isinstance(res, bool):
            raise TypeError("deterministic_fn of `non_deterministic` decorator is required to return a boolean value, "
                            f"but {type(res)} is found")
        if _flags["determinism"] and res:
            raise TypeError(f"{self.cls.__name__} is non-deterministic with the inputs, but you set "
                            "'guaranteed_datapipes_determinism'. You can turn off determinism for this DataPipe if "
                            "that is acceptable for your application")
        return self.cls(*args, **kwargs)


def argument_validation(f):
    """Checks the arguments annotated with an IterDataPipe type: an IterDataPipe of a subtype of its element type."""
    signature, hints = inspect.signature(f), typing.get_type_hints(f)

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        for name, value in signature.bind(*args, **kwargs).arguments.items():
            hint = hints.get(name)
            if isinstance(hint, type) and issubclass(hint, IterDataPipe):
                if not isinstance(value, IterDataPipe):
                    raise TypeError(f"Expected argument '{name}' as a IterDataPipe, but found {type(value)}")
                if not value.type.issubtype(hint.type):  # (no DataPipe has a `type` in PyTorch 2.13 either)
                    raise TypeError(f"Expected type of argument '{name}' as a subtype of hint {hint.type}, but found "
                                    f"{value.type}")
        return f(*args, **kwargs)
    return wrapper


class runtime_validation_disabled(_FlagBlock):
    """Inside the block, runtime_validation checks nothing."""
    key, value = "runtime_validation", False


def runtime_validation(f):
    """Decorates a DataPipe's __iter__: each element must be an instance of the DataPipe's `type` (which, as in
    PyTorch 2.13, no DataPipe defines: the check raises AttributeError unless validation is disabled)."""
    if f.__name__ != "__iter__":
        raise TypeError(f"Can not decorate function {f.__name__} with 'runtime_validation'")

    @functools.wraps(f)
    def wrapper(self):
        for d in f(self):
            if _flags["runtime_validation"] and not self.type.issubtype_of_instance(d):
                raise RuntimeError(f"Expected an instance as subtype of {self.type}, but found {d}({type(d)})")
            yield d
    return wrapper

