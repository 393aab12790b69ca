"""torch.fx.Interpreter and Transformer: run a GraphModule node by node (each op kind a method to override),
or rebuild it into a new GraphModule through the same methods."""
from ._symbolic_trace import Tracer
from .graph import Graph
from .graph_module import GraphModule
from .node import map_aggregate, map_arg
from .proxy import Proxy

__all__ = ["Interpreter", "Transformer"]


def _fetch_attr(root, target):
    obj = root
    for i, atom in enumerate(target.split(".")):
        if not hasattr(obj, atom):
            raise RuntimeError(f"Node referenced nonexistent target {'.'.join(target.split('.')[:i + 1])}")
        obj = getattr(obj, atom)
    return obj


class Interpreter:
    """Interpreter(module).run(*args): executes the module's graph; override run_node or the per-op methods
    (placeholder, get_attr, call_function, call_method, call_module, output) to change what a node does."""

    def __init__(self, module, garbage_collect_values=True, graph=None):
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph = graph if graph is not None else module.graph
        self.env = {}
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        if garbage_collect_values:
            last = {}
            for node in reversed(list(self.graph.nodes)):
                for n in node.all_input_nodes:
                    last.setdefault(n, node)
            self.user_to_last_uses = {}
            for n, user in last.items():
                self.user_to_last_uses.setdefault(user, []).append(n)

    def run(self, *args, initial_env=None, enable_io_processing=True):
        self.env = dict(initial_env or {})
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            self.env[node] = self.run_node(node)
            if self.garbage_collect_values:
                for dead in self.user_to_last_uses.get(node, []):
                    del self.env[dead]
            if node.op == "output":
                return self.env[node]
        return None

    def boxed_run(self, args_list):
        args = list(args_list)
        args_list.clear()
        return self.run(*args)

    def run_node(self, n):
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    def placeholder(self, target, args, kwargs):
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration as si:
            if args:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one was not passed "
                               "in!") from si

    def get_attr(self, target, args, kwargs):
        return self.fetch_attr(target)

    def call_function(self, target, args, kwargs):
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(self, target, args, kwargs):
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args, kwargs):
        return args[0]

    def fetch_attr(self, target):
        return _fetch_attr(self.module, target)

    def fetch_args_kwargs_from_env(self, n):
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, args, n):
        def load(n_arg):
            if n_arg not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {n_arg}! Run Graph.lint() to diagnose "
                                   "such issues")
            return self.env[n_arg]
        return map_arg(args, load)


class Transformer(Interpreter):
    """Transformer(module).transform(): a new GraphModule, each node re-made through the overridable methods
    (which by default copy it; return other proxies to rewrite it)."""

    def __init__(self, module):
        super().__init__(module)
        self.new_graph = Graph()
        self.new_graph._codegen = getattr(module.graph, "_codegen", None)

        class TransformerTracer:
            def __init__(self, graph):
                self.graph, self.tensor_attrs = graph, {}

            def is_leaf_module(self, _, __):
                return True

        for name in ("create_proxy", "create_node", "create_arg", "proxy"):
            setattr(TransformerTracer, name, getattr(Tracer, name))
        self.tracer = TransformerTracer(self.new_graph)
        self.tracer.root = module

    def placeholder(self, target, args, kwargs):
        default = next(iter(args), None)
        node = self.new_graph.placeholder(target, default_value=default, _default=bool(args))
        return Proxy(node, self.tracer)

    def get_attr(self, target, args, kwargs):
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target, args, kwargs):
        return self.tracer.create_proxy("call_module", target, args, kwargs)

    def call_function(self, target, args, kwargs):
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def call_method(self, target, args, kwargs):
        return self.tracer.create_proxy("call_method", target, args, kwargs)

    def transform(self):
        result = super().run()
        if result is not None:
            self.new_graph.output(map_aggregate(result, lambda x: x.node if isinstance(x, Proxy) else x))
        return GraphModule(self.module, self.new_graph)
