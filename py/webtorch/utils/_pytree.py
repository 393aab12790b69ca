"""torch.utils._pytree: nested containers (tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque,
torch.return_types and registered classes) flattened into leaves and a TreeSpec, and rebuilt.

Same API and behaviour as PyTorch 2.13's Python implementation: the TreeSpec's repr, equality and hash, the
JSON of treespec_dumps (protocol 1), key paths, and the errors of flatten_up_to."""
import builtins
import dataclasses
import functools
import json
import types
from collections import OrderedDict, defaultdict, deque, namedtuple
from typing import Any, Callable, NamedTuple

from ..ops.reduction import return_types

__all__ = ["PyTree", "Context", "FlattenFn", "UnflattenFn", "DumpableContext", "ToDumpableContextFn",
           "FromDumpableContextFn", "PyTreeSpec", "TreeSpec", "LeafSpec", "keystr", "key_get",
           "register_pytree_node", "tree_is_leaf", "tree_flatten", "tree_flatten_with_path", "tree_unflatten",
           "tree_iter", "tree_leaves", "tree_leaves_with_path", "tree_structure", "tree_map", "tree_map_with_path",
           "tree_map_", "tree_map_only", "tree_map_only_", "tree_all", "tree_any", "tree_all_only", "tree_any_only",
           "treespec_dumps", "treespec_loads", "treespec_pprint", "is_namedtuple", "is_namedtuple_class",
           "is_namedtuple_instance", "is_structseq", "is_structseq_class", "is_structseq_instance"]

PyTree = Any
Context = Any
DumpableContext = Any
FlattenFn = Callable[[PyTree], "tuple[list[Any], Context]"]
UnflattenFn = Callable[[Any, Context], PyTree]
ToDumpableContextFn = Callable[[Context], DumpableContext]
FromDumpableContextFn = Callable[[DumpableContext], Context]
DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL = 1
NO_SERIALIZED_TYPE_NAME_FOUND = "NO_SERIALIZED_TYPE_NAME_FOUND"


class NodeDef(NamedTuple):
    type: Any
    flatten_fn: Any
    unflatten_fn: Any
    flatten_with_keys_fn: Any


class _SerializeNodeDef(NamedTuple):
    typ: Any
    serialized_type_name: str
    to_dumpable_context: Any
    from_dumpable_context: Any


SUPPORTED_NODES: dict = {}
SUPPORTED_SERIALIZED_TYPES: dict = {}
SERIALIZED_TYPE_TO_PYTHON_TYPE: dict = {}


# ---- key paths ---------------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    key: Any

    def __str__(self):
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self):
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


def keystr(kp):
    """Given a key path, return a pretty-printed representation."""
    return "".join(str(k) for k in kp)


def key_get(obj, kp):
    """Given an object and a key path, return the value at the key path."""
    for k in kp:
        obj = k.get(obj)
    return obj


# ---- registration ------------------------------------------------------------------------------------------------
def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None, to_dumpable_context=None,
                         from_dumpable_context=None, flatten_with_keys_fn=None):
    """Register a container type as a pytree node: flatten_fn(obj) -> (children, context),
    unflatten_fn(children, context) -> obj."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    if (to_dumpable_context is None) != (from_dumpable_context is None):
        raise ValueError(f"Both to_dumpable_context and from_dumpable_context for {cls} must be None or registered.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
    name = serialized_type_name or NO_SERIALIZED_TYPE_NAME_FOUND
    SUPPORTED_SERIALIZED_TYPES[cls] = _SerializeNodeDef(cls, name, to_dumpable_context, from_dumpable_context)
    SERIALIZED_TYPE_TO_PYTHON_TYPE[name] = cls


def _sequence(make):
    """flatten, unflatten and flatten-with-keys of a sequence type rebuilt by make(values, context)."""
    def flatten(d):
        return list(d), None

    def with_keys(d):
        return [(SequenceKey(i), v) for i, v in enumerate(d)], None
    return flatten, lambda values, context: make(values, context), with_keys


def _mapping(keys_of, make):
    def flatten(d):
        return list(d.values()), keys_of(d)

    def with_keys(d):
        return [(MappingKey(k), v) for k, v in d.items()], keys_of(d)
    return flatten, make, with_keys


def _namedtuple_flatten(d):
    return list(d), type(d)


def _namedtuple_with_keys(d):
    return [(GetAttrKey(f), v) for f, v in zip(d._fields, d)], type(d)


def _namedtuple_serialize(context):
    node = SUPPORTED_SERIALIZED_TYPES.get(context)
    if node is None or node.serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(f"Can't serialize TreeSpec of namedtuple class {context} because we didn't register "
                                  "a serializated_type_name. Please register using `_register_namedtuple`.")
    return node.serialized_type_name


def _namedtuple_deserialize(name):
    if name not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(f"Can't deserialize TreeSpec of namedtuple class {name} because we couldn't find a "
                                  "serializated name.")
    return SERIALIZED_TYPE_TO_PYTHON_TYPE[name]


def _register_namedtuple(cls, *, serialized_type_name):
    """Name a namedtuple class for treespec_dumps/loads (it is a pytree node without this)."""
    SUPPORTED_SERIALIZED_TYPES[cls] = _SerializeNodeDef(cls, serialized_type_name, None, None)
    SERIALIZED_TYPE_TO_PYTHON_TYPE[serialized_type_name] = cls


def _defaultdict_serialize(context):
    factory, keys = context
    return {"default_factory_module": factory.__module__, "default_factory_name": factory.__qualname__,
            "dict_context": keys}


def _defaultdict_deserialize(context):
    """Only a builtin default_factory (list, dict, int, ...): a file never names code to import."""
    if not isinstance(context, dict) or set(context) != {"default_factory_module", "default_factory_name",
                                                         "dict_context"}:
        raise AssertionError("dumpable_context must be a dict with keys default_factory_module, "
                             "default_factory_name, dict_context")
    factory = getattr(builtins, context["default_factory_name"], None)
    if context["default_factory_module"] != "builtins" or not isinstance(factory, type):
        raise NotImplementedError(f"Deserializing a defaultdict whose default_factory is "
                                  f"{context['default_factory_module']}.{context['default_factory_name']} is not "
                                  "supported (only builtin types: no name in a file is imported).")
    return [factory, context["dict_context"]]


def _defaultdict_flatten(d):
    return list(d.values()), [d.default_factory, list(d)]


def _defaultdict_with_keys(d):
    return [(MappingKey(k), v) for k, v in d.items()], [d.default_factory, list(d)]


def _defaultdict_unflatten(values, context):
    return defaultdict(context[0], dict(zip(context[1], values)))


def _deque_flatten(d):
    return list(d), d.maxlen


def _deque_with_keys(d):
    return [(SequenceKey(i), v) for i, v in enumerate(d)], d.maxlen


register_pytree_node(tuple, *_sequence(lambda v, c: tuple(v))[:2], serialized_type_name="builtins.tuple",
                     flatten_with_keys_fn=_sequence(None)[2])
register_pytree_node(list, *_sequence(lambda v, c: list(v))[:2], serialized_type_name="builtins.list",
                     flatten_with_keys_fn=_sequence(None)[2])
_dict_fns = _mapping(list, lambda values, context: dict(zip(context, values)))
register_pytree_node(dict, *_dict_fns[:2], serialized_type_name="builtins.dict", flatten_with_keys_fn=_dict_fns[2])
register_pytree_node(namedtuple, _namedtuple_flatten, lambda values, context: context(*values),
                     serialized_type_name="collections.namedtuple", to_dumpable_context=_namedtuple_serialize,
                     from_dumpable_context=_namedtuple_deserialize, flatten_with_keys_fn=_namedtuple_with_keys)
_od_fns = _mapping(list, lambda values, context: OrderedDict(zip(context, values)))
register_pytree_node(OrderedDict, *_od_fns[:2], serialized_type_name="collections.OrderedDict",
                     flatten_with_keys_fn=_od_fns[2])
register_pytree_node(defaultdict, _defaultdict_flatten, _defaultdict_unflatten,
                     serialized_type_name="collections.defaultdict", to_dumpable_context=_defaultdict_serialize,
                     from_dumpable_context=_defaultdict_deserialize, flatten_with_keys_fn=_defaultdict_with_keys)
register_pytree_node(deque, _deque_flatten, lambda values, context: deque(values, maxlen=context),
                     serialized_type_name="collections.deque", flatten_with_keys_fn=_deque_with_keys)
# torch.return_types are nodes of their own class (PyTorch's structseqs), rebuilt from their values
_STRUCTSEQS = frozenset(v for v in vars(return_types).values() if isinstance(v, type))
for _cls in _STRUCTSEQS:
    register_pytree_node(_cls, _sequence(None)[0], lambda values, context, cls=_cls: cls(*values),
                         flatten_with_keys_fn=_sequence(None)[2])

# PyTorch's module-level names of the builtin nodes' functions (libraries pass them to register_pytree_node)
_, _tuple_flatten, _tuple_unflatten, _tuple_flatten_with_keys = SUPPORTED_NODES[tuple]
_, _list_flatten, _list_unflatten, _list_flatten_with_keys = SUPPORTED_NODES[list]
_, _dict_flatten, _dict_unflatten, _dict_flatten_with_keys = SUPPORTED_NODES[dict]
_, _ordereddict_flatten, _ordereddict_unflatten, _ordereddict_flatten_with_keys = SUPPORTED_NODES[OrderedDict]
_, _, _namedtuple_unflatten, _namedtuple_flatten_with_keys = SUPPORTED_NODES[namedtuple]
_, _, _deque_unflatten, _deque_flatten_with_keys = SUPPORTED_NODES[deque]
_defaultdict_flatten_with_keys = _defaultdict_with_keys

STANDARD_DICT_TYPES = frozenset({dict, OrderedDict, defaultdict})
BUILTIN_TYPES = frozenset({tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque})


# ---- namedtuple / structseq --------------------------------------------------------------------------------------
def is_namedtuple(obj):
    """Return whether the object is an instance of namedtuple or is a namedtuple class."""
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_class(cls):
    """Return whether the class is a subclass of namedtuple."""
    return (isinstance(cls, type) and issubclass(cls, tuple) and cls not in _STRUCTSEQS
            and isinstance(getattr(cls, "_fields", None), tuple)
            and all(type(f) is str for f in cls._fields) and callable(getattr(cls, "_make", None))
            and callable(getattr(cls, "_asdict", None)))


def is_namedtuple_instance(obj):
    """Return whether the object is an instance of namedtuple."""
    return is_namedtuple_class(type(obj))


def is_structseq_class(cls):
    """Return whether the class is a class of PyStructSequence (torch.return_types, os.stat_result, ...)."""
    if cls in _STRUCTSEQS:
        return True
    return (isinstance(cls, type) and cls.__bases__ == (tuple,)
            and all(isinstance(getattr(cls, n, None), int) for n in ("n_fields", "n_sequence_fields",
                                                                       "n_unnamed_fields"))
            and not cls.__flags__ & (1 << 10))


def is_structseq(obj):
    """Return whether the object is an instance of PyStructSequence or a class of PyStructSequence."""
    return is_structseq_class(obj if isinstance(obj, type) else type(obj))


def is_structseq_instance(obj):
    """Return whether the object is an instance of PyStructSequence."""
    return is_structseq_class(type(obj))


def _get_node_type(tree):
    t = type(tree)
    return namedtuple if is_namedtuple_class(t) else t


def tree_is_leaf(tree, is_leaf=None):
    """Check if a pytree is a leaf (anything that is not a registered node)."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _get_node_type(tree) not in SUPPORTED_NODES


# ---- TreeSpec ----------------------------------------------------------------------------------------------------
class TreeSpec:
    """Representing the structure of the pytree."""
    __slots__ = ("type", "_context", "_children", "num_nodes", "num_leaves", "num_children")

    def __init__(self, type, context, children_specs):
        self.type, self._context, self._children = type, context, children_specs
        if type is None:
            if context is not None:
                raise AssertionError("leaf node should not have a context")
            if children_specs:
                raise AssertionError("leaf node should not have children")
            self.num_nodes, self.num_leaves, self.num_children = 1, 1, 0
        else:
            self.num_nodes = 1 + sum(c.num_nodes for c in children_specs)
            self.num_leaves = sum(c.num_leaves for c in children_specs)
            self.num_children = len(children_specs)

    def __repr__(self, indent=0):
        if self.is_leaf():
            return "*"
        inner = ""
        if self._children:
            indent += 2
            inner = self._children[0].__repr__(indent) + ("," if self.num_children > 1 else "")
            inner += ",".join("\n" + " " * indent + c.__repr__(indent) for c in self._children[1:])
        return f"TreeSpec({self.type.__name__}, {self._context}, [{inner}])"

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (str(self.type) == str(other.type) and self._context == other._context
                and self._children == other._children)

    def __hash__(self):
        t, ctx = self.type, self._context
        if t is defaultdict:
            ctx = (ctx[0], tuple(ctx[1]))
        elif t in (dict, OrderedDict):
            ctx = tuple(ctx)
        elif not (t is None or t in BUILTIN_TYPES):
            ctx = None  # a registered class's context need not be hashable
        return hash((t, ctx, tuple(self._children)))

    context = property(lambda self: self._context)
    children_specs = property(lambda self: self._children)

    def is_leaf(self):
        """Test whether the treespec represents a leaf."""
        return self.num_nodes == 1 and self.num_leaves == 1

    def children(self):
        """Get all the child treespecs."""
        return self._children.copy()

    def child(self, index):
        """Get the child treespec at the given index."""
        return self._children[index]

    def flatten_up_to(self, tree):
        """Flatten the subtrees in ``tree`` up to the structure of this treespec and return a list of subtrees."""
        subtrees = []
        self._up_to(tree, subtrees)
        return subtrees

    def _up_to(self, node, subtrees):
        if self.is_leaf():
            subtrees.append(node)
            return
        for child, spec in zip(self._children_matching(node), self._children):
            spec._up_to(child, subtrees)

    def _children_matching(self, node):
        node_type = _get_node_type(node)
        if self.type not in BUILTIN_TYPES:
            if node_type != self.type:
                raise ValueError(f"Type mismatch; expected {self.type!r}, but got {node_type!r}.")
            children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
            self._check_arity(len(children))
            if context != self._context:
                raise ValueError(f"Node context mismatch for custom node type {self.type!r}.")
            return children
        both_dicts = self.type in STANDARD_DICT_TYPES and node_type in STANDARD_DICT_TYPES
        if not both_dicts and node_type != self.type:
            raise ValueError(f"Node type mismatch; expected {self.type!r}, but got {node_type!r}.")
        self._check_arity(len(node))
        if both_dicts:
            return self._dict_children(node)
        children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
        if node_type is not deque and context != self._context:
            raise ValueError(f"Node context mismatch for node type {self.type!r}; "
                             f"expected {self._context!r}, but got {context!r}.")
        return children

    def _check_arity(self, n):
        if n != self.num_children:
            raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got {n}.")

    def _dict_children(self, node):
        keys = self._context[1] if self.type is defaultdict else self._context
        got, want = set(node), set(keys)
        if got != want:
            missing, extra = want - got, got - want
            message = (f"; missing key(s): {missing}" if missing else "") + (f"; extra key(s): {extra}" if extra
                                                                             else "")
            raise ValueError(f"Node keys mismatch{message}.")
        return [node[k] for k in keys]

    def unflatten(self, leaves):
        """Reconstruct a pytree from the leaves."""
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers to "
                             f"a pytree that holds {self.num_leaves} items ({self}).")
        if self.is_leaf():
            return leaves[0]
        start, children = 0, []
        for spec in self._children:
            children.append(spec.unflatten(leaves[start:start + spec.num_leaves]))
            start += spec.num_leaves
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self._context)


PyTreeSpec = TreeSpec


class LeafSpec(TreeSpec):
    __slots__ = ()

    def __init__(self):
        super().__init__(None, None, [])


_LEAF_SPEC = LeafSpec()


# ---- flatten, map, predicates ------------------------------------------------------------------------------------
def tree_flatten(tree, is_leaf=None):
    """Flattens a pytree into a list of values and a TreeSpec that can be used to reconstruct the pytree."""
    leaves = []

    def helper(node):
        if tree_is_leaf(node, is_leaf=is_leaf):
            leaves.append(node)
            return _LEAF_SPEC
        node_type = _get_node_type(node)
        children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
        return TreeSpec(node_type, context, [helper(c) for c in children])
    return leaves, helper(tree)


def tree_unflatten(leaves, treespec):
    """Given a list of values and a TreeSpec, builds a pytree (the inverse of tree_flatten)."""
    if not isinstance(treespec, TreeSpec):
        if not isinstance(leaves, TreeSpec):
            raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item of type "
                            f"{type(treespec)}.")
        leaves, treespec = treespec, leaves
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    """Get an iterator over the leaves of a pytree."""
    if tree_is_leaf(tree, is_leaf=is_leaf):
        yield tree
        return
    for child in SUPPORTED_NODES[_get_node_type(tree)].flatten_fn(tree)[0]:
        yield from tree_iter(child, is_leaf=is_leaf)


def tree_leaves(tree, is_leaf=None):
    """Get a list of leaves of a pytree."""
    return list(tree_iter(tree, is_leaf=is_leaf))


def tree_structure(tree, is_leaf=None):
    """Get the TreeSpec for a pytree."""
    return tree_flatten(tree, is_leaf=is_leaf)[1]


def tree_map(func, tree, *rests, is_leaf=None):
    """Map a multi-input function over pytree args to produce a new pytree; ``rests`` need only have ``tree``'s
    structure as a prefix."""
    leaves, treespec = tree_flatten(tree, is_leaf=is_leaf)
    flat_args = [leaves] + [treespec.flatten_up_to(r) for r in rests]
    return treespec.unflatten(map(func, *flat_args))


def tree_map_(func, tree, *rests, is_leaf=None):
    """Like tree_map, but call func on each leaf for its effect and return the original tree."""
    leaves, treespec = tree_flatten(tree, is_leaf=is_leaf)
    flat_args = [leaves] + [treespec.flatten_up_to(r) for r in rests]
    deque(map(func, *flat_args), maxlen=0)
    return tree


def map_only(type_or_types_or_pred):
    """A decorator: the function applies to the leaves that are instances of the type(s) or meet the predicate,
    other leaves pass unchanged."""
    if isinstance(type_or_types_or_pred, (type, tuple, types.UnionType)):
        def pred(x):
            return isinstance(x, type_or_types_or_pred)
    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")

    def wrapper(func):
        @functools.wraps(func)
        def wrapped(x):
            return func(x) if pred(x) else x
        return wrapped
    return wrapper


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None):
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func, tree, is_leaf=None):
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    return all(map(pred, tree_iter(tree, is_leaf=is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    return any(map(pred, tree_iter(tree, is_leaf=is_leaf)))


def tree_all_only(type_or_types, /, pred, tree, is_leaf=None):
    return all(pred(x) for x in tree_iter(tree, is_leaf=is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, /, pred, tree, is_leaf=None):
    return any(pred(x) for x in tree_iter(tree, is_leaf=is_leaf) if isinstance(x, type_or_types))


def _broadcast_to_and_flatten(tree, treespec, is_leaf=None):
    """tree's leaves repeated over the leaves of treespec's subtrees (tree a prefix of treespec), or None."""
    full = tree_unflatten([0] * treespec.num_leaves, treespec)
    result = []
    try:
        tree_map_(lambda x, sub: result.extend([x] * tree_structure(sub, is_leaf=is_leaf).num_leaves),
                  tree, full, is_leaf=is_leaf)
    except ValueError:
        return None
    return result


# ---- key paths over trees ----------------------------------------------------------------------------------------
def _key_paths(path, tree, is_leaf):
    if is_leaf and is_leaf(tree):
        yield path, tree
        return
    node_type = _get_node_type(tree)
    handler = SUPPORTED_NODES.get(node_type)
    if not handler:
        yield path, tree
        return
    if not handler.flatten_with_keys_fn:
        raise ValueError(f"Did not find a flatten_with_keys_fn for type: {node_type}. "
                         "Please pass a flatten_with_keys_fn argument to register_pytree_node.")
    for k, c in handler.flatten_with_keys_fn(tree)[0]:
        yield from _key_paths((*path, k), c, is_leaf)


def tree_flatten_with_path(tree, is_leaf=None):
    """Like tree_flatten, with each leaf's key path: ([(key_path, leaf), ...], treespec)."""
    return list(_key_paths((), tree, is_leaf)), tree_structure(tree, is_leaf)


def tree_leaves_with_path(tree, is_leaf=None):
    """[(key_path, leaf), ...] of a pytree."""
    return list(_key_paths((), tree, is_leaf))


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    """Like tree_map, func(key_path, leaf, *rest_leaves)."""
    pairs, treespec = tree_flatten_with_path(tree, is_leaf)
    columns = list(zip(*pairs)) + [treespec.flatten_up_to(r) for r in rests]
    return treespec.unflatten(func(*xs) for xs in zip(*columns))


# ---- serialization -----------------------------------------------------------------------------------------------
def _to_json(spec):
    if spec.is_leaf():
        return {"type": None, "context": None, "children_spec": []}
    node = SUPPORTED_SERIALIZED_TYPES.get(spec.type)
    if node is None:
        raise NotImplementedError(f"Serializing {spec.type} in pytree is not registered.")
    if node.serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(f"No registered serialization name for {spec.type} found. Please update your "
                                  "_register_pytree_node call with a `serialized_type_name` kwarg.")
    if node.to_dumpable_context is not None:
        context = node.to_dumpable_context(spec._context)
    else:
        try:
            context = json.dumps(spec._context)
        except TypeError as e:
            raise TypeError("Unable to serialize context. Please make the context json dump-able, or register a "
                            "custom serializer using _register_pytree_node.") from e
    return {"type": node.serialized_type_name, "context": context,
            "children_spec": [_to_json(c) for c in spec._children]}


def _from_json(schema):
    if schema["type"] is None and schema["context"] is None and not schema["children_spec"]:
        return _LEAF_SPEC
    typ = SERIALIZED_TYPE_TO_PYTHON_TYPE.get(schema["type"])
    if typ is None:
        raise NotImplementedError(f"Deserializing {schema['type']} in pytree is not registered.")
    node = SUPPORTED_SERIALIZED_TYPES[typ]
    context = (node.from_dumpable_context(schema["context"]) if node.from_dumpable_context is not None
               else json.loads(schema["context"]))
    return TreeSpec(typ, context, [_from_json(c) for c in schema["children_spec"]])


def _check_protocol(protocol):
    if protocol != DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL:
        raise ValueError(f"Unknown protocol {protocol}. Available protocols: [1]")


def treespec_dumps(treespec, protocol=None):
    """The treespec as a JSON string (PyTorch's protocol 1)."""
    protocol = DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL if protocol is None else protocol
    _check_protocol(protocol)
    return json.dumps((protocol, _to_json(treespec)))


@functools.lru_cache
def treespec_loads(serialized):
    protocol, schema = json.loads(serialized)
    _check_protocol(protocol)
    return _from_json(schema)


class _Asterisk(str):
    __slots__ = ()

    def __new__(cls):
        return super().__new__(cls, "*")

    def __repr__(self):
        return "*"


def treespec_pprint(treespec):
    return repr(tree_unflatten([_Asterisk()] * treespec.num_leaves, treespec))
