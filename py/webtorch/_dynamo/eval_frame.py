"""torch.compile's front end: a compiled callable keeps one entry per guard list (guards.py).

Per entry, as TinyJit does:
  call 1     runs eagerly under an fx.OpTracer that stays active through loss.backward() and
             optimizer.step(): the op-level graph (entry.graph.print()), and the graph breaks, where
             the function reads a tensor's value into Python (.item(), bool(t), .tolist(), printing),
             each with the user's file:line. fullgraph=True raises exc.Unsupported there.
  calls 2+   of a function whose call 1 broke run the frame split at the top-level statements that broke
             (resume.py: those statements eagerly, with any callee that broke, and the statements between
             them as compiled functions of their own); a frame that cannot split runs eagerly whole.
             They run eagerly on a device without `backend.capture()` (cpu). On webgpu without a
             break, calls 2 and 3 run under the backend's capture; if the two recordings are
             equivalent, calls 4+ replay the latest (the buffers it left, fresh .grad tensors, are
             the ones Python holds), else the entry stays eager and says why
             (counters["replay_refused"]).
A call whose guards match no entry retraces, up to config.recompile_limit entries per function;
beyond it, new guard lists run eagerly with PyTorch's warning.
"""
import bisect
import dataclasses
import functools
import inspect
import logging
import weakref

from .. import autograd, fx
from .._tensor import Tensor
from ..autograd import grad_mode
from ..backends import webgpu
from ..backends.webgpu import capture
from ..nn import Module
from ..nn.modules.module import _COMPILE as _module_compile
from ..optim import Optimizer
from . import aot, config, guards, resume
from .exc import FailOnRecompileLimitHit, InvalidBackend, RecompileError, Unsupported
from .tracing import (
    _REASONS,
    GraphCompileReason,
    _named_tensors,
    _ops,
    _reached,
    _split,
    _StepTracer,
    _trainable,
    _user_frame,
    _user_stack,
)
from .utils import counters

log = logging.getLogger(__name__.rsplit(".", 1)[0] + ".convert_frame")

_state = {"compiling": 0, "disabled": 0, "run_only": 0}
_OUTPUT = object()  # a tensor's place in a replayed entry's template
# entries kept per set of guards that differ in tensor sizes only (the oldest goes first): where PyTorch compiles
# the sizes as dynamic once (automatic_dynamic_shapes, dynamic=None or True), webtorch compiles per shape, without
# counting the shapes toward the recompile limit
SHAPE_VARIANTS = 16
_ALL = weakref.WeakSet()  # every compiled callable (reset() drops their entries)
_BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs")
_STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile", "eager_then_compile",
            "aot_eager_then_compile")
_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
_TROUBLESHOOTING = "https://docs.pytorch.org/docs/main/user_guide/torch_compiler/compile/programming_model.recompilation.html"


@dataclasses.dataclass
class DynamoStance:
    """torch.compiler.set_stance's state (PyTorch's fields)."""
    stance: str = "default"
    skip_guard_eval_unsafe: bool = False  # webtorch checks every guard anyway
    backend: object = None  # force_backend: webtorch runs every backend name the same way


_stance = DynamoStance()


def _set_stance(stance):
    """Make `stance` current; returns the one it replaces."""
    global _stance
    if _state["compiling"]:
        raise RuntimeError("attempted to set_stance in a torch.compile region")
    prior, _stance = _stance, stance
    return prior


class _Entry:
    """One guard list's compiled state."""

    def __init__(self, key, guards):
        self.key = key           # the guards' values (the cache key)
        self.guards = guards     # (source, value) pairs: out_guards, recompile reasons
        self.graph = None        # the whole call's op graph (fx.Graph)
        self.graphs = []         # the graph split at the breaks
        self.breaks = []         # GraphCompileReason per break
        self.eager_reason = None  # why calls 2+ run eagerly (None: capture/replay where the device can)
        self.backend = None      # the webgpu backend when the call's tensors live there
        self.captures = []       # [(capture, .grad tensors it read)] of call 2, until call 3 compares
        self.program = None      # what calls 4+ replay (call 3's capture)
        self.template = None     # call 3's result with _OUTPUT for each tensor: where the program's outputs go
        self.params = []         # the parameters the call reaches (whose .grad it may set)
        self.grads = None        # their .grad objects before and after call 3 (what the program reads and writes)
        self.cleared = []        # with a backward: the parameters whose .grad call 3 set to None (zero_grad())
        self.backward = None     # aot.Backward: outputs require grad, their backward replays as a program of its own
        self.memory = None       # _memory(...) at call 3: what the program reads and writes besides its arguments

    def out_guards(self):
        return [guards.Guard(name, value) for name, value in self.guards]

    def stay_eager(self, compiled, why, args, kwargs):
        self.eager_reason = why
        counters["replay_refused"][why] += 1
        counters["webgpu"]["eager"] += 1
        return _eager(compiled.call, args, kwargs)

    def replay(self, compiled, args, kwargs):
        """Calls 4+: the program of call 3 on this call's tensor inputs; the outputs in the function's structure.
        The program writes the .grad tensors call 3 left (and reads those it found, when it accumulated into them in
        place: a call that finds others runs eagerly)."""
        if self.grads[0] is not None and not _same([p.grad for p in self.params], self.grads[0]):
            counters["webgpu"]["eager"] += 1
            return _eager(compiled.call, args, kwargs)
        if _moved(self.memory):
            # a tensor's memory was replaced (`p.data = t`, optimizer.load_state_dict): the program would read and
            # write the old one; capture again
            self.program = self.backward = None
            counters["webgpu"]["stale"] += 1
            return compiled._run(self, args, kwargs)
        inputs = fx.flatten_inputs(args, kwargs)
        if self.backward is None:
            outs = iter(self.program.replay(inputs))
        elif self.backward.pending():  # call 3's graph, still to be backpropagated, reads the buffers a replay writes
            counters["webgpu"]["eager"] += 1
            return _eager(compiled.call, args, kwargs)
        else:  # the forward alone: the .grad tensors are autograd's business, as after any forward
            outs = iter(aot.replay(self.program, self.backward, inputs))
        if self.backward is None:
            for p, g in zip(self.params, self.grads[1]):
                p.grad = g
        for p in self.cleared:
            p.grad = None
        counters["webgpu"]["replays"] += 1
        return fx.map_aggregate(self.template, lambda x: next(outs) if x is _OUTPUT else x)


class CompiledFunction(guards.ById):
    """The state behind one torch.compile'd callable: run(args, kwargs) picks or makes the entry."""

    def __init__(self, call, code_fn, root, fullgraph, recompile_limit=None, unsplit=None, hooked=None, dynamic=None):
        self.call, self.code_fn, self.root, self.fullgraph = call, code_fn, root, fullgraph
        self.unsplit = unsplit  # why a break never splits this frame (None: resume.split decides)
        self.plan = None        # the frame split at call 1's breaks (resume.Plan): every later call runs it
        self.hooked = hooked    # a module's: hooks run around forward now, so a call runs `call` eagerly, not the plan
        self.arg_names = guards.arg_names(code_fn, root)
        self.recompile_limit = recompile_limit  # torch.compile(..., recompile_limit=n): this function's own limit
        self.entries = {}
        self.families = {}  # the guards with tensor sizes left out -> the keys of its entries (one per shape)
        self.dynamic = dynamic
        self.limit_warned = False
        self.last_reason = None
        self.ran_eager = False  # set_stance("eager_then_compile"): the first call ran eagerly
        self.side_effect = None  # why every call runs eagerly: a traced call changed Python state its guards read
        _ALL.add(self)

    def reset(self):
        self.entries.clear()
        self.families.clear()
        self.plan = None
        self.side_effect = None
        self.limit_warned = False

    def __call__(self, *args, **kwargs):
        if config.disable or _state["disabled"] or fx._active[0] is not None:
            # inside torch.compiler.disable, or a trace (an enclosing compiled function, torch.export) is
            # already recording: run inline
            return self.call(*args, **kwargs)
        if _stance.stance not in _STANCES:
            raise RuntimeError(f"invalid torch.compile stance '{_stance}'")
        if _stance.stance == "force_eager":
            return self.call(*args, **kwargs)
        if self.side_effect is not None:
            return _eager(self.call, args, kwargs)
        if self.plan is not None:  # its compiled segments keep their own guards
            if self.hooked is not None and self.hooked():
                return _eager(self.call, args, kwargs)
            with _Compiling():
                return self.plan.run(args, kwargs)
        key = guards.collect(self.code_fn, self.root, args, kwargs, self.arg_names)
        entry = self.entries.get(key)
        if entry is not None:
            return self._run(entry, args, kwargs)
        return self._miss(key, args, kwargs)

    def _miss(self, key, args, kwargs):
        """No cache entry's guards hold: compile a new entry, or run eagerly where the stance or the
        recompile limit says so."""
        named = guards.collect(self.code_fn, self.root, args, kwargs, self.arg_names, named=True)
        if self.entries:
            last = self.entries[next(reversed(self.entries))]
            self.last_reason = "0/%d: %s" % (len(self.entries) - 1, guards.miss_reason(last.guards, named))
        if _stance.stance == "eager_on_recompile" or _state["run_only"]:  # cached entries only
            return self.call(*args, **kwargs)
        if _stance.stance.endswith("eager_then_compile") and not self.ran_eager:  # the first call runs eagerly
            self.ran_eager = True
            return self.call(*args, **kwargs)
        self._check_recompile()
        family = guards.without_sizes(key) if self.dynamic is not False and config.automatic_dynamic_shapes else key
        shapes = self.families.get(family)
        limit = config.recompile_limit if self.recompile_limit is None else self.recompile_limit
        # PyTorch's cache entries: one per set of guards, and for dynamic=None a second one, with dynamic sizes, at
        # the first new shape (the only new shape that recompiles there, and counts as a recompile)
        static = self.dynamic is None and shapes is not None and len(shapes) == 1
        if (shapes is None or static) and sum(min(len(v), 1 + (self.dynamic is None))
                                              for v in self.families.values()) >= limit:
            self._limit_hit(limit)
            return _eager(self.call, args, kwargs)
        if self.entries and (shapes is None or static):
            counters["recompiles"][self.last_reason.split(": ", 1)[1]] += 1
        if shapes is None:
            shapes = self.families.setdefault(family, [])
        elif len(shapes) >= SHAPE_VARIANTS:  # a new shape only: PyTorch would have made the sizes dynamic
            del self.entries[shapes.pop(0)]
        shapes.append(key)
        entry = self.entries[key] = _Entry(key, named)
        try:
            return self._trace(entry, args, kwargs)
        except BaseException:
            self.entries.pop(key, None)  # nothing cached from a call that failed: the next call traces again
            shapes.remove(key)
            if not shapes:
                del self.families[family]
            raise

    def _limit_hit(self, limit):
        """The recompile limit is reached: raise where asked to, else warn once (the call runs eagerly)."""
        if config.fail_on_recompile_limit_hit:
            raise FailOnRecompileLimitHit("Hard failure due to fail_on_recompile_limit_hit")
        if self.fullgraph:
            raise FailOnRecompileLimitHit("Hard failure due to fullgraph=True")
        if not self.limit_warned:
            self.limit_warned = True
            code = getattr(self.code_fn, "__code__", None)
            where = f"'{code.co_name}' ({code.co_filename}:{code.co_firstlineno})" if code else repr(self.call)
            log.warning("torch._dynamo hit config.%s (%s)\n   function: %s\n   last reason: %s\n"
                        'To log all recompilation reasons, use TORCH_LOGS="recompiles".\n'
                        "To diagnose recompilation issues, see %s", "recompile_limit", limit,
                        where, self.last_reason, _TROUBLESHOOTING)

    def _check_recompile(self):
        """set_stance("fail_on_recompile") raises before any compile (the first one too), skip_guard_eval_unsafe and
        config.error_on_recompile before a recompile, with PyTorch's messages."""
        code = getattr(self.code_fn, "__code__", None)
        name, file, line = (code.co_name, code.co_filename, code.co_firstlineno) if code else (repr(self.call), "", 0)
        failures = f"\n    triggered by the following guard failure(s):\n    - {self.last_reason}" \
            if self.entries else ""
        if _stance.stance == "fail_on_recompile":
            raise RuntimeError("Detected recompile when torch.compile stance is 'fail_on_recompile'. "
                               f"filename: '{file}', function name: '{name}', line number: {line}{failures}")
        if _stance.skip_guard_eval_unsafe and self.entries:
            raise RuntimeError("Recompilation triggered with skip_guard_eval_unsafe stance. This usually means that "
                               "you have not warmed up your model with enough inputs such that you can guarantee no "
                               "more recompilations.")
        if config.error_on_recompile and self.entries:
            raise RecompileError(f"Recompiling function {name} in {file}:{line}{failures}")

    def _trace(self, entry, args, kwargs):
        counters["frames"]["total"] += 1
        tracer = _StepTracer(leaf=lambda op: False)
        marks, reads = [], []

        def on_break(t, what, why=None):
            stack = _user_stack(getattr(self.code_fn, "__code__", None))
            fs = stack[-1]
            reason = GraphCompileReason(why or _REASONS.get(what, f"Unsupported Tensor.{what}() call"), list(stack))
            if self.fullgraph and not (what == "item" and config.capture_scalar_outputs or
                                       what == "__host_read__" and config.capture_dynamic_output_shape_ops):
                raise Unsupported(f"{reason.reason}\n\nfrom user code:\n   File \"{fs.filename}\", line {fs.lineno}, "
                                  f"in {fs.name}\n    {fs.line}", gb_type=reason.reason)
            entry.breaks.append(reason)
            marks.append(len(tracer.graph.nodes))
            if t is not None:
                reads.append(t)
            counters["graph_break"][reason.reason] += 1
        tracer.on_value_read = on_break
        reached = _reached(self.code_fn, self.root)
        entry.params = _trainable(reached)
        named = list(_named_tensors(reached, self.code_fn, self.root, args, kwargs))
        held = [t for _, t in named] + entry.params + [v for _, v in reached if isinstance(v, Tensor)]
        if any(t.device.type == "webgpu" for t in held):  # module state, arguments, or tensors named by the code
            entry.backend = webgpu.get_backend()
        with _Compiling(), tracer, _HostReads(entry.backend, lambda: entry.breaks or on_break(None, "__host_read__")):
            for name, t in named:
                tracer.placeholder(name, t)
            out = self.call(*args, **kwargs)
        for i, node in enumerate(tracer.graph.nodes):
            node.meta["graph_id"] = bisect.bisect_right(marks, i)
        entry.graph = tracer.output((out, reads) if reads else out)  # values read at a break are graph outputs
        entry.graphs = _split(entry.graph, len(marks) + 1)
        if entry.breaks:
            self._split_frame(entry)
        elif guards.collect(self.code_fn, self.root, args, kwargs, self.arg_names) != entry.key:
            # a Python side effect (`self.calls.append(1)`, a counter, an attribute set) that a replay would skip,
            # and that would miss every entry's guards at the next call: this function runs eagerly from now on
            now = guards.collect(self.code_fn, self.root, args, kwargs, self.arg_names, named=True)
            self.side_effect = entry.eager_reason = \
                f"the function changes Python state it reads ({guards.miss_reason(entry.guards, now)})"
            counters["replay_refused"][self.side_effect] += 1
        elif not any(_ops(entry.graphs)):
            entry.eager_reason = "no ops to replay"
        elif guards.unguarded(entry.guards):
            entry.eager_reason = guards.unguarded(entry.guards)
            if entry.backend is not None:
                counters["replay_refused"][entry.eager_reason] += 1
        counters["frames"]["ok"] += 1
        counters["stats"]["unique_graphs"] += len(entry.graphs)
        counters["stats"]["calls_captured"] += sum(len(ops) for ops in _ops(entry.graphs))
        return out

    def _split_frame(self, entry):
        """A frame whose trace broke: later calls run its segments (resume.py: the statements without a break
        compiled, each its own CompiledFunction with its own guards; those with one eagerly), or this entry's calls
        run the whole frame eagerly when it cannot split."""
        plan = self.unsplit or resume.split(self.code_fn, self.root, [b.user_stack[0] for b in entry.breaks])
        if isinstance(plan, str):
            fs = entry.breaks[0].user_stack[-1]
            entry.eager_reason = f"graph break at {fs.filename}:{fs.lineno} ({entry.breaks[0].reason}); " \
                                 f"the frame is not split: {plan}"
            if entry.backend is not None:
                counters["replay_refused"][entry.eager_reason] += 1
            return
        for seg in plan.segments:
            if not seg.eager:
                seg.call = CompiledFunction(seg.call, seg.fn, self.root, False, self.recompile_limit,
                                            unsplit="a segment of a split frame", dynamic=self.dynamic)
        self.plan = plan

    def _run(self, entry, args, kwargs):
        if entry.program is not None:
            return entry.replay(self, args, kwargs)
        if entry.eager_reason is None and getattr(entry.backend, "capture", None) is not None:
            return self._capture(entry, args, kwargs)
        if entry.backend is not None:
            counters["webgpu"]["eager"] += 1
        return _eager(self.call, args, kwargs)

    def _capture(self, entry, args, kwargs):
        """Calls 2 and 3 on webgpu: run eagerly under the backend's capture, on clones of the tensor inputs; if the
        two recordings are equivalent, call 3's becomes the program calls 4+ replay."""
        tensors = fx.flatten_inputs(args, kwargs)
        if any(t.device.type != "webgpu" for t in tensors):
            return entry.stay_eager(self, "an input is not on webgpu", args, kwargs)
        be = entry.backend
        # an input that requires grad is cloned differentiably: the call's graph reaches the caller's through it
        clones = {id(t): t.clone() if t.requires_grad and grad_mode.is_grad_enabled() else t.detach().clone()
                  for t in tensors}
        cargs, ckwargs = (fx.map_aggregate(a, lambda x: clones.get(id(x), x)) for a in (args, kwargs))
        versions = {k: c._version for k, c in clones.items()}
        found = grads_in = [p.grad for p in entry.params]
        cap, read = _noting_reads(be)  # a read the tracer did not see at call 1 (data-dependent path): no replay
        # a backward run inside the call that goes on into an input's graph (the caller's: a segment after a break)
        # would be recorded as it is now and replayed on later calls' graphs
        outside = []
        hooks = [c.grad_fn.register_prehook(lambda grads: outside.append(True))
                 for c in {id(c): c for c in clones.values()}.values() if c.grad_fn is not None]
        try:
            with _Compiling(), cap:
                out = self.call(*cargs, **ckwargs)
        finally:
            for h in hooks:
                h.remove()
        for t in tensors:
            if clones[id(t)]._version != versions[id(t)]:
                t.copy_(clones[id(t)])  # the function wrote into an input: hand the write to the caller's tensor
        outs = fx._tensors(out)
        diff = [o for o in outs if o.requires_grad and (o.grad_fn is None or not o.grad_fn._freed)]  # to backprop
        bwd = _record_backward(be, diff, [clones[id(t)] for t in tensors]) if diff and not read else None
        why = next((w for w, bad in (
            (f"a read to the host at {read[0].filename}:{read[0].lineno}" if read else "", read),
            ("a backward in the function reaches the graph of an input", outside),
            ("the function writes into an input", any(clones[id(t)]._version != versions[id(t)] for t in tensors)),
            (bwd, isinstance(bwd, str)),
            ("an output is not on webgpu", any(o.device.type != "webgpu" for o in outs)),
            ("outputs that require grad share memory (their replayed backward would not see them as views)",
             diff and len({id(o._storage) for o in outs}) < len(outs)),
            ("an output is the memory of an input or of state (a replay would hand out a copy)",
             _shares_memory(outs, list(clones.values()) + _held(self, args, kwargs))),
            ("the function changes the Python state its guards read",
             guards.collect(self.code_fn, self.root, args, kwargs, self.arg_names) != entry.key)) if bad), None)
        # the .grad tensors found at the start matter only when a recorded command touches their memory (gradients
        # accumulated or zeroed in place); then every replay must find the same ones
        touched = cap.pins.handles  # id() of every buffer a recorded command touches (capture.py)
        if not any(g is not None and id(getattr(g._storage.buf, "handle", None)) in touched for g in grads_in):
            grads_in = None
        if why:
            entry.eager_reason = why
        elif bwd is not None and (grads_in is not None or any(
                g is not None and g is not f for f, g in zip(found, [p.grad for p in entry.params]))):
            entry.eager_reason = "an output requires grad and the function also writes .grad tensors"
        elif not entry.captures:
            entry.captures = [(cap, grads_in, bwd)]
        elif not _same(grads_in, entry.captures[0][1]):
            entry.eager_reason = "the .grad tensors change from call to call (gradients accumulated out of place)"
        elif cap.equivalent(entry.captures[0][0]) and (bwd is None or bwd[0].equivalent(entry.captures[0][2][0])):
            # the latest capture is replayed: the buffers it leaves behind (fresh .grad tensors) are the ones Python
            # holds now
            entry.program = cap.program(inputs=[clones[id(t)] for t in tensors], outputs=outs)
            # the structure, without call 3's tensors (their graph may still be backpropagated)
            entry.template = fx.map_aggregate(out, lambda x: _OUTPUT if isinstance(x, Tensor) else x)
            entry.grads = (grads_in, [p.grad for p in entry.params])
            if bwd is not None:
                entry.cleared = [p for p, f in zip(entry.params, found) if f is not None and p.grad is None]
            entry.memory = _memory(self, args, kwargs)
            if bwd is not None:
                cap_b, gos, leaves, grads, at = bwd
                entry.backward = aot.Backward(be, entry.program,
                                              cap_b.program(inputs=gos, outputs=[g for g in grads if g is not None]),
                                              leaves, at, [g is not None for g in grads],
                                              [any(o is d for d in diff) for o in outs])
                entry.backward.eager = [weakref.ref(o.grad_fn) for o in diff if o.grad_fn is not None]
            # the program writes its outputs into these tensors' memory at every replay: the caller gets copies
            # (differentiable ones, or without a graph copies that keep outputs views of one another as a replay does)
            out = fx.map_aggregate(out, lambda x: x.clone() if isinstance(x, Tensor) else x) if bwd else _copies(out)
        else:
            entry.eager_reason = "two captures differ: a Python value baked into a kernel changed between calls"
        if entry.eager_reason:
            counters["replay_refused"][entry.eager_reason] += 1
        if entry.eager_reason or entry.program is not None:
            entry.captures = []
        counters["webgpu"]["captures"] += 1
        return out


def _copies(out):
    """out with its tensors copied, those that shared memory sharing the copy of it (capture.layout/views)."""
    storages, specs = capture.layout(fx._tensors(out))
    fresh = iter(capture.views([Tensor._make(s, (s.numel,), (1,), 0).clone()._storage for s in storages], specs))
    return fx.map_aggregate(out, lambda x: next(fresh) if isinstance(x, Tensor) else x)


def _record_backward(be, diff, clones):
    """(capture, output-gradient placeholders, leaves, their gradients then the inputs', the positions of the inputs
    that require grad) of the backward of outputs diff alone, down to the leaves and the input clones, or why it
    cannot be replayed (aot.py)."""
    if any(o.device.type != "webgpu" or o.grad_fn is None for o in diff):
        return "an output requires grad and is not a webgpu result of a recorded graph"
    at = [i for i, c in enumerate(clones) if c.grad_fn is not None]
    leaves = aot.graph_leaves(diff, {clones[i].grad_fn for i in at})
    if isinstance(leaves, str):
        return leaves
    gos = [o.new_zeros(o.shape) for o in diff]
    cap, read = _noting_reads(be)
    with cap:
        grads = autograd.grad(diff, leaves + [clones[i] for i in at], gos, retain_graph=True, allow_unused=True)
    if read:
        return "the backward of an output reads to the host"
    if _shares_memory([g for g in grads if g is not None], gos):
        return "a gradient is the memory of an output's gradient"
    return cap, gos, leaves, grads, at


def _noting_reads(be):
    """(a capture of backend be whose reads to the host run and note the user's line, the list of those lines): a
    replay could not make such a read, so a capture that made one is not replayed."""
    read = []
    return be.capture(on_read=lambda: read.append(_user_frame())), read


def _same(a, b):
    """Two lists of the same objects (or both None)."""
    if a is None or b is None:
        return a is b
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def _eager(call, args, kwargs):
    with _Compiling():
        return call(*args, **kwargs)


class _HostReads:
    """On webgpu, a read to the host that the tracer did not report (inside an op whose result's size depends on
    the data, as nonzero; printing a constant) is a graph break too: report(), once per read, while active."""

    def __init__(self, backend, report):
        self.driver, self.report = getattr(backend, "driver", None), report

    def __enter__(self):
        d = self.driver
        if d is not None:
            self.own = d.__dict__.get("read_buffer")
            orig, report = d.read_buffer, self.report

            def read_buffer(*a):
                report()
                return orig(*a)
            d.read_buffer = read_buffer

    def __exit__(self, *exc):
        d = self.driver
        if d is not None:
            if self.own is None:
                del d.read_buffer
            else:
                d.read_buffer = self.own


class _Compiling:
    """torch.compiler.is_compiling() is True while a compiled callable runs its function."""

    def __enter__(self):
        _state["compiling"] += 1

    def __exit__(self, *exc):
        _state["compiling"] -= 1


def _found(compiled, args, kwargs):
    """(tensors, optimizers) the call holds besides its arguments, as its guards find them: parameters, buffers,
    tensors in attributes, globals and cells (objects its guards hold fixed), and the optimizers it reaches."""
    found = []
    guards.collect(compiled.code_fn, compiled.root, args, kwargs, compiled.arg_names, found=found)
    return [t for t in found if isinstance(t, Tensor)], [o for o in found if isinstance(o, Optimizer)]


def _held(compiled, args, kwargs):
    """The tensors a call reaches besides its arguments: those _found finds, their .grad, the optimizers' state."""
    tensors, optims = _found(compiled, args, kwargs)
    params = tensors + [p for o in optims for g in o.param_groups for p in g["params"]]
    return tensors + [p.grad for p in params if p.grad is not None] + \
        [v for o in optims for st in o.state.values() for v in st.values() if isinstance(v, Tensor)]


def _memory(compiled, args, kwargs):
    """What a replay reads and writes besides its arguments and gradients, to check it is still there: [(tensor,
    its storage)] for the tensors _found finds and [(optimizer, its state's storages)]."""
    tensors, optims = _found(compiled, args, kwargs)
    return [(t, t._storage) for t in tensors], [(o, _state_storages(o)) for o in optims]


def _state_storages(opt):
    return [t._storage for st in opt.state.values() for t in st.values() if isinstance(t, Tensor)]


def _moved(memory):
    """Whether a tensor of _memory(...) has new memory (`p.data = t`, optimizer.load_state_dict)."""
    tensors, optims = memory
    return any(t._storage is not s for t, s in tensors) or not all(_same(_state_storages(o), ss) for o, ss in optims)


def _shares_memory(outs, tensors):
    bufs = {id(t._storage.buf) for t in tensors}
    return any(id(o._storage.buf) in bufs for o in outs)


def _inner(fn):
    while hasattr(fn, "_torchdynamo_orig_callable"):
        fn = fn._torchdynamo_orig_callable
    return fn


def compile_callable(model, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
                     disable=False, recompile_limit=None):
    """torch.compile's body: an OptimizedModule for a module, else a function. dynamic: webtorch compiles per shape
    (see SHAPE_VARIANTS); every backend name runs the same way here."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if isinstance(backend, str) and backend not in _BACKENDS:
        raise InvalidBackend(backend)
    if not isinstance(backend, str) and callable(backend):
        raise NotImplementedError("torch.compile with a custom backend callable: webtorch compiles every graph "
                                  "itself; pass a backend name (e.g. the default 'inductor')")
    if backend == "inductor" and mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if config.suppress_errors and config.fail_on_recompile_limit_hit:
        raise AssertionError("Dynamo configs suppress_error and fail_on_recompile_limit_hit can not both be active at "
                             "the same time.")
    if disable or config.disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model, _module_call(model, fullgraph, recompile_limit, dynamic))
    if not callable(model):
        raise RuntimeError("torch.compile expects a callable, an nn.Module or None")
    fn = _inner(model)
    if inspect.ismethod(fn):
        code_fn, root = fn.__func__, fn.__self__
    elif inspect.isfunction(fn):
        code_fn, root = fn, None
    else:  # a callable object
        code_fn, root = type(fn).__call__, fn
    state = CompiledFunction(model, code_fn, root, fullgraph, recompile_limit, dynamic=dynamic)

    @functools.wraps(model)
    def compiled(*args, **kwargs):
        return state(*args, **kwargs)
    compiled._torchdynamo_orig_callable = model
    compiled._torchdynamo_compiled = state
    return compiled


def _lazy_module():
    return Module


class OptimizedModule(_lazy_module()):
    """What torch.compile(module) returns: forwards attributes to `_orig_mod`, whose state dict it holds under
    the `_orig_mod.` prefix, and runs its __call__ (hooks included) compiled."""

    _opt_mod_attributes = {"_orig_mod", "dynamo_ctx", "_torchdynamo_orig_callable", "forward", "_forward",
                           "__dict__", "_super_module_initialized"}

    def __init__(self, mod, dynamo_ctx):
        object.__setattr__(self, "_orig_mod", mod)
        self._super_module_initialized = False
        super().__init__()
        self._super_module_initialized = True
        self._orig_mod = mod
        self.dynamo_ctx = dynamo_ctx
        self._torchdynamo_orig_callable = mod.__call__
        self.forward = dynamo_ctx

    def __len__(self):
        if hasattr(self._orig_mod, "__len__"):
            return len(self._orig_mod)
        raise TypeError(f"{type(self._orig_mod).__name__} does not support len()")

    @property
    def training(self):
        return self._orig_mod.training

    @training.setter
    def training(self, value):
        if self._super_module_initialized:
            self._orig_mod.training = value

    def __getattr__(self, name):
        if name == "_orig_mod":
            return self._modules["_orig_mod"]
        return getattr(self._orig_mod, name)

    def __setattr__(self, name, value):
        if hasattr(type(self), name) or name in OptimizedModule._opt_mod_attributes:
            return super().__setattr__(name, value)
        return setattr(self._orig_mod, name, value)

    def __delattr__(self, name):
        if hasattr(type(self), name) or name in OptimizedModule._opt_mod_attributes:
            return super().__delattr__(name)
        return delattr(self._orig_mod, name)


def _module_call(model, fullgraph, recompile_limit, dynamic):
    """The compiled __call__ of a module (hooks included; breaks split forward while it has no hooks)."""
    return CompiledFunction(model._call_impl, type(model).forward, model, fullgraph, recompile_limit,
                            hooked=model._has_call_hooks, dynamic=dynamic)


def compile_module(model, **kwargs):
    """nn.Module.compile: torch.compile's checks and arguments, the module's compiled __call__ (None: disabled)."""
    opt = compile_callable(model, **kwargs)
    return opt.dynamo_ctx if isinstance(opt, OptimizedModule) else None


_module_compile.append(compile_module)


def compiled_state(fn):
    """The CompiledFunction behind a torch.compile result (None for anything else)."""
    if isinstance(fn, OptimizedModule):
        return fn.dynamo_ctx
    return getattr(fn, "_torchdynamo_compiled", None)


def reset():
    for c in list(_ALL):
        c.reset()


def disable(fn=None, recursive=True, *, reason=None):
    """torch.compiler.disable / torch._dynamo.disable: fn runs eagerly and untraced inside a compiled function
    (a graph break there); torch.compiler.is_compiling() is False inside it."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)
    fn = _inner(fn)
    if not callable(fn):
        raise AssertionError("fn must be callable")

    @functools.wraps(fn)
    def disabled(*args, **kwargs):
        tracer = fx._active[0]
        if tracer is not None and _state["compiling"]:
            tracer.on_value_read(None, "__disabled__")
        saved, fx._active[0] = fx._active[0], None
        _state["disabled"] += 1
        compiling, _state["compiling"] = _state["compiling"], 0
        try:
            return fn(*args, **kwargs)
        finally:
            fx._active[0] = saved
            _state["disabled"] -= 1
            _state["compiling"] = compiling
    disabled._torchdynamo_disable = True
    disabled._torchdynamo_disable_msg = reason
    disabled._torchdynamo_orig_callable = fn
    return disabled
