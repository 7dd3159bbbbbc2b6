"""Controlled simulators of the probed model (spec §5): a served instruction follower with chooser bias, and a
pure probe oracle returning ``R`` directly. Both are documented simulators for tests and robustness curves: they
let a user measure how much chooser bias a watermark deployment would need to resist De-mark."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from icml25.core.validation import check_int, check_positive, check_probability, check_real

from .oracles import NextTokenLM, check_id_batch
from .probing import ProbeTemplate
from .watermark import KGWWatermark

__all__ = ["InstructionFollowingLM", "SimulatedProbeOracle"]


def _query_seed(seed: int, seq: Any) -> int:
    h = hashlib.blake2b(np.asarray(seq, dtype=np.int64).tobytes(), digest_size=8, key=seed.to_bytes(8, "little"))
    return int.from_bytes(h.digest(), "little")


class InstructionFollowingLM(NextTokenLM):
    """A served model that follows the random-selection instruction almost without bias (spec §5, 2(b)).

    For an ordinary context it returns the text model's distribution. For a well-formed probe
    ``pre + c + u + mid + c + v + post + c`` it puts mass ``1 - eps_mass`` on ``{u, v}``, split as
    ``sigmoid(b_u - b_v + position_bias + eta)`` for the first-listed ``u``, with a fixed per-token bias
    ``b ~ N(0, sigma_b^2)`` (drawn once from ``seed``) and per-query noise ``eta ~ N(0, sigma_e^2)`` (a
    deterministic function of the query ids and ``seed``); ``eps_mass`` is spread by the text model at ``c``.
    A watermark applied on top (:class:`~icml25.demark.WatermarkedOracle`) then tilts the served logits.

    Parameters
    ----------
    template : ProbeTemplate
    text_lm : NextTokenLM, optional
        Ordinary next-token model (uniform over the vocabulary when None).
    vocab_size : int, optional
        Needed when ``text_lm`` is None.
    sigma_b, sigma_e : float
        Chooser bias and per-query noise standard deviations (>= 0).
    eps_mass : float
        Probability outside the two candidates, in [0, 1).
    position_bias : float
        Extra log-odds for the first-listed phrase (cancelled by asking both orders).
    seed : int

    Examples
    --------
    >>> t = ProbeTemplate(pre=(0,), mid=(1,), post=(2,) * 10)
    >>> lm = InstructionFollowingLM(t, vocab_size=30, sigma_b=0.0, sigma_e=0.0, eps_mass=0.1)
    >>> p = np.exp(lm.next_logprobs([t.build([5], 7, 8)]))[0]
    >>> round(float(p[7]), 3), round(float(p[8]), 3)
    (0.45, 0.45)
    """

    def __init__(self, template: ProbeTemplate, text_lm: NextTokenLM | None = None, vocab_size: int | None = None,
                 sigma_b: float = 0.2, sigma_e: float = 0.2, eps_mass: float = 0.05, position_bias: float = 0.0,
                 seed: int = 0):
        if not isinstance(template, ProbeTemplate):
            raise TypeError(f"template must be a ProbeTemplate, got {type(template).__name__}")
        if text_lm is not None and not isinstance(text_lm, NextTokenLM):
            raise TypeError(f"text_lm must be a NextTokenLM or None, got {type(text_lm).__name__}")
        if text_lm is None and vocab_size is None:
            raise ValueError("vocab_size is required when text_lm is None")
        V = text_lm.vocab_size if text_lm is not None else check_int(vocab_size, "vocab_size", low=2)
        if text_lm is not None and vocab_size is not None and check_int(vocab_size, "vocab_size", low=2) != V:
            raise ValueError(f"vocab_size={vocab_size} does not match text_lm.vocab_size={V}")
        self.template, self.text_lm, self.vocab_size = template, text_lm, V
        self.sigma_b = check_positive(sigma_b, "sigma_b", allow_zero=True)
        self.sigma_e = check_positive(sigma_e, "sigma_e", allow_zero=True)
        self.eps_mass = check_probability(eps_mass, "eps_mass", open_high=True)
        self.position_bias = check_real(position_bias, "position_bias")
        self.seed = check_int(seed, "seed", low=0)
        self.bias = np.random.default_rng(self.seed).normal(0.0, 1.0, V) * self.sigma_b
        self._ctx_cache: dict[tuple[int, ...], np.ndarray] = {}

    def _text(self, batch: list[list[int]]) -> np.ndarray:
        if self.text_lm is None:
            return np.full((len(batch), self.vocab_size), -np.log(self.vocab_size))
        return self.text_lm.next_logprobs(batch)

    def _spread(self, c: tuple[int, ...]) -> np.ndarray:
        if c not in self._ctx_cache:
            if len(self._ctx_cache) > 20000:
                self._ctx_cache.clear()
            self._ctx_cache[c] = np.exp(self._text([list(c) if c else [0]])[0])
        return self._ctx_cache[c]

    def next_logprobs(self, batch: list[list[int]]) -> np.ndarray:
        """Log-probabilities ``(B, V)``: the probe answer model for probes, the text model otherwise."""
        batch = check_id_batch(batch, self.vocab_size)
        out = np.empty((len(batch), self.vocab_size))
        plain = []
        for r, seq in enumerate(batch):
            parsed = self.template.parse(seq)
            if parsed is None or parsed[1] == parsed[2]:
                plain.append(r)
                continue
            c, u, v = parsed
            eta = np.random.default_rng(_query_seed(self.seed, seq)).normal() * self.sigma_e
            pu = 1.0 / (1.0 + np.exp(-(self.bias[u] - self.bias[v] + self.position_bias + eta)))
            rest = self._spread(c).copy()
            rest[[u, v]] = 0.0
            p = self.eps_mass * rest / max(rest.sum(), 1e-300)
            p[u], p[v] = (1 - self.eps_mass) * pu, (1 - self.eps_mass) * (1 - pu)
            out[r] = np.log(np.maximum(p, 1e-300))
        if plain:
            out[plain] = self._text([batch[r] for r in plain])
        return out


class SimulatedProbeOracle:
    """A pure simulated probe oracle (spec §5, 3): ``R_ij = delta (g_i - g_j) + (b_i - b_j) + eps_ij``.

    Same ``ratio_matrix`` interface as :class:`~icml25.demark.RandomSelectionProber`. The green flags ``g`` come from a
    real :class:`~icml25.demark.KGWWatermark` on the window ``(template_tail + c)[-h:]``, so contexts shorter than
    ``h`` hash template tokens (a different but deterministic list), as with a real chat template.

    Parameters
    ----------
    vocab_size : int
    delta : float
    h : int
    gamma : float
    key : int
    sigma_b, sigma_e : float
        Chooser bias (fixed per token) and per-pair noise standard deviations.
    seed : int

    Examples
    --------
    >>> o = SimulatedProbeOracle(100, delta=2.0, h=2, sigma_b=0.0, sigma_e=0.0, seed=0)
    >>> R = o.ratio_matrix([4, 5], [1, 2, 3, 6])
    >>> bool(np.allclose(R, -R.T)) and set(np.unique(np.abs(R))) <= {0.0, 2.0}
    True
    """

    def __init__(self, vocab_size: int, delta: float = 2.0, h: int = 1, gamma: float = 0.5, key: int = 15485863,
                 sigma_b: float = 0.2, sigma_e: float = 0.2, seed: int = 0):
        self._wm = KGWWatermark(vocab_size, gamma=gamma, delta=delta, h=h, key=key)
        self.vocab_size = self._wm.vocab_size
        self.sigma_b = check_positive(sigma_b, "sigma_b", allow_zero=True)
        self.sigma_e = check_positive(sigma_e, "sigma_e", allow_zero=True)
        self.seed = check_int(seed, "seed", low=0)
        rng = np.random.default_rng(self.seed)
        self.bias = rng.normal(0.0, 1.0, self.vocab_size) * self.sigma_b
        self._tail = [int(x) for x in rng.integers(0, self.vocab_size, 16)]
        self._rng = np.random.default_rng(self.seed + 1)
        self.n_probe_queries = 0

    def ratio_matrix(self, context_ids: Any, candidate_ids: Any) -> np.ndarray:
        """Simulated ratio matrix ``(m, m)`` for context ``c`` and candidates (see the class docstring)."""
        c = check_id_batch([context_ids], self.vocab_size, "context_ids")[0]
        cand = check_id_batch([candidate_ids], self.vocab_size, "candidate_ids")[0]
        if len(cand) < 2 or len(set(cand)) != len(cand):
            raise ValueError(f"candidate_ids must hold at least 2 distinct ids, got {cand}")
        g = self._wm.green_mask(self._tail + c)[cand].astype(float)
        b = self.bias[cand]
        m = len(cand)
        eps = np.triu(self._rng.normal(0.0, 1.0, (m, m)) * self.sigma_e, 1)
        R = self._wm.delta * (g[:, None] - g[None, :]) + (b[:, None] - b[None, :]) + eps - eps.T
        np.fill_diagonal(R, 0.0)
        self.n_probe_queries += m * (m - 1)
        return R

    def true_green(self, context_ids: Any, candidate_ids: Any) -> np.ndarray:
        """Ground-truth green flags of the candidates (for evaluation only; the attack never calls it)."""
        c = check_id_batch([context_ids], self.vocab_size, "context_ids")[0]
        return self._wm.green_mask(self._tail + c)[np.asarray(candidate_ids, dtype=np.int64)]
