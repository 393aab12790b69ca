"""webtorch.webgpu: the public device module and custom WGSL ops (forward and gradient vs
PyTorch, node names, parameters, custom shapes/dtypes, errors)."""
import os

import numpy as np
import pytest

os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

import torch  # noqa: E402  (the oracle: a test dependency, never a reason to skip this tier)
import webtorch as wt  # noqa: E402

pytestmark = pytest.mark.usefixtures("webgpu")  # conftest: skipped only by WEBTORCH_SKIP_WEBGPU=1

SILU = """
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lix: u32) {
  let i = flat_index(wid, nwg, lix);
  if (i >= out_numel()) { return; }
  let x = in0[i];
  out[i] = x / (1.0 + exp(-x));
}
"""
SILU_BWD = """
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lix: u32) {
  let i = flat_index(wid, nwg, lix);
  if (i >= out_numel()) { return; }
  let x = in0[i];
  let s = 1.0 / (1.0 + exp(-x));
  out[i] = in1[i] * s * (1.0 + x * (1.0 - s));
}
"""
silu_backward = wt.webgpu.custom_op("SiLUBackwardKernel", SILU_BWD)
silu = wt.webgpu.custom_op("SiLU", SILU, backward=lambda ctx, g: silu_backward(ctx.saved_tensors[0], g))
rng = np.random.default_rng(0)


def test_device_module():
    assert wt.webgpu.is_available() and wt.webgpu.device_count() == 1
    assert isinstance(wt.webgpu.get_device_name(), str) and wt.webgpu.get_device_name()
    info = wt.webgpu.adapter_info()
    assert "adapter_type" in info and "limits" in info
    x = wt.ones(1000, device="webgpu")
    assert wt.webgpu.memory_allocated() >= 4000
    assert wt.webgpu.memory_reserved() >= wt.webgpu.memory_allocated()
    del x
    wt.webgpu.synchronize()
    wt.webgpu.empty_cache()
    assert wt.webgpu.memory_cached() == 0
    assert {"dispatches", "submits", "pipelines"} <= set(wt.webgpu.counters())


@pytest.mark.parametrize("shape", [(7,), (5, 9), (3, 70000)])
def test_custom_silu_forward_and_grad_match_torch(shape):
    a = rng.standard_normal(shape).astype(np.float32) * 4
    g = rng.standard_normal(shape).astype(np.float32)
    x = wt.tensor(a, device="webgpu", requires_grad=True)
    xt = torch.tensor(a, requires_grad=True)
    y = silu(x)
    yt = torch.nn.functional.silu(xt)
    assert y.grad_fn.name() == "SiLUBackward"
    np.testing.assert_allclose(y.detach().cpu().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-6)
    (y * wt.tensor(g, device="webgpu")).sum().backward()
    (yt * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_custom_op_strided_input_params_shape_and_dtype():
    rowsum = wt.webgpu.custom_op("RowSumScaled", """
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let r = gid.x;
  if (r >= out_numel()) { return; }
  let cols = in_numel(0u) / out_numel();
  var s = 0.0;
  for (var c = 0u; c < cols; c = c + 1u) { s = s + in0[r * cols + c]; }
  out[r] = i32(s * param_f32(0u)) + param_i32(1u);
}
""", output_shape=lambda x: (x.shape[0],), output_dtype=wt.int32, workgroup_size=64)
    a = rng.integers(-5, 5, (6, 4)).astype(np.float32)
    x = wt.tensor(a, device="webgpu")
    got = rowsum(x.t().contiguous().t(), params=(2.0, -3)).tolist()    # a strided input is made contiguous
    assert got == [int(v) for v in (a.sum(1) * 2 - 3)]
    assert rowsum(x, params=(1.0, 0)).dtype == wt.int32


def test_custom_op_errors():
    with pytest.raises(RuntimeError, match="webgpu"):
        silu(wt.ones(3))                                   # a cpu tensor
    with pytest.raises(TypeError, match="dtype"):
        silu(wt.ones(3, dtype=wt.int32, device="webgpu"))  # float32 expected
    with pytest.raises(TypeError, match="takes 1 tensor inputs"):
        silu(wt.ones(3, device="webgpu"), wt.ones(3, device="webgpu"))
    bad = wt.webgpu.custom_op("Bad", "@compute @workgroup_size(WG) fn main() { out[0] = nope; }")
    with pytest.raises(RuntimeError, match="Bad"):
        bad(wt.ones(3, device="webgpu"))
    y = wt.webgpu.custom_op("NoGrad", SILU)(wt.ones(3, device="webgpu", requires_grad=True))
    assert y.grad_fn is None and not y.requires_grad
