"""A model goes PyTorch -> browser -> ONNX without a server round trip: a .pt written by PyTorch is
uploaded into the page and loaded there; a model trained in the page (WebGPU) is exported with
torch.onnx.export, downloaded through the Files panel's link, and runs natively in onnxruntime."""
import io
import json

import numpy as np
import onnx
import onnxruntime as ort
import torch

CODE = '''\
import json, torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"
lin = nn.Linear(4, 3)
lin.load_state_dict(torch.load("torch_linear.pt"))  # written by PyTorch, uploaded
probe = torch.arange(8.0).view(2, 4) / 8

torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Flatten(), nn.Linear(4 * 4 * 4, 3)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(16, 1, 8, 8, device=device)
y = torch.randint(0, 3, (16,), device=device)
for step in range(5):
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
model.eval()
torch.onnx.export(model, (x[:2],), "model.onnx", input_names=["x"], output_names=["y"],
                  dynamic_axes={"x": {0: "batch"}})
print(json.dumps({"linear": lin(probe).tolist(), "x": x[:5].cpu().tolist(),
                  "y": model(x[:5]).detach().cpu().tolist(), "device": str(device)}))
'''


def test_pt_upload_train_export_onnx_download(playground, webtorch_loaded):
    page = playground.page
    torch.manual_seed(1)
    tlin = torch.nn.Linear(4, 3)
    buf = io.BytesIO()
    torch.save(tlin.state_dict(), buf)
    page.set_input_files("#upload", files=[
        {"name": "torch_linear.pt", "mimeType": "application/octet-stream", "buffer": buf.getvalue()}])
    page.wait_for_function("() => window.webtorchPlayground.files().some(f => f.name === 'torch_linear.pt')")

    out = json.loads(playground.run_ok(CODE)["stdout"].strip().splitlines()[-1])
    assert out["device"].startswith("webgpu")
    with torch.no_grad():
        want = tlin(torch.arange(8.0).view(2, 4) / 8)
    np.testing.assert_allclose(out["linear"], want.numpy(), rtol=1e-5, atol=1e-6)

    page.wait_for_function("() => window.webtorchPlayground.files().some(f => f.name === 'model.onnx')")
    with page.expect_download() as dl:
        page.locator("#files a", has_text="model.onnx").click()
    assert dl.value.suggested_filename == "model.onnx"
    with open(dl.value.path(), "rb") as f:
        data = f.read()
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    got = sess.run(["y"], {"x": np.array(out["x"], dtype=np.float32)})[0]  # batch 5: the dynamic axis
    np.testing.assert_allclose(got, np.array(out["y"]), rtol=2e-3, atol=2e-4)  # SwiftShader vs ORT

    playground.run_ok("import os\nos.remove('model.onnx'); os.remove('torch_linear.pt')")
    assert playground.errors == [], playground.errors
