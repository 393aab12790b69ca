"""torch.utils.weak: weak references and dictionaries keyed by object identity (tensors hash by identity, but their
`==` is element-wise, so a plain WeakKeyDictionary cannot key on them)."""
import weakref
from collections.abc import MutableMapping

from .._tensor import Tensor

__all__ = ["TensorWeakRef", "WeakIdRef", "WeakIdKeyDictionary", "WeakTensorKeyDictionary"]


class WeakIdRef(weakref.ref):
    """A weak reference that hashes and compares by its referent's id (while the referent lives)."""
    __slots__ = ["_id"]

    def __init__(self, key, callback=None):
        self._id = id(key)
        super().__init__(key, callback)

    def __hash__(self):
        return self._id

    def __eq__(self, other):
        a, b = self(), other()
        return a is b if a is not None and b is not None else self is other


class WeakIdKeyDictionary(MutableMapping):
    """A dict whose keys are held weakly and compared by identity; an entry goes when its key dies."""

    def __init__(self, dict=None, ref_type=WeakIdRef):
        self.data, self.ref_type = {}, ref_type
        selfref = weakref.ref(self)

        def remove(k):
            d = selfref()
            if d is not None:
                d.data.pop(k, None)
        self._remove = remove
        if dict is not None:
            self.update(dict)

    def __getitem__(self, key):
        return self.data[self.ref_type(key)]

    def __setitem__(self, key, value):
        self.data[self.ref_type(key, self._remove)] = value

    def __delitem__(self, key):
        del self.data[self.ref_type(key)]

    def __contains__(self, key):
        try:
            return self.ref_type(key) in self.data
        except TypeError:
            return False

    def __len__(self):
        return sum(1 for k in list(self.data) if k() is not None)

    def __iter__(self):
        for ref in list(self.data):
            obj = ref()
            if obj is not None:
                yield obj

    def __repr__(self):
        return f"<{self.__class__.__name__} at {id(self):#x}>"

    def keyrefs(self):
        return list(self.data)

    def copy(self):
        return type(self)({k: v for k, v in self.items()}, self.ref_type)

    __copy__ = copy


WeakTensorKeyDictionary = WeakIdKeyDictionary


class TensorWeakRef:
    """A weak reference to a tensor: calling it gives the tensor, or None once it is gone."""
    __slots__ = ["ref"]

    def __init__(self, tensor):
        if not isinstance(tensor, Tensor):
            raise AssertionError(f"expected torch.Tensor, got {type(tensor)}.")
        self.ref = weakref.ref(tensor)

    def __call__(self):
        return self.ref()
