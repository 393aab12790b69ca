"""One rank of tests/test_distributed.py's two-process runs (env:// rendezvous from the environment).

Each collective runs twice on the same gloo process group: on webtorch tensors through
webtorch.distributed, and on torch tensors through PyTorch's own torch.distributed; the values must agree.
"""
import sys

import torch

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
    }


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
        dist.barrier()
    dist.destroy_process_group()
    assert not dist.is_initialized()
    print(f"rank {rank}: ok")


if __name__ == "__main__":
    main(sys.argv[1:])
