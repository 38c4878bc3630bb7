"""A small policy/value network in numpy, written to be read: forward, loss, gradients, Adam.

The network maps a position's features ``x`` (the player to move's view of the board) to

* a **policy**: a probability for every action, the illegal ones masked out
  (``p = softmax(logits)`` over the legal actions), and
* a **value**: ``v = tanh(...)`` in [-1, 1], the expected return for the player to move.

It is a trunk of dense ReLU layers with two heads on top::

    h_0 = x,   h_i = relu(h_{i-1} W_i + b_i)          (the trunk, i = 1 .. L)
    logits = h_L P + c,          p = softmax(logits | legal)
    v = tanh(h_L u + d)

The loss of a batch of B positions with search targets ``pi`` (the visit shares of the
search's root) and outcomes ``z`` (the final return for the player to move) is the one
AlphaZero uses (Silver et al. 2017, 2018), with the weight decay written out::

    loss = 1/B sum_b [ -sum_a pi_ba log p_ba ] + 1/B sum_b (z_b - v_b)^2 + decay * sum ||W||^2

:func:`gradients` derives it by hand, layer by layer (the chain rule, no autodiff);
``tests/test_nets.py`` checks every entry against finite differences. Every computation is
in float64 and every random draw comes from one ``numpy.random.Generator`` seeded by the
caller, so the same seed gives the same weights, bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Adam", "Losses", "Network", "gradients", "init_network", "loss", "masked_softmax"]

#: The logit an illegal action gets: exp() of it is 0 in float64, and no inf - inf appears.
MASKED = -1e9


@dataclass
class Network:
    """The weights of one network: ``trunk`` as [(W, b), ...], then the two heads.

    Attributes:
        trunk: the hidden layers' weights ``W_i`` (inputs x units) and biases ``b_i``.
        policy: ``(P, c)``: the last hidden layer to one logit per action.
        value: ``(u, d)``: the last hidden layer to one number (before tanh).
    """

    trunk: list[tuple[np.ndarray, np.ndarray]]
    policy: tuple[np.ndarray, np.ndarray]
    value: tuple[np.ndarray, np.ndarray]

    @property
    def inputs(self) -> int:
        return int(self.trunk[0][0].shape[0]) if self.trunk else int(self.policy[0].shape[0])

    @property
    def actions(self) -> int:
        return int(self.policy[0].shape[1])

    @property
    def hidden(self) -> tuple[int, ...]:
        return tuple(int(w.shape[1]) for w, _ in self.trunk)

    def arrays(self) -> dict[str, np.ndarray]:
        """Every weight array by its name in a network file (``trunk0.w``, ``policy.b``, ...)."""
        out: dict[str, np.ndarray] = {}
        for i, (w, b) in enumerate(self.trunk):
            out[f"trunk{i}.w"], out[f"trunk{i}.b"] = w, b
        out["policy.w"], out["policy.b"] = self.policy
        out["value.w"], out["value.b"] = self.value
        return out

    def copy(self) -> Network:
        return Network(
            [(w.copy(), b.copy()) for w, b in self.trunk], (self.policy[0].copy(), self.policy[1].copy()), (self.value[0].copy(), self.value[1].copy())
        )

    def predict(self, x: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The policies (B x actions) and values (B) of a batch of positions."""
        p, v, _ = forward(self, x, legal)
        return p, v


def init_network(inputs: int, hidden: tuple[int, ...], actions: int, rng: np.random.Generator) -> Network:
    """Fresh weights: He-normal for the ReLU trunk (He et al. 2015), small heads, zero biases.

    Small head weights make the untrained network's policy nearly uniform and its values
    nearly 0: before training, a search with it is close to one with uniform priors.
    """
    trunk = []
    width = inputs
    for units in hidden:
        trunk.append((rng.normal(0.0, np.sqrt(2.0 / width), (width, units)), np.zeros(units)))
        width = units
    policy = (rng.normal(0.0, 0.01, (width, actions)), np.zeros(actions))
    value = (rng.normal(0.0, 0.01, (width, 1)), np.zeros(1))
    return Network(trunk, policy, value)


def masked_softmax(logits: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """softmax over the legal actions of each row; illegal actions get exactly 0.

    A row with no legal action (a finished game) gets all zeros.
    """
    masked = np.where(legal, logits, MASKED)
    shifted = masked - masked.max(axis=1, keepdims=True)  # exp() never overflows
    e = np.exp(shifted) * legal
    total = e.sum(axis=1, keepdims=True)
    out: np.ndarray = np.zeros_like(e)
    np.divide(e, total, out=out, where=total > 0)
    return out


@dataclass
class Cache:
    """What the forward pass keeps for the backward pass."""

    inputs: list[np.ndarray] = field(default_factory=list)  # each layer's input h_{i-1}
    pre: list[np.ndarray] = field(default_factory=list)  # each layer's pre-activation
    top: np.ndarray | None = None  # h_L, the heads' input


def forward(net: Network, x: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray, Cache]:
    """(policies, values, cache) of a batch: ``x`` is B x inputs, ``legal`` B x actions (bool)."""
    cache = Cache()
    h = x
    for w, b in net.trunk:
        cache.inputs.append(h)
        z = h @ w + b
        cache.pre.append(z)
        h = np.maximum(z, 0.0)
    cache.top = h
    p = masked_softmax(h @ net.policy[0] + net.policy[1], legal)
    v = np.tanh(h @ net.value[0] + net.value[1])[:, 0]
    return p, v, cache


@dataclass(frozen=True)
class Losses:
    """A batch's loss and its parts (the policy's cross-entropy, the value's squared error)."""

    total: float
    policy: float
    value: float


def loss(net: Network, x: np.ndarray, legal: np.ndarray, pi: np.ndarray, z: np.ndarray, decay: float = 0.0) -> Losses:
    """The loss of the module doc for a batch (see :func:`gradients` for its derivative)."""
    p, v, _ = forward(net, x, legal)
    return _losses(net, p, v, pi, z, decay)


def _losses(net: Network, p: np.ndarray, v: np.ndarray, pi: np.ndarray, z: np.ndarray, decay: float) -> Losses:
    batch = p.shape[0]
    # pi is 0 wherever p is (illegal actions): those terms are 0 * log 1, not 0 * log 0.
    policy = float(-(pi * np.log(np.where(pi > 0, p, 1.0))).sum() / batch)
    value = float(((z - v) ** 2).sum() / batch)
    l2 = decay * sum(float((w * w).sum()) for w in _weights(net))
    return Losses(policy + value + l2, policy, value)


def _weights(net: Network) -> list[np.ndarray]:
    """The arrays weight decay applies to: the weights, not the biases."""
    return [w for w, _ in net.trunk] + [net.policy[0], net.value[0]]


def gradients(net: Network, x: np.ndarray, legal: np.ndarray, pi: np.ndarray, z: np.ndarray, decay: float = 0.0) -> tuple[Losses, Network]:
    """The loss of a batch and its gradient with respect to every weight (a Network of them).

    The derivatives, for one position (then averaged over the batch):

    * policy: d(-sum pi log p)/d logits = p - pi (softmax with cross-entropy; pi sums to 1
      over the legal actions, and p and pi are 0 on the illegal ones, so they get 0);
    * value: d(z - v)^2/dv = 2 (v - z), and dv/d(pre) = 1 - v^2 (tanh);
    * each head: dW = h^T d(out), db = sum d(out), d(h) = d(out) W^T; the two heads' d(h) add;
    * each ReLU layer: d(pre) = d(h) * [pre > 0], then as a head;
    * weight decay: d(decay ||W||^2)/dW = 2 decay W.
    """
    p, v, cache = forward(net, x, legal)
    losses = _losses(net, p, v, pi, z, decay)
    batch = x.shape[0]
    assert cache.top is not None
    top = cache.top
    d_logits = (p - pi) / batch
    d_vpre = (2.0 * (v - z) * (1.0 - v * v) / batch)[:, None]
    policy = (top.T @ d_logits + 2.0 * decay * net.policy[0], d_logits.sum(axis=0))
    value = (top.T @ d_vpre + 2.0 * decay * net.value[0], d_vpre.sum(axis=0))
    d_h = d_logits @ net.policy[0].T + d_vpre @ net.value[0].T
    trunk: list[tuple[np.ndarray, np.ndarray]] = []
    for i in range(len(net.trunk) - 1, -1, -1):
        w, _ = net.trunk[i]
        d_pre = d_h * (cache.pre[i] > 0)
        trunk.append((cache.inputs[i].T @ d_pre + 2.0 * decay * w, d_pre.sum(axis=0)))
        d_h = d_pre @ w.T
    trunk.reverse()
    return losses, Network(trunk, policy, value)


class Adam:
    """Adam (Kingma & Ba 2015): per-weight steps scaled by running moments of the gradient.

    ``m = b1 m + (1 - b1) g``, ``s = b2 s + (1 - b2) g^2``, and each weight moves by
    ``-rate * m_hat / (sqrt(s_hat) + eps)``, where the hats undo the moments' start at 0.
    """

    def __init__(self, net: Network, rate: float = 0.005, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8) -> None:
        self.rate, self.beta1, self.beta2, self.eps = rate, beta1, beta2, eps
        self.steps = 0
        self.m = [np.zeros_like(a) for a in net.arrays().values()]
        self.s = [np.zeros_like(a) for a in net.arrays().values()]

    def step(self, net: Network, grads: Network) -> None:
        """Move ``net``'s weights (in place) one step against ``grads``."""
        self.steps += 1
        fix1 = 1.0 - self.beta1**self.steps
        fix2 = 1.0 - self.beta2**self.steps
        for i, (weight, grad) in enumerate(zip(net.arrays().values(), grads.arrays().values())):
            self.m[i] = self.beta1 * self.m[i] + (1.0 - self.beta1) * grad
            self.s[i] = self.beta2 * self.s[i] + (1.0 - self.beta2) * grad * grad
            weight -= self.rate * (self.m[i] / fix1) / (np.sqrt(self.s[i] / fix2) + self.eps)
