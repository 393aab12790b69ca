"""Run an unmodified PyTorch script on webtorch: `import torch` in it imports webtorch.

    python -m webtorch [--device webgpu] SCRIPT.py [ARGS...]
    webtorch-run [--device webgpu] SCRIPT.py [ARGS...]

The script runs as `__main__` with `sys.argv == [SCRIPT.py, ARGS...]` and its directory first
on sys.path, as `python SCRIPT.py ARGS...` would run it; its exit status is the command's.
`--device` (before the script) sets the default device (`torch.set_default_device`).
"""
import os
import runpy
import sys

import webtorch

from . import _torch_alias

USAGE = "usage: python -m webtorch [--device {cpu,webgpu}] SCRIPT.py [ARGS...]"


def _parse(argv):
    device = None
    while argv and argv[0].startswith("-"):
        opt = argv.pop(0)
        if opt in ("-h", "--help"):
            print(USAGE + "\n\n" + __doc__.strip().split("\n\n", 1)[1])
            sys.exit(0)
        if opt == "--device" and argv:
            device = argv.pop(0)
        elif opt.startswith("--device="):
            device = opt.partition("=")[2]
        else:
            sys.exit(f"{USAGE}\nwebtorch: unknown option {opt!r}")
    if not argv:
        sys.exit(USAGE)
    return device, argv


def main(argv=None):
    device, argv = _parse(list(sys.argv[1:] if argv is None else argv))
    script = argv[0]
    if not os.path.isfile(script):
        sys.exit(f"webtorch: can't open file {script!r}: no such file")
    _torch_alias.install()
    if device is not None:
        try:
            webtorch.set_default_device(device)
        except RuntimeError as e:
            sys.exit(f"webtorch: --device {device}: {e}")
    sys.argv = argv
    sys.path[0] = os.path.dirname(os.path.abspath(script))  # where `python SCRIPT.py` looks first
    try:
        runpy.run_path(script, run_name="__main__")
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as e:
        # report as `python SCRIPT.py` does: the traceback starts at the script's own frames
        tb, path = e.__traceback__, os.path.abspath(script)
        while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != path:
            tb = tb.tb_next
        tb = tb or e.__traceback__
        sys.excepthook(type(e), e.with_traceback(tb), tb)
        sys.exit(1)


if __name__ == "__main__":
    main()
