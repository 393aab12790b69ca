"""A two-layer graph convolutional network (Kipf & Welling) for node classification on a ring
of cliques: the normalized adjacency D^-1/2 (A + I) D^-1/2 as a sparse COO tensor, torch.sparse.mm
in the forward pass, Adam with weight decay, early stopping on a validation mask. No RNG."""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


def ring_of_cliques(n_cliques=4, size=5):
    edges = []
    for c in range(n_cliques):
        base = c * size
        edges += [(base + i, base + j) for i in range(size) for j in range(size) if i != j]
        nxt = ((c + 1) % n_cliques) * size
        edges += [(base, nxt + 1), (nxt + 1, base)]
    labels = torch.arange(n_cliques).repeat_interleave(size)
    return torch.tensor(edges).t(), labels, n_cliques * size


def normalized_adjacency(edge_index, n):
    loops = torch.arange(n).unsqueeze(0).repeat(2, 1)
    idx = torch.cat([edge_index, loops], dim=1)
    values = torch.ones(idx.size(1))
    deg = torch.zeros(n).index_add_(0, idx[0], values)
    d_inv_sqrt = deg.pow(-0.5)
    values = d_inv_sqrt[idx[0]] * values * d_inv_sqrt[idx[1]]
    return torch.sparse_coo_tensor(idx, values, (n, n)).coalesce()


class GCNLayer(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_features))

    def forward(self, x, adj):
        return torch.sparse.mm(adj, self.linear(x)) + self.bias


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nclass):
        super().__init__()
        self.gc1 = GCNLayer(nfeat, nhid)
        self.gc2 = GCNLayer(nhid, nclass)

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        return F.log_softmax(self.gc2(x, adj), dim=1)


def main():
    edge_index, labels, n = ring_of_cliques()
    adj = normalized_adjacency(edge_index, n)
    print("adjacency", adj.layout, tuple(adj.shape), "nnz", adj._nnz(), "row sums",
          [round(v, 3) for v in torch.sparse.sum(adj, dim=1).to_dense()[:5].tolist()])
    features = torch.stack([torch.cos(torch.arange(n) * (k + 1) * 0.61) for k in range(6)], dim=1)
    train_mask = torch.arange(n) % 5 < 2
    val_mask = torch.arange(n) % 5 == 2
    model = GCN(6, 8, 4)
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(0.5 * torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.9 + i).view_as(p))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=5e-4)
    best, best_state, patience = float("inf"), None, 0
    for epoch in range(40):
        model.train()
        optimizer.zero_grad()
        out = model(features, adj)
        loss = F.nll_loss(out[train_mask], labels[train_mask])
        loss.backward()
        optimizer.step()
        model.eval()
        with torch.no_grad():
            out = model(features, adj)
            val_loss = F.nll_loss(out[val_mask], labels[val_mask]).item()
            acc = (out.argmax(1) == labels)[val_mask].float().mean().item()
        if epoch % 5 == 0:
            print(f"epoch {epoch:2d} train {loss.item():.4f} val {val_loss:.4f} val_acc {acc:.2f}")
        if val_loss < best - 1e-4:
            best, patience = val_loss, 0
            best_state = {k: v.clone() for k, v in model.state_dict().items()}
        else:
            patience += 1
            if patience == 5:
                print("early stop at epoch", epoch)
                break
    model.load_state_dict(best_state)
    with torch.no_grad():
        pred = model(features, adj).argmax(1)
    print("best val loss %.4f" % best, "predictions", pred.tolist())
    return 0


if __name__ == "__main__":
    sys.exit(main())
