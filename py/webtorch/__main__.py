"""Run an unmodified PyTorch script on webtorch: `import torch` in it imports webtorch.

    python -m webtorch [--device webgpu [--no-cuda-alias]] SCRIPT.py [ARGS...]
    webtorch-run [--device webgpu [--no-cuda-alias]] SCRIPT.py [ARGS...]

The script runs as `__main__` with `sys.argv == [SCRIPT.py, ARGS...]` and its directory first
on sys.path, as `python SCRIPT.py ARGS...` would run it; its exit status is the command's.
`--device` (before the script) sets the default device (`torch.set_default_device`).
`--device webgpu` also makes "cuda" name the WebGPU device for the script, so the CUDA idiom
(`device = "cuda" if torch.cuda.is_available() else "cpu"`, `.cuda()`, `torch.cuda.*`) runs on
the GPU; it says so once on stderr. `--no-cuda-alias` keeps PyTorch's behaviour without CUDA.
`--device cpu` is a machine without an accelerator (`torch.accelerator.is_available()` False, as
PyTorch's on a CPU-only machine), so a script choosing its device by torch.accelerator stays on the cpu.
A traceback shows the script's frames, as PyTorch users see their code and the failing op:
webtorch's own frames are hidden (WEBTORCH_FULL_TRACEBACK=1 shows them).
"""
import os
import runpy
import sys
import traceback

import webtorch

from . import _torch_alias, distributed
from ._device import set_cpu_only, set_cuda_alias

LIBRARY = os.path.dirname(os.path.abspath(webtorch.__file__)) + os.sep
USAGE = "usage: python -m webtorch [--device {cpu,webgpu}] [--no-cuda-alias] SCRIPT.py [ARGS...]"
NOTICE = "webtorch: \"cuda\" names the WebGPU device in this script (--no-cuda-alias keeps PyTorch's cpu-only cuda)\n"


def _parse(argv):
    device, alias = None, True
    while argv and argv[0].startswith("-"):
        opt = argv.pop(0)
        if opt in ("-h", "--help"):
            print(USAGE + "\n\n" + __doc__.strip().split("\n\n", 1)[1])
            sys.exit(0)
        if opt == "--device" and argv:
            device = argv.pop(0)
        elif opt.startswith("--device="):
            device = opt.partition("=")[2]
        elif opt == "--no-cuda-alias":
            alias = False
        else:
            sys.exit(f"{USAGE}\nwebtorch: unknown option {opt!r}")
    if not argv:
        sys.exit(USAGE)
    return device, alias and device == "webgpu", argv


def _user_frames(te, script, full):
    """Keep TracebackException `te`'s frames from the script's first one on, without webtorch's
    own unless `full` (and so in its chained exceptions); returns how many of webtorch's it hid."""
    stack = list(te.stack)
    first = next((i for i, f in enumerate(stack) if os.path.abspath(f.filename) == script), 0)
    kept = [f for f in stack[first:] if full or not os.path.abspath(f.filename).startswith(LIBRARY)]
    te.stack = traceback.StackSummary.from_list(kept)
    hidden = len(stack) - first - len(kept)
    for chained in (te.__cause__, te.__context__):
        if chained is not None:
            hidden += _user_frames(chained, script, full)
    return hidden


def _report(e, script):
    """Print `e` as `python SCRIPT.py` with PyTorch would: the traceback from the script's frames."""
    te = traceback.TracebackException(type(e), e, e.__traceback__)
    hidden = _user_frames(te, os.path.abspath(script), os.environ.get("WEBTORCH_FULL_TRACEBACK") == "1")
    sys.stderr.write("".join(te.format()))
    if hidden:
        sys.stderr.write(f"({hidden} frames inside webtorch hidden; WEBTORCH_FULL_TRACEBACK=1 shows them)\n")


def main(argv=None):
    device, cuda_alias, argv = _parse(list(sys.argv[1:] if argv is None else argv))
    script = argv[0]
    if not os.path.isfile(script):
        sys.exit(f"webtorch: can't open file {script!r}: no such file")
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:  # torchrun's environment: its engine, PyTorch's c10d
        distributed._engine()
        _torch_alias.set_aside_pytorch()
    _torch_alias.install()
    if device == "cuda":
        sys.exit("webtorch: --device cuda: webtorch has no CUDA backend; --device webgpu makes \"cuda\" name "
                 "the WebGPU device")
    if device is not None:
        try:
            webtorch.set_default_device(device)
        except RuntimeError as e:
            sys.exit(f"webtorch: --device {device}: {e}")
    set_cpu_only(device == "cpu")
    if cuda_alias:
        set_cuda_alias(True)
        sys.stderr.write(NOTICE)
    sys.argv = argv
    sys.path[0] = os.path.dirname(os.path.abspath(script))  # where `python SCRIPT.py` looks first
    try:
        runpy.run_path(script, run_name="__main__")
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as e:
        _report(e, script)
        sys.exit(1)


if __name__ == "__main__":
    main()
