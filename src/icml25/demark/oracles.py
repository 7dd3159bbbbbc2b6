"""What the De-mark attacker may call: a next-token oracle (gray-box top-K log-probs or black-box samples).

Served language models (:class:`NextTokenLM`: full next-token log-probabilities of id sequences) are wrapped into
oracles (:class:`LMOracle`, :class:`WatermarkedOracle`); the attack code only ever sees the two oracle methods
``topk_logprobs`` and ``sample`` (spec §2.2), never the key, the hash, ``h`` or ``delta``.
"""

from __future__ import annotations

import copy
import json
from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from icml25.core.validation import check_int

from ._ids import check_ids
from .watermark import KGWWatermark

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
        rows = []
        with torch.no_grad():
            for s in range(0, len(batch), self.batch_size):
                chunk = batch[s: s + self.batch_size]
                T = max(len(c) for c in chunk)
                idx = torch.zeros((len(chunk), T), dtype=torch.long)
                for r, c in enumerate(chunk):
                    idx[r, : len(c)] = torch.tensor(c)
                out = self.module(idx)
                logits = getattr(out, "logits", out)
                last = torch.tensor([len(c) - 1 for c in chunk])
                rows.append(logits[torch.arange(len(chunk)), last].float().numpy())
        out = np.concatenate(rows)
        if out.shape[1] != self.vocab_size:
            raise ValueError(f"the module returned {out.shape[1]} logits per token, expected vocab_size={self.vocab_size}")
        return _log_softmax(out.astype(np.float64))


class HFNextTokenLM(NextTokenLM):
    """A transformers causal LM (or an :class:`icml25.llm.HFModel`) served on token ids, with prefix sharing.

    The longest prefix common to a batch (probe queries share the whole chat template and context) is run once;
    its KV cache is repeated over the batch and only the suffixes are computed, and the output layer runs only at
    each sequence's last position.

    Parameters
    ----------
    model : transformers PreTrainedModel or icml25.llm.HFModel
    batch_size : int
        Sequences per forward pass.
    share_prefix : bool
        Reuse the KV cache of the common prefix (results equal the plain forward up to float rounding).
    """

    def __init__(self, model: Any, batch_size: int = 32, share_prefix: bool = True, incremental: int = 8):
        net = getattr(model, "model", model)
        if not hasattr(net, "get_output_embeddings") or not hasattr(net, "config"):
            raise TypeError(f"model must be a transformers causal LM or an icml25.llm.HFModel, got {type(model).__name__}")
        self.net = net.eval()
        self.vocab_size = int(net.get_output_embeddings().weight.shape[0])
        self.batch_size = check_int(batch_size, "batch_size", low=1)
        self.share_prefix = bool(share_prefix)
        self.incremental = check_int(incremental, "incremental", low=0)
        self._inc: dict[tuple[int, ...], Any] = {}  # sequence -> its KV cache (decoding that extends it by one id)
        self._memo: dict[tuple[int, ...], np.ndarray] = {}  # the last answers (a repeated query is free)

    def _one(self, seq: list[int], torch: Any) -> np.ndarray:
        """Logits after one sequence, extending a stored KV cache of ``seq[:-1]`` when there is one."""
        from transformers import DynamicCache

        key = tuple(seq)
        prev = self._inc.pop(key[:-1], None)
        if prev is not None:
            idx, start, cache = torch.tensor([seq[-1:]]), len(seq) - 1, prev
        else:
            idx, start, cache = torch.tensor([seq]), 0, DynamicCache()
        pos = (start + torch.arange(idx.shape[1]))[None]
        hidden, cache = self._body(idx, torch.ones((1, start + idx.shape[1]), dtype=torch.long), pos, cache)
        self._inc[key] = cache
        while len(self._inc) > self.incremental:
            self._inc.pop(next(iter(self._inc)))
        return self.net.get_output_embeddings()(hidden[:, -1]).float().numpy()[0]

    def _body(self, idx: Any, mask: Any, pos: Any, cache: Any = None) -> tuple[Any, Any]:
        import inspect

        body = self.net.base_model
        kw = "cache" if "cache" in inspect.signature(body.forward).parameters else "past_key_values"
        out = body(input_ids=idx, attention_mask=mask, position_ids=pos, use_cache=cache is not None, **{kw: cache})
        new = getattr(out, "cache", None)
        return out.last_hidden_state, (new if new is not None else out.past_key_values)

    def next_logprobs(self, batch: list[list[int]]) -> np.ndarray:
        import torch

        batch = check_id_batch(batch, self.vocab_size)
        keys = [tuple(s) for s in batch]
        if all(k in self._memo for k in keys):
            return np.stack([self._memo[k] for k in keys])
        with torch.no_grad():
            if len(batch) <= self.incremental:
                out = np.stack([self._one(s, torch) for s in batch])
            else:
                out = np.concatenate([self._chunk(batch[s: s + self.batch_size], torch)
                                      for s in range(0, len(batch), self.batch_size)])
        out = _log_softmax(out.astype(np.float64))
        if len(batch) <= self.incremental:
            self._memo = dict(zip(keys, out))
        return out.copy()

    def _chunk(self, chunk: list[list[int]], torch: Any) -> np.ndarray:
        B = len(chunk)
        P = 0
        if self.share_prefix and B > 1:
            first, lim = chunk[0], min(len(c) for c in chunk) - 1
            while P < lim and all(c[P] == first[P] for c in chunk):
                P += 1
        cache = None
        if P >= 8:
            from transformers import DynamicCache

            pre = torch.tensor([chunk[0][:P]])
            _, cache = self._body(pre, torch.ones_like(pre), torch.arange(P)[None], DynamicCache())
            cache = copy.deepcopy(cache)
            cache.batch_repeat_interleave(B)
        else:
            P = 0
        suf = [c[P:] for c in chunk]
        T = max(len(c) for c in suf)
        idx = torch.zeros((B, T), dtype=torch.long)
        mask = torch.zeros((B, P + T), dtype=torch.long)
        mask[:, :P] = 1
        for r, c in enumerate(suf):
            idx[r, : len(c)] = torch.tensor(c)
            mask[r, P: P + len(c)] = 1
        pos = (P + torch.arange(T))[None].expand(B, T)
        hidden, _ = self._body(idx, mask, pos, cache)
        last = torch.tensor([len(c) - 1 for c in suf])
        logits = self.net.get_output_embeddings()(hidden[torch.arange(B), last])
        return logits.float().numpy()


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
    watermark : KGWWatermark
        Its ``vocab_size`` must equal the model's.
    random_state : int

    Examples
    --------
    >>> import torch
    >>> net = torch.nn.Sequential(torch.nn.Embedding(10, 4), torch.nn.Linear(4, 10))
    >>> oracle = WatermarkedOracle(LocalLM(net, 10), KGWWatermark(10, delta=2.0, h=1))
    >>> ids, logps = oracle.topk_logprobs([[1, 2, 3]], k=3)
    >>> ids.shape, bool((np.diff(logps[0]) <= 0).all())
    ((1, 3), True)
    """

    def __init__(self, lm: NextTokenLM, watermark: KGWWatermark, random_state: int = 0):
        super().__init__(lm, random_state)
        if not isinstance(watermark, KGWWatermark):
            raise TypeError(f"watermark must be a KGWWatermark, got {type(watermark).__name__}")
        if watermark.vocab_size != lm.vocab_size:
            raise ValueError(f"vocabularies do not match: watermark vocab_size={watermark.vocab_size}, "
                             f"model vocab_size={lm.vocab_size}")
        self._watermark = watermark

    def _served_logprobs(self, batch: list[list[int]]) -> np.ndarray:
        lp = self.lm.next_logprobs(batch)
        wm = self._watermark
        rows = [i for i, s in enumerate(batch) if len(s) >= wm.h]
        if rows:
            lp[rows] = wm.apply(lp[rows], [batch[i] for i in rows])
        return _log_softmax(lp)


class HFCausalLMOracle(LMOracle):
    """An unwatermarked oracle over a transformers model (``HFNextTokenLM``); wrap a real watermarked deployment
    or use :class:`WatermarkedOracle` to add a watermark in-process."""

    def __init__(self, model: Any, batch_size: int = 32, random_state: int = 0):
        super().__init__(HFNextTokenLM(model, batch_size=batch_size), random_state)


class OpenAICompatibleOracle:
    """Oracle over an OpenAI-compatible completions server that returns ``top_logprobs`` (vLLM, TGI, llama.cpp).

    Prompts are sent as token-id lists (``prompt: [ids]``) with ``max_tokens=1``; ``logprobs=k`` and
    ``return_tokens_as_token_ids`` (vLLM) make the answer carry ids as ``"token_id:<n>"`` strings.

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
        for name, v in (("base_url", base_url), ("model", model)):
            if not isinstance(v, str) or not v.strip():
                raise ValueError(f"{name} must be a non-empty string, got {v!r}")
        self.base_url, self.model = base_url.rstrip("/"), model
        self.vocab_size = check_int(vocab_size, "vocab_size", low=2)
        self.api_key, self.timeout = api_key, float(timeout)
        self.n_queries = 0

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        import urllib.request

        req = urllib.request.Request(self.base_url + "/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json",
                                              **({"Authorization": f"Bearer {self.api_key}"} if self.api_key else {})})
        with urllib.request.urlopen(req, timeout=self.timeout) as r:  # noqa: S310 (user-given server)
            return json.loads(r.read())

    @staticmethod
    def _token_id(s: str) -> int:
        if not s.startswith("token_id:"):
            raise ValueError(f"the server returned token {s!r} without its id; run vLLM with "
                             "return_tokens_as_token_ids support")
        return int(s.split(":", 1)[1])

    def topk_logprobs(self, batch: Any, k: int = 20) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` ids and log-probabilities per sequence (``k`` <= the server's limit, usually 20)."""
        k = check_int(k, "k", low=1)
        batch = check_id_batch(batch, self.vocab_size)
        res = self._post({"model": self.model, "prompt": batch, "max_tokens": 1, "logprobs": k, "temperature": 0,
                          "return_tokens_as_token_ids": True})
        self.n_queries += len(batch)
        ids = np.full((len(batch), k), -1, dtype=np.int64)
        lps = np.full((len(batch), k), -np.inf)
        for ch in res["choices"]:
            top = sorted(ch["logprobs"]["top_logprobs"][0].items(), key=lambda kv: -kv[1])[:k]
            for j, (tok, lp) in enumerate(top):
                ids[ch["index"], j], lps[ch["index"], j] = self._token_id(tok), lp
        return ids, lps

    def sample(self, batch: Any, n: int = 1) -> np.ndarray:
        """``n`` sampled next tokens per sequence (temperature 1)."""
        n = check_int(n, "n", low=1)
        batch = check_id_batch(batch, self.vocab_size)
        res = self._post({"model": self.model, "prompt": batch, "max_tokens": 1, "n": n, "temperature": 1.0,
                          "logprobs": 1, "return_tokens_as_token_ids": True})
        self.n_queries += len(batch)
        out = np.zeros((len(batch), n), dtype=np.int64)
        counts = [0] * len(batch)
        for ch in res["choices"]:
            i = ch["index"] // n
            out[i, counts[i]] = self._token_id(ch["logprobs"]["tokens"][0])
            counts[i] += 1
        return out
