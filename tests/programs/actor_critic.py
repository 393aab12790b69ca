"""Actor-critic on a tiny CartPole (pytorch/examples' reinforcement_learning/actor_critic.py structure): a policy and a
value head share a layer, actions come from torch.distributions.Categorical, the loss is -log_prob * advantage plus
smooth_l1 on the value. Actions are chosen by inverting the policy's cdf at a fixed low-discrepancy sequence (not
m.sample(): webtorch's generator is not PyTorch's), so the episodes and the printed numbers are PyTorch's."""
import argparse
import math
from collections import namedtuple

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

SavedAction = namedtuple("SavedAction", ["log_prob", "value"])


class CartPole:
    """The classic cart-pole dynamics (Barto, Sutton and Anderson), Euler steps, deterministic start."""
    gravity, masscart, masspole, length, force_mag, tau = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02

    def reset(self, episode):
        self.state = [0.02 * math.sin(episode + k) for k in range(4)]
        return torch.tensor(self.state)

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = self.force_mag if action == 1 else -self.force_mag
        total = self.masspole + self.masscart
        pml = self.masspole * self.length
        temp = (force + pml * theta_dot ** 2 * math.sin(theta)) / total
        thetaacc = (self.gravity * math.sin(theta) - math.cos(theta) * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * math.cos(theta) ** 2 / total))
        xacc = temp - pml * thetaacc * math.cos(theta) / total
        x, x_dot = x + self.tau * x_dot, x_dot + self.tau * xacc
        theta, theta_dot = theta + self.tau * theta_dot, theta_dot + self.tau * thetaacc
        self.state = [x, x_dot, theta, theta_dot]
        done = abs(x) > 2.4 or abs(theta) > 12 * 2 * math.pi / 360
        return torch.tensor(self.state), 1.0, done


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(4, 32)
        self.action_head = nn.Linear(32, 2)
        self.value_head = nn.Linear(32, 1)
        self.saved_actions = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.affine1(x))
        action_prob = F.softmax(self.action_head(x), dim=-1)
        return action_prob, self.value_head(x)


def select_action(model, state, t):
    probs, state_value = model(state)
    m = Categorical(probs)
    u = (0.5 + t * 0.6180339887) % 1.0   # the golden-ratio sequence stands in for m.sample()
    action = (probs.detach().cumsum(-1) < u).sum().clamp(max=1)
    model.saved_actions.append(SavedAction(m.log_prob(action), state_value))
    return action.item(), m.entropy().item()


def finish_episode(model, optimizer, gamma, eps):
    R = 0
    policy_losses, value_losses, returns = [], [], []
    for r in model.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for (log_prob, value), R in zip(model.saved_actions, returns):
        advantage = R - value.item()
        policy_losses.append(-log_prob * advantage)
        value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
    optimizer.zero_grad()
    loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
    loss.backward()
    optimizer.step()
    del model.rewards[:]
    del model.saved_actions[:]
    return loss.item()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=6)
    parser.add_argument("--gamma", type=float, default=0.99)
    args = parser.parse_args()
    model = Policy()
    for i, p in enumerate(model.parameters()):
        with torch.no_grad():
            p.copy_(0.3 * torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 1.7 + i).view_as(p))
    optimizer = optim.Adam(model.parameters(), lr=3e-2)
    eps = torch.finfo(torch.float32).eps
    env = CartPole()
    t_all = 0
    for episode in range(args.episodes):
        state, ep_reward, entropy = env.reset(episode), 0.0, 0.0
        for _ in range(1, 60):
            action, h = select_action(model, state, t_all)
            t_all += 1
            entropy += h
            state, reward, done = env.step(action)
            model.rewards.append(reward)
            ep_reward += reward
            if done:
                break
        steps = len(model.rewards)
        loss = finish_episode(model, optimizer, args.gamma, eps)
        print(f"episode {episode} steps {steps} reward {ep_reward:.1f} mean entropy {entropy / steps:.5f} "
              f"loss {loss:.5f}")
    probs, value = model(torch.tensor([0.0, 0.1, -0.05, 0.2]))
    m = Categorical(probs=probs)
    print("final probs", [round(v, 5) for v in probs.tolist()], "value %.5f" % value.item())
    print("log_prob of both actions", [round(v, 5) for v in m.log_prob(torch.tensor([0, 1])).tolist()])
    print("support", m.support, m.batch_shape, m.event_shape, m.enumerate_support().tolist())
