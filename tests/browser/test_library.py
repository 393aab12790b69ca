"""webtorch itself in the browser: the examples, a differential check of ops against PyTorch
(computed natively here), GPU memory released across runs, and the training screenshot.
These need the library (the wheel the server hands out); the playground tests do not."""
import json
import math
import os
import random
import re
from pathlib import Path

import pytest

from pwutil import ROOT, py_json

EXAMPLES = {p.stem: p.read_text() for p in sorted((ROOT / "web" / "examples").glob("*.py"))}


# ---- examples ------------------------------------------------------------------------------

def check_tensor_basics(r, pg):
    out = r["stdout"]
    assert "device: webgpu" in out
    assert "shape: (4, 3, 8, 8)" in out
    assert "x[:, 0, :, :] shape: (4, 8, 8)" in out
    # a.T @ a for a = arange(6).reshape(2, 3)
    assert re.search(r"9\.,\s+12\.,\s+15\.\],\s+\[12\.,\s+17\.,\s+22\.\],\s+\[15\.,\s+22\.,\s+29\.", out), out
    assert re.search(r"tensor\(\[3\.,\s+5\.,\s+7\.\]", out), out
    assert re.search(r"tensor\(5\.", out), out


def check_autograd(r, pg):
    out = r["stdout"].splitlines()
    assert re.match(r"<AddBackward0 object at 0x[0-9a-f]+>", out[0]), out
    assert out[1] == "tensor(14.)", out
    assert out[2] == "['PowBackward0', 'MulBackward0']", out
    labels = pg.page.eval_on_selector_all("#graph svg .graph-node", "ns => ns.map(n => n.dataset.label)")
    for name in ("AddBackward0", "PowBackward0", "MulBackward0", "AccumulateGrad"):
        assert name in labels, labels
    assert labels.count("AccumulateGrad") == 1  # x is one leaf, reached twice


def check_custom_net(r, pg):
    out = r["stdout"]
    assert "CustomNet(" in out and "Conv2d(3, 16, kernel_size=(3, 3)" in out and "BatchNorm2d(16" in out
    assert "MaxPool2d(" in out
    assert "parameters: 480" in out            # conv 16*3*3*3 + 16, batchnorm 2*16
    assert "output shape: (2, 16, 7, 7)" in out
    assert "conv1.weight.grad shape: (16, 3, 3, 3)" in out
    g = pg.page.evaluate("() => window.webtorchPlayground.graphData()")
    labels = [n["label"] for n in g["nodes"]]
    assert labels.count("AccumulateGrad") == 4, labels   # conv weight, bias; bn weight, bias
    into_loss = [g["nodes"][a]["label"] for a, b in g["edges"] if b == 0]
    assert into_loss == ["MeanBackward0"], into_loss


def check_train_digits(r, pg):
    accs = [float(m) for m in re.findall(r"test accuracy ([0-9.]+)", r["stdout"])]
    losses = [float(m) for m in re.findall(r"loss ([0-9.]+)", r["stdout"])]
    assert len(accs) == 8, r["stdout"]
    assert accs[-1] > 0.85, r["stdout"]
    assert losses[-1] < losses[0]
    pts = pg.page.evaluate("() => window.webtorchPlayground.plotData()")
    assert len(pts["loss"]) == 8 * 15
    assert pts["loss"][0][1] > 1.5 and pts["loss"][-1][1] < 0.6, pts["loss"][::15]
    assert len(pts["test accuracy"]) == 8
    labels = pg.page.eval_on_selector_all("#graph svg .graph-node", "ns => ns.map(n => n.dataset.label)")
    assert "AccumulateGrad" in labels and len(labels) >= 8, labels


def check_compile(r, pg):
    out = r["stdout"]
    runs = {k: re.search(rf"{k}:\s+([0-9.]+) ms/step, loss ([0-9.]+)", out) for k in ("eager", "compiled")}
    assert all(runs.values()) and "device: webgpu" in out, out
    eager, compiled = (float(runs[k].group(2)) for k in ("eager", "compiled"))
    assert abs(eager - compiled) < 1e-3 and eager < 2.0, out   # the same loop, the same numbers; it learned
    assert re.search(r"speedup:\s+[0-9.]+x", out), out


CHECKS = {
    "01_tensor_basics": check_tensor_basics,
    "02_autograd": check_autograd,
    "03_custom_net": check_custom_net,
    "04_train_digits": check_train_digits,
    "05_compile": check_compile,
}


def test_every_example_has_a_check():
    assert set(EXAMPLES) == set(CHECKS)
    for code in EXAMPLES.values():
        assert code.startswith("# title: ")


@pytest.mark.parametrize("name", [n for n in CHECKS if n != "04_train_digits"])
def test_example_runs(playground, webtorch_loaded, name):
    r = playground.run_ok(EXAMPLES[name])
    CHECKS[name](r, playground)


def test_train_digits_with_run_button_and_screenshot(playground, webtorch_loaded, tmp_path):
    """The training example, started like a person would (picker + Run button); a screenshot of
    the page after training (loss curve drawn). WEBTORCH_UPDATE_DOCS=1 saves it as
    docs/playground.png, the picture the README shows."""
    page = playground.page
    page.once("dialog", lambda d: d.accept())  # asked when the editor holds edited code
    page.select_option("#examples", "04_train_digits")
    assert page.evaluate("() => window.webtorchPlayground.getCode()") == EXAMPLES["04_train_digits"]
    page.click("#run")
    page.wait_for_function("() => window.webtorchPlayground.running", timeout=10_000)
    page.wait_for_function("() => !window.webtorchPlayground.running", timeout=900_000, polling=500)
    out = page.inner_text("#output")
    assert "Traceback" not in out, out
    r = {"stdout": out, "stderr": ""}
    check_train_digits(r, playground)
    page.wait_for_timeout(300)  # let the plot's last frame draw
    shot = (ROOT / "docs" if os.environ.get("WEBTORCH_UPDATE_DOCS") == "1" else tmp_path) / "playground.png"
    shot.parent.mkdir(exist_ok=True)
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 20_000


def test_nan_int64_overflow_and_f16_in_the_browser(playground, webtorch_loaded):
    """Tint/SwiftShader as well as lavapipe: NaN/inf survive fused chains, an int64 result out
    of int32 range raises at the sync, float16 fuses (where the adapter has shader-f16)."""
    code = r'''
import json, math
import webtorch as torch
from webtorch.backends import webgpu as wg
x = torch.tensor([float("nan"), float("inf"), 1.0], device="webgpu")
y = torch.tensor([2.0, 3.0, float("inf")], device="webgpu")
r = {"sub": (x - x).tolist(), "negadd": (x + (-x)).tolist(), "assoc": ((x + y) - y).tolist(),
     "ne": (x != x).tolist()}
try:
    (torch.tensor([2**31 - 1], device="webgpu") + 1).item()
    r["i64"] = "no error"
except RuntimeError as e:
    r["i64"] = str(e)
r["i64_after"] = (torch.tensor([5], device="webgpu") * 3).item()
if "shader-f16" in wg.adapter_info()["features"]:
    r["f16"] = (torch.ones(2, device="webgpu").half() * 3 + 1).float().tolist()
print(json.dumps(r, default=str).replace("NaN", '"nan"').replace("Infinity", '"inf"'))
'''
    j = py_json(playground.run_ok(code))
    assert j["sub"] == ["nan", "nan", 0.0] and j["negadd"] == ["nan", "nan", 0.0], j
    assert j["assoc"] == ["nan", "inf", "nan"] and j["ne"] == [True, False, False], j
    assert j["i64"].startswith("int64 overflow on webgpu") and j["i64_after"] == 15, j
    assert j.get("f16", [4.0, 4.0]) == [4.0, 4.0], j


def test_library_device_and_memory_released(playground, webtorch_loaded):
    code = r'''
import gc, json
import webtorch as torch
from webtorch.backends import webgpu as wg
counters = getattr(torch.webgpu, "counters", wg.counters)
adapter_info = getattr(torch.webgpu, "adapter_info", wg.adapter_info)
def once():
    x = torch.randn(128, 128, device="webgpu", requires_grad=True)
    y = (x @ x).relu().sum()
    y.backward()
    return y.item()
once()
gc.collect()
base = counters()["allocated_bytes"]
for _ in range(5):
    once()
gc.collect()
info = adapter_info()
print(json.dumps({"available": torch.webgpu.is_available(), "backend": info["backend"],
                  "base": base, "after": counters()["allocated_bytes"]}))
'''
    j = py_json(playground.run_ok(code))
    assert j["available"] is True and j["backend"] == "WebGPU"
    assert j["after"] <= j["base"], j


# ---- differential check against PyTorch ----------------------------------------------------

def _data():
    rnd = random.Random(1234)
    mat = lambda r, c: [[round(rnd.uniform(-2, 2), 4) for _ in range(c)] for _ in range(r)]
    return {
        "a": mat(4, 6), "b": mat(4, 6), "m": mat(6, 5), "v": [round(rnd.uniform(-1, 1), 4) for _ in range(6)],
        "t": [rnd.randrange(6) for _ in range(4)],
        "img": [[mat(6, 6) for _ in range(2)]], "w": [mat(3, 3) for _ in range(2) for _ in range(3)],
    }


OPS = {
    "add": "a + b", "sub": "a - b", "mul": "a * b", "div": "a / (b.abs() + 1)",
    "scalar_affine": "a * 0.5 + 1.0", "pow": "a.abs() ** 1.5", "neg": "-a",
    "exp": "a.exp()", "log": "(a.abs() + 0.1).log()", "sqrt": "a.abs().sqrt()",
    "tanh": "a.tanh()", "sigmoid": "torch.sigmoid(a)", "relu": "F.relu(a)",
    "matmul": "a @ m", "sum_dim": "a.sum(dim=1)", "mean": "a.mean()", "max_dim": "a.max(dim=1).values",
    "argmax": "a.argmax(dim=1)", "softmax": "F.softmax(a, dim=-1)", "log_softmax": "F.log_softmax(a, dim=1)",
    "transpose": "a.t().contiguous()", "index": "a[:, 1]", "slice": "a[1:, ::2]", "broadcast": "a + v",
    "cat": "torch.cat([a, b], dim=0)", "where": "torch.where(a > 0, a, b)", "compare": "(a > b).float()",
    "cross_entropy": "F.cross_entropy(a, t)", "mse_loss": "F.mse_loss(a, b)",
    "conv2d": "F.conv2d(img, w.reshape(3, 2, 3, 3))", "max_pool2d": "F.max_pool2d(img, 2)",
}
GRADS = {
    "grad_matmul_tanh": ("(a @ m).tanh().sum()", ["a", "m"]),
    "grad_cross_entropy": ("F.cross_entropy(a @ m, t % 5)", ["a", "m"]),
    "grad_softmax_mul": ("(F.softmax(a, dim=1) * b).sum()", ["a", "b"]),
    "grad_conv_relu": ("F.relu(F.conv2d(img, w.reshape(3, 2, 3, 3))).mean()", ["img", "w"]),
    "grad_pow_broadcast": ("((a + v) ** 2).mean()", ["a", "v"]),
}

EVAL = r'''
import json
import webtorch as torch
import webtorch.nn.functional as F
DATA, OPS, GRADS, DEV = json.loads(_DATA), json.loads(_OPS), json.loads(_GRADS), _DEV
def inputs(grad=()):
    ns = {k: torch.tensor(v, dtype=torch.int64 if k == "t" else torch.float32, device=DEV,
                          requires_grad=(k in grad)) for k, v in DATA.items()}
    ns.update(torch=torch, F=F)
    return ns
res = {}
for name, expr in OPS.items():
    try:
        out = eval(expr, inputs())
        res[name] = {"value": out.tolist(), "dtype": str(out.dtype).split(".")[-1], "device": out.device.type}
    except Exception as e:
        res[name] = {"error": f"{type(e).__name__}: {e}"}
for name, (expr, wrt) in GRADS.items():
    try:
        ns = inputs(wrt)
        loss = eval(expr, ns)
        loss.backward()
        res[name] = {"value": loss.item(), "grads": {k: ns[k].grad.tolist() for k in wrt}}
    except Exception as e:
        res[name] = {"error": f"{type(e).__name__}: {e}"}
print(json.dumps(res))
'''


def _flat(x):
    if isinstance(x, (list, tuple)):
        for e in x:
            yield from _flat(e)
    else:
        yield x


def _close(got, want, rtol=1e-4, atol=1e-5):
    g, w = list(_flat(got)), list(_flat(want))
    assert len(g) == len(w), (len(g), len(w))
    for x, y in zip(g, w):
        assert math.isclose(float(x), float(y), rel_tol=rtol, abs_tol=atol), (x, y)


def _native(data):
    import torch
    import torch.nn.functional as F

    def inputs(grad=()):
        ns = {k: torch.tensor(v, dtype=torch.int64 if k == "t" else torch.float32,
                              requires_grad=(k in grad)) for k, v in data.items()}
        ns.update(torch=torch, F=F)
        return ns
    res = {}
    for name, expr in OPS.items():
        out = eval(expr, inputs())
        res[name] = {"value": out.tolist(), "dtype": str(out.dtype).split(".")[-1]}
    for name, (expr, wrt) in GRADS.items():
        ns = inputs(wrt)
        loss = eval(expr, ns)
        loss.backward()
        res[name] = {"value": loss.item(), "grads": {k: ns[k].grad.tolist() for k in wrt}}
    return res


@pytest.fixture(scope="module", params=["webgpu", "cpu"])
def differential(request, playground, webtorch_loaded):
    data = _data()
    code = (f"_DATA = {json.dumps(json.dumps(data))}\n_OPS = {json.dumps(json.dumps(OPS))}\n"
            f"_GRADS = {json.dumps(json.dumps(GRADS))}\n_DEV = {request.param!r}\n" + EVAL)
    browser = py_json(playground.run_ok(code))
    return request.param, browser, _native(data)


@pytest.mark.parametrize("name", list(OPS) + list(GRADS))
def test_ops_match_pytorch(differential, name):
    device, got, want = differential
    g, w = got[name], want[name]
    assert "error" not in g, f"{name} on {device}: {g.get('error')}"
    _close(g["value"], w["value"])
    if "dtype" in w:
        assert g["dtype"] == w["dtype"]
        assert g["device"] == device
    for k, gw in w.get("grads", {}).items():
        _close(g["grads"][k], gw)
