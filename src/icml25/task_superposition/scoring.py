"""Exact answer probabilities by teacher forcing on the ``icml25.llm`` backends (paper §2.2, official ``get_probs``).

``P(y | prompt) = prod_t p(y_t | prompt, y_<t)`` for y = answer + terminator, tokenised as the official code does:
the concatenation ``prompt + y`` is tokenised and the answer's tokens are those after the prompt's own tokens (when
the prompt's tokens are a prefix of the concatenation; otherwise the two parts are tokenised separately and the
mismatch is counted in :data:`LAST_STATS`).

Backends:

* :class:`~icml25.llm.hf.HFModel`: the prompt runs once (KV cache), then the K answers of that prompt run as one
  batch on K copies of the cache, so a prompt with K candidate answers costs one prompt pass instead of K.
* anything with ``next_logprobs`` (a :class:`TokenLM`, e.g. a mock with known probabilities): the product of the
  next-token probabilities, one forward per answer prefix (brute force).
* any other ``LanguageModel`` (:class:`~icml25.llm.tiny.TinyGPT`, :class:`~icml25.llm.openai_server.OpenAIServer`
  with ``echo`` + log-probs): its batched ``logprobs`` on the flattened (prompt, answer) pairs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from icml25.core.progress import progress

__all__ = ["TokenLM", "token_lm", "answer_probabilities", "LAST_STATS"]

#: diagnostics of the last :func:`answer_probabilities` call: ``{"rows": int, "boundary_mismatch": int}``
LAST_STATS: dict[str, int] = {"rows": 0, "boundary_mismatch": 0}


@runtime_checkable
class TokenLM(Protocol):
    """Token-level view of a causal LM: what exact scoring and beam enumeration need."""

    def encode_prompt(self, text: str) -> list[int]:
        """Token ids of a prompt (with the model's start tokens)."""
        ...

    def next_logprobs(self, seqs: list[list[int]]) -> np.ndarray:
        """Next-token log-probabilities after each id sequence, shape ``(len(seqs), vocab)``."""
        ...

    def decode(self, ids: list[int]) -> str:
        """Text of continuation ids."""
        ...


def _split_ids(encode: Any, prompt: str, cont: str, cont_alone: Any) -> tuple[list[int], list[int], bool]:
    """(prompt ids, continuation ids, boundary ok) by the concatenation rule."""
    p = list(encode(prompt))
    full = list(encode(prompt + cont))
    if full[:len(p)] == p and len(full) > len(p):
        return p, full[len(p):], True
    return p, list(cont_alone(cont)), False


class _HFTokenLM:
    def __init__(self, model: Any):
        self.m = model

    def encode_prompt(self, text: str) -> list[int]:
        return self.m._prompt_ids(text)

    def encode_continuation(self, prompt: str, cont: str) -> tuple[list[int], list[int], bool]:
        return _split_ids(self.m._prompt_ids, prompt, cont, self.m._cont_ids)

    def next_logprobs(self, seqs: list[list[int]]) -> np.ndarray:
        torch = self.m._torch
        out = []
        with torch.inference_mode():
            for s in seqs:
                idx = torch.tensor([s], dtype=torch.long, device=self.m.device)
                logits = self.m.model(input_ids=idx, **self.m._last_kw).logits[:, -1].float()
                out.append(torch.log_softmax(logits, -1).cpu().numpy()[0])
        return np.asarray(out, dtype=np.float64)

    def decode(self, ids: list[int]) -> str:
        return self.m.tokenizer.decode(ids, skip_special_tokens=True)


class _TinyTokenLM:
    def __init__(self, model: Any):
        self.m = model

    def encode_prompt(self, text: str) -> list[int]:
        return self.m._ids(text)

    def encode_continuation(self, prompt: str, cont: str) -> tuple[list[int], list[int], bool]:
        return self.encode_prompt(prompt), list(self.m.tokenizer.encode(cont)), True

    def next_logprobs(self, seqs: list[list[int]]) -> np.ndarray:
        import torch

        with torch.inference_mode():
            x = self.m._right_padded(seqs)
            logits = self.m.module(x).float()
            last = torch.tensor([len(s) - 1 for s in seqs])
            lp = torch.log_softmax(logits[torch.arange(len(seqs)), last], -1)
        return lp.cpu().numpy().astype(np.float64)

    def decode(self, ids: list[int]) -> str:
        return self.m.tokenizer.decode(ids)


def token_lm(model: Any) -> Any:
    """The :class:`TokenLM` view of ``model`` (an ``HFModel``, a ``TinyGPT`` or an object that already has
    ``encode_prompt``/``next_logprobs``/``decode``).

    Raises
    ------
    TypeError
        For a backend without token-level access (e.g. ``OpenAIServer``: use its ``logprobs``).
    """
    if isinstance(model, TokenLM):
        return model
    kind = type(model).__name__
    if kind == "HFModel":
        return _HFTokenLM(model)
    if kind == "TinyGPT":
        return _TinyTokenLM(model)
    raise TypeError(f"model must be an HFModel, a TinyGPT or a TokenLM (encode_prompt, next_logprobs, decode), "
                    f"got {kind}")


def _check_inputs(prompts: Any, answers: Any) -> tuple[list[str], list[list[str]]]:
    from .prompts import PromptItem

    if isinstance(prompts, (str, PromptItem)):
        prompts = [prompts]
    if not isinstance(prompts, Sequence) or len(prompts) == 0:
        raise ValueError(f"prompts must be a non-empty list of strings or PromptItems, got {prompts!r:.80}")
    if all(isinstance(p, PromptItem) for p in prompts):
        if answers is None:
            answers = [list(p.answers) for p in prompts]
        prompts = [p.prompt for p in prompts]
    for i, p in enumerate(prompts):
        if not isinstance(p, str):
            raise TypeError(f"prompts[{i}] must be a string or a PromptItem, got {type(p).__name__}")
    if answers is None:
        raise ValueError("answers must be given (one list of K answer strings per prompt) when prompts are strings")
    if isinstance(answers, str) or not isinstance(answers, Sequence) or len(answers) != len(prompts):
        raise ValueError(f"answers must be a list with one list of answer strings per prompt ({len(prompts)}), "
                         f"got {answers!r:.80}")
    out = []
    for i, a in enumerate(answers):
        if isinstance(a, str) or not isinstance(a, Sequence) or not a:
            raise ValueError(f"answers[{i}] must be a non-empty list of answer strings, got {a!r:.60}")
        for s in a:
            if not isinstance(s, str) or not s:
                raise ValueError(f"answers[{i}] must hold non-empty strings, got {s!r}")
        out.append(list(a))
    if len({len(a) for a in out}) != 1:
        raise ValueError("answers must give the same number K of answers for every prompt")
    return list(prompts), out


def answer_probabilities(model: Any, prompts: Any, answers: Sequence[Sequence[str]] | None = None,
                         terminator: str = "\n", show_progress: bool = False, patch: Any = None) -> np.ndarray:
    """Exact probability of each task's answer after each prompt (paper §2.2, teacher forcing).

    Parameters
    ----------
    model : HFModel, TinyGPT, OpenAIServer, TokenLM or any LanguageModel with ``logprobs``
    prompts : list of str or list of PromptItem, length n
    answers : list of list of str, shape (n, K), optional
        Candidate answers per prompt (default: the PromptItems' answers).
    terminator : str
        Appended to every answer before scoring (default ``"\\n"``: the events "the model answers exactly y_k" are
        disjoint, so ``sum_k P <= 1``); ``""`` is the official variant (P that the continuation *starts* with y_k).
    show_progress : bool
        Progress bar over prompts.
    patch : tuple (layer, vectors), optional
        Task-vector patching (HFModel and TinyGPT): the output of decoder layer ``layer`` (1-based) at the prompt's
        last token is replaced by ``vectors[i]`` (shape ``(n, d)``) during the forward pass (paper §5).

    Returns
    -------
    ndarray, shape (n, K)
        ``P(answers[i][k] + terminator | prompts[i])``.

    Examples
    --------
    >>> from icml25.task_superposition.testing_models import MockAnswerLM
    >>> lm = MockAnswerLM({"A": 0.6, "B": 0.3})      # after any prompt: "A\\n" w.p. 0.6, "B\\n" w.p. 0.3
    >>> answer_probabilities(lm, ["x="], [["A", "B"]]).round(6).tolist()
    [[0.6, 0.3]]
    """
    if not isinstance(terminator, str):
        raise TypeError(f"terminator must be a string ('' for the official unterminated variant), got "
                        f"{type(terminator).__name__}")
    prompts, answers = _check_inputs(prompts, answers)
    LAST_STATS.update(rows=len(prompts), boundary_mismatch=0)
    kind = type(model).__name__
    if kind == "HFModel":
        from ._hf_prefix import score_hf

        return score_hf(model, prompts, answers, terminator, show_progress, patch)
    if patch is not None:
        if kind != "TinyGPT":
            raise TypeError(f"patch= needs an HFModel or a TinyGPT, got {kind}")
        from .task_vectors import _tiny_patched_scores

        return _tiny_patched_scores(model, prompts, answers, terminator, patch)
    if isinstance(model, TokenLM) and not hasattr(model, "logprobs"):
        return _score_token_lm(model, prompts, answers, terminator, show_progress)
    if not hasattr(model, "logprobs"):
        raise TypeError(f"model must be a language model with logprobs() or a TokenLM, got {kind}")
    K = len(answers[0])
    ps = [p for p in prompts for _ in range(K)]
    cs = [a + terminator for row in answers for a in row]
    lps = []
    chunk = 64 * K
    for s in progress(range(0, len(ps), chunk), "scoring answers", disable=not show_progress):
        lps.extend(model.logprobs(ps[s:s + chunk], cs[s:s + chunk]))
    return np.exp(np.array([float(np.sum(x)) for x in lps])).reshape(len(prompts), K)


def _score_token_lm(lm: Any, prompts: list[str], answers: list[list[str]], terminator: str,
                    show_progress: bool) -> np.ndarray:
    """Brute force: one next-token distribution per answer prefix, multiplied."""
    out = np.zeros((len(prompts), len(answers[0])))
    enc = getattr(lm, "encode_continuation", None)
    for i in progress(range(len(prompts)), "scoring answers", disable=not show_progress):
        for k, a in enumerate(answers[i]):
            if enc is not None:
                p, c, ok = enc(prompts[i], a + terminator)
                LAST_STATS["boundary_mismatch"] += int(not ok)
            else:
                p, c = lm.encode_prompt(prompts[i]), lm.encode_prompt(a + terminator)
            lp = lm.next_logprobs([p + c[:t] for t in range(len(c))])
            out[i, k] = float(np.exp(sum(lp[t, c[t]] for t in range(len(c)))))
    return out
