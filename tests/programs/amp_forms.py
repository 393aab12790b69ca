import warnings

import torch
import torch.cuda.amp
from torch.cuda.amp import GradScaler, autocast, custom_bwd, custom_fwd
from torch.amp import GradScaler as AmpScaler, autocast as amp_autocast

warnings.simplefilter("always")


def future(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = fn()
    print([str(x.message) for x in w if x.category is FutureWarning])
    return r


a = future(lambda: autocast())
print(isinstance(a, torch.amp.autocast), torch.autocast is torch.amp.autocast is amp_autocast)
future(lambda: torch.cuda.amp.autocast(enabled=False))
s = future(lambda: GradScaler(init_scale=4.0))
print(isinstance(s, torch.amp.GradScaler), issubclass(torch.cuda.amp.GradScaler, AmpScaler))
future(lambda: AmpScaler("cuda"))
future(lambda: torch.amp.autocast("cuda"))


class Square(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="cpu", cast_inputs=torch.float32)
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        print("forward sees", x.dtype, w.dtype, torch.is_autocast_enabled("cpu"))
        return x @ w

    @staticmethod
    @torch.amp.custom_bwd(device_type="cpu")
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        print("backward autocast", torch.is_autocast_enabled("cpu"), g.dtype)
        return g @ w.t(), x.t() @ g


x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
w = torch.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
with torch.autocast("cpu", dtype=torch.float16):
    h = x @ w
    y = Square.apply(h, w)
    print(h.dtype, y.dtype)
y.sum().backward()
print(x.grad, w.grad)
future(lambda: custom_fwd(cast_inputs=torch.float32))
future(lambda: custom_bwd(lambda ctx, g: g))
