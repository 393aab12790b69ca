"""torch.utils._pytree against PyTorch's: leaves, TreeSpec repr/equality, dumps/loads, key paths, tree_map and
its prefix rule, registered classes, return_types, and the errors."""
import collections
import os

import pytest
import torch
import torch.utils._pytree as tp

import webtorch as wt
import webtorch.utils._pytree as wp

Point = collections.namedtuple("Point", "x y")


def _trees():
    return [
        1, None, [], (), {}, [1, (2, 3)], {"a": [1, (2, 3)], "b": None, "c": collections.OrderedDict(x=4)},
        (Point(1, [2, 3]), {"k": (4,)}), collections.defaultdict(list, {"z": 1, "a": [2]}),
        collections.deque([1, [2]], maxlen=5), [[[]], {"q": ()}], {3: "s", 1: 2.5},
    ]


def test_public_names():
    assert set(tp.__all__) <= set(dir(wp)), set(tp.__all__) - set(dir(wp))
    assert wt.utils._pytree is wp


@pytest.mark.parametrize("i", range(len(_trees())))
def test_flatten_like_pytorch(i):
    tree_t, tree_w = _trees()[i], _trees()[i]
    (lt, st), (lw, sw) = tp.tree_flatten(tree_t), wp.tree_flatten(tree_w)
    assert lw == lt
    assert repr(sw) == repr(st)
    assert (sw.num_leaves, sw.num_nodes, sw.num_children, sw.is_leaf()) == \
        (st.num_leaves, st.num_nodes, st.num_children, st.is_leaf())
    assert wp.treespec_pprint(sw) == tp.treespec_pprint(st)
    rebuilt = wp.tree_unflatten(lw, sw)
    assert rebuilt == tree_w and type(rebuilt) is type(tree_w)
    assert [(wp.keystr(k), v) for k, v in wp.tree_leaves_with_path(tree_w)] == \
        [(tp.keystr(k), v) for k, v in tp.tree_leaves_with_path(tree_t)]
    for k, v in wp.tree_leaves_with_path(tree_w):
        assert wp.key_get(tree_w, k) is v
    assert wp.tree_map(lambda x: (x, 0), tree_w) == tp.tree_map(lambda x: (x, 0), tree_t)
    assert wp.tree_map_with_path(lambda k, x: wp.keystr(k), tree_w) == \
        tp.tree_map_with_path(lambda k, x: tp.keystr(k), tree_t)
    if not isinstance(tree_w, collections.defaultdict) and "Point" not in repr(st):
        assert wp.treespec_dumps(sw) == tp.treespec_dumps(st)
        assert wp.treespec_loads(wp.treespec_dumps(sw)) == sw
    assert hash(sw) == hash(wp.tree_structure(_trees()[i]))


def test_defaultdict_round_trip_names_no_code():
    d = collections.defaultdict(list, {"z": 1})
    dumped = wp.treespec_dumps(wp.tree_structure(d))
    assert dumped == tp.treespec_dumps(tp.tree_structure(d))
    assert wp.treespec_loads(dumped).unflatten([1]) == d
    hostile = dumped.replace('"builtins"', '"os"').replace('"list"', '"system"')
    with pytest.raises(NotImplementedError, match="no name in a file is imported"):
        wp.treespec_loads(hostile)


def test_namedtuple_serialization_needs_a_name():
    spec = wp.tree_structure(Point(1, 2))
    with pytest.raises(NotImplementedError, match="_register_namedtuple"):
        wp.treespec_dumps(spec)
    P2 = collections.namedtuple("P2", "a b")
    wp._register_namedtuple(P2, serialized_type_name="test.P2")
    tp._register_namedtuple(P2, serialized_type_name="test.P2")
    s = wp.tree_structure(P2(1, (2,)))
    assert wp.treespec_dumps(s) == tp.treespec_dumps(tp.tree_structure(P2(1, (2,))))
    assert wp.treespec_loads(wp.treespec_dumps(s)).unflatten([7, 8]) == P2(7, (8,))


def test_return_types_are_nodes():
    out_t, out_w = torch.tensor([[1., 2], [3, 4]]).max(0), wt.tensor([[1., 2], [3, 4]]).max(0)
    (lt, st), (lw, sw) = tp.tree_flatten(out_t), wp.tree_flatten(out_w)
    assert repr(sw) == repr(st) and len(lw) == 2
    assert wp.is_structseq_instance(out_w) and not wp.is_namedtuple_instance(out_w)
    back = wp.tree_unflatten([lw[1], lw[0]], sw)
    assert type(back) is type(out_w) and back.values is lw[1]
    assert [wp.keystr(k) for k, _ in wp.tree_leaves_with_path(out_w)] == ["[0]", "[1]"]
    assert wp.is_namedtuple(Point) and wp.is_namedtuple_instance(Point(1, 2)) and not wp.is_structseq(Point)
    assert wp.is_structseq(os.stat_result) == tp.is_structseq(os.stat_result)


def test_prefix_map_and_errors():
    assert wp.tree_map(lambda x, y: [x] + y, [5, 6], [[7, 9], [1, 2]]) == \
        tp.tree_map(lambda x, y: [x] + y, [5, 6], [[7, 9], [1, 2]])
    assert wp._broadcast_to_and_flatten(0, wp.tree_structure([1, (2, 3)])) == [0, 0, 0]
    assert wp._broadcast_to_and_flatten([0, 1], wp.tree_structure([1, (2, 3)])) == \
        tp._broadcast_to_and_flatten([0, 1], tp.tree_structure([1, (2, 3)])) == [0, 1, 1]
    assert wp._broadcast_to_and_flatten([0, 1, 2], wp.tree_structure([1, 2])) is None
    cases = [({"a": 1}, ({"b": 1},)), ([1, 2], ([1, 2, 3],)), ((1, 2), ([1, 2],)),
             (Point(1, 2), ((1, 2),))]
    for tree, rests in cases:
        with pytest.raises(ValueError) as et:
            tp.tree_structure(tree).flatten_up_to(*rests)
        with pytest.raises(ValueError) as ew:
            wp.tree_structure(tree).flatten_up_to(*rests)
        assert str(ew.value) == str(et.value)
    with pytest.raises(ValueError, match="has length 1 but the spec refers to a pytree that holds 2 items"):
        wp.tree_structure([1, 2]).unflatten([1])
    with pytest.raises(TypeError, match="Expected `treespec` to be an instance of PyTreeSpec"):
        wp.tree_unflatten([1], [1])
    assert wp.tree_unflatten(wp.tree_structure([1, 2]), [3, 4]) == [3, 4]  # arguments in either order


def test_only_and_predicates():
    tree = {"a": 1, "b": [2.5, "s"], "c": (wt.tensor(1.0),)}
    got = wp.tree_map_only(int, lambda x: x * 10, tree)
    assert got["a"] == 10 and got["b"] == [2.5, "s"]
    got = wp.tree_map_only((int, float), lambda x: -x, tree)
    assert got["b"][0] == -2.5
    got = wp.tree_map_only(wt.Tensor, lambda t: t + 1, tree)
    assert got["c"][0].item() == 2.0
    seen = []
    assert wp.tree_map_(seen.append, tree) is tree and len(seen) == 4
    assert wp.tree_all(lambda x: x is not None, tree) and wp.tree_any(lambda x: x == "s", tree)
    assert wp.tree_all_only(int, lambda x: x > 0, tree) and not wp.tree_any_only(str, lambda x: x == "t", tree)
    assert wp.tree_leaves([1, [2]], is_leaf=lambda x: isinstance(x, list) and len(x) == 1) == [1, [2]]
    assert wp.tree_is_leaf(None) and not wp.tree_is_leaf([]) and wp.tree_is_leaf((1,), is_leaf=lambda x: True)
    with pytest.raises(TypeError, match="must be a type"):
        wp.tree_map_only(3, lambda x: x, tree)


def test_register_a_class():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    for lib in (wp, tp):
        lib.register_pytree_node(Pair, lambda p: ([p.a, p.b], "ctx"), lambda v, c: Pair(*v),
                                 serialized_type_name="test.Pair",
                                 flatten_with_keys_fn=lambda p: ([(lib.GetAttrKey("a"), p.a),
                                                                  (lib.GetAttrKey("b"), p.b)], "ctx"))
    lw, sw = wp.tree_flatten([Pair(1, (2, 3))])
    lt, st = tp.tree_flatten([Pair(1, (2, 3))])
    assert lw == lt and repr(sw) == repr(st) and wp.treespec_dumps(sw) == tp.treespec_dumps(st)
    assert [wp.keystr(k) for k, _ in wp.tree_leaves_with_path(Pair(1, 2))] == [".a", ".b"]
    back = wp.tree_unflatten([7, 8, 9], sw)
    assert back[0].a == 7 and back[0].b == (8, 9)
    with pytest.raises(ValueError, match="already registered"):
        wp.register_pytree_node(Pair, lambda p: ([], None), lambda v, c: Pair(1, 2))
    with pytest.raises(ValueError, match="Type mismatch"):
        wp.tree_structure(Pair(1, 2)).flatten_up_to((1, 2))
