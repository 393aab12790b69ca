"""torch.fx.subgraph_rewriter.replace_pattern: every non-overlapping occurrence of a pattern's graph in a
GraphModule's graph replaced by a replacement's graph (pattern and replacement: functions or GraphModules)."""
from typing import NamedTuple

from ..nn import Module
from ._symbolic_trace import symbolic_trace
from .graph_module import _copy_attr
from .node import Node

__all__ = ["Match", "replace_pattern", "ReplacedPatterns"]


class Match(NamedTuple):
    anchor: Node   # the pattern's output node that anchored the match
    nodes_map: dict  # pattern node -> graph node


class ReplacedPatterns(NamedTuple):
    anchor: Node
    nodes_map: dict
    replacements: list


def _graph_of(f):
    return f.graph if hasattr(f, "graph") and hasattr(f.graph, "nodes") else symbolic_trace(f).graph


class _Matcher:
    def __init__(self, gm, pattern_graph):
        self.gm, self.graph = gm, pattern_graph
        self.output = next(n for n in pattern_graph.nodes if n.op == "output")
        outs = self.output.args[0]
        self.returns = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        if len(self.returns) != 1:
            raise NotImplementedError("replace_pattern: a pattern returns one value here")
        self.placeholders = [n for n in pattern_graph.nodes if n.op == "placeholder"]

    def match_at(self, gn):
        nodes_map = {}
        if not self._match(self.returns[0], gn, nodes_map):
            return None
        inner = {g for p, g in nodes_map.items() if p.op != "placeholder"}
        for p, g in nodes_map.items():
            if p.op != "placeholder" and p is not self.returns[0] and any(u not in inner for u in g.users):
                return None  # a node of the match is used outside it
        return Match(anchor=self.returns[0], nodes_map=nodes_map)

    def _match(self, pn, gn, nodes_map):
        if pn in nodes_map:
            return nodes_map[pn] is gn if isinstance(gn, Node) else nodes_map[pn] == gn
        if pn.op == "placeholder":
            nodes_map[pn] = gn
            return True
        if not isinstance(gn, Node) or not self._same_op(pn, gn):
            return False
        if len(pn.args) != len(gn.args) or set(pn.kwargs) != set(gn.kwargs):
            return False
        nodes_map[pn] = gn
        pairs = list(zip(pn.args, gn.args)) + [(pn.kwargs[k], gn.kwargs[k]) for k in pn.kwargs]
        if all(self._match_arg(a, b, nodes_map) for a, b in pairs):
            return True
        del nodes_map[pn]
        return False

    def _match_arg(self, a, b, nodes_map):
        if isinstance(a, Node):
            return self._match(a, b, nodes_map)
        if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
            return len(a) == len(b) and all(self._match_arg(x, y, nodes_map) for x, y in zip(a, b))
        return not isinstance(b, Node) and a == b

    def _same_op(self, pn, gn):
        if pn.op != gn.op:
            return False
        if pn.op == "call_module":
            pm = pn.graph.owning_module.get_submodule(pn.target) if pn.graph.owning_module else None
            return pm is None or type(pm) is type(self.gm.get_submodule(gn.target))
        return pn.op == "get_attr" or pn.target == gn.target


def _replace_pattern(gm, pattern, replacement):
    matcher = _Matcher(gm, _graph_of(pattern))
    r_graph = _graph_of(replacement)
    r_module = replacement if isinstance(replacement, Module) else None
    matches, taken = [], set()
    for gn in list(gm.graph.nodes):
        m = matcher.match_at(gn) if gn.op != "placeholder" else None
        if m is None:
            continue
        inner = {g for p, g in m.nodes_map.items() if p.op != "placeholder"}
        if inner & taken:
            continue
        taken |= inner
        matches.append(m)
    replaced = []
    for m in matches:
        replaced.append(_apply(gm, matcher, m, r_graph, r_module))
    gm.recompile()
    return replaced


def _apply(gm, matcher, m, r_graph, r_module):
    r_placeholders = [n for n in r_graph.nodes if n.op == "placeholder"]
    val_map = {rp: m.nodes_map[pp] for rp, pp in zip(r_placeholders, matcher.placeholders)}
    before = set(gm.graph.nodes)
    target = m.nodes_map[m.anchor]
    # as PyTorch: before the first user of the matched output (else right after it)
    first_user = next((n for n in gm.graph.nodes if n in target.users), None)
    with gm.graph.inserting_before(first_user) if first_user is not None else gm.graph.inserting_after(target):
        out = gm.graph.graph_copy(r_graph, val_map)
    new_nodes = [n for n in gm.graph.nodes if n not in before]
    for n in new_nodes:
        if n.op in ("get_attr", "call_module") and r_module is not None and not hasattr(gm, n.target.split(".")[0]):
            _copy_attr(r_module, gm, n.target)
    new_out = out[0] if isinstance(out, (tuple, list)) and len(out) == 1 else out
    target.replace_all_uses_with(new_out)
    for p in reversed(list(matcher.graph.nodes)):
        g = m.nodes_map.get(p)
        if p.op not in ("placeholder", "output") and isinstance(g, Node) and not g._erased:
            gm.graph.erase_node(g)
    return ReplacedPatterns(m.anchor, m.nodes_map, new_nodes)


def replace_pattern(gm, pattern, replacement):
    """Replace each non-overlapping match of pattern in gm's graph by replacement; returns the Matches."""
    return [Match(anchor=r.anchor, nodes_map=r.nodes_map) for r in _replace_pattern(gm, pattern, replacement)]


def replace_pattern_with_filters(gm, pattern, replacement, match_filters=None, ignore_literals=False,
                                 replacement_callback=None, node_name_match=""):
    return _replace_pattern(gm, pattern, replacement)
