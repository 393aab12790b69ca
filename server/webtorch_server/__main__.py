"""`webtorch-playground` / `python -m webtorch_server`: start the playground server."""

import argparse
from pathlib import Path


def main(argv=None):
    from . import app as app_module, serve

    p = argparse.ArgumentParser(prog="webtorch-playground", description=__doc__)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    p.add_argument("--web-dir", type=Path, default=None, help="playground files (default: <repo>/web)")
    p.add_argument("--node-modules-dir", type=Path, default=None,
                   help="npm packages, Pyodide from <dir>/pyodide (default: <repo>/node_modules)")
    p.add_argument("--wheel-dir", type=Path, default=None, help="webtorch wheels (default: <repo>/dist)")
    p.add_argument("--no-build-wheel", action="store_true",
                   help="do not build a wheel on startup when the wheel dir has none")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="also serve requests whose Host header names NAME (repeatable); "
                        "127.0.0.1, localhost, [::1] and --host's value are always served")
    p.add_argument("--header-timeout", type=float, default=serve.HEADER_TIMEOUT, metavar="S",
                   help="close a connection that sends no complete request head in S seconds "
                        f"(default: {serve.HEADER_TIMEOUT:g})")
    p.add_argument("--limit-concurrency", type=int, default=serve.LIMIT_CONCURRENCY, metavar="N",
                   help="answer 503 past N open connections or requests in flight "
                        f"(default: {serve.LIMIT_CONCURRENCY})")
    p.add_argument("--limit-per-client", type=int, default=serve.LIMIT_PER_CLIENT, metavar="N",
                   help="close a client's connections past N open at once (one IP address, an "
                        f"IPv6 /64; default: {serve.LIMIT_PER_CLIENT})")
    p.add_argument("--log-level", default="info")
    args = p.parse_args(argv)

    application = app_module.create_app(
        web_dir=args.web_dir,
        node_modules_dir=args.node_modules_dir,
        wheel_dir=args.wheel_dir,
        build_wheel=not args.no_build_wheel,
        allowed_hosts=[args.host, *args.allow_host],
    )
    print(f"webtorch playground: http://{app_module.normalize_host(args.host)}:{args.port}/",
          flush=True)
    serve.run(application, args.host, args.port, log_level=args.log_level,
              header_timeout=args.header_timeout, limit_concurrency=args.limit_concurrency,
              limit_per_client=args.limit_per_client)


if __name__ == "__main__":
    main()
