"""An LSTM classifier over image rows (pytorch/examples' mnist_rnn structure): LSTM(batch_first) -> last step ->
BatchNorm1d -> Dropout2d on a 2-D input (PyTorch's deprecation path: element-wise dropout, one draw per (N, C)),
ReLU, log_softmax, nll_loss, Adadelta with StepLR, a shuffling DataLoader, test loss with reduction='sum' and
argmax accuracy. It uses PyTorch's random streams (initial weights, shuffling, dropout): cpu only, where webtorch
draws PyTorch's numbers."""
import argparse
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(input_size=8, hidden_size=16, batch_first=True)
        self.batchnorm = nn.BatchNorm1d(16)
        self.dropout1 = nn.Dropout2d(0.25)
        self.dropout2 = nn.Dropout2d(0.5)
        self.fc1 = nn.Linear(16, 12)
        self.fc2 = nn.Linear(12, 10)

    def forward(self, input):
        input = input.reshape(-1, 8, 8)
        output, hidden = self.rnn(input)
        output = self.batchnorm(output[:, -1, :])
        output = self.fc1(self.dropout1(output))
        output = self.fc2(self.dropout2(F.relu(output)))
        return F.log_softmax(output, dim=1)


def digits(n, offset):
    """8x8 'images': a bar whose row and slope depend on the label, plus a ripple."""
    y = (torch.arange(n) * 3 + offset) % 10
    r, c = torch.arange(8).view(1, 8, 1), torch.arange(8).view(1, 1, 8)
    img = ((r - (y.view(n, 1, 1) % 8)).abs() <= (c * (y.view(n, 1, 1) // 8 + 1)) // 4).float()
    return (img + 0.1 * torch.sin(torch.arange(n).view(n, 1, 1) + r + c)).unsqueeze(1), y


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=2)
    parser.add_argument('--lr', type=float, default=1.0)
    args = parser.parse_args()
    torch.manual_seed(1)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader = DataLoader(TensorDataset(*digits(96, 0)), batch_size=16, shuffle=True)
    test_loader = DataLoader(TensorDataset(*digits(40, 1)), batch_size=20, shuffle=True)
    model = Net().to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    for epoch in range(1, args.epochs + 1):
        model.train()
        for batch_idx, (data, target) in enumerate(train_loader):
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            optimizer.step()
            if batch_idx % 2 == 0:
                print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                    epoch, batch_idx * len(data), len(train_loader.dataset),
                    100. * batch_idx / len(train_loader), loss.item()))
        model.eval()
        test_loss, correct = 0, 0
        with torch.no_grad():
            for data, target in test_loader:
                output = model(data.to(device))
                test_loss += F.nll_loss(output, target.to(device), reduction='sum').item()
                pred = output.argmax(dim=1, keepdim=True)
                correct += pred.eq(target.to(device).view_as(pred)).sum().item()
        print('Test set: Average loss: {:.4f}, Accuracy: {}/{}'.format(
            test_loss / len(test_loader.dataset), correct, len(test_loader.dataset)))
        scheduler.step()
        print('lr', scheduler.get_last_lr())


if __name__ == '__main__':
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        main()
    print(sorted({str(w.message)[:40] for w in caught}))
