"""The KGW ("n-gram", red-green list) watermark that De-mark attacks: keyed green lists, logit bias, z-test.

Kirchenbauer et al. (2023), as used by De-mark (Chen et al., ICML 2025, Sec. 2 / spec §2.1): the green list at
position t is the first ``floor(gamma |V|)`` entries of a permutation of the vocabulary drawn from a PRNG seeded by a
keyed pseudo-random function of the previous ``h`` token ids; generation adds ``delta`` to the green logits; the
detector counts green tokens and runs a one-sided z-test.
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml25.core.validation import check_array, check_int, check_option, check_positive, check_probability

from ._ids import check_ids

__all__ = ["KGWWatermark", "Detection", "PRF_SCHEMES", "kgw_z_score"]

#: pseudo-random functions of (key, h context ids) -> PRNG seed of the green-list permutation.
#:
#: * ``sha256``: SHA-256 of ``"key:"`` followed by the comma-separated ids, mod 2^32 - 1 (our rendering of the
#:   official De-mark code's scheme as the spec describes it; not checked byte for byte against that code).
#: * ``markllm-time/additive/skip/min``: MarkLLM's KGW (``window_scheme="left"``, ``f_scheme`` time / additive / skip /
#:   min; PyPI ``markllm`` 0.1.5): a key-seeded permutation ``P`` of the vocabulary; ``f`` = ``P[prod(ids) mod |V|]``,
#:   ``P[sum(ids) mod |V|]``, ``P[oldest id]`` or ``min P[id]``; seed = ``key * f mod |V|``. Green lists and z-scores
#:   equal MarkLLM's (tests/demark/test_markllm_agreement.py).
#: * ``lmw-additive/multiplicative/minhash/skipgram``: jwkirchenbauer/lm-watermarking's ``additive_prf`` (its
#:   ``simple_1``/"lefthash" at h = 1, also transformers' ``WatermarkLogitsProcessor(seeding_scheme="lefthash")``),
#:   ``multiplicative_prf``, ``minhash_prf`` and ``skipgram_prf``, seed mod 2^64 - 1. Only ``lmw-additive`` at h = 1 is
#:   checked against an installed implementation (transformers); the others follow the read code.
#:
#: A callable ``prf(key, window) -> int`` (``window``: tuple of the last h ids; seed in [0, 2^64)) is accepted too.
PRF_SCHEMES = ("sha256", "markllm-time", "markllm-additive", "markllm-skip", "markllm-min", "lmw-additive",
               "lmw-multiplicative", "lmw-minhash", "lmw-skipgram")
_CACHE_SIZE = 65536


def kgw_z_score(n_green: Any, n_scored: Any, gamma: float = 0.5) -> np.ndarray:
    """One-sided KGW z-statistic ``z = (n_G - gamma T) / sqrt(T gamma (1 - gamma))`` (spec §2.1).

    Parameters
    ----------
    n_green, n_scored : int or array
        Number of green tokens ``n_G`` and of scored tokens ``T`` (``T >= 1``).
    gamma : float
        Green fraction in (0, 1).

    Returns
    -------
    ndarray of float (0-d for scalar inputs)

    Examples
    --------
    >>> float(kgw_z_score(60, 100, 0.5))
    2.0
    """
    gamma = check_probability(gamma, "gamma", open_low=True, open_high=True)
    if np.ndim(n_green) == 0 and np.ndim(n_scored) == 0:
        g = np.asarray(float(check_int(n_green, "n_green", low=0)))
        t = np.asarray(float(check_int(n_scored, "n_scored", low=1)))
    else:
        g = check_array(n_green, "n_green", low=0.0)
        t = check_array(n_scored, "n_scored", low=1.0)
        if np.any(g != np.round(g)) or np.any(t != np.round(t)):
            raise ValueError("n_green and n_scored must hold whole counts")
    if np.any(g > t):
        raise ValueError(f"n_green must be <= n_scored, got n_green={n_green!r}, n_scored={n_scored!r}")
    return (g - gamma * t) / np.sqrt(t * gamma * (1 - gamma))


@dataclass(frozen=True)
class Detection:
    """Result of :meth:`KGWWatermark.detect`.

    Attributes
    ----------
    z : float
        z-statistic (NaN when nothing was scored).
    p_value : float
        One-sided p-value ``1 - Phi(z)`` (NaN when nothing was scored).
    n_green : int
        Number of scored tokens that were green.
    n_scored : int
        Number of scored tokens ``T``.
    """

    z: float
    p_value: float
    n_green: int
    n_scored: int


def _int64(x: int) -> int:
    """``x`` wrapped to a signed 64-bit integer (torch ``int64`` arithmetic)."""
    x %= 2 ** 64
    return x - 2 ** 64 if x >= 2 ** 63 else x


_LMW_TABLE: list[Any] = []


def _lmw_hashint(x: int) -> int:
    """lm-watermarking's ``hashint``: a fixed random permutation table of size 1,000,003 (seed 2971215073), plus 1."""
    if not _LMW_TABLE:
        import torch

        g = torch.Generator().manual_seed(2971215073)
        _LMW_TABLE.append(torch.randperm(1_000_003, generator=g, device="cpu").numpy())
    return int(_LMW_TABLE[0][x % 1_000_003]) + 1


class KGWWatermark:
    """The KGW n-gram watermark attacked in the 'De-mark: Watermark Removal in Large Language Models' (ICML 2025) paper.

    Green list ``G(x_{t-h..t-1})`` = first ``floor(gamma |V|)`` ids of ``torch.randperm(|V|)`` seeded with
    ``PRF(key, x_{t-h..t-1})``; generation adds ``delta`` to green logits (spec §2.1); detection is the z-test of
    :func:`kgw_z_score` on the generated tokens only.

    Parameters
    ----------
    vocab_size : int
        Size of the model's output layer ``|V|`` (>= 2).
    gamma : float
        Green fraction in (0, 1).
    delta : float
        Logit bias added to green tokens (> 0).
    h : int
        Prefix length: number of previous tokens hashed (>= 1).
    key : int
        Secret key (>= 0).
    prf : str or callable
        One of :data:`PRF_SCHEMES`, or ``prf(key, window) -> seed`` (``window``: tuple of the last ``h`` ids; an int
        seed in ``[0, 2**64)``) for a scheme of your own.

    Examples
    --------
    >>> wm = KGWWatermark(vocab_size=50, gamma=0.5, delta=2.0, h=2, key=7)
    >>> int(wm.green_mask([3, 9]).sum())
    25
    >>> bool((wm.green_mask([1, 3, 9]) == wm.green_mask([5, 3, 9])).all())  # only the last h ids matter
    True
    """

    def __init__(self, vocab_size: int, gamma: float = 0.5, delta: float = 2.0, h: int = 1, key: int = 15485863,
                 prf: str | Callable[[int, tuple[int, ...]], int] = "sha256"):
        self.vocab_size = check_int(vocab_size, "vocab_size", low=2)
        self.gamma = check_probability(gamma, "gamma", open_low=True, open_high=True)
        self.delta = check_positive(delta, "delta")
        self.h = check_int(h, "h", low=1)
        self.key = check_int(key, "key", low=0)
        self.prf = prf if callable(prf) else check_option(prf, "prf", PRF_SCHEMES)
        self.n_green = int(math.floor(self.gamma * self.vocab_size))
        if self.n_green < 1 or self.n_green >= self.vocab_size:
            raise ValueError(f"gamma * vocab_size must leave both lists non-empty, got gamma={self.gamma}, "
                             f"vocab_size={self.vocab_size}")
        self._cache: OrderedDict[tuple[int, ...], np.ndarray] = OrderedDict()
        self._key_perm: list[int] | None = None  # MarkLLM's key-seeded vocabulary permutation (built on first use)

    def __repr__(self) -> str:
        return (f"KGWWatermark(vocab_size={self.vocab_size}, gamma={self.gamma}, delta={self.delta}, h={self.h}, "
                f"prf={getattr(self.prf, '__name__', self.prf)!r})")

    # ------------------------------------------------------------------ green lists
    def _window(self, context: Any) -> tuple[int, ...]:
        if isinstance(context, tuple) and len(context) == self.h and all(type(i) is int for i in context) \
                and all(0 <= i < self.vocab_size for i in context):
            return context  # the fast path of the internal calls
        ids = check_ids(context, "context", self.vocab_size)
        if len(ids) < self.h:
            raise ValueError(f"context must hold at least h={self.h} token ids, got {len(ids)}")
        return tuple(ids[-self.h:])

    def seed(self, context: Any) -> int:
        """PRNG seed of the green list after ``context`` (its last ``h`` ids), by the configured PRF."""
        w = self._window(context)
        prf = self.prf
        if callable(prf):
            seed = prf(self.key, w)
            if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= int(seed) < 2 ** 64:
                raise ValueError(f"prf must return an int seed in [0, 2**64), got {seed!r}")
            return int(seed)
        if prf == "sha256":
            text = f"{self.key}:" + ",".join(str(i) for i in w)
            return int(hashlib.sha256(text.encode()).hexdigest(), 16) % (2 ** 32 - 1)
        if prf.startswith("markllm-"):
            V = self.vocab_size
            if self._key_perm is None:
                import torch

                g = torch.Generator().manual_seed(self.key)
                self._key_perm = torch.randperm(V, generator=g, device="cpu").tolist()
            perm = self._key_perm
            if prf == "markllm-time":
                f = perm[math.prod(w) % V]
            elif prf == "markllm-additive":
                f = perm[sum(w) % V]
            elif prf == "markllm-skip":
                f = perm[w[0]]
            else:
                f = min(perm[i] for i in w)
            return (self.key * f) % V
        if prf == "lmw-additive":
            raw = self.key * sum(w)
        elif prf == "lmw-multiplicative":
            raw = self.key * _int64(math.prod(w))  # torch's int64 product wraps around
        elif prf == "lmw-minhash":
            raw = min(_lmw_hashint(_int64(self.key * i)) for i in w)
        else:  # lmw-skipgram: the oldest id of the window
            raw = _lmw_hashint(_int64(self.key * w[0]))
        return raw % (2 ** 64 - 1)

    def green_list(self, context: Any) -> np.ndarray:
        """Sorted green token ids after ``context``: the first ``floor(gamma |V|)`` of the seeded permutation."""
        w = self._window(context)
        hit = self._cache.get(w)
        if hit is not None:
            self._cache.move_to_end(w)
            return hit
        import torch

        g = torch.Generator().manual_seed(self.seed(w))
        ids = np.sort(torch.randperm(self.vocab_size, generator=g, device="cpu")[: self.n_green].numpy())
        self._cache[w] = ids
        if len(self._cache) > _CACHE_SIZE:
            self._cache.popitem(last=False)
        return ids

    def green_mask(self, context: Any) -> np.ndarray:
        """Boolean mask of shape ``(|V|,)``: True for the green tokens after ``context``."""
        mask = np.zeros(self.vocab_size, dtype=bool)
        mask[self.green_list(context)] = True
        return mask

    # ------------------------------------------------------------------ generation
    def apply(self, logits: Any, contexts: Any) -> Any:
        """Watermarked logits ``l_v + delta 1[v in G(context)]`` (spec §2.1).

        Parameters
        ----------
        logits : array or torch.Tensor, shape (V,) or (B, V)
        contexts : sequence of ids (for 1-D logits) or list of B id sequences

        Returns
        -------
        Same type and shape as ``logits``.
        """
        is_torch = type(logits).__module__.startswith("torch")
        arr = logits if is_torch else check_array(logits, "logits", ndim=(1, 2))
        if arr.ndim not in (1, 2) or arr.shape[-1] != self.vocab_size:
            raise ValueError(f"logits must have shape (V,) or (B, V) with V={self.vocab_size}, got {tuple(arr.shape)}")
        rows = [contexts] if arr.ndim == 1 else list(contexts)
        if arr.ndim == 2 and len(rows) != arr.shape[0]:
            raise ValueError(f"contexts must hold one id sequence per row of logits ({arr.shape[0]}), got {len(rows)}")
        masks = np.stack([self.green_mask(c) for c in rows]).reshape((-1, self.vocab_size) if arr.ndim == 2 else
                                                                     (self.vocab_size,))
        if is_torch:
            import torch

            return arr + self.delta * torch.as_tensor(masks, dtype=arr.dtype, device=arr.device)
        return arr + self.delta * masks

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        """Hugging Face ``LogitsProcessor`` interface: ``scores`` (B, V) watermarked after ``input_ids`` (B, T)."""
        return self.apply(scores, [row.tolist() for row in input_ids])

    def as_logits_processor(self) -> Any:
        """A ``transformers.LogitsProcessor`` applying this watermark, to put in your own processor list:
        ``model.generate(..., logits_processor=LogitsProcessorList([wm.as_logits_processor()]))``."""
        from transformers import LogitsProcessor

        wm = self

        class KGWLogitsProcessor(LogitsProcessor):
            watermark = wm

            def __call__(self, input_ids: Any, scores: Any) -> Any:
                return wm(input_ids, scores)

        return KGWLogitsProcessor()

    # ------------------------------------------------------------------ detection
    def green_flags(self, ids: Any, prompt_len: int = 0, ignore_repeated_ngrams: bool = False) -> np.ndarray:
        """For each scored position ``t >= max(prompt_len, h)``: 1 if ``ids[t]`` is in ``G(ids[t-h:t])``, else 0."""
        seq = check_ids(ids, "ids", self.vocab_size)
        prompt_len = check_int(prompt_len, "prompt_len", low=0)
        seen: set[tuple[int, ...]] = set()
        flags = []
        for t in range(max(prompt_len, self.h), len(seq)):
            gram = tuple(int(i) for i in seq[t - self.h: t + 1])
            if ignore_repeated_ngrams:
                if gram in seen:
                    continue
                seen.add(gram)
            gl = self.green_list(gram[:-1])
            k = np.searchsorted(gl, gram[-1])
            flags.append(int(k < len(gl) and gl[k] == gram[-1]))
        return np.asarray(flags, dtype=np.int64)

    def detect(self, ids: Any, prompt_len: int = 0, ignore_repeated_ngrams: bool = False) -> Detection:
        """z-test of a token sequence (spec §2.1): only tokens after ``prompt_len`` are scored.

        Parameters
        ----------
        ids : sequence of int, shape (L,)
            Prompt followed by the generated tokens.
        prompt_len : int
            Number of leading prompt tokens excluded from scoring (their ids still serve as context).
        ignore_repeated_ngrams : bool
            Score each (h+1)-gram once.

        Returns
        -------
        Detection
        """
        flags = self.green_flags(ids, prompt_len, ignore_repeated_ngrams)
        if len(flags) == 0:
            return Detection(float("nan"), float("nan"), 0, 0)
        z = float(kgw_z_score(int(flags.sum()), len(flags), self.gamma))
        return Detection(z, 0.5 * math.erfc(z / math.sqrt(2.0)), int(flags.sum()), len(flags))
