"""Step-3 policies trained from scratch on D_SFT (the non-LLM baselines of TEDUO §5): a one-hot MLP and TINYLM.

* :class:`MLPPolicy` — input = one-hot (verb, colour, type) + goal-relative symbolic features (target position in
  the agent's frame, blocked cells, carried flags); no language prior.
* :class:`TinyLMPolicy` — spec §6's TINYLM: a 2-layer transformer encoder that reads the goal and the state as
  word tokens ``[ACT] [G] <goal words> [S] <colour type f<k> r<k> ;>... ahead <x> carry <...>`` and is read out at
  ``[ACT]`` into the 4 actions (constrained: no invalid output by construction).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from icml25.core.progress import progress
from icml25.core.validation import check_int, check_positive

from .babyai import (
    ACTIONS,
    COLOURS,
    ROOM,
    TYPES,
    VERBS,
    SymbolicState,
    front_cell,
    parse_goal,
    relative_position,
)
from .sft import SFTExample

__all__ = ["MLPPolicy", "TinyLMPolicy", "goal_features", "state_tokens"]

_R = ROOM - 3  # relative coordinates range over [-_R, _R]


def _blocked(s: SymbolicState, x: int, y: int) -> bool:
    return not (1 <= x <= ROOM - 2 and 1 <= y <= ROOM - 2) or any(ox == x and oy == y for _, _, ox, oy in s.objects)


def goal_features(state: SymbolicState, goal: str) -> np.ndarray:
    """Symbolic input of :class:`MLPPolicy`: one-hot verb/colour/type, one-hot forward and right offsets of the
    nearest goal object (an extra slot when absent/carried), blocked ahead/left/right, target carried, anything
    carried. Shape ``(11 + 2 * (2 * _R + 2) + 5,)``."""
    g = parse_goal(goal)
    v = np.zeros(11 + 2 * (2 * _R + 2) + 5, dtype=np.float32)
    v[VERBS.index(g.verb)] = 1
    v[2 + COLOURS.index(g.colour)] = 1
    v[8 + TYPES.index(g.type)] = 1
    rel = [relative_position(state, x, y) for c, t, x, y in state.objects if c == g.colour and t == g.type]
    o = 11
    if rel:
        f, r = min(rel, key=lambda p: (abs(p[0]) + abs(p[1]), -p[0], p[1]))
        v[o + f + _R] = 1
        v[o + 2 * _R + 2 + r + _R] = 1
    else:
        v[o + 2 * _R + 1] = 1
        v[o + 4 * _R + 3] = 1
    o += 2 * (2 * _R + 2)
    fx, fy = front_cell(state)
    d = [(1, 0), (0, 1), (-1, 0), (0, -1)]
    lx, ly = d[(state.direction - 1) % 4]
    rx, ry = d[(state.direction + 1) % 4]
    target_ahead = any(c == g.colour and t == g.type and x == fx and y == fy for c, t, x, y in state.objects)
    v[o] = _blocked(state, fx, fy) and not target_ahead
    v[o + 1] = _blocked(state, state.x + lx, state.y + ly)
    v[o + 2] = _blocked(state, state.x + rx, state.y + ry)
    v[o + 3] = state.carrying == (g.colour, g.type)
    v[o + 4] = state.carrying is not None
    return v


def state_tokens(state: SymbolicState, goal: str) -> list[str]:
    """TINYLM's word tokens of (goal, raw state), spec §6."""
    g = parse_goal(goal)
    toks = ["[ACT]", "[G]", *g.verb.split(), g.colour, g.type, "[S]"]
    for c, t, x, y in state.objects:
        f, r = relative_position(state, x, y)
        toks += [c, t, f"f{f}", f"r{r}", ";"]
    fx, fy = front_cell(state)
    toks += ["ahead", "blocked" if _blocked(state, fx, fy) else "free", "carry"]
    toks += list(state.carrying) if state.carrying else ["nothing"]
    return toks


def _vocab() -> dict[str, int]:
    words = ["[PAD]", "[ACT]", "[G]", "[S]", ";", "ahead", "blocked", "free", "carry", "nothing", "the"]
    words += [w for v in VERBS for w in v.split()] + list(COLOURS) + list(TYPES)
    words += [f"{p}{k}" for p in "fr" for k in range(-2 * _R, 2 * _R + 1)]
    return {w: i for i, w in enumerate(dict.fromkeys(words))}


def _check_examples(examples: Any) -> list[SFTExample]:
    if not isinstance(examples, (list, tuple)) or not examples:
        raise ValueError("examples must be a non-empty list of SFTExample (build_sft_dataset)")
    if not all(isinstance(e, SFTExample) for e in examples):
        raise TypeError("examples must hold SFTExample items")
    return list(examples)


class _TorchPolicy(ABC):
    def __init__(self, steps: int, lr: float, batch_size: int, random_state: int):
        self.steps = check_int(steps, "steps", low=1)
        self.lr = check_positive(lr, "lr")
        self.batch_size = check_int(batch_size, "batch_size", low=1)
        self.random_state = check_int(random_state, "random_state", low=0)
        self.net_: Any = None
        self.losses_: list[float] = []
        self.n_invalid = 0

    @abstractmethod
    def _encode(self, states: Sequence[SymbolicState], goals: Sequence[str]) -> Any:
        """Features of (state, goal) pairs for the network."""

    @abstractmethod
    def _build(self) -> Any:
        """The untrained network."""

    def fit(self, examples: Sequence[SFTExample], desc: str = "training") -> Any:
        """Cross-entropy on the optimal actions of D_SFT (``steps`` Adam steps of ``batch_size`` examples)."""
        import torch

        ex = _check_examples(examples)
        torch.manual_seed(self.random_state)
        self.net_ = self._build()
        X = self._encode([e.state for e in ex], [e.goal for e in ex])
        y = torch.tensor([e.action for e in ex])
        opt = torch.optim.Adam(self.net_.parameters(), lr=self.lr)
        g = torch.Generator().manual_seed(self.random_state)
        self.net_.train()
        for _ in progress(range(self.steps), desc):
            b = torch.randint(len(y), (min(self.batch_size, len(y)),), generator=g)
            loss = torch.nn.functional.cross_entropy(self.net_(X[b]), y[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
            self.losses_.append(float(loss.detach()))
        self.net_.eval()
        return self

    def act_batch(self, states: Sequence[SymbolicState], goals: Sequence[str], rng: np.random.Generator) -> list[int]:
        """Greedy action per (state, goal) (argmax over the 4 actions)."""
        import torch

        if self.net_ is None:
            raise RuntimeError(f"{type(self).__name__} is not fitted; call fit(examples) first")
        with torch.no_grad():
            return self.net_(self._encode(states, goals)).argmax(-1).tolist()


class MLPPolicy(_TorchPolicy):
    """One-hot-goal MLP distilled from D_SFT (no language prior).

    Parameters
    ----------
    hidden : int
    steps, lr, batch_size, random_state
        Adam training.

    Examples
    --------
    >>> from icml25.teduo import SFTExample, SymbolicState
    >>> s = SymbolicState(1, 1, 0, None, (("red", "key", 2, 1),))
    >>> p = MLPPolicy(steps=50).fit([SFTExample("pick up the red key", s, 3, 1)])
    >>> p.act_batch([s], ["pick up the red key"], None)
    [3]
    """

    def __init__(self, hidden: int = 128, steps: int = 3000, lr: float = 1e-3, batch_size: int = 64,
                 random_state: int = 0):
        super().__init__(steps, lr, batch_size, random_state)
        self.hidden = check_int(hidden, "hidden", low=1)

    def _build(self) -> Any:
        import torch

        n = len(goal_features(SymbolicState(1, 1, 0, None, ()), "go to the red key"))
        return torch.nn.Sequential(torch.nn.Linear(n, self.hidden), torch.nn.ReLU(),
                                   torch.nn.Linear(self.hidden, self.hidden), torch.nn.ReLU(),
                                   torch.nn.Linear(self.hidden, len(ACTIONS)))

    def _encode(self, states: Sequence[SymbolicState], goals: Sequence[str]) -> Any:
        import torch

        return torch.from_numpy(np.stack([goal_features(s, g) for s, g in zip(states, goals)]))


class TinyLMPolicy(_TorchPolicy):
    """TINYLM (spec §6): a from-scratch transformer encoder over goal + state word tokens, read out at [ACT].

    Parameters
    ----------
    d_model : int
    n_heads : int
    n_layers : int
    steps, lr, batch_size, random_state
        Adam training (spec: Adam 5e-4, batch 64).
    """

    def __init__(self, d_model: int = 96, n_heads: int = 4, n_layers: int = 2, steps: int = 3000, lr: float = 5e-4,
                 batch_size: int = 64, random_state: int = 0):
        super().__init__(steps, lr, batch_size, random_state)
        self.d_model = check_int(d_model, "d_model", low=1)
        self.n_heads = check_int(n_heads, "n_heads", low=1)
        self.n_layers = check_int(n_layers, "n_layers", low=1)
        if self.d_model % self.n_heads:
            raise ValueError(f"n_heads must divide d_model={d_model}, got {n_heads}")
        self.vocab = _vocab()

    def _build(self) -> Any:
        import torch

        vocab, d = len(self.vocab), self.d_model

        class Net(torch.nn.Module):
            def __init__(self, n_heads: int, n_layers: int):
                super().__init__()
                self.tok = torch.nn.Embedding(vocab, d, padding_idx=0)
                self.pos = torch.nn.Embedding(128, d)
                layer = torch.nn.TransformerEncoderLayer(d, n_heads, 2 * d, dropout=0.0, batch_first=True)
                self.enc = torch.nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
                self.head = torch.nn.Linear(d, len(ACTIONS))

            def forward(self, ids: Any) -> Any:
                h = self.tok(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
                h = self.enc(h, src_key_padding_mask=ids == 0)
                return self.head(h[:, 0])

        return Net(self.n_heads, self.n_layers)

    def _encode(self, states: Sequence[SymbolicState], goals: Sequence[str]) -> Any:
        import torch

        rows = [[self.vocab[t] for t in state_tokens(s, g)] for s, g in zip(states, goals)]
        width = max(len(r) for r in rows)
        if width > 128:
            raise ValueError(f"a state has {width} tokens, more than TINYLM's 128 positions")
        return torch.tensor([r + [0] * (width - len(r)) for r in rows])
