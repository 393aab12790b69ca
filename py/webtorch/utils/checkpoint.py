"""torch.utils.checkpoint: trade compute for memory by recomputing a block in backward.

Two variants, as in PyTorch:

- use_reentrant=True: the block becomes one node (CheckpointFunctionBackward) that saves only
  its inputs; its backward reruns the block with grad enabled and backpropagates through that
  fresh graph from inside the outer backward (so it needs a plain `.backward()`).
- use_reentrant=False: the block records its graph as usual, but every tensor it saves for
  backward is stored as a small handle (saved_tensors_hooks); the first unpack in backward
  reruns the block once and hands out the recomputed tensors. Works with autograd.grad.
"""
import contextlib
import enum
import itertools
import warnings

from .. import overrides, random as _random
from .._tensor import Tensor
from ..autograd import backward as autograd_backward, grad_mode, graph as _graph
from ..autograd.function import Function
from ..autograd.graph import _engine, saved_tensors_hooks
from ..ops.registry import FUNCTIONS, METHODS


def _is_tensor(x):
    return isinstance(x, Tensor)


def _rng_state():
    return _random.default_generator._save()


def _set_rng_state(state):
    _random.default_generator._restore(state)


class CheckpointError(RuntimeError):
    pass


class DefaultDeviceType:
    _default_device_type = None

    @staticmethod
    def set_device_type(device="cuda"):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        return DefaultDeviceType._default_device_type or "cpu"


def get_device_states(*args):
    """([], []): webtorch has one random generator for every device (its state is what
    preserve_rng_state saves), so there is no per-device state to save."""
    return [], []


def set_device_states(devices, states, *, device_type=None):
    if list(devices) or list(states):
        raise RuntimeError("webtorch has no per-device random state: get_device_states() returns none")


def detach_variable(inputs):
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    return tuple(a.detach().requires_grad_(a.requires_grad) if _is_tensor(a) else a for a in inputs)


def check_backward_validity(inputs):
    if not any(inp.requires_grad for inp in inputs if _is_tensor(inp)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def _detached(args):
    return [a.detach().requires_grad_(a.requires_grad) if _is_tensor(a) else a for a in args]


class CheckpointFunction(Function):
    _node_name = "CheckpointFunctionBackward"

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.rng = _rng_state() if preserve_rng_state else None
        ctx.tensor_pos = [k for k, a in enumerate(args) if _is_tensor(a)]
        ctx.args = [None if _is_tensor(a) else a for a in args]
        ctx.save_for_backward(*[args[k] for k in ctx.tensor_pos])
        return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        if not _engine["checkpoint_valid"]:
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an "
                "`inputs` parameter to .backward(). To resolve this error, you can either set "
                "use_reentrant=False, or call .backward() without passing the `inputs` argument.")
        args = list(ctx.args)
        for k, t in zip(ctx.tensor_pos, ctx.saved_tensors):
            args[k] = t
        args = _detached(args)
        rng_now = _rng_state()
        if ctx.rng is not None:
            _set_rng_state(ctx.rng)
        try:
            with grad_mode.enable_grad():
                outputs = ctx.run_function(*args)
        finally:
            _set_rng_state(rng_now)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        outs, gs = [], []
        for o, g in zip(outputs, grads):
            if _is_tensor(o) and o.requires_grad and g is not None:
                outs.append(o)
                gs.append(g)
        if not outs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        autograd_backward(outs, gs)
        return (None, None) + tuple(a.grad if _is_tensor(a) else None for a in args)


def _checkpoint_without_reentrant(function, preserve_rng_state, args, kwargs, context_fn):
    forward_context, recompute_context = context_fn()
    rng = _rng_state() if preserve_rng_state else None
    inputs = [a.detach() if _is_tensor(a) else a for a in args]  # values only: no reference to the graph
    needs = [a.requires_grad if _is_tensor(a) else False for a in args]
    counter = itertools.count()
    frame = {"recomputed": None}

    def pack(t):
        return next(counter)

    def unpack(k):
        if frame["recomputed"] is None:
            store = []
            rerun_args = [a.detach().requires_grad_(n) if _is_tensor(a) else a for a, n in zip(inputs, needs)]
            rng_now = _rng_state()
            if rng is not None:
                _set_rng_state(rng)
            try:
                with saved_tensors_hooks(lambda t: store.append(t.detach()) or len(store) - 1, lambda i: store[i]):
                    with grad_mode.enable_grad(), recompute_context:
                        function(*rerun_args, **kwargs)
            finally:
                _set_rng_state(rng_now)
            frame["recomputed"] = store
        store = frame["recomputed"]
        if k >= len(store):
            raise RuntimeError("torch.utils.checkpoint: trying to unpack a tensor the recomputation did not save; "
                               "the checkpointed function must run the same operations in recomputation as in "
                               "its forward.")
        return store[k]

    with saved_tensors_hooks(pack, unpack), forward_context:
        return function(*args, **kwargs)


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default", debug=False,
               early_stop=True, **kwargs):
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch "
            "2.9, calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is "
            "recommended, but if you need to preserve the current default behavior, you can pass "
            "use_reentrant=True. Refer to docs for more details on the differences between the two variants.",
            stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
        if context_fn is not None or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        if grad_mode.is_grad_enabled():
            check_backward_validity(args)
        return CheckpointFunction.apply(function, preserve, *args)
    if not grad_mode.is_grad_enabled():
        return function(*args, **kwargs)
    return _checkpoint_without_reentrant(function, preserve, args, kwargs, context_fn or noop_context_fn)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Runs a sequence of modules (or functions) in `segments` checkpointed chunks; the last
    chunk runs normally."""
    if isinstance(functions, (list, tuple)):
        functions = list(functions)
    else:
        functions = list(functions.children())

    def run(start, end):
        def f(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return f

    n = len(functions)
    size = n // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, **kwargs)
    return run(end + 1, n - 1)(input)


# ---- selective activation checkpointing (SAC) -----------------------------------------------------------
class CheckpointPolicy(enum.Enum):
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


_SAVED = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE, CheckpointPolicy.MUST_CPU_OFFLOAD,
          CheckpointPolicy.PREFER_CPU_OFFLOAD)

# ops whose result is metadata or an alias, never worth saving: PyTorch's set, as the webtorch ops that reach the
# op hook (Tensor.size, .dim, .stride, ... are plain methods there)
SAC_IGNORED_OPS = {ops[n] for ops in (FUNCTIONS, METHODS) for n in ("detach", "dim", "numel", "size", "stride",
                                                                     "storage_offset", "is_contiguous") if n in ops}


class SelectiveCheckpointContext:
    """What the policy function is told of a call: always is_recompute=False, as in PyTorch (the policy is asked
    in forward only; recomputation takes the decisions by position)."""

    def __init__(self, *, is_recompute, op_output=None):
        self.is_recompute = is_recompute
        self.op_output = op_output


class _OpHook:
    """While active, every top-level webtorch op call goes through `_call` (overrides' op hook)."""

    def __init__(self, storage):
        self.storage, self.count, self.depth = storage, 0, 0

    def __enter__(self):
        self.prev, overrides._tracing[0] = overrides._tracing[0], self
        self.count = 0
        return self

    def __exit__(self, *exc):
        overrides._tracing[0] = self.prev
        return False

    def call(self, public, fn, args, kwargs):
        if self.depth:  # inside an op already decided on
            return fn(*args, **kwargs)
        self.depth += 1
        try:
            index, self.count = self.count, self.count + 1
            return self._call(index, public, fn, args, kwargs)
        finally:
            self.depth -= 1


class _CachingForward(_OpHook):
    """Forward: an op the policy saves runs outside checkpoint's saved-tensor hooks (its activations are kept,
    as in an unchekpointed graph) and its output is kept for the recomputation."""

    def __init__(self, policy_fn, storage):
        super().__init__(storage)
        self.policy_fn = policy_fn

    def _call(self, index, public, fn, args, kwargs):
        if public in SAC_IGNORED_OPS:
            return fn(*args, **kwargs)
        policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=False), public, *args, **kwargs)
        if isinstance(policy, bool):
            policy = CheckpointPolicy.PREFER_SAVE if policy else CheckpointPolicy.PREFER_RECOMPUTE
        if not isinstance(policy, CheckpointPolicy):
            raise RuntimeError(f"policy_fn must return a CheckpointPolicy, got {policy!r}")
        if policy not in _SAVED:
            return fn(*args, **kwargs)
        hooks, _graph._saved_hooks[:] = list(_graph._saved_hooks), []
        try:
            out = fn(*args, **kwargs)
        finally:
            _graph._saved_hooks[:] = hooks
        self.storage[index] = out
        return out


class _CachedRecompute(_OpHook):
    """Recomputation: a saved op is not run again; its forward output stands in (detached, requiring grad as it
    did, so that the ops after it save the same tensors in the same order)."""

    def __init__(self, storage, allow_cache_entry_mutation):
        super().__init__(storage)
        self.allow_mutation = allow_cache_entry_mutation

    def _call(self, index, public, fn, args, kwargs):
        if index not in self.storage:
            return fn(*args, **kwargs)
        out = self.storage[index]
        return out.detach().requires_grad_(out.requires_grad) if isinstance(out, Tensor) else out


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """(forward context, recompute context) for checkpoint(..., use_reentrant=False, context_fn=...): policy_fn(ctx,
    op, *args, **kwargs) returns each op's CheckpointPolicy; a list of ops saves those (MUST_SAVE) and recomputes
    the others (PREFER_RECOMPUTE). op is the webtorch op called (torch.matmul, F.dropout: matched by name), where
    PyTorch passes ATen's overload (torch.ops.aten.mm.default)."""
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not callable(op):
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} of type {type(op)}. ")
        ops = {op.__name__ for op in policy_fn_or_list}

        def policy_fn(ctx, op, *args, **kwargs):
            return CheckpointPolicy.MUST_SAVE if op.__name__ in ops else CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage = {}
    return _CachingForward(policy_fn, storage), _CachedRecompute(storage, allow_cache_entry_mutation)


_settings = {"debug": None, "early_stop": None}


@contextlib.contextmanager
def _setting(key, value):
    prev, _settings[key] = _settings[key], value
    try:
        yield
    finally:
        _settings[key] = prev


def set_checkpoint_debug_enabled(enabled):
    """Overrides checkpoint's `debug` inside the block (None: each call's own); webtorch records no debug trace."""
    return _setting("debug", enabled)


def set_checkpoint_early_stop(enable):
    """Overrides checkpoint's `early_stop` inside the block: webtorch's recomputation always runs the whole
    function once, so this changes only the flag."""
    return _setting("early_stop", enable)


class GraphExecGroup:
    """Backward calls inside one group recompute each checkpointed region at most once (webtorch's checkpoint
    recomputes a region once in any case). Groups do not nest."""
    _current = [None]

    def __enter__(self):
        if GraphExecGroup._current[0] is not None:
            raise RuntimeError(f"GraphExecGroup contexts cannot be nested. Already inside group "
                               f"{GraphExecGroup._current[0]}")
        GraphExecGroup._current[0] = self
        return self

    def __exit__(self, *args):
        GraphExecGroup._current[0] = None

    @classmethod
    def _get_current_group(cls):
        return cls._current[0]
