"""Tensor methods for devices and APIs webtorch does not have, behaving as PyTorch's do without them
(ipu/xpu/mtia, record_stream on the cpu, reinforce, to_padded_tensor of a dense tensor, index's first-class
dims), plus module_load and chalf."""
from .. import _dtype
from ..overrides import handle_torch_function, has_torch_function_variadic
from .registry import register_method

_REINFORCE = """reinforce() was removed.
Use torch.distributions instead.
See https://pytorch.org/docs/main/distributions.html

Instead of:

probs = policy_network(state)
action = probs.multinomial()
next_state, reward = env.step(action)
action.reinforce(reward)
action.backward()

Use:

probs = policy_network(state)
# NOTE: categorical is equivalent to what used to be called multinomial
m = torch.distributions.Categorical(probs)
action = m.sample()
next_state, reward = env.step(action)
loss = -m.log_prob(action) * reward
loss.backward()
"""


def _no_kernel(op, device):
    return NotImplementedError(f"Could not run 'aten::{op}' with arguments from the '{device.type.upper()}' backend. "
                               "This could be because the operator doesn't exist for this backend.")


@register_method
def ipu(self, device=None, non_blocking=False, memory_format=None):
    raise RuntimeError("PyTorch is not linked with support for ipu devices")


@register_method
def xpu(self, device=None, non_blocking=False, memory_format=None):
    raise AssertionError("Torch not compiled with XPU enabled")


@register_method
def mtia(self, device=None, non_blocking=False, memory_format=None):
    raise AssertionError("Torch not compiled with MTIA enabled. Ensure you have `import "
                         "mtia.host_runtime.torch_mtia.dynamic_library` in your python src file and include "
                         "`//mtia/host_runtime/torch_mtia:torch_mtia` as your target dependency!")


@register_method
def record_stream(self, stream):
    """webgpu: nothing to do (one in-order queue: a freed buffer is reused only by later work); the cpu has no
    streams, and raises as PyTorch's."""
    if self.device.type != "webgpu":
        raise _no_kernel("record_stream", self.device)


@register_method
def reinforce(self, reward):
    raise RuntimeError(_REINFORCE)


@register_method
def to_padded_tensor(self, padding, output_size=None):
    """A nested tensor's padded form; webtorch has no nested tensors, and a strided one raises as in PyTorch."""
    raise _no_kernel("to_padded_tensor", self.device)


@register_method
def index(self, positions, dims):
    raise NotImplementedError("Tensor.index binds dims to first-class Dim objects (functorch.dim), which webtorch "
                              "does not have")


@register_method
def module_load(self, other, assign=False):
    """How load_state_dict turns a state dict's value into this parameter's (when swapping): other itself
    (assign) or self with other's values, detached."""
    if has_torch_function_variadic(self, other):
        return handle_torch_function(module_load, (self, other), self, other, assign=assign)
    return other.detach() if assign else self.copy_(other).detach()


@register_method
def chalf(self, memory_format=None):
    """complex32: a dtype webtorch's backends have no kernels for, so this raises their TypeError."""
    return self.to(_dtype.complex32)
