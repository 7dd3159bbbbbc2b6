"""Watermark removal (spec §2.8) and exploitation / spoofing (§2.9) with the estimated green lists, plus the
oracle-free random-scrubbing baseline and plain top-k sampling from an oracle."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from icml25.core.validation import check_int, check_positive, check_real

from .estimation import identify_green_list
from .oracles import NextTokenLM, check_id_batch

__all__ = ["DeMark", "Spoofer", "RandomScrubber", "StepRecord", "sample_topk"]


@dataclass
class StepRecord:
    """One decoding step of an attack: the context, the top-k candidates, their served log-probs, the estimated
    green flags and the log-probs the attack sampled from (all arrays of shape (k,))."""

    context: list[int]
    candidates: np.ndarray
    served_logps: np.ndarray
    green_hat: np.ndarray
    used_logits: np.ndarray
    token: int = -1
    extra: dict[str, Any] = field(default_factory=dict)


def _check_eos(eos_ids: Any) -> set[int]:
    if eos_ids is None:
        return set()
    if isinstance(eos_ids, (str, bytes)):
        raise TypeError("eos_ids must be a sequence of token ids, got a string")
    return {check_int(e, "eos_ids", low=0) for e in np.asarray(eos_ids).reshape(-1).tolist()}


def _draw(rng: np.random.Generator, logits: np.ndarray) -> int:
    p = np.exp(logits - logits.max())
    return int(rng.choice(len(p), p=p / p.sum()))


def sample_topk(oracle: Any, prompts: Any, max_new_tokens: int, top_k: int = 20, eos_ids: Any = None,
                random_state: int = 0) -> list[list[int]]:
    """Top-k sampling (temperature 1) from an oracle's or a served model's next-token distribution, batched.

    Parameters
    ----------
    oracle : oracle with ``topk_logprobs`` or a :class:`~icml25.demark.NextTokenLM`
    prompts : list of id lists
    max_new_tokens, top_k : int
    eos_ids : sequence of int, optional
        Generation of a row stops after one of these.
    random_state : int

    Returns
    -------
    list of generated id lists (prompt excluded).
    """
    max_new_tokens = check_int(max_new_tokens, "max_new_tokens", low=1)
    top_k = check_int(top_k, "top_k", low=1)
    eos = _check_eos(eos_ids)
    V = int(oracle.vocab_size)
    prompts = check_id_batch(prompts, V, "prompts")
    rng = np.random.default_rng(check_int(random_state, "random_state", low=0))
    out: list[list[int]] = [[] for _ in prompts]
    active = list(range(len(prompts)))
    for _ in range(max_new_tokens):
        if not active:
            break
        seqs = [prompts[r] + out[r] for r in active]
        if isinstance(oracle, NextTokenLM):
            lp = oracle.next_logprobs(seqs)
            ids = np.argsort(-lp, axis=1, kind="stable")[:, :top_k]
            lps = np.take_along_axis(lp, ids, axis=1)
        else:
            ids, lps = oracle.topk_logprobs(seqs, top_k)
        still = []
        for j, r in enumerate(active):
            tok = int(ids[j, _draw(rng, lps[j])])
            out[r].append(tok)
            if tok not in eos:
                still.append(r)
        active = still
    return out


class DeMark:
    """Watermark removal of the 'De-mark: Watermark Removal in Large Language Models' (ICML 2025) paper.

    At each step: top-k candidates of the watermarked distribution, green list ``G_hat`` by random selection probing
    with the last ``h_hat`` ids (Algorithm 5), corrected logits ``l''_v = l'_v - eta delta_hat 1[v in G_hat]`` on the
    top-k, sample (spec §2.8). Costs ``k (k - 1)`` probe queries plus one ordinary query per token.

    Parameters
    ----------
    prober : RandomSelectionProber
        Probes the watermarked model (its ``oracle`` also serves the ordinary next-token queries).
    h_hat : int
        Estimated prefix length.
    delta_hat : float
        Estimated strength.
    top_k : int
    eta : float
        ``delta_reduce_multiplier`` (>= 0).
    random_state : int

    Examples
    --------
    >>> from icml25.demark import (InstructionFollowingLM, KGWWatermark, ProbeTemplate, RandomSelectionProber,
    ...                            WatermarkedOracle)
    >>> t = ProbeTemplate(pre=(0,), mid=(1,), post=(2,) * 10)
    >>> oracle = WatermarkedOracle(InstructionFollowingLM(t, vocab_size=60, seed=1), KGWWatermark(60, h=1, key=5))
    >>> dm = DeMark(RandomSelectionProber(oracle, t), h_hat=1, delta_hat=2.0, top_k=6)
    >>> len(dm.remove([10, 11], max_new_tokens=3))
    3
    """

    def __init__(self, prober: Any, h_hat: int, delta_hat: float, top_k: int = 20, eta: float = 1.0,
                 random_state: int = 0):
        if not hasattr(prober, "ratio_matrix") or not hasattr(prober, "oracle"):
            raise TypeError(f"prober must be a RandomSelectionProber, got {type(prober).__name__}")
        self.prober = prober
        self.h_hat = check_int(h_hat, "h_hat", low=1)
        self.delta_hat = check_positive(delta_hat, "delta_hat")
        self.top_k = check_int(top_k, "top_k", low=2)
        self.eta = check_real(eta, "eta", low=0.0)
        self.rng = np.random.default_rng(check_int(random_state, "random_state", low=0))

    def green_hat(self, context: list[int], candidates: np.ndarray) -> np.ndarray:
        """Estimated green flags of ``candidates`` after ``context`` (Algorithm 5 on its last ``h_hat`` ids)."""
        return identify_green_list(self.prober, context[-self.h_hat:], candidates, self.delta_hat)

    def step(self, context: list[int]) -> StepRecord:
        """One removal step after ``context`` (ids): candidates, served log-probs, ``G_hat`` and corrected logits."""
        ids, lps = self.prober.oracle.topk_logprobs([context], self.top_k)
        ids, lps = ids[0], lps[0]
        g = self.green_hat(context, ids)
        return StepRecord(list(context), ids, lps, g, lps - self.eta * self.delta_hat * g)

    def remove(self, prompt_ids: Any, max_new_tokens: int = 300, eos_ids: Any = None,
               steps: list[StepRecord] | None = None) -> list[int]:
        """Generate up to ``max_new_tokens`` ids after ``prompt_ids`` with the watermark's effect undone.

        Parameters
        ----------
        prompt_ids : sequence of int
        max_new_tokens : int
        eos_ids : sequence of int, optional
        steps : list, optional
            If given, a :class:`StepRecord` per step is appended (for diagnostics such as the exact KL).

        Returns
        -------
        list of int: the generated ids (prompt excluded).
        """
        prompt = check_id_batch([prompt_ids], self.prober.vocab_size, "prompt_ids")[0]
        max_new_tokens = check_int(max_new_tokens, "max_new_tokens", low=1)
        eos = _check_eos(eos_ids)
        out: list[int] = []
        for _ in range(max_new_tokens):
            rec = self.step(prompt + out)
            tok = int(rec.candidates[_draw(self.rng, rec.used_logits)])
            rec.token = tok
            if steps is not None:
                steps.append(rec)
            out.append(tok)
            if tok in eos:
                break
        return out

    def as_logits_processor(self) -> Any:
        """A transformers ``LogitsProcessor`` (for ``generate`` on the *watermarked* model's scores): keeps the
        top-k of each row and subtracts ``eta delta_hat`` from the estimated green ones."""
        from transformers import LogitsProcessor

        dm = self

        class _DeMarkProcessor(LogitsProcessor):
            def __call__(self, input_ids: Any, scores: Any) -> Any:
                import torch

                out = torch.full_like(scores, -float("inf"))
                for r in range(scores.shape[0]):
                    top = torch.topk(scores[r], dm.top_k).indices
                    g = dm.green_hat(input_ids[r].tolist(), top.cpu().numpy())
                    out[r, top] = scores[r, top] - dm.eta * dm.delta_hat * torch.as_tensor(g, dtype=scores.dtype,
                                                                                            device=scores.device)
                return out

        return _DeMarkProcessor()


class RandomScrubber:
    """Oracle-free baseline (spec §6 F3): subtract ``delta_hat`` from a random half of the top-k at each step.

    Parameters
    ----------
    oracle : oracle with ``topk_logprobs``
    delta_hat : float
    top_k : int
    random_state : int

    Examples
    --------
    >>> from icml25.demark import InstructionFollowingLM, ProbeTemplate, LMOracle
    >>> t = ProbeTemplate(pre=(0,), mid=(1,), post=(2,) * 10)
    >>> len(RandomScrubber(LMOracle(InstructionFollowingLM(t, vocab_size=30)), 2.0, top_k=5).remove([4], 4))
    4
    """

    def __init__(self, oracle: Any, delta_hat: float, top_k: int = 20, random_state: int = 0):
        if not hasattr(oracle, "topk_logprobs"):
            raise TypeError(f"oracle must have topk_logprobs, got {type(oracle).__name__}")
        self.oracle = oracle
        self.delta_hat = check_positive(delta_hat, "delta_hat")
        self.top_k = check_int(top_k, "top_k", low=2)
        self.rng = np.random.default_rng(check_int(random_state, "random_state", low=0))

    def remove(self, prompt_ids: Any, max_new_tokens: int = 300, eos_ids: Any = None) -> list[int]:
        """Generate with a random half of each step's top-k pushed down by ``delta_hat``; returns generated ids."""
        prompt = check_id_batch([prompt_ids], int(self.oracle.vocab_size), "prompt_ids")[0]
        max_new_tokens = check_int(max_new_tokens, "max_new_tokens", low=1)
        eos = _check_eos(eos_ids)
        out: list[int] = []
        for _ in range(max_new_tokens):
            ids, lps = self.oracle.topk_logprobs([prompt + out], self.top_k)
            g = np.zeros(self.top_k, dtype=bool)
            g[self.rng.choice(self.top_k, self.top_k // 2, replace=False)] = True
            tok = int(ids[0, _draw(self.rng, lps[0] - self.delta_hat * g)])
            out.append(tok)
            if tok in eos:
                break
        return out


class Spoofer:
    """Watermark exploitation (spec §2.9): an unwatermarked surrogate's text pushed onto the target's green lists.

    At each step: the surrogate's logits with EOS suppressed, its top-k ``K_t``, the target's green list on
    ``K_t`` by probing the target with the last ``h_hat`` ids, ``+ delta_hat`` on it, sample within ``K_t``.

    Parameters
    ----------
    target_prober : RandomSelectionProber or SimulatedProbeOracle
        Probes the watermarked target.
    surrogate : NextTokenLM
        Unwatermarked model with the same vocabulary.
    h_hat : int
    delta_hat : float
    top_k : int
    random_state : int

    Examples
    --------
    >>> from icml25.demark import InstructionFollowingLM, ProbeTemplate, SimulatedProbeOracle
    >>> t = ProbeTemplate(pre=(0,), mid=(1,), post=(2,) * 10)
    >>> sp = Spoofer(SimulatedProbeOracle(30, h=1), InstructionFollowingLM(t, vocab_size=30), 1, 2.0, top_k=5)
    >>> len(sp.generate([4, 5], max_new_tokens=3))
    3
    """

    def __init__(self, target_prober: Any, surrogate: NextTokenLM, h_hat: int, delta_hat: float, top_k: int = 20,
                 random_state: int = 0):
        if not hasattr(target_prober, "ratio_matrix"):
            raise TypeError(f"target_prober must have ratio_matrix, got {type(target_prober).__name__}")
        if not isinstance(surrogate, NextTokenLM):
            raise TypeError(f"surrogate must be a NextTokenLM, got {type(surrogate).__name__}")
        if int(target_prober.vocab_size) != surrogate.vocab_size:
            raise ValueError(f"vocabularies do not match: target vocab_size={target_prober.vocab_size}, "
                             f"surrogate vocab_size={surrogate.vocab_size}")
        self.prober, self.surrogate = target_prober, surrogate
        self.h_hat = check_int(h_hat, "h_hat", low=1)
        self.delta_hat = check_positive(delta_hat, "delta_hat")
        self.top_k = check_int(top_k, "top_k", low=2)
        self.rng = np.random.default_rng(check_int(random_state, "random_state", low=0))

    def generate(self, prompt_ids: Any, max_new_tokens: int = 300, eos_ids: Any = None) -> list[int]:
        """Spoofed continuation of ``prompt_ids`` (EOS suppressed, so exactly ``max_new_tokens`` ids)."""
        prompt = check_id_batch([prompt_ids], self.surrogate.vocab_size, "prompt_ids")[0]
        max_new_tokens = check_int(max_new_tokens, "max_new_tokens", low=1)
        eos = sorted(_check_eos(eos_ids))
        out: list[int] = []
        for _ in range(max_new_tokens):
            ctx = prompt + out
            lp = self.surrogate.next_logprobs([ctx])[0]
            if eos:
                lp[eos] = -1e5
            ids = np.argsort(-lp, kind="stable")[: self.top_k]
            g = identify_green_list(self.prober, ctx[-self.h_hat:], ids, self.delta_hat)
            out.append(int(ids[_draw(self.rng, lp[ids] + self.delta_hat * g)]))
        return out
