"""torch.fx.Graph: an ordered list of Nodes with PyTorch's editing API (create_node and the per-op helpers,
inserting_before/after, erase_node, node_copy, graph_copy, lint, eliminate_dead_code) and Python code
generation (python_code). The op recorder behind export, jit and torch.compile builds the same Graph
(`_recorded`: its nodes print their shapes and dtypes, its tensors made during recording are `constants`)."""
import builtins
import contextlib
import keyword
import operator
import re

import webtorch

from .node import Node, _format_arg, _qualified_name, has_side_effect, map_arg, mutates  # noqa: F401

__all__ = ["Graph", "PythonCode"]

_MAGIC = {"add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}", "truediv": "{} / {}",
          "mod": "{} % {}", "pow": "{} ** {}", "lshift": "{} << {}", "rshift": "{} >> {}", "and_": "{} & {}",
          "or_": "{} | {}", "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}", "eq": "{} == {}",
          "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}", "le": "{} <= {}", "ge": "{} >= {}", "pos": "+{}",
          "neg": "-{}", "invert": "~{}"}
_CUSTOM_BUILTINS = {"inf", "nan", "NoneType", "torch", "device", "fx_pytree", "pytree"}


class PythonCode:
    """Generated forward source (`src`) and the globals it needs (`globals`)."""

    def __init__(self, src, globals):
        self.src, self.globals = src, globals


class _Root:
    """The sentinel before the first node and after the last (node.next of the last node)."""
    op, name = "root", "root"


class _Nodes:
    """graph.nodes: iterates over a snapshot, skipping nodes erased meanwhile (erasing while iterating is safe)."""

    def __init__(self, graph, reverse=False):
        self._graph, self._reverse = graph, reverse

    def __len__(self):
        return len(self._graph._nodes)

    def __iter__(self):
        nodes = tuple(self._graph._nodes)
        for n in reversed(nodes) if self._reverse else nodes:
            if not n._erased:
                yield n

    def __reversed__(self):
        return iter(_Nodes(self._graph, not self._reverse))

    def __getitem__(self, i):
        return self._graph._nodes[i]

    def __contains__(self, n):
        return n in self._graph._nodes


class Graph:
    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._nodes = []
        self._root = _Root()
        self._used_names = set()
        self._insert = None         # None: at the end; else (index-giving function)
        self.owning_module = owning_module
        self._tracer_cls, self._tracer_extras = tracer_cls, tracer_extras
        self._recorded = False      # a graph of the op recorder (export, jit, torch.compile)
        self.constants = {}         # the recorder's tensors made during recording: get_attr name -> tensor

    @property
    def nodes(self):
        return _Nodes(self)

    def __getstate__(self):
        return {**self.__dict__, "owning_module": None}  # the module pickles the graph, not the other way

    # ---- names -------------------------------------------------------------------------------------------------
    def _unique_name(self, candidate):
        candidate = re.sub(r"[^0-9a-zA-Z_]+", "_", candidate) or "_unnamed"
        if candidate[0].isdigit():
            candidate = "_" + candidate
        m = re.match(r"(.*)_(\d+)$", candidate)
        base, num = (m.group(1), int(m.group(2))) if m else (candidate, None)
        while candidate in self._used_names or (not self._recorded and _illegal(candidate)):
            num = 1 if num is None else num + 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        return candidate

    @staticmethod
    def _target_to_str(target):
        if callable(target):
            name = target.__name__
        else:
            name = target[2:-2] if target.startswith("__") and target.endswith("__") else target
        name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower() if not callable(target) else name
        return name.replace(".", "_")

    # ---- making nodes ------------------------------------------------------------------------------------------
    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None, meta=None):
        node = Node(self, self._unique_name(name or self._target_to_str(target)), op, target, args or (),
                    kwargs or {}, type_expr)
        if meta:
            node.meta.update(meta)
        if self._insert is None:
            self._nodes.append(node)
        else:
            self._nodes.insert(self._insert(), node)
        return node

    def placeholder(self, name, type_expr=None, default_value=None, meta=None, *, _default=False):
        """An input; a default value (PyTorch's default_value) is given with `_default=True` or any non-None
        value."""
        args = (default_value,) if default_value is not None or _default else ()
        return self.create_node("placeholder", name, args, type_expr=type_expr, meta=meta)

    def get_attr(self, qualified_name, type_expr=None):
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None, meta=None):
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr, meta=meta)

    def output(self, result, type_expr=None):
        return self.create_node("output", "output", (result,), name="output", type_expr=type_expr)

    def _constant(self, tensor, meta):
        """The recorder's get_attr for a tensor made during recording (kept in `constants`)."""
        node = self.create_node("get_attr", None, name="_tensor_constant", meta=meta)
        node.target = node.name
        self.constants[node.name] = tensor
        return node

    def node_copy(self, node, arg_transform=lambda x: x):
        """A copy of node (from any graph) in this one, its Node arguments mapped through arg_transform."""
        args, kwargs = map_arg(node.args, arg_transform), map_arg(node.kwargs, arg_transform)
        name = node.name if node.name not in self._used_names else None
        copy = self.create_node(node.op, node.target, args, kwargs, name or self._target_to_str(node.target),
                                node.type)
        copy.meta = dict(node.meta)
        return copy

    def graph_copy(self, g, val_map, return_output_node=False):
        """Copy g's nodes (but its output) into this graph; val_map maps g's nodes to the copies (filled in).
        Returns the value g outputs, in this graph's nodes."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                out = map_arg(node.args[0], val_map.__getitem__)
                return (out, node) if return_output_node else out
            val_map[node] = self.node_copy(node, val_map.__getitem__)
        return None

    # ---- editing -----------------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _inserting(self, where):
        saved, self._insert = self._insert, where
        try:
            yield
        finally:
            self._insert = saved

    def inserting_before(self, n=None):
        """Nodes created inside `with graph.inserting_before(n):` go right before n (the start when n is None)."""
        if n is None:
            return self._inserting(lambda: 0)
        return self._inserting(lambda: self._nodes.index(n))

    def inserting_after(self, n=None):
        """Nodes created inside `with graph.inserting_after(n):` go right after n, each (the end when n is None)."""
        if n is None:
            return self._inserting(lambda: len(self._nodes))
        return self._inserting(lambda: self._nodes.index(n) + 1)

    def _move(self, x, index):
        if x in self._nodes:
            i = self._nodes.index(x)
            self._nodes.pop(i)
            if index is not None and i < index:
                index -= 1
        if index is not None:
            self._nodes.insert(index, x)

    def erase_node(self, to_erase):
        if to_erase.users:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} users in the "
                               f"graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            return
        self._nodes.remove(to_erase)
        to_erase._erased = True
        to_erase._update_args_kwargs((), {})
        self.constants.pop(to_erase.name, None)

    def truncate(self, n):
        """Drop the nodes from position n on (the recorder's undo of a decomposition)."""
        for node in reversed(self._nodes[n:]):
            for i in node.all_input_nodes:
                i.users.pop(node, None)
            node._erased = True
            self._used_names.discard(node.name)
            self.constants.pop(node.name, None)
        del self._nodes[n:]

    def eliminate_dead_code(self, is_impure_node=None):
        """Remove the nodes nothing uses that have no side effect; returns whether any was removed."""
        impure = is_impure_node or (lambda n: n.is_impure())
        changed = False
        for node in reversed(self.nodes):
            if not node.users and not impure(node):
                self.erase_node(node)
                changed = True
        return changed

    def find_nodes(self, *, op, target=None, sort=True):
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    def lint(self):
        """Check the graph is well formed: names unique, arguments defined before use and in this graph,
        users consistent, one output at the end, targets of the right kind."""
        seen, names = set(), set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            for arg in node.all_input_nodes:
                if arg not in seen:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before it has been defined! "
                                       "Please check that Nodes in the graph are topologically ordered\n"
                                       f"{self}")
                if node not in arg.users:
                    raise RuntimeError(f"Node '{node}' is not among the users of its argument '{arg}'")
            if node.op in ("call_method", "placeholder", "get_attr", "call_module") and \
                    not isinstance(node.target, str):
                raise RuntimeError(f"Node {node} target {node.target} has type {type(node.target)} but a {node.op} "
                                   "node's target must be a str")
            if node.op == "call_function" and not callable(node.target):
                raise RuntimeError(f"Node {node} target {node.target} has type {type(node.target)} but a "
                                   "call_function node's target must be callable")
            seen.add(node)
            names.add(node.name)
        if self.owning_module is not None:
            for node in self.nodes:
                if node.op in ("get_attr", "call_module"):
                    _check_path(self.owning_module, node)

    # ---- printing and code -------------------------------------------------------------------------------------
    def __str__(self):
        return "graph():\n" + "\n".join("    " + n.format_node() for n in self.nodes)

    def print(self):
        print(self)

    def print_tabular(self):
        rows = [(n.op, n.name, _qualified_name(n.target) if n.op == "call_function" else str(n.target),
                 _format_arg(n.args), _format_arg(n.kwargs)) for n in self.nodes]
        head = ("opcode", "name", "target", "args", "kwargs")
        widths = [max(len(r[i]) for r in rows + [head]) for i in range(5)]
        for r in [head] + rows:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())

    def python_code(self, root_module="self", *, verbose=False, include_stride=False, include_device=False,
                    colored=False, expanded_def=False):
        """The graph as the source of a forward(self, ...) and the globals it refers to."""
        return _codegen(self, root_module)

    def on_generate_code(self, make_transformer):
        return contextlib.nullcontext()


def _illegal(name):
    return keyword.iskeyword(name) or name in builtins.__dict__ or name in _CUSTOM_BUILTINS


def _check_path(root, node):
    obj = root
    for part in node.target.split("."):
        if not hasattr(obj, part):
            kind = "module" if node.op == "call_module" else "attribute"
            raise RuntimeError(f"Node {node} target {node.target} references nonexistent {kind} {part}")
        obj = getattr(obj, part)


# ---- code generation -------------------------------------------------------------------------------------------
def _last_uses(graph):
    """{node: the nodes whose last use it is} (freed after it in generated code)."""
    last_use = {}
    for node in reversed(list(graph.nodes)):
        for i in node.all_input_nodes:
            last_use.setdefault(i, node)
    frees = {}
    for n, user in last_use.items():
        frees.setdefault(user, []).append(n)
    return frees


def _repr_arg(a, globals_):
    if isinstance(a, Node):
        return a.name
    if type(a) in (list, tuple):
        inner = ", ".join(_repr_arg(x, globals_) for x in a)
        return f"[{inner}]" if isinstance(a, list) else f"({inner}{',' if len(a) == 1 else ''})"
    if isinstance(a, dict):
        return "{" + ", ".join(f"{k!r}: {_repr_arg(v, globals_)}" for k, v in a.items()) + "}"
    if isinstance(a, slice):
        return f"slice({_repr_arg(a.start, globals_)}, {_repr_arg(a.stop, globals_)}, {_repr_arg(a.step, globals_)})"
    return _global_repr(a, globals_)


def _codegen(graph, root_module):
    globals_ = {}
    body, free_vars = [], []
    frees = _last_uses(graph)

    def rep(a):
        return _repr_arg(a, globals_)

    def call_args(args, kwargs):
        return ", ".join([rep(a) for a in args] + [f"{k} = {rep(v)}" for k, v in kwargs.items()])

    for node in graph.nodes:
        line = _emit(node, root_module, rep, call_args, globals_, free_vars)
        if line is None:
            continue
        if node.op == "output":
            body.append(line)
            break
        dead = list(frees.get(node, []))
        if not node.users and node.op != "placeholder":
            dead.append(node)
        if dead:
            line += ";  " + " = ".join(d.name for d in dead) + " = None"
        body.append(line)
    code = "\n".join("    " + ln for ln in body) if body else "    pass"
    wrapped = dict.fromkeys(_global_name(n.target, globals_) for n in graph.nodes if n.meta.get("is_wrapped"))
    wraps = "\n".join(f'torch.fx._symbolic_trace.wrap("{name}")' for name in wrapped)
    if wraps:
        globals_["torch"] = webtorch
    src = f"\n{wraps}\n\ndef forward({root_module}, {', '.join(free_vars)}):\n{code}\n    ".replace(
        f"def forward({root_module}, ):", f"def forward({root_module}):")
    return PythonCode(src, globals_)


def _emit(node, root, rep, call_args, globals_, free_vars):
    if node.op == "placeholder":
        default = f" = {rep(node.args[0])}" if node.args else ""
        free_vars.append(f"{node.target}{default}")
        raw = node.target.replace("*", "")
        return f"{node.name} = {raw}" if raw != node.name else None
    if node.op == "get_attr":
        return f"{node.name} = {_attr_path(root, node.target)}"
    if node.op == "call_module":
        return f"{node.name} = {_attr_path(root, node.target)}({call_args(node.args, node.kwargs)})"
    if node.op == "call_method":
        return f"{node.name} = {rep(node.args[0])}.{node.target}({call_args(node.args[1:], node.kwargs)})"
    if node.op == "output":
        return f"return {rep(node.args[0])}"
    fn = node.target
    name = getattr(fn, "__name__", "")
    if getattr(operator, name, None) is fn and name in _MAGIC and not node.kwargs:
        return f"{node.name} = {_MAGIC[name].format(*(rep(a) for a in node.args))}"
    if fn is getattr and len(node.args) == 2 and isinstance(node.args[1], str) and node.args[1].isidentifier():
        return f"{node.name} = {rep(node.args[0])}.{node.args[1]}"
    return f"{node.name} = {_global_name(fn, globals_)}({call_args(node.args, node.kwargs)})"


def _attr_path(root, target):
    for p in target.split("."):
        root = f"{root}.{p}" if p.isidentifier() else f'getattr({root}, "{p}")'
    return root


def _global_name(fn, globals_):
    """The name fn is called by in generated code: `torch.relu`, `operator.add`, or a global of its own."""
    qual = _qualified_name(fn)
    head = qual.split(".")[0]
    if head == "torch":
        globals_["torch"] = webtorch
        return qual
    if head == "operator":
        globals_["operator"] = operator
        return qual
    if "." not in qual:  # a builtin
        return qual
    name = re.sub(r"[^0-9a-zA-Z_]", "_", qual)
    globals_[name] = fn
    return name


def _global_repr(a, globals_):
    if isinstance(a, float) and (a != a or a in (float("inf"), float("-inf"))):
        globals_["inf"], globals_["nan"] = float("inf"), float("nan")
        return "nan" if a != a else ("inf" if a > 0 else "-inf")
    if hasattr(a, "is_floating_point") and hasattr(a, "itemsize"):  # a dtype
        globals_["torch"] = webtorch
        return f"torch.{a.name}"
    if type(a).__name__ == "device" and hasattr(a, "type"):
        globals_["device"] = webtorch.device
        return f"device({str(a)!r})"
    if isinstance(a, (int, float, str, bool, type(None), complex, bytes)) or a is Ellipsis:
        return repr(a)
    name = f"_fx_const_{id(a)}"
    globals_[name] = a
    return name
