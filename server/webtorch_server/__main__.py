"""`webtorch-playground` / `python -m webtorch_server`: start the playground server."""

import argparse
from pathlib import Path


def main(argv=None):
    from . import app as app_module

    p = argparse.ArgumentParser(prog="webtorch-playground", description=__doc__)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    p.add_argument("--web-dir", type=Path, default=None, help="playground files (default: <repo>/web)")
    p.add_argument("--node-modules-dir", type=Path, default=None,
                   help="npm packages, Pyodide from <dir>/pyodide (default: <repo>/node_modules)")
    p.add_argument("--wheel-dir", type=Path, default=None, help="webtorch wheels (default: <repo>/dist)")
    p.add_argument("--no-build-wheel", action="store_true",
                   help="do not build a wheel on startup when the wheel dir has none")
    p.add_argument("--log-level", default="info")
    args = p.parse_args(argv)

    import uvicorn

    application = app_module.create_app(
        web_dir=args.web_dir,
        node_modules_dir=args.node_modules_dir,
        wheel_dir=args.wheel_dir,
        build_wheel=not args.no_build_wheel,
    )
    print(f"webtorch playground: http://{args.host}:{args.port}/", flush=True)
    uvicorn.run(application, host=args.host, port=args.port, log_level=args.log_level)


if __name__ == "__main__":
    main()
