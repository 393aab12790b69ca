"""Where each submodule's ops are in an exported graph: forward hooks during the trace record, for each
submodule's first call, the nodes it ran, the nodes of its tensor inputs and outputs, and its arguments (nodes
for tensors). unflatten runs a submodule from that alone (`unflat.encoder(x)`), and calls the submodule in its
parent's place, so a swapped-in module takes effect, as in PyTorch."""
import functools

from .. import fx
from .._tensor import Tensor
from ..overrides import _tracing


class ModuleCalls:
    """Hooks on mod's submodules while `with ModuleCalls(mod) as calls:` traces; calls.calls: {fqn: (nodes,
    input nodes (None: not a traced value), output with nodes for tensors, (args, kwargs) with nodes)}."""

    def __init__(self, mod):
        self.calls, self._open, self._handles = {}, {}, []
        self._mods = [(fqn, m) for fqn, m in mod.named_modules() if fqn] if hasattr(mod, "named_modules") else []

    def __enter__(self):
        for fqn, m in self._mods:
            self._handles.append(m.register_forward_pre_hook(functools.partial(self._enter, fqn), with_kwargs=True))
            self._handles.append(m.register_forward_hook(functools.partial(self._exit, fqn), with_kwargs=True))
        return self

    def __exit__(self, *exc):
        for h in self._handles:
            h.remove()
        return False

    def _enter(self, fqn, module, args, kwargs):
        tracer = _tracing[0]
        if tracer is None or tracer._depth or fqn in self.calls or fqn in self._open:
            return
        def node(x):
            return tracer._env.get(id(x)) if isinstance(x, Tensor) else x
        ins = [tracer._env.get(id(t)) for t in fx.flatten_inputs(args, kwargs)]
        self._open[fqn] = (len(tracer.graph.nodes), ins, fx.map_aggregate((list(args), dict(kwargs)), node))

    def _exit(self, fqn, module, args, kwargs, out):
        entry = self._open.pop(fqn, None)
        tracer = _tracing[0]
        if entry is None or tracer is None:
            return
        start, ins, call_args = entry
        outs = fx.map_aggregate(out, lambda x: tracer._env.get(id(x)) if isinstance(x, Tensor) else x)
        self.calls[fqn] = (list(tracer.graph.nodes)[start:], ins, outs, call_args)
