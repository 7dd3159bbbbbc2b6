"""TEDUO step 1 (§4.1): abstraction per goal and hindsight goal labelling amortised by a proxy reward model.

Output: one abstract, labelled MDP per training goal, D^g = {(s_t^g, a_t, r_t^g, s_{t+1}^g, done_t = r_t^g)}.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from icml25.core.progress import progress
from icml25.core.validation import check_array, check_int, check_positive, check_probability

from .abstraction import AbstractionError, AbstractionFn, compile_abstraction, identity_abstraction
from .babyai import parse_goal
from .data import OfflineDataset

__all__ = ["Abstractor", "ProxyRewardModel", "HindsightLabeler", "GoalMDP", "abstract_features"]


class Abstractor:
    """Builds F(.; g) from an annotator's code (TEDUO §4.1 step 1a); rejected code falls back to the identity.

    Parameters
    ----------
    annotator : RuleBackend or LLMAnnotator
        Anything with ``abstraction_code(goal) -> str``.

    Examples
    --------
    >>> from icml25.teduo import RuleBackend, SymbolicState
    >>> s = SymbolicState(1, 1, 0, None, (("red", "key", 3, 1),))
    >>> Abstractor(RuleBackend()).build("go to the red key", [s])(s)
    ((2, 0), False, False, False)
    """

    def __init__(self, annotator: Any):
        if not hasattr(annotator, "abstraction_code"):
            raise TypeError(f"annotator must have abstraction_code(goal), got {type(annotator).__name__}")
        self.annotator = annotator

    def build(self, goal: str, sample_states: Sequence[Any]) -> AbstractionFn:
        """Ask for code, validate it on ``sample_states``; identity fallback (with the rejection) on failure."""
        g = parse_goal(goal).text
        origin = "llm" if getattr(self.annotator, "is_llm", False) else "template"
        code = self.annotator.abstraction_code(g)
        try:
            return compile_abstraction(code, g, sample_states, origin=origin)
        except AbstractionError as e:
            return identity_abstraction(g, rejection=str(e))


def _flatten(v: Any, path: str, out: list[str]) -> None:
    if isinstance(v, tuple) and len(v) <= 16:
        out.append(f"{path}#len={len(v)}")
        for i, x in enumerate(v):
            _flatten(x, f"{path}.{i}", out)
    else:
        out.append(f"{path}={v!r}")


def abstract_features(abstract_state: Any, goal: str, dim: int = 512) -> np.ndarray:
    """Hashed one-hot features of (abstract state, goal) for the proxy reward model: one token per leaf of the
    (nested tuple) abstract state, by position, plus the goal's verb, colour and type. Shape ``(dim,)``."""
    g = parse_goal(goal)
    check_int(dim, "dim", low=1)
    toks: list[str] = []
    _flatten(abstract_state, "s", toks)
    toks += [f"verb={g.verb}", f"colour={g.colour}", f"type={g.type}"]
    toks += [f"verb={g.verb}|{t}" for t in toks[:8]]
    x = np.zeros(dim, dtype=np.float32)
    for t in toks:
        x[zlib.crc32(t.encode()) % dim] = 1.0
    return x


class ProxyRewardModel:
    """Lightweight proxy reward classifier R_theta(s^g; g) in {0, 1} (TEDUO §4.1 step 1b).

    A one-hidden-layer MLP on :func:`abstract_features`, trained with binary cross-entropy (positives weighted
    by ``pos_weight`` against class imbalance) on the annotator's judgements of a labelled subset.

    Parameters
    ----------
    hidden : int
    epochs : int
        Passes over the data; raised so that training takes at least ``min_steps`` gradient steps (small data).
    min_steps : int
    lr : float
    pos_weight : float
    batch_size : int
    random_state : int
    """

    def __init__(self, hidden: int = 64, epochs: int = 15, lr: float = 3e-3, pos_weight: float = 3.0,
                 batch_size: int = 256, dim: int = 512, random_state: int = 0, min_steps: int = 300):
        self.hidden = check_int(hidden, "hidden", low=1)
        self.epochs = check_int(epochs, "epochs", low=1)
        self.min_steps = check_int(min_steps, "min_steps", low=0)
        self.lr = check_positive(lr, "lr")
        self.pos_weight = check_positive(pos_weight, "pos_weight")
        self.batch_size = check_int(batch_size, "batch_size", low=1)
        self.dim = check_int(dim, "dim", low=8)
        self.random_state = check_int(random_state, "random_state", low=0)
        self.net_: Any = None

    def fit(self, X: np.ndarray, y: np.ndarray) -> ProxyRewardModel:
        """Train on features ``X`` (n, dim) and labels ``y`` (n,) in {0, 1}."""
        import torch

        X = check_array(X, "X", ndim=2).astype(np.float32)
        y = check_array(y, "y", ndim=1).astype(np.float32)
        if X.ndim != 2 or X.shape[1] != self.dim or len(X) != len(y) or len(X) == 0:
            raise ValueError(f"X must have shape (n >= 1, {self.dim}) matching y, got {X.shape} and {y.shape}")
        torch.manual_seed(self.random_state)
        net = torch.nn.Sequential(torch.nn.Linear(self.dim, self.hidden), torch.nn.ReLU(),
                                  torch.nn.Linear(self.hidden, 1))
        opt = torch.optim.Adam(net.parameters(), lr=self.lr)
        loss_fn = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(self.pos_weight))
        Xt, yt = torch.from_numpy(X), torch.from_numpy(y)
        g = torch.Generator().manual_seed(self.random_state)
        per_epoch = -(-len(Xt) // self.batch_size)
        for _ in range(max(self.epochs, -(-self.min_steps // per_epoch))):
            perm = torch.randperm(len(Xt), generator=g)
            for i in range(0, len(perm), self.batch_size):
                b = perm[i:i + self.batch_size]
                opt.zero_grad()
                loss_fn(net(Xt[b]).squeeze(-1), yt[b]).backward()
                opt.step()
        self.net_ = net
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Boolean predictions, shape (n,)."""
        import torch

        if self.net_ is None:
            raise RuntimeError("ProxyRewardModel is not fitted; call fit(X, y) first")
        with torch.no_grad():
            X = check_array(X, "X", ndim=2, shape=(None, self.dim)).astype(np.float32)
            return (self.net_(torch.from_numpy(X)).squeeze(-1) > 0).numpy()


@dataclass
class GoalMDP:
    """The abstract labelled MDP D^g of one goal (transitions whose states contain the goal object).

    Attributes
    ----------
    goal : str
    abstraction : AbstractionFn
    abstract_states : list
        Abstract state values; ids index this list.
    index : dict
        Abstract value -> id.
    transition_ids : int array (m,)
        Which dataset transitions the rows come from.
    s, a, s_next : int arrays (m,)
        Abstract state ids and actions.
    r : bool array (m,)
        Proxy label of s_next (= done).
    truth : bool array (m,)
        Noiseless rule label of the raw s_next (for evaluation only; never used for learning).
    """

    goal: str
    abstraction: AbstractionFn
    abstract_states: list[Any]
    index: dict[Any, int]
    transition_ids: np.ndarray
    s: np.ndarray
    a: np.ndarray
    s_next: np.ndarray
    r: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    truth: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))

    @property
    def n_states(self) -> int:
        """Number of distinct abstract states."""
        return len(self.abstract_states)


class HindsightLabeler:
    """Hindsight goal labelling amortised by a proxy (TEDUO §4.1 step 1b).

    The annotator judges a random ``label_fraction`` of the (transition, goal) pairs (on the raw next state); the
    proxy is trained on those answers and labels every pair from the abstract next state.

    Parameters
    ----------
    annotator : RuleBackend or LLMAnnotator
        Anything with ``judge(states, goals) -> bool array`` and ``abstraction_code(goal)``.
    proxy : ProxyRewardModel, optional
    label_fraction : float
        Fraction of pairs sent to the annotator.
    random_state : int

    Attributes
    ----------
    mdps_ : dict of str -> GoalMDP
    labelled_mask_ : dict of str -> bool array
        Which rows of each goal's MDP were judged by the annotator.
    n_annotator_calls_ : int
    """

    def __init__(self, annotator: Any, proxy: ProxyRewardModel | None = None, label_fraction: float = 0.1,
                 random_state: int = 0):
        if not hasattr(annotator, "judge"):
            raise TypeError(f"annotator must have judge(states, goals), got {type(annotator).__name__}")
        self.annotator = annotator
        self.proxy = proxy if proxy is not None else ProxyRewardModel(random_state=random_state)
        self.label_fraction = check_probability(label_fraction, "label_fraction", open_low=True)
        self.random_state = check_int(random_state, "random_state", low=0)

    def build_mdps(self, dataset: OfflineDataset, goals: Sequence[str], n_samples: int = 200,
                   abstractions: dict[str, AbstractionFn] | None = None) -> dict[str, GoalMDP]:
        """Abstract the dataset per goal (no labels yet)."""
        if not isinstance(dataset, OfflineDataset):
            raise TypeError(f"dataset must be an OfflineDataset, got {type(dataset).__name__}")
        if len(goals) == 0:
            raise ValueError("goals must hold at least one goal string")
        tr = dataset.transitions()
        states = tr["states"]
        rng = np.random.default_rng(self.random_state)
        sample = [states[i] for i in rng.choice(len(states), min(n_samples, len(states)), replace=False)]
        ab = Abstractor(self.annotator)
        mdps = {}
        for goal in progress(list(goals), "abstracting per goal"):
            g = parse_goal(goal).text
            fn = (abstractions or {}).get(g) or ab.build(g, sample)
            index: dict[Any, int] = {}
            values: list[Any] = []
            ids = np.full(len(states), -1, dtype=np.int64)
            for i, st in enumerate(states):
                v = fn(st)
                if v is None:
                    continue
                j = index.get(v)
                if j is None:
                    j = index[v] = len(values)
                    values.append(v)
                ids[i] = j
            s, s2 = ids[tr["s"]], ids[tr["s_next"]]
            rows = np.flatnonzero((s >= 0) & (s2 >= 0))
            mdps[g] = GoalMDP(g, fn, values, index, rows, s[rows], tr["actions"][rows], s2[rows])
        return mdps

    def fit(self, dataset: OfflineDataset, goals: Sequence[str],
            abstractions: dict[str, AbstractionFn] | None = None) -> HindsightLabeler:
        """Abstract, judge a labelled subset with the annotator, train the proxy, label every transition."""
        from .babyai import goal_reached

        mdps = self.build_mdps(dataset, goals, abstractions=abstractions)
        if sum(len(m.s) for m in mdps.values()) == 0:
            raise ValueError("no transition contains any goal's object; the dataset or goal list is empty/mismatched")
        tr = dataset.transitions()
        states = tr["states"]
        rng = np.random.default_rng(self.random_state + 1)
        X, y, self.labelled_mask_ = [], [], {}
        feats: dict[str, np.ndarray] = {}
        self.n_annotator_calls_ = 0
        for g, m in mdps.items():
            feats[g] = np.stack([abstract_features(v, g, self.proxy.dim) for v in m.abstract_states])
            mask = rng.random(len(m.s)) < self.label_fraction
            self.labelled_mask_[g] = mask
            raw = [states[tr["s_next"][t]] for t in m.transition_ids[mask]]
            if raw:
                y.append(self.annotator.judge(raw, [g] * len(raw)))
                X.append(feats[g][m.s_next[mask]])
                self.n_annotator_calls_ += len(raw)
            m.truth = np.array([goal_reached(states[tr["s_next"][t]], g) for t in m.transition_ids], dtype=bool)
        if not X:
            raise ValueError("label_fraction selected no transition to label; raise it or collect more data")
        self.proxy.fit(np.concatenate(X), np.concatenate(y).astype(np.float32))
        for g, m in mdps.items():
            m.r = self.proxy.predict(feats[g])[m.s_next]
        self.mdps_ = mdps
        return self
