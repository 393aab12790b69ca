"""A graph attention network (pytorch/examples' gat structure): multi-head scores a^T[Wh_i || Wh_j] by broadcast
(`source + target.mT`), LeakyReLU, masking non-edges with torch.where(adj > 0, e, -9e16 * ones_like(e)), softmax,
heads averaged, ELU, log_softmax, NLLLoss on index masks, Adam with weight decay; Cora-style loading: an int64
sparse COO adjacency plus torch.eye, features scaled by a sparse diagonal (`diag(...).to_sparse() @ features`);
the device from torch.accelerator. Graph and weights by formula (no RNG; dropout 0 by its flag)."""
import argparse

import torch
import torch.nn.functional as F
from torch import nn
from torch.optim import Adam


class GraphAttentionLayer(nn.Module):
    def __init__(self, in_features, out_features, n_heads, concat=False, dropout=0.4, leaky_relu_slope=0.2):
        super().__init__()
        self.n_heads, self.concat, self.dropout = n_heads, concat, dropout
        self.n_hidden = out_features // n_heads if concat else out_features
        self.out_features = out_features
        self.W = nn.Parameter(torch.empty(size=(in_features, self.n_hidden * n_heads)))
        self.a = nn.Parameter(torch.empty(size=(n_heads, 2 * self.n_hidden, 1)))
        self.leakyrelu = nn.LeakyReLU(leaky_relu_slope)
        with torch.no_grad():
            for i, p in enumerate((self.W, self.a)):
                p.copy_(0.3 * torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 0.71 + i).view_as(p))

    def forward(self, h, adj_mat):
        n_nodes = h.shape[0]
        h_transformed = F.dropout(torch.mm(h, self.W), self.dropout, training=self.training)
        h_transformed = h_transformed.view(n_nodes, self.n_heads, self.n_hidden).permute(1, 0, 2)
        source_scores = torch.matmul(h_transformed, self.a[:, :self.n_hidden, :])
        target_scores = torch.matmul(h_transformed, self.a[:, self.n_hidden:, :])
        e = self.leakyrelu(source_scores + target_scores.mT)
        e = torch.where(adj_mat > 0, e, -9e16 * torch.ones_like(e))
        attention = F.dropout(F.softmax(e, dim=-1), self.dropout, training=self.training)
        h_prime = torch.matmul(attention, h_transformed)
        if self.concat:
            return h_prime.permute(1, 0, 2).contiguous().view(n_nodes, self.out_features)
        return h_prime.mean(dim=0)


class GAT(nn.Module):
    def __init__(self, in_features, n_hidden, n_heads, num_classes, concat=False, dropout=0.4):
        super().__init__()
        self.gat1 = GraphAttentionLayer(in_features, n_hidden, n_heads, concat, dropout)
        self.gat2 = GraphAttentionLayer(n_hidden, num_classes, 1, False, dropout)

    def forward(self, input_tensor, adj_mat):
        x = F.elu(self.gat1(input_tensor, adj_mat))
        return F.log_softmax(self.gat2(x, adj_mat), dim=1)


def load_graph(n=40, f=12, classes=3):
    labels = torch.arange(n) % classes
    j = torch.arange(f)
    features = ((j.view(1, f) % classes == labels.view(n, 1)) | ((torch.arange(n).view(n, 1) + j) % 5 == 0)).float()
    scale_vector = 1 / torch.sum(features, dim=1)
    scale_vector[scale_vector == float('inf')] = 0
    features = torch.diag(scale_vector).to_sparse() @ features
    src = torch.arange(n).repeat(2)
    dst = torch.cat([(torch.arange(n) + classes) % n, (torch.arange(n) * 7 + 1) % n])
    edges = torch.stack([src, dst])
    adj_mat = torch.sparse_coo_tensor(edges, torch.ones(edges.shape[1]), (n, n), dtype=torch.int64)
    return features, labels, torch.eye(n) + adj_mat


def test(model, criterion, input, target, mask):
    model.eval()
    with torch.no_grad():
        output = model(*input)
        output, target = output[mask], target[mask]
        loss = criterion(output, target)
        acc = (output.argmax(dim=1) == target).float().sum() / len(target)
    return loss.item(), acc.item()


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=12)
    parser.add_argument('--dropout-p', type=float, default=0.0)
    args = parser.parse_args()
    device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device('cpu')
    features, labels, adj_mat = load_graph()
    features, labels, adj_mat = features.to(device), labels.to(device), adj_mat.to(device)
    print(adj_mat.dtype, adj_mat.sum().item(), features.sum(1)[:4].tolist())
    idx = torch.arange(len(labels)).to(device)
    idx_test, idx_val, idx_train = idx[:10], idx[10:20], idx[20:]
    net = GAT(features.shape[1], 8, 2, int(labels.max().item()) + 1, dropout=args.dropout_p).to(device)
    optimizer = Adam(net.parameters(), lr=0.05, weight_decay=5e-4)
    criterion = nn.NLLLoss()
    for epoch in range(args.epochs):
        net.train()
        optimizer.zero_grad()
        output = net(features, adj_mat)
        loss = criterion(output[idx_train], labels[idx_train])
        loss.backward()
        optimizer.step()
        if epoch % 3 == 0:
            print('Epoch: {:04d} loss_train: {:.4f} acc_train: {:.4f} loss_val: {:.4f} acc_val: {:.4f}'.format(
                epoch, *test(net, criterion, (features, adj_mat), labels, idx_train),
                *test(net, criterion, (features, adj_mat), labels, idx_val)))
    print('Test set results: loss {:.4f} accuracy {:.4f}'.format(*test(net, criterion, (features, adj_mat), labels, idx_test)))
