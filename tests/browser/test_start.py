"""The playground's start from the shipped Python snapshot (web/tools/make_snapshot.py, built by
`make install` and by the browser tests' server fixture): a first visit restores Python with
webtorch imported instead of starting it, then runs code as usual; a snapshot that fails to
restore falls back to starting Python."""
import gzip

from pwutil import open_playground, py_json

CODE = """\
import importlib.metadata, json, os
import torch
import torch.nn.functional as F
x = torch.arange(6.).reshape(2, 3).to("webgpu")
print(json.dumps({"mm": (x @ x.T).tolist(), "device": str(x.device),
                  "softmax": F.softmax(torch.tensor([0.0, 1.0]), 0).tolist(),
                  "version": importlib.metadata.version("webtorch"), "files": os.path.exists(torch.__file__)}))
"""


def stage_names(pg):
    return [name for name, _ in pg.info["stages"]]


def check_runs(pg):
    out = py_json(pg.run_ok(CODE))
    assert out["mm"] == [[5.0, 14.0], [14.0, 50.0]] and out["device"] == "webgpu:0"
    assert abs(out["softmax"][0] - 0.2689414) < 1e-6 and out["files"] and out["version"]


def test_first_visit_restores_the_shipped_snapshot(playground, webtorch_loaded):
    names = stage_names(playground)
    assert "python restored (shipped)" in names and "webtorch imported" not in names, names
    assert not any("/wheels/" in u for u in playground.requests)  # the unpacked files come instead
    check_runs(playground)
    assert playground.errors == [], playground.errors


def test_the_examples_kernels_are_built_while_python_starts(playground, webtorch_loaded):
    """make_snapshot.py records the kernels the examples build on this adapter (SwiftShader); the
    page builds them from the GPU device's arrival on (`warm` resolves to their count)."""
    shipped = playground.page.evaluate("""async () => {
      const info = await (await fetch('/api/wheel')).json();
      return info.kernels ? (await (await fetch(info.kernels)).json()).kernels.length : 0;
    }""")
    assert shipped > 20
    assert playground.page.evaluate("() => window.webtorchPlayground.warm") >= shipped


def test_a_corrupt_snapshot_falls_back_to_starting_python(browser, server):
    def corrupt(context):
        context.route("**/dist/python-*.snapshot.gz",
                      lambda r: r.fulfill(status=200, body=gzip.compress(b"not a snapshot" * 100)))

    pg = open_playground(browser, server, setup=corrupt)
    try:
        names = stage_names(pg)
        assert "python restored (shipped)" not in names and "webtorch imported" in names, names
        check_runs(pg)
    finally:
        pg.context.close()
