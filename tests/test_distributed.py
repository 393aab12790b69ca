"""torch.distributed: PyTorch's names and errors without an engine; PyTorch's c10d as the engine natively.

Two ranks launched by torchrun (env:// on a free localhost port): each collective on webtorch tensors
(cpu, cpu-pure, webgpu) and DistributedDataParallel's training must equal PyTorch's own on torch tensors.
"""
import inspect
import json
import os
import re
import socket
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.distributed as tdist

import webtorch as wt

HERE = os.path.dirname(os.path.abspath(__file__))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _torchrun(args, nproc=2, timeout=120):
    """`torchrun --nproc_per_node N SCRIPT ARGS` as users launch it: its env:// rendezvous on a free port."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(os.path.dirname(HERE), "py"), HERE, env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={nproc}",
                          "--master_addr=127.0.0.1", f"--master_port={_free_port()}", *args],
                         env=env, capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def test_torchrun_two_processes_collectives_and_ddp_equal_pytorch(webgpu):
    devices = ["cpu", "cpu-pure", "webgpu"]
    out = _torchrun([os.path.join(HERE, "_distributed_worker.py"), *devices])
    assert sorted(re.findall(r"rank (\d): ok", out)) == ["0", "1"], out  # the two ranks' lines may interleave


def _launch_ddp(launcher, env):
    """tests/programs/ddp_train.py on 2 processes, started (not waited for)."""
    return subprocess.Popen([sys.executable, "-m", launcher, "--nproc-per-node", "2", "--master-addr", "127.0.0.1",
                             "--master-port", str(_free_port()), os.path.join(HERE, "programs", "ddp_train.py")],
                            env=dict(env, OMP_NUM_THREADS="1"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _ddp_lines(run):
    """Each rank's (losses, all-reduced totals) and (weights, library) of a _launch_ddp run."""
    out, err = run.communicate(timeout=180)
    assert run.returncode == 0, out + err
    # the ranks' lines may interleave (a line's end after another's)
    steps = re.findall(r"rank (\d) step \d loss (-?\d+\.\d{6}) total (-?\d+\.\d{6})", out)
    weights = re.findall(r"rank (\d) weight (\[[^]]*\]) on (webtorch|torch)", out)
    return ({r: [(float(a), float(b)) for q, a, b in steps if q == r] for r in "01"},
            {r: (json.loads(w), lib) for r, w, lib in weights})


def test_unchanged_ddp_script_launched_as_torchrun_equals_pytorch():
    """`python -m webtorch.distributed.run --nproc-per-node 2 train.py`: an `import torch` script on webtorch, whose
    c10d is PyTorch's; per-step losses, all-reduced sums and trained weights equal PyTorch's torchrun run (the two
    launches run side by side)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    theirs = _launch_ddp("torch.distributed.run", env)
    ours = _launch_ddp("webtorch.distributed.run", dict(env, PYTHONPATH=os.path.join(os.path.dirname(HERE), "py")))
    (want_steps, want_w), (got_steps, got_w) = _ddp_lines(theirs), _ddp_lines(ours)
    assert len(want_steps["0"]) == len(want_steps["1"]) == 3 and want_steps.keys() == got_steps.keys()
    for r in "01":
        np.testing.assert_allclose(got_steps[r], want_steps[r], rtol=2e-6)
        np.testing.assert_allclose(got_w[r][0], want_w[r][0], atol=2e-6)
        assert (got_w[r][1], want_w[r][1]) == ("webtorch", "torch")


def test_names_are_pytorch_names():
    # which submodules dir() shows depends on what other tests imported (fsdp, tensor, nn): these are always there
    public = {n for n in dir(tdist) if not n.startswith("_") and not inspect.ismodule(getattr(tdist, n))}
    assert sorted(n for n in public if not hasattr(wt.distributed, n)) == []
    for name in ("algorithms", "autograd", "c10d_logger", "config", "logging_handlers", "remote_device", "rpc",
                 "utils"):
        assert inspect.ismodule(getattr(tdist, name)) and inspect.ismodule(getattr(wt.distributed, name)), name
    assert inspect.ismodule(wt.distributed.constants) and inspect.ismodule(wt.distributed.device_mesh)
    from webtorch.distributed.device_mesh import DeviceMesh, init_device_mesh
    assert DeviceMesh is tdist.DeviceMesh and init_device_mesh is wt.distributed.init_device_mesh
    assert wt.distributed.constants.default_pg_timeout == tdist.default_pg_timeout
    assert wt.distributed.is_available() and not wt.distributed.is_initialized()
    assert wt.distributed.ReduceOp.SUM is tdist.ReduceOp.SUM and wt.distributed.TCPStore is tdist.TCPStore


@pytest.mark.parametrize("engine", [True, False], ids=["c10d", "no-engine"])
def test_uninitialized_raises_as_pytorch(engine, monkeypatch):
    if not engine:
        monkeypatch.setattr(wt.distributed, "_engine_module", [None])
    x = wt.zeros(2)
    calls = {"get_rank": (), "get_world_size": (), "get_backend": (), "barrier": (), "all_reduce": (x,),
             "broadcast": (x, 0), "all_gather_into_tensor": (x, x), "reduce_scatter_tensor": (x, x), "send": (x, 1),
             "new_group": (), "all_gather_object": ([None], 1)}
    for name, args in calls.items():
        with pytest.raises(ValueError) as want:
            getattr(tdist, name)(*[torch.from_numpy(a.numpy()) if isinstance(a, wt.Tensor) else a for a in args])
        with pytest.raises(ValueError) as got:
            getattr(wt.distributed, name)(*args)
        assert str(got.value) == str(want.value), name
    with pytest.raises(AssertionError, match="Process group cannot be None"):
        wt.distributed.destroy_process_group()
    assert wt.distributed.is_available() is engine and wt.distributed.get_pg_count() == 0


def test_without_engine_names_exist_and_raise(monkeypatch):
    d = wt.distributed
    monkeypatch.setattr(d, "_engine_module", [None])
    assert (d.ReduceOp.SUM, d.Backend.GLOO, d.GroupMember.WORLD, d.group.WORLD) == ("SUM", "gloo", None, None)
    assert issubclass(d.QueueEmptyError, d.DistStoreError) and issubclass(d.DistError, RuntimeError)
    with pytest.raises(RuntimeError, match=r"no distributed backend.*state_dict.*DistributedDataParallel"):
        d.init_process_group("gloo")
    with pytest.raises(RuntimeError, match="no distributed backend"):
        d.TCPStore("127.0.0.1", 0)


def test_single_device_program_imports_distributed_under_python_m_webtorch(tmp_path):
    """nanoGPT's imports under `python -m webtorch`, where `torch` is webtorch and PyTorch is not reachable."""
    script = tmp_path / "train.py"
    script.write_text(
        "import os\nimport torch\n"
        "from torch.nn.parallel import DistributedDataParallel as DDP\n"
        "from torch.distributed import init_process_group, destroy_process_group\n"
        "ddp = int(os.environ.get('RANK', -1)) != -1\n"
        "print(ddp, torch.distributed.is_available(), torch.distributed.is_initialized())\n")
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE")}
    env["PYTHONPATH"] = os.path.join(os.path.dirname(HERE), "py")
    out = subprocess.run([sys.executable, "-m", "webtorch", str(script)], env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False", "False"]


def test_single_device_program_runs_without_pytorch_or_numpy():
    """As where PyTorch is not installed (nor numpy, as in the page): the names import and raise as PyTorch's."""
    code = (
        "import sys\nsys.modules['torch'] = sys.modules['numpy'] = None\n"
        "import webtorch as torch\n"
        "from webtorch.distributed import init_process_group, destroy_process_group\n"
        "from webtorch.nn.parallel import DistributedDataParallel as DDP\n"
        "print(torch.distributed.is_available(), torch.distributed.is_initialized(), torch.distributed.ReduceOp.SUM)\n"
        "try:\n    DDP(torch.nn.Linear(2, 2))\nexcept ValueError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=os.path.join(
        os.path.dirname(HERE), "py")), capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["False False SUM", "Default process group has not been initialized, please "
                                       "make sure to call init_process_group."]


def test_submodules_as_pytorch_without_their_engines():
    """rpc and distributed autograd (no RPC framework here: is_available() False) raise PyTorch's errors before
    init; remote_device parses as PyTorch's; config's flags."""
    from torch.distributed import autograd as tautograd, config as tconfig, rpc as trpc
    from torch.distributed.remote_device import _remote_device as T

    from webtorch.distributed import autograd as wautograd, config as wconfig, rpc as wrpc
    from webtorch.distributed.remote_device import _remote_device as W
    for name, args in {"rpc_sync": ("w", abs), "rpc_async": ("w", abs), "remote": ("w", abs), "get_worker_info": (),
                       "shutdown": ()}.items():
        with pytest.raises(RuntimeError) as want:
            getattr(trpc, name)(*args)
        with pytest.raises(RuntimeError, match=re.escape(str(want.value))):
            getattr(wrpc, name)(*args)
    for m in (tautograd, wautograd):
        with pytest.raises(RuntimeError, match=r"^Need to initialize distributed autograd using "
                                               r"torch.distributed.autograd.init\(\)$"):
            with m.context():
                pass
    with pytest.raises(RuntimeError, match="no RPC framework"):
        wrpc.init_rpc("worker0", rank=0, world_size=1)
    assert not wrpc.is_available() and not wautograd.is_available() and [b.name for b in wrpc.BackendType] == [
        b.name for b in trpc.BackendType]
    for spec in ("rank:1/cpu", "worker1/cpu", "cpu", "worker0", "trainer:3"):
        try:
            want = T(spec)
        except ValueError as e:
            with pytest.raises(ValueError, match=re.escape(str(e))):
                W(spec)
            continue
        got = W(spec)
        assert (repr(got), got.rank(), got.worker_name(), str(got.device())) == (
            repr(want), want.rank(), want.worker_name(), str(want.device())), spec
    assert (wconfig.compile_on_one_rank, wconfig.use_torchcomms) == (tconfig.compile_on_one_rank,
                                                                      tconfig.use_torchcomms)

