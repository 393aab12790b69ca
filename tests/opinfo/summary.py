"""pytest plugin (registered by tests/conftest.py, so it runs whichever tests are selected): adds up
the OpInfo counts each test reports (through user_properties, so under xdist too) and prints them
per device; WEBTORCH_OPINFO_SUMMARY=path also writes them there as JSON."""
import collections
import json
import os

_COUNTS = collections.defaultdict(collections.Counter)
_COVERAGE = {}


def pytest_runtest_logreport(report):
    if report.when != "call":
        return
    for name, value in report.user_properties:
        if name == "opinfo_coverage":
            _COVERAGE.update(json.loads(value))
        if name == "opinfo":
            op, dev, kind, counts = json.loads(value)
            _COUNTS[dev, kind].update(counts)


def pytest_terminal_summary(terminalreporter):
    if not _COUNTS:
        return
    w = terminalreporter.write_line
    w("")
    w("OpInfo (PyTorch's op_db) against webtorch:")
    if _COVERAGE:
        w(f"  {_COVERAGE['run']} OpInfos run; left out: " +
          "; ".join(f"{n} {reason}" for reason, n in sorted(_COVERAGE["left out"].items())))
    for dev in sorted({d for d, _ in _COUNTS}):
        f, g, e = (_COUNTS[dev, k] for k in ("forward", "grad", "error"))
        w(f"  {dev}: forward {f['passed']} pass / {f['failed']} fail / {f['not_implemented']} not implemented "
          f"(samples); gradient {g['passed']} pass / {g['failed']} fail; error_inputs same type "
          f"{e['same_type']}/{e['total']}, message matches {e['msg_match']}/{e['total']}; "
          f"{f['missing']} ops found missing when run")
    path = os.environ.get("WEBTORCH_OPINFO_SUMMARY")
    if path:
        with open(path, "w") as fh:
            json.dump({"coverage": _COVERAGE, **{f"{d} {k}": dict(c) for (d, k), c in sorted(_COUNTS.items())}},
                      fh, indent=1)
