"""torch.load(weights_only=True)'s unpickler: an interpreter of pickle opcodes that builds only PyTorch's
allow-list of globals (given by serialization.py) plus what add_safe_globals / safe_globals allow; iterative, with
every container's nesting depth and expanded size recorded, so a deep or shared structure is refused before
anything (hash, compare) walks it."""
import _compat_pickle
import struct
from collections import Counter, OrderedDict

from ._checkpoint_io import CheckpointError, UnpicklingError, _bad
from ._tensor import Tensor
from .nn.parameter import Parameter


def _py3_name(module, name):
    """Protocol-2 pickles name Python 2 modules (`__builtin__.set`): map them as pickle does."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


# ---- user-allowed globals (torch.serialization.add_safe_globals & co.) ---------------------------
_safe_globals = []


def _global_path(g):
    if isinstance(g, tuple):
        if len(g) != 2:
            raise ValueError(f"Expected tuple of length 2 (global, str of callable full path), but got tuple of "
                             f"length: {len(g)}")
        if not isinstance(g[1], str):
            raise TypeError(f"Expected second item in tuple to be str of callable full path, but got: {type(g[1])}")
        return g[1], g[0]
    return f"{g.__module__}.{g.__qualname__}", g


def _user_globals():
    return dict(_global_path(g) for g in _safe_globals)


def add_safe_globals(safe_globals):
    """Mark globals (classes/functions, or (obj, 'module.name') pairs) as safe for weights_only load."""
    for g in safe_globals:
        _global_path(g)
        if g not in _safe_globals:
            _safe_globals.append(g)


def get_safe_globals():
    """The user-added globals that are safe for weights_only load."""
    return list(_safe_globals)


def clear_safe_globals():
    """Forget every user-added safe global."""
    _safe_globals.clear()


class safe_globals:
    """Context manager: `with safe_globals([MyClass]): load(f)` allows MyClass inside the block."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc):
        _safe_globals[:] = [g for g in _safe_globals if g not in self.safe_globals]


_UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, "
    "but it can result in arbitrary code execution. Do it only if you got the file from a trusted source.")


_DOCS_MESSAGE = ("\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
                 "weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")


def _weights_only_error(message, unsafe_global=False):
    """PyTorch's UnpicklingError text for a weights_only=True refusal."""
    if unsafe_global:
        text = ("Weights only load failed. This file can still be loaded, to do so you have two options, "
                "\033[1mdo those steps only if you trust the source of the checkpoint\033[0m. "
                f"\n\t(1) {_UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` please check "
                "the recommended steps in the following error message.\n\tWeightsUnpickler error: " + message)
    else:
        text = (f"Weights only load failed. {_UNSAFE_MESSAGE}\nPlease file an issue with the following so that we "
                "can make `weights_only=True` compatible with your use case: WeightsUnpickler error: \n\n" + message)
    return UnpicklingError(text + _DOCS_MESSAGE)


# ---- the weights_only=True interpreter -----------------------------------------------------------
_MAX_DEPTH = 1000        # containers nested deeper than this are refused (Python's recursion limit)


_MAX_KEY_NODES = 100000  # a dict key / set element expanding to more nodes than this is refused


class _Unpickler:
    """Interprets pickle opcodes (protocols 2-5) with PyTorch's weights_only rules: only the
    allow-listed globals plus add_safe_globals' may be built or called. Iterative, and every
    container records its nesting depth and expanded size, so a deep or shared structure is refused
    before anything (hash, compare) would walk it. known: {'module.name': object} of the allowed torch names;
    storages: what persistent ids name (BINPERSID)."""

    def __init__(self, data, name, storages, known):
        self.data, self.pos, self.name, self.storages = data, 0, name, storages
        self.known = known
        self.user = _user_globals()
        self.callable = {id(v) for v in list(self.known.values()) + list(self.user.values())}
        self.shape = {}  # id(container) -> (container, depth, expanded size)

    def _take(self, n):
        if n < 0 or self.pos + n > len(self.data):
            raise _bad(self.name, f"data.pkl is truncated (wanted {n} bytes at {self.pos})")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def _u(self, fmt):
        return struct.unpack(fmt, self._take(struct.calcsize(fmt)))[0]

    def _str(self, n):
        try:
            return bytes(self._take(n)).decode("utf-8")
        except UnicodeDecodeError as e:
            raise _bad(self.name, f"bad string in data.pkl: {e}") from None

    def _global(self, module, qual):
        path = "%s.%s" % _py3_name(module, qual)
        if path in self.known:
            return self.known[path]
        if path in self.user:
            return self.user[path]
        shown = path[len("builtins."):] if path.startswith("builtins.") else path
        raise _weights_only_error(
            f"Unsupported global: GLOBAL {shown} was not an allowed global by default. Please use "
            f"`torch.serialization.add_safe_globals([{shown}])` or the `torch.serialization.safe_globals([{shown}])` "
            "context manager to allowlist this global if you trust this class/function.", unsafe_global=True)

    def _nest(self, obj, items):
        """Record obj's depth and expanded size after `items` went into it."""
        depth, size = self.shape.get(id(obj), (None, 1, 1))[1:]
        for x in items:
            _, d, s = self.shape.get(id(x), (None, 0, 1))
            depth = max(depth, d + 1)
            size = min(size + s, 1 << 62)
        if depth > _MAX_DEPTH:
            raise _bad(self.name, f"containers nest deeper than {_MAX_DEPTH}")
        if depth > 1 or size > 1:
            self.shape[id(obj)] = (obj, depth, size)
        return obj

    def _pop_mark(self):
        if not self.marks:
            raise _bad(self.name, "data.pkl pops a MARK that was never pushed")
        m = self.marks.pop()
        items = self.stack[m:]
        del self.stack[m:]
        return items

    def _pop(self):
        if not self.stack:
            raise _bad(self.name, "data.pkl stack underflow")
        return self.stack.pop()

    def load(self):
        self.stack, self.marks, self.memo = [], [], {}
        while True:
            if self.pos >= len(self.data):
                raise _bad(self.name, "data.pkl ends without STOP")
            op = self.data[self.pos]
            self.pos += 1
            if op == 0x2E:  # STOP
                if len(self.stack) != 1:
                    raise _bad(self.name, "data.pkl stops with a malformed stack")
                return self.stack[0]
            run = _OPCODES.get(op)
            if run is None:
                raise _bad(self.name, f"unsupported pickle opcode 0x{op:02x} at byte {self.pos - 1} of data.pkl")
            run(self, op)

    # -- one method per family of opcodes, each given the opcode ---------------------------------------
    def _op_proto(self, op):
        p = self._take(1)[0]
        if p > 5:
            raise _bad(self.name, f"unsupported pickle protocol {p}")

    def _op_frame(self, op):
        self._take(8)

    def _op_mark(self, op):
        self.marks.append(len(self.stack))

    def _op_constant(self, op):  # NONE, NEWTRUE, NEWFALSE, EMPTY_TUPLE
        self.stack.append(_CONSTANTS[op])

    def _op_empty(self, op):  # EMPTY_DICT, EMPTY_LIST, EMPTY_SET
        self.stack.append(_EMPTY[op]())

    def _op_fixed(self, op):  # BININT1, BININT2, BININT, BINFLOAT
        self.stack.append(self._u(_FIXED[op]))

    def _op_long(self, op):  # LONG1, LONG4
        n = self._take(1)[0] if op == 0x8A else self._u("<i")
        if n < 0 or n > 4096:
            raise _bad(self.name, f"LONG4 of {n} bytes")
        self.stack.append(int.from_bytes(self._take(n), "little", signed=True))

    def _op_unicode(self, op):  # SHORT_BINUNICODE, BINUNICODE, BINUNICODE8
        self.stack.append(self._str(self._u(_SIZED[op])))

    def _op_bytes(self, op):  # SHORT_BINBYTES, BINBYTES
        self.stack.append(bytes(self._take(self._u(_SIZED[op]))))

    def _op_tuple(self, op):  # TUPLE, TUPLE1/2/3
        if op == 0x74:
            items = tuple(self._pop_mark())
        else:
            n = op - 0x84
            if len(self.stack) < n:
                raise _bad(self.name, "data.pkl stack underflow")
            items = tuple(self.stack[-n:])
            del self.stack[-n:]
        self.stack.append(self._nest(items, items))

    def _op_list(self, op):
        items = self._pop_mark()
        self.stack.append(self._nest(items, items))

    def _op_dict(self, op):
        self.stack.append(self._pairs({}, self._pop_mark()))

    def _op_append(self, op):  # APPEND, APPENDS
        items = [self._pop()] if op == 0x61 else self._pop_mark()
        self._append(self._top(), items)

    def _op_additems(self, op):
        items = self._pop_mark()
        t = self._top()
        if type(t) is not set:
            raise _bad(self.name, "ADDITEMS on a non-set")
        t.update(self._hashable(i) for i in items)
        self._nest(t, items)

    def _op_setitem(self, op):  # SETITEM, SETITEMS
        if op == 0x73:
            v = self._pop()
            items = [self._pop(), v]
        else:
            items = self._pop_mark()
        self._pairs(self._top(), items)

    def _op_put(self, op):  # BINPUT, LONG_BINPUT, MEMOIZE
        idx = self._take(1)[0] if op == 0x71 else self._u("<I") if op == 0x72 else len(self.memo)
        self.memo[idx] = self._top()

    def _op_get(self, op):  # BINGET, LONG_BINGET
        idx = self._take(1)[0] if op == 0x68 else self._u("<I")
        if idx not in self.memo:
            raise _bad(self.name, f"data.pkl refers to memo {idx} that was never stored")
        self.stack.append(self.memo[idx])

    def _op_global(self, op):  # GLOBAL, STACK_GLOBAL
        if op == 0x63:
            module = self._line()
            qual = self._line()
        else:
            qual = self._pop()
            module = self._pop()
            if not isinstance(module, str) or not isinstance(qual, str):
                raise _bad(self.name, "STACK_GLOBAL with non-string names")
        self.stack.append(self._global(module, qual))

    def _op_reduce(self, op):
        args = self._pop()
        self.stack.append(self._call(self._pop(), args))

    def _op_newobj(self, op):  # NEWOBJ, NEWOBJ_EX
        kwargs = self._pop() if op == 0x92 else {}
        args = self._pop()
        self.stack.append(self._new(self._pop(), args, kwargs))

    def _op_build(self, op):
        state = self._pop()
        self._build(self._top(), state)

    def _op_persid(self, op):
        self.stack.append(self.storages.from_pid(self._pop()))

    def _op_pop(self, op):  # POP, POP_MARK
        if op == 0x30:
            self._pop()
        else:
            self._pop_mark()

    def _op_dup(self, op):
        self.stack.append(self._top())

    def _line(self):
        end = self.data.find(b"\n", self.pos, self.pos + 256)
        if end < 0:
            raise _bad(self.name, "GLOBAL name is not terminated")
        s = self._str(end - self.pos)
        self.pos += 1
        return s

    def _top(self):
        if not self.stack:
            raise _bad(self.name, "data.pkl stack underflow")
        return self.stack[-1]

    def _hashable(self, k):
        if self.shape.get(id(k), (None, 0, 1))[2] > _MAX_KEY_NODES:
            raise _bad(self.name, f"a dict key or set element expands to more than {_MAX_KEY_NODES} nodes")
        try:
            hash(k)
        except TypeError:
            raise _bad(self.name, f"unhashable key of type {type(k).__name__}") from None
        return k

    def _pairs(self, d, items):
        if not isinstance(d, dict):
            raise _bad(self.name, f"SETITEM on a {type(d).__name__}")
        if len(items) % 2:
            raise _bad(self.name, "odd number of items for a dict")
        for i in range(0, len(items), 2):
            d[self._hashable(items[i])] = items[i + 1]
        return self._nest(d, items)

    def _append(self, lst, items):
        if type(lst) is not list:
            raise _weights_only_error(f"Can only append to lists, but got {type(lst)}")
        lst.extend(items)
        self._nest(lst, items)

    def _args(self, args):
        if not isinstance(args, tuple):
            raise _bad(self.name, "call arguments are not a tuple")
        return args

    def _call(self, fn, args):
        if id(fn) not in self.callable:
            raise _weights_only_error(f"Trying to call reduce for unrecognized function {fn!r:.100}")
        args = self._args(args)
        if fn in (Tensor, bytearray) and any(isinstance(a, int) for a in args):
            raise _bad(self.name, f"{fn.__name__}() sized by the file (an allocation bomb)")
        if fn in (set, OrderedDict, Counter) and args:  # hashes what it is given: check first
            items = list(args[0]) if isinstance(args[0], (list, tuple)) else None
            if items is None or fn is OrderedDict and not all(isinstance(p, tuple) and len(p) == 2 for p in items):
                raise _bad(self.name, f"{fn.__name__} built from {type(args[0]).__name__}")
            for x in items:
                self._hashable(x[0] if fn is OrderedDict else x)
        try:
            return fn(*args)
        except CheckpointError:
            raise
        except Exception as e:
            raise _bad(self.name, f"cannot rebuild {getattr(fn, '__qualname__', fn)!r}: {type(e).__name__}: {e}") \
                from None

    def _new(self, cls, args, kwargs):
        if kwargs:
            raise _bad(self.name, "NEWOBJ_EX with keyword arguments")
        if cls is Parameter:
            return self._call(cls, args)
        if not isinstance(cls, type) or id(cls) not in self.callable:
            raise _weights_only_error("Can only create new object for nn.Parameter or classes allowlisted via "
                                      f"`add_safe_globals` but got {cls!r:.100}")
        try:
            return cls.__new__(cls, *self._args(args))
        except CheckpointError:
            raise
        except Exception as e:
            raise _bad(self.name, f"cannot create a {cls.__name__}: {type(e).__name__}: {e}") from None

    def _build(self, obj, state):
        if isinstance(obj, Tensor) and (state is None or isinstance(state, (dict, tuple))):
            return  # tensor python state (hooks, attributes): ignored
        if type(obj) is OrderedDict and isinstance(state, dict):
            obj.__dict__.update(state)
            return
        if id(type(obj)) not in self.callable or type(obj) in (set, list, dict, tuple):
            raise _weights_only_error("Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                                      f"`add_safe_globals`, but got {type(obj)}")
        try:
            if hasattr(obj, "__setstate__"):
                obj.__setstate__(state)
                return
            slots = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slots = state
            if state:
                obj.__dict__.update(state)
            for k, v in (slots or {}).items():
                setattr(obj, k, v)
        except Exception as e:
            raise _bad(self.name, f"cannot set the state of a {type(obj).__name__}: {type(e).__name__}: {e}") \
                from None


_CONSTANTS = {0x4E: None, 0x88: True, 0x89: False, 0x29: ()}


_EMPTY = {0x7D: dict, 0x5D: list, 0x8F: set}


_FIXED = {0x4B: "<B", 0x4D: "<H", 0x4A: "<i", 0x47: ">d"}


_SIZED = {0x8C: "<B", 0x58: "<I", 0x8D: "<Q", 0x43: "<B", 0x42: "<I"}  # the length before a string or bytes


_OPCODES = {op: getattr(_Unpickler, "_op_" + name) for name, ops in {
    "proto": (0x80,), "frame": (0x95,), "mark": (0x28,), "constant": tuple(_CONSTANTS), "empty": tuple(_EMPTY),
    "fixed": tuple(_FIXED), "long": (0x8A, 0x8B), "unicode": (0x8C, 0x58, 0x8D), "bytes": (0x43, 0x42),
    "tuple": (0x74, 0x85, 0x86, 0x87), "list": (0x6C,), "dict": (0x64,), "append": (0x61, 0x65),
    "additems": (0x90,), "setitem": (0x73, 0x75), "put": (0x71, 0x72, 0x94), "get": (0x68, 0x6A),
    "global": (0x63, 0x93), "reduce": (0x52,), "newobj": (0x81, 0x92), "build": (0x62,), "persid": (0x51,),
    "pop": (0x30, 0x31), "dup": (0x32,)}.items() for op in ops}
