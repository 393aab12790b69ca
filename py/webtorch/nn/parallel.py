"""torch.nn.parallel: DataParallel on webtorch's one device, DistributedDataParallel on torch.distributed.

DataParallel behaves as PyTorch's does when it finds no CUDA device: it wraps the module
(`.module`; state_dict keys prefixed `module.`, so checkpoints match PyTorch's) and its forward
calls the module on the device the module and inputs are on.

DistributedDataParallel is PyTorch's algorithm on webtorch.distributed (PyTorch's c10d natively;
without it, construction raises PyTorch's uninitialized-process-group error): parameters and buffers
broadcast from rank 0 at construction (buffers again before each forward); in backward each
parameter's post-accumulate-grad hook marks it ready, and each bucket (about `bucket_cap_mb`,
parameters in reverse order) is launched, in bucket order, as one all_reduce of its flattened
gradients pre-multiplied by 1/world_size, as PyTorch's reducer does. `no_sync()` accumulates
locally; `find_unused_parameters` marks parameters the forward's graph does not reach as ready
(contributing zeros) and leaves the gradient of a globally unused one untouched.
It is a `Joinable`: under `with ddp.join():` (or `Join([ddp, ...])`) a rank whose inputs ran out shadows the
others' collectives (the count of ranks still training, the buffer broadcast from the highest of them, the
backward-sync flag, a zero all_reduce per bucket), so the gradient is the active ranks' sum over the initial world
size (`divide_by_initial_world_size=False`: over the active ranks), and at the end every rank takes the last
joiner's parameters, as PyTorch's DDP join.
"""
import contextlib
import warnings

from .. import distributed as dist
from ..autograd import grad_mode
from ..cuda._state import is_available as cuda_is_available
from ..distributed.algorithms.join import Join, Joinable, JoinHook
from ..ops import _creation
from ..ops.shape import cat
from .modules.module import Module


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []
        self.output_device = None
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


class _DDPJoinHook(JoinHook):
    """What a joined rank runs per iteration of the others (main_hook) and at the end (post_hook)."""

    def __init__(self, ddp, divide_by_initial_world_size):
        if ddp.find_unused_parameters:
            raise NotImplementedError("DistributedDataParallel.join: find_unused_parameters=True is not supported by "
                                      "webtorch's join hook")
        self.ddp = ddp
        ddp._divide_by_initial_world_size = divide_by_initial_world_size

    def main_hook(self):
        ddp = self.ddp
        ddp._sync_buffers(rank_cond=False)
        flag = _creation.zeros(1, device=ddp.join_device)
        dist.all_reduce(flag, group=ddp.process_group)
        if flag.item() == 0:  # the others run no_sync (or without grad): no gradient all_reduce to shadow
            return
        for bucket in ddp._buckets:
            dist.all_reduce(_creation.zeros(sum(p.numel() for p in bucket), dtype=bucket[0].dtype,
                                            device=bucket[0].device), group=ddp.process_group)

    def post_hook(self, is_last_joiner):
        ddp = self.ddp
        src = ddp._find_common_rank(is_last_joiner)
        tensors = list(ddp.module.parameters()) + (list(ddp.module.buffers()) if ddp.broadcast_buffers else [])
        for t in tensors:
            dist.broadcast(t, src, group=ddp.process_group)


class DistributedDataParallel(Module, Joinable):
    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=None, init_sync=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **kwargs):
        super().__init__()
        Joinable.__init__(self)
        # gradient_as_bucket_view / static_graph / check_reduction change memory or checks, never values; the
        # options that would change the numbers (mixed_precision, per-parameter hooks) are refused
        changing = {k: v for k, v in kwargs.items() if v not in (None, False) and k != "device_mesh"}
        if changing:
            raise NotImplementedError(f"DistributedDataParallel: {', '.join(sorted(changing))} is not supported by "
                                      "webtorch (it would change the results)")
        world = dist.get_world_size(process_group)
        self.module = module
        self.process_group = process_group
        self.broadcast_buffers = broadcast_buffers is not False
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        params = [p for p in module.parameters() if p.requires_grad]
        cap = (25 if bucket_cap_mb is None else bucket_cap_mb) * 2 ** 20
        self._buckets, size = [[]], 0
        for p in reversed(params):
            if self._buckets[-1] and size + p.numel() * p.element_size() > cap:
                self._buckets.append([])
                size = 0
            self._buckets[-1].append(p)
            size += p.numel() * p.element_size()
        self._bucket_of = {id(p): i for i, b in enumerate(self._buckets) for p in b}
        self._scale = self._world_scale = 1.0 / world
        self._divide_by_initial_world_size = True
        self._pending = None
        if init_sync:
            for t in list(module.parameters()) + list(module.buffers()):
                dist.broadcast(t, 0, group=process_group)
        for p in params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    @contextlib.contextmanager
    def no_sync(self):
        old, self.require_backward_grad_sync = self.require_backward_grad_sync, False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def forward(self, *inputs, **kwargs):
        if self._pending is not None and self._pending["ready"]:
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a new one. This error "
                "indicates that your module has parameters that were not used in producing loss. You can enable "
                "unused parameter detection by passing the keyword argument `find_unused_parameters=True` to "
                "`torch.nn.parallel.DistributedDataParallel`.")
        self._scale = self._world_scale
        work = Join.notify_join_context(self)
        if work is not None and not self._divide_by_initial_world_size:
            work.wait()
            self._scale = 1.0 / work.result()[0].item()  # over the ranks still training
        self._sync_buffers(rank_cond=True)
        if self._join_config.enable:  # whether this step syncs gradients, for the joined ranks
            flag = (_creation.ones if grad_mode.is_grad_enabled() and self.require_backward_grad_sync else
                    _creation.zeros)(1, device=self.join_device)
            dist.all_reduce(flag, group=self.process_group)
        out = self.module(*inputs, **kwargs)
        self._pending = None
        if grad_mode.is_grad_enabled() and self.require_backward_grad_sync:
            self._pending = {"ready": set(), "launched": [], "unused": set()}
            if self.find_unused_parameters:
                used = _reached_leaves(out)
                self._pending["unused"] = {id(p) for b in self._buckets for p in b if id(p) not in used}
                for pid in self._pending["unused"]:
                    self._mark(pid)
        return out

    def _sync_buffers(self, rank_cond):
        """Buffers from rank 0, or under join from the highest rank still training."""
        buffers = list(self.module.buffers())
        if self.broadcast_buffers and buffers:
            src = self._find_common_rank(rank_cond) if self._join_config.enable else 0
            for b in buffers:
                dist.broadcast(b, src, group=self.process_group)

    def _find_common_rank(self, rank_cond):
        rank = _creation.tensor([dist.get_rank(self.process_group) if rank_cond else -1], device=self.join_device)
        dist.all_reduce(rank, op=dist.ReduceOp.MAX, group=self.process_group)
        return int(rank.item())

    def join(self, divide_by_initial_world_size=True, enable=True, throw_on_early_termination=False):
        """`with ddp.join():` training with uneven inputs across ranks (see the module's docstring)."""
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs):
        return _DDPJoinHook(self, divide_by_initial_world_size=kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self):
        return next(iter(self.module.parameters())).device

    @property
    def join_process_group(self):
        return self.process_group

    def _grad_ready(self, param):
        if self._pending is not None and id(param) in self._bucket_of:
            self._mark(id(param))

    def _mark(self, pid):
        pending = self._pending
        pending["ready"].add(pid)
        launched, buckets = pending["launched"], self._buckets
        while len(launched) < len(buckets) and all(id(p) in pending["ready"] for p in buckets[len(launched)]):
            launched.append(self._launch(buckets[len(launched)]))
        if len(launched) == len(self._buckets):
            self._pending = None
            self._finish(launched, pending["unused"])

    def _launch(self, bucket):
        with grad_mode.no_grad():
            flat = cat([(p.grad if p.grad is not None else _creation.zeros_like(p)).reshape(-1) * self._scale
                        for p in bucket])
        return flat, dist.all_reduce(flat, group=self.process_group, async_op=True)

    def _finish(self, launched, unused):
        used_anywhere = None
        if unused:
            ids = [id(p) for b in self._buckets for p in b]
            used_anywhere = _creation.tensor([float(i not in unused) for i in ids])
            dist.all_reduce(used_anywhere, group=self.process_group)
            used_anywhere = dict(zip(ids, used_anywhere.tolist()))
        with grad_mode.no_grad():
            for bucket, (flat, work) in zip(self._buckets, launched):
                work.wait()
                start = 0
                for p in bucket:
                    chunk = flat[start:start + p.numel()].view_as(p)
                    start += p.numel()
                    if used_anywhere is not None and not used_anywhere[id(p)]:
                        continue
                    if p.grad is None:
                        p.grad = chunk.clone()
                    else:
                        p.grad.copy_(chunk)


def _reached_leaves(out):
    """ids of the leaf tensors the autograd graph of `out`'s tensors reaches."""
    stack = [t.grad_fn for t in _tensors(out) if getattr(t, "grad_fn", None) is not None]
    seen, leaves = set(), set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if hasattr(node, "variable"):
            leaves.add(id(node.variable))
        stack.extend(n for n, _ in node.next_functions)
    return leaves


def _tensors(out):
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _tensors(o)]
    if isinstance(out, dict):
        return [t for o in out.values() for t in _tensors(o)]
    return [out] if hasattr(out, "grad_fn") else []


class DistributedDataParallelCPU(DistributedDataParallel):
    """Deprecated, as in PyTorch: DistributedDataParallel."""

    def __init__(self, *args, **kwargs):
        warnings.warn("`torch.nn.parallel.DistributedDataParallelCPU` is deprecated, please use "
                      "`torch.nn.parallel.DistributedDataParallel` instead.", FutureWarning, stacklevel=2)
        super().__init__(*args, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """The module on its device (webtorch's one); PyTorch's RuntimeError where it finds no CUDA device
    (the cuda alias off), as PyTorch's functional form raises on a CPU-only machine."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if not cuda_is_available():
        raise RuntimeError("device type could not be determined")
    return module(*inputs, **(module_kwargs or {}))
