"""OpenAIServer: any OpenAI-compatible *completions* endpoint (vLLM, llama.cpp server, TGI) as a language model.

Start a server, e.g. ``vllm serve Qwen/Qwen2.5-0.5B-Instruct --port 8000``, then
``OpenAIServer("http://localhost:8000/v1", model="Qwen/Qwen2.5-0.5B-Instruct")``. Only ``/v1/completions`` (raw
text prompts) is used, so every paper sees the same text-in/text-out interface.

Limitations: there is no local tokenizer, so :meth:`OpenAIServer.next_token_logits` can only report the server's
top-k next-token log-probabilities (see there), and there are no hidden states.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlparse

import numpy as np

from icml25.core.optional import require

from .base import Generation, check_sampling_args, truncate_at_stop, validate_prompts

__all__ = ["OpenAIServer", "OpenAIServerError"]


class OpenAIServerError(RuntimeError):
    """The server answered with an HTTP error or an unexpected body."""


class OpenAIServer:
    """Client for an OpenAI-compatible completions server with the common ``icml25.llm`` interface.

    Parameters
    ----------
    base_url : str
        Server root including the API version, e.g. ``"http://localhost:8000/v1"`` (``/v1`` is appended when the
        URL has no path).
    model : str
        Model name as the server knows it (``vllm serve <model>``).
    api_key : str, optional
        Sent as ``Authorization: Bearer <api_key>``.
    timeout : float
        Seconds per HTTP request.
    max_retries : int
        Retries after a connection error, HTTP 429 or 5xx (exponential back-off from 0.5 s).
    batch_size : int
        Prompts per request.
    vocab : list of str, optional
        Token strings for :meth:`next_token_logits` (e.g. ``["A", "B", "C", "D"]``).
    tokenizer : object, optional
        A local tokenizer of the same model, exposed as ``self.tokenizer`` (not used for requests).
    """

    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout: float = 60,
                 max_retries: int = 2, batch_size: int = 64, vocab: Sequence[str] | None = None,
                 tokenizer: Any = None):
        if not isinstance(base_url, str) or urlparse(base_url).scheme not in ("http", "https"):
            raise ValueError(f"base_url must be an http(s) URL such as 'http://localhost:8000/v1', got {base_url!r}")
        if not isinstance(model, str) or not model:
            raise ValueError(f"model must be the server's model name (a non-empty string), got {model!r}")
        if not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"max_retries must be an int >= 0, got {max_retries!r}")
        from icml25.core.validation import check_int, check_positive

        timeout = check_positive(timeout, "timeout")
        if isinstance(batch_size, float):
            raise TypeError(f"batch_size must be an integer, got {batch_size!r}")
        batch_size = check_int(batch_size, "batch_size", low=1)
        url = base_url.rstrip("/")
        if urlparse(url).path in ("", "/"):
            url += "/v1"
        self.base_url, self.model, self.timeout, self.max_retries = url, model, float(timeout), max_retries
        self.batch_size = int(batch_size)
        self.vocab = list(vocab) if vocab is not None else None
        self.tokenizer = tokenizer
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client: Any = None
        self._echo_max_tokens = 0  # some servers refuse max_tokens=0; then 1 and the extra token is ignored
        # whether the server reports which stop string ended a completion (vLLM's ``stop_reason``); None = not yet
        # known. Without it, two or more stop strings are applied here (the server would hide which one hit).
        self.reports_stop_reason: bool | None = None

    def __repr__(self) -> str:
        return f"OpenAIServer({self.base_url!r}, model={self.model!r})"

    # ------------------------------------------------------------------ transport
    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        httpx = require("httpx", extra="llm")
        if self._client is None:
            self._client = httpx.Client(timeout=self.timeout, headers=self._headers)
        url = f"{self.base_url}/completions"
        body = {"model": self.model, **body}
        for attempt in range(self.max_retries + 1):
            last = attempt == self.max_retries
            try:
                resp = self._client.post(url, json=body)
            except (httpx.ConnectError, httpx.TimeoutException, httpx.RemoteProtocolError) as exc:
                if last:
                    raise ConnectionError(
                        f"OpenAIServer: cannot reach {url} ({type(exc).__name__}: {exc}); is the server running? "
                        f"e.g. `vllm serve {self.model} --port 8000`") from None
            else:
                if resp.status_code == 200:
                    try:
                        return resp.json()
                    except ValueError:
                        raise OpenAIServerError(f"OpenAIServer: {url} returned a non-JSON body") from None
                if last or not (resp.status_code == 429 or resp.status_code >= 500):
                    raise OpenAIServerError(f"OpenAIServer: {url} returned HTTP {resp.status_code}: "
                                            f"{self._error_message(resp)}")
            time.sleep(0.5 * 2**attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _error_message(resp: Any) -> str:
        try:
            err = resp.json().get("error", resp.json())
            msg = err.get("message", err) if isinstance(err, dict) else err
        except (ValueError, AttributeError):
            msg = resp.text
        return " ".join(str(msg).split())[:300]

    def _choices(self, body: dict[str, Any], expected: int) -> list[dict[str, Any]]:
        data = self._post(body)
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list) or len(choices) != expected:
            got = len(choices) if isinstance(choices, list) else type(choices).__name__
            raise OpenAIServerError(f"OpenAIServer: expected {expected} choices in the response, got {got}")
        return sorted(choices, key=lambda c: c.get("index", 0))

    # ------------------------------------------------------------------ interface
    def generate(self, prompts: list[str], n: int = 1, temperature: float = 1.0, top_p: float = 1.0,
                 max_tokens: int = 64, stop: list[str] | None = None,
                 seed: int | None = None) -> list[list[Generation]]:
        """Sample ``n`` completions of each prompt via ``POST /completions``.

        Returns ``out[i][j]``, sample ``j`` of prompt ``i``. ``token_logprobs`` are the server's
        (``logprobs=1``); ``stop`` is the server's ``stop_reason`` when it reports one (vLLM does) or the only stop
        string given. With two or more stop strings and a server that does not report ``stop_reason`` (llama.cpp,
        TGI, OpenAI), the server could not say which one ended a completion: the request is sent without stop
        strings and the text is cut here (found once per client; the first such call is repeated without them).
        """
        prompts = validate_prompts(prompts)
        stop = check_sampling_args(n, temperature, top_p, max_tokens, stop)
        out: list[list[Generation]] = []
        for s in range(0, len(prompts), self.batch_size):
            chunk = prompts[s:s + self.batch_size]
            body: dict[str, Any] = {"prompt": chunk, "n": n, "temperature": float(temperature),
                                    "top_p": float(top_p), "max_tokens": max_tokens, "logprobs": 1}
            if seed is not None:
                body["seed"] = int(seed)
            local = len(stop) >= 2 and self.reports_stop_reason is False
            if stop and not local:
                body["stop"] = stop
            choices = self._choices(body, len(chunk) * n)
            if len(stop) >= 2 and self.reports_stop_reason is None:
                self.reports_stop_reason = any("stop_reason" in c for c in choices)
                if not self.reports_stop_reason and any(c.get("finish_reason") == "stop" for c in choices):
                    # the server cut the text but does not say at which stop string: ask again without stop
                    # strings (same seed) and cut here
                    local = True
                    body.pop("stop", None)
                    choices = self._choices(body, len(chunk) * n)
            gens = [self._local_stop(c, stop) if local else self._generation(c, stop) for c in choices]
            out.extend(gens[i:i + n] for i in range(0, len(gens), n))
        return out

    @staticmethod
    def _local_stop(choice: dict[str, Any], stop: list[str]) -> Generation:
        """A completion generated without server-side stop strings, cut here before the first stop string.

        Token log-probabilities are kept for the tokens that start before the cut (as a server that stops itself
        reports them).
        """
        text = choice.get("text") or ""
        lp = choice.get("logprobs") or {}
        values = lp.get("token_logprobs") or []
        cut, found = truncate_at_stop(text, stop)
        if found is not None:
            tokens = lp.get("tokens")
            if isinstance(tokens, list) and len(tokens) == len(values):
                starts = np.cumsum([0] + [len(str(t)) for t in tokens[:-1]])
                values = [v for v, st in zip(values, starts) if st < len(cut)]
            reason = "stop"
        else:
            reason = "stop" if choice.get("finish_reason") == "stop" else "length"
        return Generation(text=cut, token_logprobs=[float(x) for x in values if x is not None], finish_reason=reason,
                          stop=found)

    @staticmethod
    def _generation(choice: dict[str, Any], stop: list[str]) -> Generation:
        text = choice.get("text") or ""
        lp = (choice.get("logprobs") or {}).get("token_logprobs") or []
        reason = choice.get("finish_reason") or "length"
        found = None
        if reason == "stop" and stop:
            sr = choice.get("stop_reason")
            if isinstance(sr, str) and sr in stop:
                found = sr
            elif len(stop) == 1:
                found = stop[0]
        reason = "stop" if reason == "stop" else "length"
        return Generation(text=text, token_logprobs=[float(x) for x in lp if x is not None], finish_reason=reason,
                          stop=found)

    def logprobs(self, prompts: list[str], continuations: list[str]) -> list[np.ndarray]:
        """Per-token log-probabilities of ``continuations[i]`` given ``prompts[i]``.

        Uses ``echo=True`` with ``max_tokens=0`` (falling back to 1 when the server refuses 0): the server scores
        ``prompt + continuation`` tokenised as one text, and the tokens whose character offset is at or after the
        end of the prompt are the continuation's (a token that straddles the boundary counts as the prompt's).
        """
        prompts = validate_prompts(prompts)
        continuations = validate_prompts(continuations, "continuations")
        if len(prompts) != len(continuations):
            raise ValueError(f"prompts and continuations must have the same length, got {len(prompts)} and "
                             f"{len(continuations)}")
        out: list[np.ndarray] = []
        for s in range(0, len(prompts), self.batch_size):
            ps, cs = prompts[s:s + self.batch_size], continuations[s:s + self.batch_size]
            texts = [p + c for p, c in zip(ps, cs)]
            body = {"prompt": texts, "echo": True, "logprobs": 0, "temperature": 0.0,
                    "max_tokens": self._echo_max_tokens}
            try:
                choices = self._choices(body, len(texts))
            except OpenAIServerError as exc:
                if self._echo_max_tokens != 0 or "HTTP 4" not in str(exc):
                    raise
                self._echo_max_tokens = 1
                choices = self._choices({**body, "max_tokens": 1}, len(texts))
            for p, t, ch in zip(ps, texts, choices):
                lp = ch.get("logprobs") or {}
                offsets, values = lp.get("text_offset"), lp.get("token_logprobs")
                if offsets is None or values is None:
                    raise OpenAIServerError("OpenAIServer: the server returned no echoed logprobs "
                                            "(needs echo=True with logprobs support)")
                sel = [float(v) for o, v in zip(offsets, values) if len(p) <= o < len(t) and v is not None]
                out.append(np.asarray(sel, dtype=np.float64))
        return out

    def top_logprobs(self, prompts: list[str], k: int = 20) -> list[dict[str, float]]:
        """The server's ``k`` most likely next tokens after each prompt: ``{token text: log-probability}``.

        OpenAI allows ``k <= 5``; vLLM up to its ``--max-logprobs`` (default 20).
        """
        prompts = validate_prompts(prompts)
        if not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive int, got {k!r}")
        out: list[dict[str, float]] = []
        for s in range(0, len(prompts), self.batch_size):
            chunk = prompts[s:s + self.batch_size]
            body = {"prompt": chunk, "max_tokens": 1, "temperature": 0.0, "logprobs": k}
            for ch in self._choices(body, len(chunk)):
                tops = (ch.get("logprobs") or {}).get("top_logprobs") or [{}]
                out.append({str(t): float(v) for t, v in (tops[0] or {}).items()})
        return out

    def next_token_logits(self, prompts: list[str], vocab: Sequence[str] | None = None, top_k: int = 20,
                          floor: float | None = None) -> np.ndarray:
        """Next-token log-probabilities of the token strings ``vocab`` (a server exposes only its top-k).

        Parameters
        ----------
        prompts : list of str
        vocab : list of str, optional
            Token strings to report (default: the ``vocab`` given to the constructor). Required: a server does
            not expose its full vocabulary.
        top_k : int
            How many top tokens to request.
        floor : float, optional
            Value for tokens of ``vocab`` outside the top-k (default: the smallest top-k log-probability of that
            prompt, an upper bound of their true value).

        Returns
        -------
        ndarray, shape (len(prompts), len(vocab))
            Log-probabilities (usable as logits: a softmax over them renormalises over ``vocab``). These are NOT
            full-vocabulary logits; entries outside the server's top-k are ``floor``.
        """
        vocab = list(vocab) if vocab is not None else self.vocab
        if not vocab:
            raise ValueError("OpenAIServer.next_token_logits needs vocab=[token strings] (a server reports only its "
                             "top-k next tokens); use top_logprobs(prompts, k) for the raw top-k")
        tops = self.top_logprobs(prompts, top_k)
        out = np.empty((len(tops), len(vocab)))
        for i, top in enumerate(tops):
            fl = floor if floor is not None else (min(top.values()) if top else -np.inf)
            out[i] = [top.get(t, fl) for t in vocab]
        return out

    # ------------------------------------------------------------------ token-id prompts (served-model oracles)
    @staticmethod
    def _check_id_batch(batch: Any) -> list[list[int]]:
        if isinstance(batch, (str, bytes)) or not isinstance(batch, (list, tuple)) or not batch:
            raise TypeError("batch must be a non-empty list of token-id lists")
        out = []
        for i, seq in enumerate(batch):
            if isinstance(seq, (str, bytes)) or not isinstance(seq, (list, tuple, np.ndarray)) or len(seq) == 0:
                raise ValueError(f"batch[{i}] must be a non-empty list of token ids")
            ids = []
            for t in seq:
                if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or int(t) < 0:
                    raise ValueError(f"batch[{i}] holds {t!r}, not a token id")
                ids.append(int(t))
            out.append(ids)
        return out

    @staticmethod
    def _token_id(s: str) -> int:
        if not isinstance(s, str) or not s.startswith("token_id:"):
            raise OpenAIServerError(f"OpenAIServer: the server returned token {s!r} without its id; token-id "
                                    "answers need return_tokens_as_token_ids (vLLM)")
        return int(s.split(":", 1)[1])

    def next_token_topk_ids(self, batch: list[list[int]], k: int = 20) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` most likely next tokens after each token-id sequence, as ids.

        The sequences are sent as token-id prompts with ``max_tokens=1``, ``logprobs=k`` and
        ``return_tokens_as_token_ids`` (vLLM answers with ``"token_id:<n>"`` strings).

        Returns
        -------
        ids : int array (B, k) (-1 where the server reported fewer), logps : float array (B, k), sorted by
        decreasing probability.
        """
        from icml25.core.validation import check_int

        batch = self._check_id_batch(batch)
        k = check_int(k, "k", low=1)
        ids = np.full((len(batch), k), -1, dtype=np.int64)
        lps = np.full((len(batch), k), -np.inf)
        for s in range(0, len(batch), self.batch_size):
            chunk = batch[s:s + self.batch_size]
            body = {"prompt": chunk, "max_tokens": 1, "logprobs": k, "temperature": 0,
                    "return_tokens_as_token_ids": True}
            for j, ch in enumerate(self._choices(body, len(chunk))):
                tops = (ch.get("logprobs") or {}).get("top_logprobs") or [{}]
                top = sorted((tops[0] or {}).items(), key=lambda kv: -kv[1])[:k]
                for c, (tok, lp) in enumerate(top):
                    ids[s + j, c], lps[s + j, c] = self._token_id(tok), float(lp)
        return ids, lps

    def sample_next_token_ids(self, batch: list[list[int]], n: int = 1) -> np.ndarray:
        """``n`` sampled next tokens (temperature 1) after each token-id sequence, int array ``(B, n)``."""
        from icml25.core.validation import check_int

        batch = self._check_id_batch(batch)
        n = check_int(n, "n", low=1)
        out = np.zeros((len(batch), n), dtype=np.int64)
        for s in range(0, len(batch), self.batch_size):
            chunk = batch[s:s + self.batch_size]
            body = {"prompt": chunk, "max_tokens": 1, "n": n, "temperature": 1.0, "logprobs": 1,
                    "return_tokens_as_token_ids": True}
            choices = self._choices(body, len(chunk) * n)
            counts = [0] * len(chunk)
            for ch in choices:
                i = int(ch.get("index", 0)) // n
                toks = (ch.get("logprobs") or {}).get("tokens") or []
                if not toks:
                    raise OpenAIServerError("OpenAIServer: a choice without logprobs.tokens (token ids)")
                out[s + i, counts[i]] = self._token_id(toks[0])
                counts[i] += 1
        return out

    def close(self) -> None:
        """Close the HTTP connection pool."""
        if self._client is not None:
            self._client.close()
            self._client = None
