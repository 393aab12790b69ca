# title: Train an MLP on the 8x8 digits (live loss plot)
import struct
import torch
import torch.nn as nn
import torch.nn.functional as F

device = "webgpu" if torch.webgpu.is_available() else "cpu"
torch.manual_seed(0)

# scikit-learn's 8x8 digits (1797 images), shipped with the playground as /data/digits.bin
raw = open("/data/digits.bin", "rb").read()
n, d = struct.unpack_from("<II", raw, 4)
X = torch.tensor(list(raw[12:12 + n * d]), dtype=torch.float32).reshape(n, d) / 16.0
y = torch.tensor(list(raw[12 + n * d:12 + n * d + n]), dtype=torch.int64)
X, y = X.to(device), y.to(device)
X_train, y_train, X_test, y_test = X[:1500], y[:1500], X[1500:], y[1500:]
print(f"train {tuple(X_train.shape)}  test {tuple(X_test.shape)}  on {device}")

model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10)).to(device)
opt = torch.optim.Adam(model.parameters(), lr=0.01)

batch = 100
for epoch in range(8):
    perm = torch.randperm(1500, device=device)
    for i in range(0, 1500, batch):
        idx = perm[i:i + batch]
        loss = F.cross_entropy(model(X_train[idx]), y_train[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        plot(loss)                       # live loss curve
    with torch.no_grad():
        acc = (model(X_test).argmax(dim=1) == y_test).float().mean().item()
    plot_point("test accuracy", (epoch + 1) * 15, acc)
    print(f"epoch {epoch + 1}: loss {loss.item():.4f}  test accuracy {acc:.3f}")

show_graph(loss, title="loss of the last batch")
