"""One rank of tests/test_distributed.py's two-process runs (env:// rendezvous from the environment).

Each collective runs twice on the same gloo process group: on webtorch tensors through
webtorch.distributed, and on torch tensors through PyTorch's own torch.distributed; the values must agree.
"""
import contextlib
import math
import sys

import torch
import torch.distributed.algorithms.join

import webtorch as wt
import webtorch.distributed as dist
from webtorch import _device
from webtorch.backends.cpu import PureBackend


def _same(name, ours, theirs):
    ours = ours if isinstance(ours, list) else [ours]
    theirs = theirs if isinstance(theirs, list) else [theirs]
    got, want = [t.cpu().tolist() for t in ours], [t.tolist() for t in theirs]
    assert got == want, f"{name}: webtorch {got} != torch {want}"


def _run(name, fn, make, device):
    """fn(tensors, module) on webtorch tensors (through webtorch.distributed) and on torch's."""
    theirs = make(torch)
    ours = [wt.tensor(t.tolist(), dtype=getattr(wt, str(t.dtype).split(".")[1]), device=device) for t in theirs]
    fn(theirs, torch.distributed)
    fn(ours, dist)
    _same(name, ours, theirs)


def _collectives(rank, world):
    def tensors(*shapes, dtype="float32"):
        return lambda m: [(m.arange(1, 1 + m.Size(s).numel()) * (rank + 1)).reshape(s).to(getattr(m, dtype))
                          for s in shapes]
    return {
        "all_reduce": (lambda t, d: d.all_reduce(t[0]), tensors((2, 3))),
        "all_reduce_max_int64": (lambda t, d: d.all_reduce(t[0], op=d.ReduceOp.MAX), tensors((4,), dtype="int64")),
        "all_reduce_async": (lambda t, d: d.all_reduce(t[0], async_op=True).wait(), tensors((3,))),
        "broadcast": (lambda t, d: d.broadcast(t[0], src=1), tensors((2, 2))),
        "all_gather_into_tensor": (lambda t, d: d.all_gather_into_tensor(t[0], t[1]), tensors((2 * world, 3), (2, 3))),
        "reduce_scatter_tensor": (lambda t, d: d.reduce_scatter_tensor(t[0], t[1]), tensors((2,), (2 * world,))),
        "all_gather": (lambda t, d: d.all_gather(t[:world], t[world]), tensors(*[(3,)] * (world + 1))),
        "reduce": (lambda t, d: d.reduce(t[0], dst=0), tensors((5,))),
        "send_recv": (lambda t, d: d.send(t[0], 1) if rank == 0 else d.recv(t[0], 0), tensors((4,))),
        "isend_irecv": (lambda t, d: (d.isend(t[0], 1) if rank == 0 else d.irecv(t[0], 0)).wait(), tensors((3,))),
    }


def _net(m, rank):
    """Two heads, each used on one rank only, and a layer no rank uses (find_unused_parameters' cases)."""
    class Net(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.body, self.head0, self.head1, self.unused = (m.nn.Linear(4, 8), m.nn.Linear(8, 2), m.nn.Linear(8, 2),
                                                              m.nn.Linear(2, 2))

        def forward(self, x):
            h = m.tanh(self.body(x))
            return self.head0(h) if rank == 0 else self.head1(h)
    return Net()


def _ddp_equals_pytorch(rank, device):
    """Per-step losses and final weights of webtorch's DDP equal PyTorch's DDP on the same model and data."""
    torch.manual_seed(rank)  # different weights per rank: DDP starts from rank 0's
    theirs = _net(torch, rank)
    ours = _net(wt, rank)
    ours.load_state_dict({k: wt.tensor(v.tolist()) for k, v in theirs.state_dict().items()})
    ours.to(device)
    runs = []
    for m, model in ((torch, theirs), (wt, ours)):
        ddp = m.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=1e-4, find_unused_parameters=True)
        opt = m.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9, weight_decay=0.01)
        g = torch.Generator().manual_seed(100 + rank)
        losses = []
        for step in range(4):
            x, y = torch.randn(5, 4, generator=g), torch.randn(5, 2, generator=g)
            if m is wt:
                x, y = wt.tensor(x.tolist(), device=device), wt.tensor(y.tolist(), device=device)
            with ddp.no_sync() if step == 1 else contextlib.nullcontext():
                loss = ((ddp(x) - y) ** 2).mean()
                loss.backward()
            if step != 1:
                opt.step()
                opt.zero_grad()
            losses.append(loss.item())
        runs.append((losses, {k: v.cpu().tolist() for k, v in model.state_dict().items()}))
    (want, want_sd), (got, got_sd) = runs
    assert all(math.isclose(a, b, rel_tol=1e-5) for a, b in zip(got, want)), (got, want)
    for k, v in want_sd.items():
        assert torch.allclose(torch.tensor(got_sd[k]), torch.tensor(v), rtol=1e-5, atol=1e-6), k


def _summer(m, d, join, reduce):
    """A Joinable whose step all-reduces one number (module m: torch or webtorch; reduce: its all_reduce)."""
    class Summer(join.Joinable):
        def __init__(self):
            super().__init__()
            self.sums, self.last = [], None

        def step(self, x):
            join.Join.notify_join_context(self)
            t = m.tensor([float(x)], device=d)
            reduce(t)
            self.sums.append(t.item())

        def join_hook(self, **kwargs):
            summer = self

            class Hook(join.JoinHook):
                def main_hook(self):  # what a joined rank contributes to the others' step
                    t = m.zeros(1, device=d)
                    reduce(t)
                    summer.sums.append(-t.item())

                def post_hook(self, is_last_joiner):
                    summer.last = is_last_joiner
            return Hook()

        @property
        def join_device(self):
            return m.device(d)

        @property
        def join_process_group(self):
            return torch.distributed.group.WORLD
    return Summer()


def _join_equals_pytorch(rank, device):
    """algorithms.Join with uneven inputs (rank 0: 2 steps, rank 1: 4): the joined rank shadows the other's
    all_reduces; sums and post_hook flags equal PyTorch's Join on torch tensors."""
    runs = []
    for m, d, join, reduce in ((torch, "cpu", torch.distributed.algorithms.join, torch.distributed.all_reduce),
                               (wt, device, dist.algorithms.join, dist.all_reduce)):
        summer = _summer(m, d, join, reduce)
        with join.Join([summer]):
            for i in range(2 + 2 * rank):
                summer.step(10 * rank + i + 1)
        runs.append((summer.sums, summer.last))
    assert runs[0] == runs[1], runs


def _ddp_join_equals_pytorch(rank, device):
    """DDP under `ddp.join()` with uneven inputs (rank 0: 2 steps, rank 1: 4), a BatchNorm's buffers, both gradient
    divisors: per-step losses and the final weights and buffers equal PyTorch's."""
    for divide in (True, False):
        runs = []
        for m in (torch, wt):
            torch.manual_seed(0)
            theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 1))
            model = theirs if m is torch else wt.nn.Sequential(wt.nn.Linear(3, 4), wt.nn.BatchNorm1d(4),
                                                               wt.nn.Linear(4, 1))
            if m is wt:
                model.load_state_dict({k: wt.tensor(v.tolist(), dtype=getattr(wt, str(v.dtype).split(".")[1]))
                                       for k, v in theirs.state_dict().items()})
                model.to(device)
            ddp = m.nn.parallel.DistributedDataParallel(model)
            opt = m.optim.SGD(ddp.parameters(), lr=0.1)
            losses = []
            with ddp.join(divide_by_initial_world_size=divide):
                for step in range(2 + 2 * rank):
                    x = m.arange(15.0, device=device if m is wt else "cpu").reshape(5, 3) / 10 + step + rank
                    loss = ddp(x).pow(2).mean()
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    losses.append(loss.item())
            runs.append((losses, {k: v.cpu().tolist() for k, v in model.state_dict().items()}))
        (want, want_sd), (got, got_sd) = runs
        # float32 rounding (webgpu's BatchNorm) through 4 steps: 1e-7 apart on losses near 0.01
        assert all(math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6) for a, b in zip(got, want)), (divide, got, want)
        for k, v in want_sd.items():
            assert torch.allclose(torch.tensor(got_sd[k]).double(), torch.tensor(v).double(), rtol=1e-5,
                                  atol=1e-5), (divide, k)


def main(devices):
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    assert (rank, world) == (torch.distributed.get_rank(), torch.distributed.get_world_size())
    assert dist.is_initialized() and dist.get_backend() == "gloo"
    for device in devices:
        if device == "cpu-pure":
            _device._backends["cpu"], device = PureBackend(), "cpu"
        for name, (fn, make) in _collectives(rank, world).items():
            _run(name, fn, make, device)
        _ddp_equals_pytorch(rank, device)
        _join_equals_pytorch(rank, device)
        _ddp_join_equals_pytorch(rank, device)
        dist.barrier()
    dist.destroy_process_group()
    assert not dist.is_initialized()
    print(f"rank {rank}: ok")


if __name__ == "__main__":
    main(sys.argv[1:])
