"""torchrun for an unchanged PyTorch script on webtorch: PyTorch's own launcher, each worker under `python -m webtorch`.

    python -m webtorch.distributed.run [torchrun's options] SCRIPT.py [ARGS...]
    webtorch-torchrun --nproc-per-node 2 train.py

takes torchrun's options (`--nproc-per-node`, `--nnodes`, `--node-rank`, `--master-addr`, `--master-port`,
`--standalone`, `--rdzv-*`, ...) and runs PyTorch's elastic agent with them, so each worker gets torchrun's
environment (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RUN_ID, ...) and runs
`python -m webtorch SCRIPT.py ARGS...`: `import torch` in the script is webtorch, whose torch.distributed runs on
PyTorch's c10d (`python -m webtorch` loads it before `torch` names webtorch when RANK and WORLD_SIZE are set).
Equivalent: `torchrun [options] -m webtorch SCRIPT.py [ARGS...]`. Needs PyTorch installed (the launcher and the
engine are PyTorch's)."""
import importlib
import importlib.util
import sys

from ._fallback import NO_BACKEND_MSG


def main(args=None):
    if importlib.util.find_spec("torch") is None:
        sys.exit(f"webtorch.distributed.run: PyTorch's launcher is not installed. {NO_BACKEND_MSG}")
    torchrun = importlib.import_module("torch.distributed.run")
    opts = torchrun.parse_args(sys.argv[1:] if args is None else args)
    if opts.module or opts.no_python:
        sys.exit("webtorch.distributed.run runs each worker as `python -m webtorch SCRIPT.py`: "
                 "-m/--module and --no-python do not apply")
    opts.module = True
    opts.training_script_args = [opts.training_script, *opts.training_script_args]
    opts.training_script = "webtorch"
    torchrun.run(opts)


if __name__ == "__main__":
    main()
