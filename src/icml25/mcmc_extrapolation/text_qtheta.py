"""q_θ for text: a pretrained causal LM fine-tuned on the MCMC episodes (spec §2.3, reconstructed).

An episode ``(x_0, s_0), …, (x_K, s_K)`` (texts and guide scores of the selected chain states) gives one training
pair per transition ``j -> j+1``: the prompt is the last ``history`` states with their discretised score tokens
followed by the score token of the next state, the answer is the next state's text (plus end-of-sequence)::

    <score 3> the food was ok\\n<score 5> the food was good\\n<score 7>   ->   the food was great<eos>

Scores are cut into ``n_bins`` equal bins over the range seen in the episodes. Training is the shared LoRA
fine-tuning of :func:`icml25.llm.finetune` (answer tokens only); generation is :meth:`icml25.llm.HFModel.generate`.
At test time :meth:`TextQTheta.transform` requests the top bin (or ``target_bin``) and runs a few steps, drawing
``n_candidates`` per step and keeping the best under the guide (best-of-n; ``n_candidates`` guide calls per step).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml25.core.optional import require
from icml25.core.validation import check_int, check_positive, check_real

__all__ = ["TextQTheta", "TextTransformResult", "episode_pairs"]


@dataclass
class TextTransformResult:
    """Output of :meth:`TextQTheta.transform`.

    Attributes
    ----------
    texts : list of list of str
        ``texts[i][t]``: input ``i`` after step ``t`` (step 0 = the input).
    values : (n, steps+1) float array
        Guide value after every step.
    n_evals : int
        Guide calls per input (``steps * n_candidates``).
    invalid_rate : float
        Fraction of sampled candidates that were empty (never chosen).
    """

    texts: list[list[str]]
    values: np.ndarray
    n_evals: int
    invalid_rate: float


def _clean(text: str) -> str:
    return " ".join(str(text).split())


def _state(text: str, b: int) -> str:
    return f"<score {b}> {_clean(text)}"


def episode_pairs(episodes: Sequence[tuple[Sequence[str], Any]], bin_of: Callable[[float], int],
                  history: int = 2) -> list[tuple[str, str]]:
    """(prompt, answer) training pairs of text episodes (see the module docstring), one per transition."""
    history = check_int(history, "history", low=1)
    pairs = []
    for texts, scores in episodes:
        sc = np.asarray(scores, dtype=float)
        if len(texts) != len(sc):
            raise ValueError(f"an episode has {len(texts)} texts but {len(sc)} scores")
        for j in range(1, len(texts)):
            lo = max(0, j - history)
            prompt = "".join(_state(texts[i], bin_of(sc[i])) + "\n" for i in range(lo, j)) + f"<score {bin_of(sc[j])}>"
            pairs.append((prompt, " " + _clean(texts[j])))
    return pairs


class TextQTheta:
    """The extrapolative transformation model q_θ on text: a causal LM fine-tuned (LoRA) on episode transitions.

    Parameters
    ----------
    model : str
        ``hf:<folder>`` of any ``transformers`` causal LM (the paper fine-tunes a pretrained LM, e.g. GPT-2).
    device : str
        Torch device.
    history : int
        States of the episode shown in the prompt (spec §2.3: H = 2).
    n_bins : int
        Score bins of the score tokens.
    """

    def __init__(self, model: str, device: str = "cpu", history: int = 2, n_bins: int = 8) -> None:
        require("torch", extra="torch")
        require("peft", extra="llm")
        from icml25.llm.hf import HFModel

        from ..llm.transformers_models import model_folder

        path = model_folder(model, "model")
        self.lm = HFModel(str(path), device=device, backend="transformers")
        self.history = check_int(history, "history", low=1)
        self.n_bins = check_int(n_bins, "n_bins", low=1)
        self.lo, self.hi = 0.0, 1.0
        self.losses: list[float] = []
        self._peft: Any = None

    def bin_of(self, score: float) -> int:
        """The score token of ``score``: ``0 .. n_bins-1`` over the fitted range (clipped)."""
        s = check_real(score, "score")
        width = (self.hi - self.lo) / self.n_bins or 1.0
        return int(np.clip(np.floor((s - self.lo) / width), 0, self.n_bins - 1))

    def pairs(self, episodes: Sequence[tuple[Sequence[str], Any]]) -> list[tuple[str, str]]:
        """Training pairs of ``episodes`` with this model's bins."""
        return episode_pairs(episodes, self.bin_of, self.history)

    def loss(self, pairs: Sequence[tuple[str, str]], batch_size: int = 16) -> float:
        """Mean answer-token cross-entropy of the current model on ``pairs`` (no gradient)."""
        import torch

        from icml25.llm.lora import answer_batch, answer_loss

        if not pairs:
            raise ValueError("pairs must not be empty")
        eos = self.lm.eos_ids[0] if getattr(self.lm, "eos_ids", None) else None
        total, count = 0.0, 0
        with torch.no_grad():
            for s in range(0, len(pairs), batch_size):
                rows = [(self.lm.prompt_ids(p), self.lm.continuation_ids(a)) for p, a in pairs[s:s + batch_size]]
                b = answer_batch(rows, pad_id=self.lm.pad_id or 0, eos=eos, device=self.lm.device)
                total += float(answer_loss(self.lm.model, b)) * b.n_targets
                count += b.n_targets
        return total / count

    def fit(self, episodes: Sequence[tuple[Sequence[str], Any]], steps: int = 200, lr: float = 2e-4,
            batch_size: int = 8, r: int = 16, seed: int = 0, progress: bool = False) -> TextQTheta:
        """Fit the score bins to the episodes' range and LoRA-fine-tune on their transitions
        (:func:`icml25.llm.finetune`)."""
        from icml25.llm.lora import finetune

        if not episodes:
            raise ValueError("episodes is empty: no chain produced two selected states (run longer chains or more)")
        all_scores = np.concatenate([np.asarray(s, dtype=float) for _, s in episodes])
        self.lo, self.hi = float(all_scores.min()), float(all_scores.max())
        data = self.pairs(episodes)
        out = finetune(self.lm, data, steps=check_int(steps, "steps", low=1), lr=check_positive(lr, "lr"),
                       batch_size=check_int(batch_size, "batch_size", low=1), r=check_int(r, "r", low=1),
                       seed=check_int(seed, "seed", low=0), progress=progress, desc="q_theta (text) LoRA")
        self.losses = list(out.losses)
        self._peft = out.model
        return self

    def base_perplexity(self, texts: list[str]) -> np.ndarray:
        """(n,) perplexity of ``texts`` under the backbone *without* the fine-tuned adapter (fluency)."""
        from contextlib import nullcontext

        from .text_models import perplexity

        with self._peft.disable_adapter() if self._peft is not None else nullcontext():
            return perplexity(self.lm, texts)

    def transform(self, texts: list[str], guide: Callable[[list[str], np.ndarray], np.ndarray], steps: int = 5,
                  n_candidates: int = 4, temperature: float = 1.0, max_tokens: int = 64,
                  target_bin: int | None = None, seed: int = 0) -> TextTransformResult:
        """Transform each text for ``steps`` steps, best-of-``n_candidates`` under ``guide`` per step.

        ``guide(texts, rows)`` scores candidate texts of the inputs ``rows``. The best candidate replaces the current
        state even when it scores lower (no acceptance test, as for :class:`~icml25.mcmc_extrapolation.QTheta`); a
        step whose candidates are all empty keeps the current state.
        """
        from .text_models import _check_texts

        texts = [_clean(t) for t in _check_texts(texts)]
        steps = check_int(steps, "steps", low=1)
        k = check_int(n_candidates, "n_candidates", low=1)
        check_positive(temperature, "temperature")
        max_tokens = check_int(max_tokens, "max_tokens", low=1)
        tb = self.n_bins - 1 if target_bin is None else check_int(target_bin, "target_bin", low=0)
        rng = np.random.default_rng(seed)
        n = len(texts)
        rows = np.arange(n)
        values = np.full((n, steps + 1), np.nan)
        values[:, 0] = np.asarray(guide(texts, rows), dtype=float)
        hist: list[list[tuple[str, float]]] = [[(t, v)] for t, v in zip(texts, values[:, 0])]
        out = [[t] for t in texts]
        bad = 0
        for s in range(steps):
            prompts = ["".join(_state(t, self.bin_of(v)) + "\n" for t, v in h[-self.history:]) + f"<score {tb}>"
                       for h in hist]
            gens = self.lm.generate(prompts, n=k, temperature=temperature, max_tokens=max_tokens, stop=["\n"],
                                    seed=int(rng.integers(2**31)))
            cand = [[_clean(g.text) for g in row] for row in gens]
            flat = [c for row in cand for c in row]
            owner = np.repeat(rows, k)
            ok = np.array([bool(c) for c in flat])
            g = np.full(len(flat), -np.inf)
            if ok.any():
                g[ok] = np.asarray(guide([c for c, o in zip(flat, ok) if o], owner[ok]), dtype=float)
            bad += int((~ok).sum())
            g = g.reshape(n, k)
            for i in range(n):
                j = int(np.argmax(g[i]))
                if np.isfinite(g[i, j]):
                    hist[i].append((cand[i][j], float(g[i, j])))
                    values[i, s + 1] = g[i, j]
                else:
                    hist[i].append(hist[i][-1])
                    values[i, s + 1] = values[i, s]
                out[i].append(hist[i][-1][0])
        return TextTransformResult(texts=out, values=values, n_evals=steps * k, invalid_rate=bad / (n * k * steps))
