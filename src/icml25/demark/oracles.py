"""What the De-mark attacker may call: a next-token oracle (gray-box top-K log-probs or black-box samples).

Served language models (:class:`NextTokenLM`: full next-token log-probabilities of id sequences) are wrapped into
oracles (:class:`LMOracle`, :class:`WatermarkedOracle`); the attack code only ever sees the two oracle methods
``topk_logprobs`` and ``sample`` (spec §2.2), never the key, the hash, ``h`` or ``delta``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from icml25.core.validation import check_int

from ._ids import check_ids

__all__ = ["NextTokenLM", "HFNextTokenLM", "LocalLM", "LMOracle", "WatermarkedOracle", "HFCausalLMOracle",
           "OpenAICompatibleOracle", "check_id_batch"]


def check_id_batch(batch: Any, vocab_size: int, name: str = "batch") -> list[list[int]]:
    """Validate a non-empty list of non-empty token-id sequences with ids in ``[0, vocab_size)``."""
    if isinstance(batch, (str, bytes)) or not isinstance(batch, (list, tuple)):
        raise TypeError(f"{name} must be a list of token-id lists, got {type(batch).__name__}")
    if not batch:
        raise ValueError(f"{name} must hold at least one sequence, got an empty list")
    return [check_ids(seq, f"{name}[{i}]", vocab_size) for i, seq in enumerate(batch)]


def _log_softmax(x: np.ndarray) -> np.ndarray:
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


def _topk(lp: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` ids per row (ties by lower id) and their values, sorted by decreasing value."""
    part = np.argpartition(-lp, k - 1, axis=1)[:, :k] if k < lp.shape[1] else np.tile(np.arange(lp.shape[1]),
                                                                                     (len(lp), 1))
    vals = np.take_along_axis(lp, part, axis=1)
    order = np.argsort(-vals, axis=1, kind="stable")
    ids = np.take_along_axis(part, order, axis=1)
    return ids, np.take_along_axis(lp, ids, axis=1)


class NextTokenLM(ABC):
    """A served language model: next-token log-probabilities of token-id sequences.

    Subclasses implement :meth:`next_logprobs` and set ``vocab_size``.
    """

    vocab_size: int

    @abstractmethod
    def next_logprobs(self, batch: list[list[int]]) -> np.ndarray:
        """Log-probabilities of the next token after each sequence, shape ``(len(batch), vocab_size)``."""


class LocalLM(NextTokenLM):
    """Any causal torch module mapping ids ``(B, T)`` to logits ``(B, T, V)`` (or an object with ``.logits``).

    Sequences are right-padded (harmless for a causal model) and the logits read at each sequence's last token.

    Parameters
    ----------
    module : torch.nn.Module or callable
        The causal network.
    vocab_size : int
        Size of its output layer.
    batch_size : int
        Sequences per forward pass.

    Examples
    --------
    >>> import torch
    >>> net = torch.nn.Sequential(torch.nn.Embedding(10, 4), torch.nn.Linear(4, 10))
    >>> LocalLM(net, vocab_size=10).next_logprobs([[1, 2], [3]]).shape
    (2, 10)
    """

    def __init__(self, module: Any, vocab_size: int, batch_size: int = 32):
        if not callable(module):
            raise TypeError(f"module must be a callable torch module, got {type(module).__name__}")
        self.module = module
        self.vocab_size = check_int(vocab_size, "vocab_size", low=2)
        self.batch_size = check_int(batch_size, "batch_size", low=1)

    def next_logprobs(self, batch: list[list[int]]) -> np.ndarray:
        import torch

        batch = check_id_batch(batch, self.vocab_size)
        params = getattr(self.module, "parameters", None)
        first = next(iter(params()), None) if callable(params) else None
        device = first.device if first is not None else torch.device("cpu")  # ids go where the module's weights are
        rows = []
        with torch.no_grad():
            for s in range(0, len(batch), self.batch_size):
                chunk = batch[s: s + self.batch_size]
                T = max(len(c) for c in chunk)
                idx = torch.zeros((len(chunk), T), dtype=torch.long, device=device)
                for r, c in enumerate(chunk):
                    idx[r, : len(c)] = torch.tensor(c, device=device)
                out = self.module(idx)
                logits = getattr(out, "logits", out)
                last = torch.tensor([len(c) - 1 for c in chunk], device=logits.device)
                rows.append(logits[torch.arange(len(chunk), device=logits.device), last].float().cpu().numpy())
        out = np.concatenate(rows)
        if out.shape[1] != self.vocab_size:
            raise ValueError(f"the module returned {out.shape[1]} logits per token, expected vocab_size={self.vocab_size}")
        return _log_softmax(out.astype(np.float64))


class HFNextTokenLM(NextTokenLM):
    """A transformers causal LM (or an :class:`icml25.llm.HFModel`) served on token ids, with prefix sharing.

    The scoring is :class:`icml25.llm.NextTokenLogprobs`: the longest prefix common to a batch (probe queries share
    the whole chat template and context) is run once and its KV cache reused by every row, the output layer runs
    only at each sequence's last position, and a sequence that extends a recently scored one by one token continues
    from its KV cache. An ``HFModel`` keeps its (native) backend.

    Parameters
    ----------
    model : transformers PreTrainedModel or icml25.llm.HFModel
    batch_size : int
        Sequences per forward pass.
    share_prefix : bool
        Reuse the KV cache of the common prefix (results equal the plain forward up to float rounding).
    incremental : int
        Batches of at most this many sequences use the per-sequence caches (decoding one token at a time).
    """

    def __init__(self, model: Any, batch_size: int = 32, share_prefix: bool = True, incremental: int = 8):
        from icml25.llm.token_scoring import NextTokenLogprobs

        if not (hasattr(model, "_engine") or (hasattr(model, "get_output_embeddings") and hasattr(model, "config"))):
            raise TypeError(f"model must be a transformers causal LM or an icml25.llm.HFModel, got {type(model).__name__}")
        self._model = model
        self._oracle = NextTokenLogprobs(model, batch_size=batch_size, share_prefix=share_prefix,
                                         incremental=incremental)
        self.vocab_size = self._oracle.vocab_size
        self.batch_size, self.share_prefix, self.incremental = (self._oracle.batch_size, self._oracle.share_prefix,
                                                                self._oracle.incremental)

    @property
    def net(self) -> Any:
        """The transformers network (for an ``HFModel`` this builds ``model.model`` and switches it to transformers)."""
        return getattr(self._model, "model", self._model)

    def next_logprobs(self, batch: list[list[int]]) -> np.ndarray:
        return self._oracle(check_id_batch(batch, self.vocab_size))


class LMOracle:
    """The oracle interface over a served model: top-K log-probabilities (gray-box) and samples (black-box).

    Parameters
    ----------
    lm : NextTokenLM
        The served model.
    random_state : int
        Seed of the sampling generator (black-box answers).

    Attributes
    ----------
    n_queries : int
        Number of sequences sent so far (both methods).
    """

    def __init__(self, lm: NextTokenLM, random_state: int = 0):
        if not isinstance(lm, NextTokenLM):
            raise TypeError(f"lm must be a NextTokenLM (e.g. HFNextTokenLM, LocalLM), got {type(lm).__name__}")
        self.lm = lm
        self.vocab_size = lm.vocab_size
        self.n_queries = 0
        self._rng = np.random.default_rng(check_int(random_state, "random_state", low=0))

    def _served_logprobs(self, batch: list[list[int]]) -> np.ndarray:
        return self.lm.next_logprobs(batch)

    def topk_logprobs(self, batch: Any, k: int = 20) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` next tokens and their log-probabilities after each sequence.

        Returns
        -------
        ids : int array (B, k), logps : float array (B, k), sorted by decreasing probability.
        """
        k = check_int(k, "k", low=1, high=self.vocab_size)
        batch = check_id_batch(batch, self.vocab_size)
        lp = self._served_logprobs(batch)
        self.n_queries += len(batch)
        return _topk(lp, k)

    def sample(self, batch: Any, n: int = 1) -> np.ndarray:
        """``n`` sampled next tokens per sequence (temperature 1), int array ``(B, n)``."""
        n = check_int(n, "n", low=1)
        batch = check_id_batch(batch, self.vocab_size)
        p = np.exp(self._served_logprobs(batch))
        self.n_queries += len(batch)
        cdf = np.cumsum(p / p.sum(axis=1, keepdims=True), axis=1)
        u = self._rng.random((len(batch), n))
        return np.minimum((cdf[:, None, :] < u[:, :, None]).sum(axis=2), self.vocab_size - 1)


class WatermarkedOracle(LMOracle):
    """Server-side simulation of a watermarked API: the served model's logits pass through the KGW watermark.

    The attacker receives only this object's ``topk_logprobs`` / ``sample`` answers (spec §5: the watermark is
    applied in-process, as in the official code); the watermark's key and parameters stay private.

    Parameters
    ----------
    lm : NextTokenLM
    watermark : KGWWatermark or any watermark object
        Anything with ``apply(logits (B, V) array, contexts: list of id lists) -> logits`` (its ``h`` attribute, if
        any, is the shortest context it accepts; shorter rows are served unwatermarked), or a Hugging Face
        ``LogitsProcessor``-style callable ``(input_ids (1, T) torch.long, scores (1, V) torch.float) -> scores``
        (e.g. MarkLLM's ``KGW(...).logits_processor``), called once per row. Its ``vocab_size`` (if it has one) must
        equal the model's.
    random_state : int

    Examples
    --------
    >>> import torch
    >>> from icml25.demark import KGWWatermark
    >>> net = torch.nn.Sequential(torch.nn.Embedding(10, 4), torch.nn.Linear(4, 10))
    >>> oracle = WatermarkedOracle(LocalLM(net, 10), KGWWatermark(10, delta=2.0, h=1))
    >>> ids, logps = oracle.topk_logprobs([[1, 2, 3]], k=3)
    >>> ids.shape, bool((np.diff(logps[0]) <= 0).all())
    ((1, 3), True)
    """

    def __init__(self, lm: NextTokenLM, watermark: Any, random_state: int = 0):
        super().__init__(lm, random_state)
        has_apply = callable(getattr(watermark, "apply", None))
        if not has_apply and not callable(watermark):
            raise TypeError("watermark must have an apply(logits, contexts) method or be a LogitsProcessor-style "
                            f"callable (input_ids, scores) -> scores, got {type(watermark).__name__}")
        v = getattr(watermark, "vocab_size", None)
        if v is not None and v != lm.vocab_size:
            raise ValueError(f"vocabularies do not match: watermark vocab_size={v}, model vocab_size={lm.vocab_size}")
        self._watermark = watermark
        self._has_apply = has_apply
        h = getattr(watermark, "h", 1) if has_apply else 1
        self._min_context = h if isinstance(h, int) and h >= 1 else 1

    def _served_logprobs(self, batch: list[list[int]]) -> np.ndarray:
        lp = self.lm.next_logprobs(batch)
        wm = self._watermark
        rows = [i for i, s in enumerate(batch) if len(s) >= self._min_context]
        if rows and self._has_apply:
            lp[rows] = np.asarray(wm.apply(lp[rows], [batch[i] for i in rows]), dtype=float)
        elif rows:
            import torch

            for i in rows:
                out = wm(torch.as_tensor([batch[i]], dtype=torch.long), torch.as_tensor(lp[i: i + 1].copy()))
                lp[i] = np.asarray(out.detach().cpu().numpy() if hasattr(out, "detach") else out, dtype=float)[0]
        return _log_softmax(lp)


class HFCausalLMOracle(LMOracle):
    """An unwatermarked oracle over a transformers model (``HFNextTokenLM``); wrap a real watermarked deployment
    or use :class:`WatermarkedOracle` to add a watermark in-process."""

    def __init__(self, model: Any, batch_size: int = 32, random_state: int = 0):
        super().__init__(HFNextTokenLM(model, batch_size=batch_size), random_state)


class OpenAICompatibleOracle:
    """Oracle over an OpenAI-compatible completions server that returns ``top_logprobs`` (vLLM, TGI, llama.cpp).

    Prompts are sent as token-id lists with ``max_tokens=1``; ``logprobs=k`` and ``return_tokens_as_token_ids``
    (vLLM) make the answer carry ids as ``"token_id:<n>"`` strings. The requests go through the llm layer's client
    (:meth:`icml25.llm.OpenAIServer.next_token_topk_ids` / :meth:`~icml25.llm.OpenAIServer.sample_next_token_ids`:
    retries, one-line errors).

    Parameters
    ----------
    base_url : str
        Server root, e.g. ``"http://localhost:8000/v1"``.
    model : str
        Served model name.
    vocab_size : int
    api_key : str, optional
    timeout : float
        Seconds per request.
    """

    def __init__(self, base_url: str, model: str, vocab_size: int, api_key: str | None = None, timeout: float = 60.0):
        from icml25.llm.openai_server import OpenAIServer

        for name, v in (("base_url", base_url), ("model", model)):
            if not isinstance(v, str) or not v.strip():
                raise ValueError(f"{name} must be a non-empty string, got {v!r}")
        self.base_url, self.model = base_url.rstrip("/"), model
        self.vocab_size = check_int(vocab_size, "vocab_size", low=2)
        self.api_key, self.timeout = api_key, float(timeout)
        self.server = OpenAIServer(self.base_url, model, api_key=api_key, timeout=timeout)
        self.n_queries = 0

    def topk_logprobs(self, batch: Any, k: int = 20) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` ids and log-probabilities per sequence (``k`` <= the server's limit, usually 20)."""
        k = check_int(k, "k", low=1)
        batch = check_id_batch(batch, self.vocab_size)
        ids, lps = self.server.next_token_topk_ids(batch, k)
        self.n_queries += len(batch)
        return ids, lps

    def sample(self, batch: Any, n: int = 1) -> np.ndarray:
        """``n`` sampled next tokens per sequence (temperature 1)."""
        n = check_int(n, "n", low=1)
        batch = check_id_batch(batch, self.vocab_size)
        out = self.server.sample_next_token_ids(batch, n)
        self.n_queries += len(batch)
        return out
