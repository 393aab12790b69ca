# title: CustomNet: Conv2d -> BatchNorm2d -> ReLU -> MaxPool2d
import torch
import torch.nn as nn
import torch.nn.functional as F

device = "webgpu" if torch.webgpu.is_available() else "cpu"


class CustomNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, kernel_size=3)
        self.bn1 = nn.BatchNorm2d(16)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        return x


torch.manual_seed(0)
model = CustomNet().to(device)
print(model)
print("parameters:", sum(p.numel() for p in model.parameters()))

inputs = torch.randn(2, 3, 16, 16, device=device)
out = model(inputs)
print("output shape:", tuple(out.shape))
loss = out.mean()
loss.backward()
print("conv1.weight.grad shape:", tuple(model.conv1.weight.grad.shape))
show_graph(loss, title="CustomNet loss")
