"""The autograd graph: nodes, saved tensors, and the backward engine.

A node is created per differentiable op call when grad mode is on and an input requires
grad. It is both the op's `ctx` during forward and the graph's `grad_fn` afterwards (as in
PyTorch). `next_functions` holds one edge (node, output_nr) per forward input.
"""
import contextlib
import functools
import heapq
import itertools
import re
import sys
import weakref
from typing import NamedTuple

from .. import _late
from .._dtype import TENSOR_TYPES
from . import anomaly_mode, grad_mode

_seq = itertools.count()

FREED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward.")


def _type_str(t):
    prefix = "torch." if t.device.type == "cpu" else "torch.webgpu."
    return prefix + TENSOR_TYPES[t.dtype]


_saved_hooks = []  # stack of (pack_hook, unpack_hook) from saved_tensors_hooks
_hooks_disabled = [None]  # disable_saved_tensors_hooks' error message while it is active


class saved_tensors_hooks:
    """Context manager: tensors saved for backward inside it are stored as `pack_hook(tensor)`
    and given back in backward as `unpack_hook(packed)` (as torch.autograd.graph.saved_tensors_hooks;
    non-reentrant checkpoint is built on it)."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        if _hooks_disabled[0] is not None:
            raise RuntimeError(_hooks_disabled[0])
        _saved_hooks.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _saved_hooks.pop()
        return False


class save_on_cpu(saved_tensors_hooks):
    """Tensors saved for backward inside it live in host memory and go back to their device in backward
    (`pin_memory` has no effect: webtorch has no pinned memory)."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(lambda t: (t.device, t.cpu()), lambda packed: packed[1].to(packed[0]))


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Inside it, entering saved_tensors_hooks (or save_on_cpu) raises RuntimeError(error_message)."""
    previous = _hooks_disabled[0]
    _hooks_disabled[0] = error_message
    try:
        yield
    finally:
        _hooks_disabled[0] = previous


class _AllowMutationOnSavedContext:
    """What allow_mutation_on_saved_tensors yields (PyTorch keeps its bookkeeping of clones here)."""

    def clear(self):
        pass


_mutation_allowed = [False]


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Inside it, a tensor saved for backward may be modified in place afterwards: backward uses the value it had
    when saved. webtorch snapshots every tensor saved inside it (PyTorch copies only those later modified): the
    same gradients, for more memory."""
    if _mutation_allowed[0]:
        raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
    ctx = _AllowMutationOnSavedContext()
    _mutation_allowed[0] = True
    try:
        with saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
            yield ctx
    finally:
        ctx.clear()
        _mutation_allowed[0] = False


_stream_flags = {"override_stale_capture_stream": False, "warn_on_accumulate_grad_stream_mismatch": True}


def set_override_stale_capture_stream(enabled):
    """PyTorch's switch for CUDA graph capture meeting a stale stream; webtorch's engine records no streams, so it
    is only kept."""
    _stream_flags["override_stale_capture_stream"] = bool(enabled)


def set_warn_on_accumulate_grad_stream_mismatch(enabled):
    """PyTorch's switch for a warning when a gradient arrives on another stream than its AccumulateGrad's; webtorch's
    engine records no streams, so it is only kept."""
    _stream_flags["warn_on_accumulate_grad_stream_mismatch"] = bool(enabled)


def increment_version(tensor):
    """Tell autograd that `tensor` (or each of an iterable of tensors) was written in place behind its back."""
    for t in (tensor,) if isinstance(tensor, _late.Tensor) else tensor:
        t._bump()


class SavedTensor:
    __slots__ = ("tensor", "version", "is_output", "output_nr", "packed", "unpack_hook", "history", "__weakref__")

    def __init__(self, t, is_output, output_nr=0):
        self.version = t._version
        self.is_output = is_output
        self.output_nr = output_nr
        if _saved_hooks:
            pack, self.unpack_hook = _saved_hooks[-1]
            self.tensor = None
            # as PyTorch's SavedVariable: remember the input's place in the graph, so the tensor the
            # unpack hook returns gets that history back (double backward through checkpoint)
            self.history = None if is_output else (
                t._requires_grad, t.grad_fn, t._output_nr,
                t._get_accumulator() if t.grad_fn is None and t._requires_grad else None)
            self.packed = pack(t)
        else:
            self.tensor = t._alias() if is_output else t
            self.unpack_hook = self.packed = self.history = None

    def unpack(self, node):
        if self.unpack_hook is not None:
            t = self.unpack_hook(self.packed)._alias()
            if self.is_output:
                t._requires_grad = True
                t.grad_fn = node
                t._output_nr = self.output_nr
            else:
                t._requires_grad, t.grad_fn, t._output_nr, t._accumulator = self.history
            return t
        t = self.tensor
        if t._version != self.version:
            # PyTorch names the node that produced the variable (for a saved input, the one that
            # produces it now), without its "Backward0" suffix; a leaf gets no "which is output" part
            fn = node if self.is_output else t.grad_fn
            which = ""
            if fn is not None:
                nr = self.output_nr if self.is_output else t._output_nr
                which = f", which is output {nr} of {re.sub(r'Backward[0-9]*$', '', fn.name())},"
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an inplace "
                f"operation: [{_type_str(t)} [{', '.join(map(str, t.shape))}]]{which} "
                f"is at version {t._version}; expected version {self.version} instead. Hint: enable anomaly "
                "detection to find the operation that failed to compute its gradient, with "
                "torch.autograd.set_detect_anomaly(True, check_nan=False).")
        if self.is_output:
            out = t._alias()
            out._requires_grad = True
            out.grad_fn = node
            out._output_nr = self.output_nr
            return out
        return t


class Node:
    """Base of every grad_fn. Subclasses are named like PyTorch's (MulBackward0, ...)."""
    _fn = None  # the Function class whose backward this node runs

    def __init__(self):
        self._edges = ()  # one (node, output_nr) per forward argument; None for non-tensors
        self._saved = []
        self._to_save = ()
        self._freed = False
        self.needs_input_grad = ()
        self._non_differentiable = ()
        self.materialize_grads = True
        self._hooks = []
        self._pre_hooks = []
        self._tensor_hooks = None  # {output_nr: [hook, ...]}
        self._retained = None  # {output_nr: weakref(tensor)}
        self._outputs_meta = ()
        self._seq = next(_seq)

    # -- ctx API (autograd.Function) --------------------------------------------------
    def save_for_backward(self, *tensors):
        self._to_save = tensors

    @property
    def saved_tensors(self):
        if self._freed:
            raise RuntimeError(FREED_MSG)
        return tuple(s.unpack(self) if s is not None else None for s in self._saved)

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = tuple(tensors)

    def mark_dirty(self, *tensors):
        pass

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)

    # -- node API -------------------------------------------------------------------
    @property
    def next_functions(self):
        return tuple(e for e in self._edges if e is not None)

    @classmethod
    def name(cls):
        return cls.__name__

    def register_hook(self, fn):
        self._hooks.append(fn)
        return _RemovableHandle(self._hooks, fn)

    def register_prehook(self, fn):
        self._pre_hooks.append(fn)
        return _RemovableHandle(self._pre_hooks, fn)

    def apply(self, *grads):
        return self._fn.backward(self, *grads)

    def __call__(self, *grads):
        return self.apply(*grads)

    def _free(self):
        self._saved = []
        self._freed = True
        for k in list(self.__dict__):
            if k.startswith("_s_"):
                del self.__dict__[k]

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"


class AccumulateGrad(Node):
    """Leaf node: adds the incoming gradient into `variable.grad`."""

    def __init__(self, variable):
        super().__init__()
        self._variable = weakref.ref(variable)

    @property
    def variable(self):
        return self._variable()

    def accumulate(self, grad, create_graph):
        leaf = self._variable()
        if leaf is None:
            return
        for h in leaf._leaf_hooks():  # as PyTorch, also called (with None) when no gradient reached the leaf
            r = h(grad)
            if r is not None:
                grad = r
        if grad is None:
            return
        if tuple(grad.shape) != tuple(leaf.shape):
            grad = grad.sum_to_size(leaf.shape)
        want = getattr(leaf, "_grad_dtype", None)  # Tensor.grad_dtype, where set to another dtype
        if want is not None and grad.dtype is not want:
            grad = grad.to(want)
        if grad.is_sparse:  # (Embedding(sparse=True)'s): kept sparse, summed with what is there, as PyTorch's
            leaf.grad = grad.detach() if leaf.grad is None else leaf.grad.detach() + grad.detach()
        elif leaf.grad is None:
            # steal a gradient nobody else holds (as PyTorch does): saves a copy per parameter
            stolen = None if create_graph else _steal(grad, leaf)
            # create_graph: PyTorch's clone_obey_contract, a copy of its own (CopyBackwards), never a view
            leaf.grad = stolen if stolen is not None else grad.clone() if not create_graph else \
                grad.new_empty(leaf.shape).copy_(grad)
            if not create_graph:
                leaf.grad._requires_grad = False
                leaf.grad.grad_fn = None
        elif create_graph:
            leaf.grad = leaf.grad + grad
        else:
            with grad_mode.no_grad():
                leaf.grad.add_(grad)
        for h in leaf._post_accumulate_hooks():
            h(leaf)


def _steal(grad, leaf):
    """`grad` itself (re-wrapped without its view base) when nothing else holds it or its
    storage (refcounts: the engine's buffer dict, accumulate's argument, the call, and
    getrefcount's own), as PyTorch steals a gradient instead of copying it; else None."""
    if grad.grad_fn is not None or grad.dtype != leaf.dtype or grad.device != leaf.device \
            or sys.getrefcount(grad) > 4 or grad.numel() != grad._storage.numel:
        return None
    chain, base = 1, grad._base          # a view's bases must be held by the chain alone
    while base is not None:
        if sys.getrefcount(base) > 3:     # the child's _base, this local, the argument
            return None
        chain, base = chain + 1, base._base
    if sys.getrefcount(grad._storage) > chain + 1:
        return None
    Tensor = _late.Tensor
    return Tensor._make(grad._storage, grad._shape, grad._stride, grad._offset)


class _RemovableHandle:
    def __init__(self, lst, item):
        self._lst, self._item = lst, item

    def remove(self):
        if self._item in self._lst:
            self._lst.remove(self._item)

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.remove()


class _DictHandle:
    def __init__(self, d, key, item):
        self._d, self._key, self._item = d, key, item

    def remove(self):
        lst = self._d.get(self._key)
        if lst and self._item in lst:
            lst.remove(self._item)


class GradientEdge(NamedTuple):
    """An edge of the graph, (node, output_nr): what autograd.grad's `inputs` may name instead of a tensor."""
    node: object
    output_nr: int
    ownership_token: object = None


def get_gradient_edge(tensor):
    """The GradientEdge through which gradient reaches `tensor` (its grad_fn's, or its AccumulateGrad)."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                           "gradients")
    return GradientEdge(*grad_edge(tensor))


def grad_edge(t):
    """The (node, output_nr) edge through which gradient reaches tensor t (or the GradientEdge t)."""
    if isinstance(t, GradientEdge):
        return (t.node, t.output_nr)
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    if t._requires_grad:
        return (t._get_accumulator(), 0)
    return (None, 0)


def _zeros_for(meta):
    _creation = _late.creation
    shape, dtype, dev = meta
    return _creation.zeros(shape, dtype=dtype, device=dev)


_engine = {"checkpoint_valid": True}


def run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs=None, allow_unused=False,
                 accumulate=True):
    """The engine. Returns the captured gradients for `inputs` when accumulate is False."""
    # reentrant checkpoint needs a plain .backward() (it accumulates into leaves from within backward)
    prev = _engine["checkpoint_valid"]
    _engine["checkpoint_valid"] = accumulate and inputs is None
    try:
        return _run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs, allow_unused, accumulate)
    finally:
        _engine["checkpoint_valid"] = prev


def _run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs, allow_unused, accumulate):
    roots = [(*_root_edge(t), g) for t, g in zip(tensors, grad_tensors, strict=True)]
    capture = None if inputs is None else _capture_map(inputs)
    task = _GraphTask(roots, capture, retain_graph, create_graph, accumulate)
    with grad_mode.enable_grad() if create_graph else grad_mode.no_grad():
        task.run()
    results = [None] * (len(inputs) if inputs is not None else 0)
    for i, g in task.captured.items():
        results[i] = g
    if inputs is not None and not accumulate and not allow_unused:
        for i, r in enumerate(results):
            if r is None:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
    return results


def _root_edge(t):
    node, nr = grad_edge(t)
    if node is None:
        raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    return node, nr


def _capture_map(inputs):
    """{node: {output_nr: [index into inputs]}}: where the gradients of `inputs` are read."""
    capture = {}
    for i, x in enumerate(inputs):
        node, nr = grad_edge(x)
        if node is None:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        capture.setdefault(node, {}).setdefault(nr, []).append(i)
    return capture


def _dependencies(roots):
    """{node: number of edges into it} over the graph reachable from `roots`; a root that no other
    node reaches has no entry."""
    deps, seen, stack = {}, set(roots), list(roots)
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is not None:
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
    return seen, deps


def _topological(nodes, deps):
    """`nodes` ordered so that every node comes before the nodes its edges lead to (Kahn's)."""
    left = dict(deps)
    order = [n for n in nodes if n not in left]
    for n in order:  # grows while it is walked
        for nxt, _ in n.next_functions:
            if nxt is not None:
                left[nxt] -= 1
                if left[nxt] == 0:
                    order.append(nxt)
    return order


def _nodes_to_run(nodes, deps, capture):
    """The nodes whose backward must run to reach a captured input: those with an edge to a node that
    is captured or leads to one (PyTorch's exec_info for grad() and backward(inputs=))."""
    leads, run = set(), set()
    for n in reversed(_topological(nodes, deps)):
        if any(nxt in leads for nxt, _ in n.next_functions):
            run.add(n)
            leads.add(n)
        elif n in capture:
            leads.add(n)
    return run


class _GraphTask:
    """One run of the engine (PyTorch's GraphTask). Gradients are summed per node and input slot in
    `buffers`; a node is ready once every edge into it has delivered (its dependency count reaches
    0), and the ready node created last (highest sequence number) runs first, as in PyTorch."""

    def __init__(self, roots, capture, retain_graph, create_graph, accumulate):
        self.capture = capture  # None: backward() of the whole graph; else _capture_map(inputs)
        self.retain_graph, self.create_graph, self.accumulate = retain_graph, create_graph, accumulate
        self.captured = {}  # index into inputs -> gradient
        self.nodes, self.deps = _dependencies({n for n, _, _ in roots})
        nodes = self.nodes
        self.run_only = None if capture is None else _nodes_to_run(nodes, self.deps, capture)
        self.buffers = {}
        for n, nr, g in roots:
            self.add(n, nr, g)
        self.ready = [(-n._seq, id(n), n) for n in {n for n, _, _ in roots} if n not in self.deps]
        heapq.heapify(self.ready)

    def add(self, node, nr, g):
        buf = self.buffers.get(node)
        if buf is None:
            buf = self.buffers[node] = {}
        if g is not None:
            prev = buf.get(nr)
            buf[nr] = g if prev is None else prev + g

    def run(self):
        _tasks.append(self)
        try:
            while self.ready:
                self.evaluate(heapq.heappop(self.ready)[2])
        finally:
            _tasks.pop()

    def will_execute(self, node):
        """Whether this run calls `node` (PyTorch's _will_engine_execute_node)."""
        if node not in self.nodes:
            return False
        return self.capture is None or node in self.run_only or node in self.capture

    def evaluate(self, node):
        buf = self.buffers.pop(node, {})
        if node._tensor_hooks or node._retained:
            _tensor_hooks(node, buf, self.create_graph)
        if self.capture is not None and node in self.capture:
            for nr, idxs in self.capture[node].items():
                if nr in buf:
                    for i in idxs:
                        self.captured[i] = buf[nr]
        if isinstance(node, AccumulateGrad):
            if self.accumulate and (self.capture is None or node in self.capture):
                node.accumulate(buf.get(0), self.create_graph)
            return
        if self.run_only is not None and node not in self.run_only:
            return
        if node._freed:
            raise RuntimeError(FREED_MSG)
        in_grads = _apply(node, buf)
        if anomaly_mode._state["enabled"] and anomaly_mode._state["check_nan"]:
            anomaly_mode.check_gradients(node, in_grads)
        self.propagate(node, in_grads)

    def propagate(self, node, in_grads):
        if not self.retain_graph:
            node._free()
        deps = self.deps
        for e, g in itertools.zip_longest(node._edges, in_grads):
            if e is None or e[0] is None:
                continue
            nxt, nr = e
            if g is not None:
                self.add(nxt, nr, _check_grad(node, g, nxt, nr))
            deps[nxt] -= 1
            if deps[nxt] == 0:
                heapq.heappush(self.ready, (-nxt._seq, id(nxt), nxt))


_tasks = []  # the engine's runs in progress, innermost last


def _current_task():
    if not _tasks:
        raise AssertionError("expected this hook to be called inside a backward call")
    return _tasks[-1]


class _MultiHandle:
    """The handle of one hook registered on several tensors: removes it from all."""

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """fn(grads) once the gradients of all `tensors` a backward computes are there (mode "all": None for those it
    does not compute), or fn(grad) on the first of them (mode "any"), once per backward."""
    supported_modes = ("all", "any")
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")
    hooks = _any_grad_hooks(tensors, fn) if mode == "any" else _all_grads_hooks(tensors, fn)
    return _MultiHandle(tuple(t.register_hook(h) for t, h in hooks))


def _any_grad_hooks(tensors, fn):
    ran = weakref.WeakSet()  # the engine runs fn ran in

    @functools.wraps(fn)
    def wrapped_fn(grad):
        task = _current_task()
        if task not in ran:
            ran.add(task)
            fn(grad)
    return [(t, wrapped_fn) for t in tensors if t.requires_grad]


def _all_grads_hooks(tensors, fn):
    all_grads = _AllGrads(tensors, fn)
    return [(t, functools.partial(all_grads.on_grad, i)) for i, t in enumerate(tensors)]


class _AllGrads:
    """Mode "all": fn(grads) once per engine run, when the last gradient that run computes has arrived."""

    def __init__(self, tensors, fn):
        self.nodes = [grad_edge(t)[0] for t in tensors]
        self.fn = fn
        self.runs = weakref.WeakKeyDictionary()  # engine run -> [gradients still expected, gradients]

    def on_grad(self, idx, grad):
        task = _current_task()
        if task not in self.runs:
            self.runs[task] = [sum(map(task.will_execute, self.nodes)), [None] * len(self.nodes)]
        run = self.runs[task]
        run[0] -= 1
        run[1][idx] = grad
        if run[0] == 0:
            del self.runs[task]
            self.fn(run[1])


def _tensor_hooks(node, buf, create_graph):
    """The hooks registered on this node's output tensors, then their retain_grad()."""
    for nr, hooks in (node._tensor_hooks or {}).items():
        for h in hooks:  # as PyTorch, also called (with None) for an output no gradient reached
            r = h(buf.get(nr))
            if r is not None:
                buf[nr] = r
    for nr, ref in (node._retained or {}).items():
        t = ref()
        if t is not None and nr in buf:
            g = buf[nr] if create_graph else buf[nr].detach()
            t.grad = g if t.grad is None else t.grad + g


def _apply(node, buf):
    """The node's backward on its buffered output gradients, through its pre-hooks and hooks: a tuple
    of gradients, one per edge (possibly shorter)."""
    grads = [buf.get(i) for i in range(len(node._outputs_meta))]
    if node._fn._builtin and all(g is None for g in grads):
        in_grads = ()  # PyTorch's own nodes pass no gradient on as none (norm(x, 0): x.grad stays None)
    else:
        if node.materialize_grads:
            for i, g in enumerate(grads):
                if g is None:
                    grads[i] = _zeros_for(node._outputs_meta[i])
        for h in node._pre_hooks:
            r = h(tuple(grads))
            if r is not None:
                grads = list(r)
        in_grads = node.apply(*grads)
    if not isinstance(in_grads, tuple):
        in_grads = (in_grads,)
    return _run_hooks(node, in_grads, tuple(grads)) if node._hooks else in_grads


def _run_hooks(node, in_grads, grads):
    """The node's hooks on PyTorch's grad_inputs, one per next_function (none for a non-tensor argument);
    what they return replaces those gradients."""
    pos = [i for i, e in enumerate(node._edges) if e is not None]
    padded = list(in_grads) + [None] * (len(node._edges) - len(in_grads))
    visible = tuple(padded[i] for i in pos)
    for h in node._hooks:
        r = h(visible, grads)
        if r is not None:
            visible = tuple(r)
    for i, g in zip(pos, visible):
        padded[i] = g
    return tuple(padded)


def _check_grad(node, g, nxt, nr):
    Tensor = _late.Tensor
    if not isinstance(g, Tensor):
        raise TypeError(f"function {node.name()} returned a gradient of type {type(g).__name__}, expected Tensor")
    # as PyTorch's validate_outputs: a gradient takes its input's dtype (a custom Function's
    # backward may return float32 for a float16 input, e.g. under torch.amp.custom_fwd)
    if isinstance(nxt, AccumulateGrad):
        leaf = nxt.variable
        dt = leaf.dtype if leaf is not None else g.dtype
    else:
        meta = nxt._outputs_meta[nr] if nr < len(nxt._outputs_meta) else None
        dt = meta[1] if meta is not None else g.dtype
    return g if g.dtype is dt else g.to(dt)
