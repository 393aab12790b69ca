# title: Autograd: y = x**3 + 2x
import torch

x = torch.tensor(2.0, requires_grad=True)
y = x ** 3 + 2 * x
print(y.grad_fn)          # the node that made y
y.backward()
print(x.grad)             # dy/dx = 3x^2 + 2 = 14 at x = 2

# The graph behind y: AddBackward0 <- PowBackward0, MulBackward0 <- AccumulateGrad (x)
y = x ** 3 + 2 * x
show_graph(y, title="y = x**3 + 2*x")
print([type(f).__name__ if f is not None else None for f, _ in y.grad_fn.next_functions])
