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
import itertools
import warnings

from .. import random as _random
from .._tensor import Tensor
from ..autograd import backward as autograd_backward, grad_mode
from ..autograd.function import Function
from ..autograd.graph import _engine, saved_tensors_hooks


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


def _checkpoint_without_reentrant(function, preserve_rng_state, args, kwargs):
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
                    with grad_mode.enable_grad():
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

    with saved_tensors_hooks(pack, unpack):
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
    return _checkpoint_without_reentrant(function, preserve, args, kwargs)


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
