"""Random selection probing (De-mark Algorithm 1) and the token score (Algorithm 2).

A probe asks the watermarked model to pick one of two phrases ``c u`` / ``c v`` at random and opens its answer with
``c``; under the watermark the log-ratio of the answer probabilities is ``delta (1[u in G(c)] - 1[v in G(c)])``
when the clean model is indifferent. Both orderings are asked and the probabilities summed, cancelling position
bias (spec §2.3).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml25.core.validation import check_int, check_option, check_real

from ._ids import check_ids
from .oracles import check_id_batch

__all__ = ["ProbeTemplate", "RandomSelectionProber", "token_scores", "DEFAULT_INSTRUCTION", "COMPLETION_PROBE"]

#: the probing instruction rendered in a chat template; ``{A}`` / ``{B}`` mark where the two phrases go.
DEFAULT_INSTRUCTION = ("Randomly choose one of the two phrases below (they have no particular meaning) and start "
                       "your answer with it, writing nothing else.\nThe phrases: «{A}» or «{B}». Choose one now.")

#: a completion-style probe for base (not instruction-tuned) models, our wording: a coin flip between the two phrases,
#: then the opening of the picked phrase; ``{A}`` / ``{B}`` mark the phrases, the answer (``c``) follows the text.
COMPLETION_PROBE = ("Two phrases with no particular meaning: «{A}» and «{B}». A fair coin was flipped to pick one of "
                    "them at random, with equal chance. The phrase the coin picked is «")


def _ids(x: Any, name: str, allow_empty: bool = False) -> tuple[int, ...]:
    return tuple(check_ids(x, name, allow_empty=allow_empty))


@dataclass(frozen=True)
class ProbeTemplate:
    """The token ids of a probe prompt: ``pre + c + u + mid + c + v + post + c`` (spec §2.3, built from ids).

    Parameters
    ----------
    pre : tuple of int
        Ids before the first phrase (chat header, system prompt, instruction start).
    mid : tuple of int
        Ids between the first candidate ``u`` and the second phrase.
    post : tuple of int
        Ids after the second candidate ``v`` up to the assistant's answer (must hold at least ``h_max`` ids so that
        the watermark window never reaches the candidates, spec §8).

    Examples
    --------
    >>> t = ProbeTemplate(pre=(1,), mid=(2,), post=(3, 3, 3))
    >>> t.build([7, 8], 5, 6)
    [1, 7, 8, 5, 2, 7, 8, 6, 3, 3, 3, 7, 8]
    >>> t.parse([1, 7, 8, 5, 2, 7, 8, 6, 3, 3, 3, 7, 8])
    ((7, 8), 5, 6)
    """

    pre: tuple[int, ...]
    mid: tuple[int, ...]
    post: tuple[int, ...]

    def __post_init__(self) -> None:
        for name in ("pre", "mid", "post"):
            object.__setattr__(self, name, _ids(getattr(self, name), name, allow_empty=name == "mid"))

    def build(self, context: Any, u: int, v: int) -> list[int]:
        """Probe ids for context ``c`` (ids) and candidates ``u``, ``v`` (the assistant answer prefix is ``c``)."""
        c = list(_ids(context, "context"))
        u, v = check_int(u, "u", low=0), check_int(v, "v", low=0)
        if u == v:
            raise ValueError(f"u and v must be different candidates, got u = v = {u}")
        return [*self.pre, *c, u, *self.mid, *c, v, *self.post, *c]

    def parse(self, ids: Any) -> tuple[tuple[int, ...], int, int] | None:
        """``(c, u, v)`` if ``ids`` is a well-formed probe of this template, else None."""
        s = _ids(ids, "ids", allow_empty=True)
        rest = len(s) - len(self.pre) - len(self.mid) - len(self.post) - 2
        if rest < 0 or rest % 3:
            return None
        L = rest // 3
        p = len(self.pre)
        if s[:p] != self.pre:
            return None
        c = s[p: p + L]
        u = s[p + L]
        q = p + L + 1
        if s[q: q + len(self.mid)] != self.mid:
            return None
        q += len(self.mid)
        if s[q: q + L] != c:
            return None
        v = s[q + L]
        q += L + 1
        if s[q: q + len(self.post)] != self.post or s[q + len(self.post):] != c:
            return None
        return c, u, v

    @classmethod
    def from_chat_template(cls, tokenizer: Any, instruction: str = DEFAULT_INSTRUCTION,
                           system: str | None = None) -> ProbeTemplate:
        """Render ``instruction`` in the tokenizer's chat template once and cut it into id pieces.

        Parameters
        ----------
        tokenizer : transformers tokenizer with a chat template
        instruction : str
            Must contain ``{A}`` and ``{B}`` once each, in this order.
        system : str, optional
            System message (the template's default when None).
        """
        if not isinstance(instruction, str) or instruction.count("{A}") != 1 or instruction.count("{B}") != 1 \
                or instruction.index("{A}") > instruction.index("{B}"):
            raise ValueError(f"instruction must contain '{{A}}' then '{{B}}' once each, got {instruction!r}")
        if not hasattr(tokenizer, "apply_chat_template"):
            raise TypeError(f"tokenizer must have a chat template, got {type(tokenizer).__name__}")
        msgs = ([{"role": "system", "content": system}] if system is not None else [])
        msgs.append({"role": "user", "content": instruction.replace("{A}", "\x00").replace("{B}", "\x01")})
        text = tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
        a, rest = text.split("\x00")
        b, c = rest.split("\x01")

        def enc(s: str) -> tuple[int, ...]:
            return tuple(int(i) for i in tokenizer(s, add_special_tokens=False)["input_ids"])

        return cls(pre=enc(a), mid=enc(b), post=enc(c))

    @classmethod
    def from_text(cls, tokenizer: Any, text: str = COMPLETION_PROBE, add_bos: bool = True) -> ProbeTemplate:
        """A completion-style probe for base models (no chat template): ``text`` with ``{A}`` then ``{B}`` once each,
        cut into id pieces; the answer prefix ``c`` follows the end of ``text``. ``add_bos`` prepends the tokenizer's
        BOS id when it has one (base models such as Gemma expect it)."""
        if not isinstance(text, str) or text.count("{A}") != 1 or text.count("{B}") != 1 \
                or text.index("{A}") > text.index("{B}"):
            raise ValueError(f"text must contain '{{A}}' then '{{B}}' once each, got {text!r}")
        a, rest = text.split("{A}")
        b, c = rest.split("{B}")

        def enc(s: str) -> tuple[int, ...]:
            return tuple(int(i) for i in tokenizer(s, add_special_tokens=False)["input_ids"])

        bos = getattr(tokenizer, "bos_token_id", None)
        pre = ((int(bos),) if add_bos and bos is not None else ()) + enc(a)
        return cls(pre=pre, mid=enc(b), post=enc(c))


def token_scores(R: Any, alpha1: float = 0.2, alpha2: float = 10.0) -> np.ndarray:
    """Algorithm 2: ``s_i = #{j: alpha1 < R_ij < alpha2} - #{j: -alpha2 < R_ij < -alpha1}`` (NaN entries ignored).

    Parameters
    ----------
    R : array (m, m)
        Antisymmetric ratio matrix.
    alpha1, alpha2 : float
        Noise floor and cap (``0 <= alpha1 < alpha2``).

    Returns
    -------
    int array (m,)

    Examples
    --------
    >>> R = np.array([[0, 2, 2], [-2, 0, 0.1], [-2, -0.1, 0]])
    >>> token_scores(R).tolist()
    [2, -1, -1]
    """
    alpha1 = check_real(alpha1, "alpha1", low=0.0)
    alpha2 = check_real(alpha2, "alpha2", low=alpha1, low_open=True)
    R = np.asarray(R, dtype=float)
    if R.ndim != 2 or R.shape[0] != R.shape[1]:
        raise ValueError(f"R must be a square (m, m) matrix, got shape {R.shape}")
    with np.errstate(invalid="ignore"):
        pos = (R > alpha1) & (R < alpha2)
        neg = (R < -alpha1) & (R > -alpha2)
    return (pos.sum(axis=1) - neg.sum(axis=1)).astype(np.int64)


class RandomSelectionProber:
    """Random selection probing of a watermarked model (Algorithm 1 of the 'De-mark' (ICML 2025) paper).

    ``R(u, v) = log[(P_1(u) + P_2(u)) / (P_1(v) + P_2(v))]`` with ``P_1 = P_w(. | Q(c; u, v))`` and
    ``P_2 = P_w(. | Q(c; v, u))`` (gray-box, from top-K log-probs; NaN when a needed probability is outside the
    top-K), or ``log(N_u / (K - N_u))`` from ``n_samples`` draws per ordering keeping only ``u``/``v`` answers,
    ``N_u`` clipped to ``[1, K - 1]`` (black-box).

    ``combine="logmean"`` (our documented extension, not in the paper) symmetrises instead: the mean of the two
    orderings' log-ratios, ``R = (log[P_1(u)/P_1(v)] + log[P_2(u)/P_2(v)]) / 2`` (black-box: the same with each
    ordering's clipped counts). A chooser whose answer odds carry a position factor ``e^{±b}`` gives ``R = ±delta``
    exactly for any ``b``, whereas summing the probabilities shrinks ``R`` toward 0 as ``|b|`` grows (at ``b = 3``,
    ``delta = 2`` the summed ratio is 0.54 instead of 2). Neither removes a per-word preference.

    Parameters
    ----------
    oracle : object with ``topk_logprobs(batch, k)`` and ``sample(batch, n)``
        The watermarked model's API.
    template : ProbeTemplate
    mode : {"graybox", "blackbox"}
    n_samples : int
        Draws per ordering (black-box).
    top_k : int
        Number of log-probabilities the API returns (gray-box).
    batch_size : int
        Queries per oracle call.
    cache : bool
        Cache answers by ``(c, u, v)``.
    combine : {"sum", "logmean"}
        How the two orderings are combined: ``"sum"`` of probabilities (the paper's Algorithm 1) or ``"logmean"``
        (the symmetrised mean of the per-ordering log-ratios, see above). The queries are the same.
    reference_contexts : list of id sequences, optional
        Contextual calibration (our extension, not in the paper): the ratio matrix of the same candidates is also
        measured after each reference context (its last ``len(c)`` ids) and their mean is subtracted. A chooser's
        per-word preference does not depend on the context and cancels; the watermark's term after a random
        reference context has mean 0 (a green/red coin per context), so it adds noise of std about
        ``delta / sqrt(2 n_ref)`` instead. Costs ``1 + n_ref`` times the probes (cached across calls).

    Attributes
    ----------
    n_probe_queries : int
        Probe sequences sent to the oracle.

    Examples
    --------
    >>> from icml25.demark import InstructionFollowingLM, WatermarkedOracle, KGWWatermark
    >>> t = ProbeTemplate(pre=(0,), mid=(1,), post=(2,) * 10)
    >>> lm = InstructionFollowingLM(t, vocab_size=40, sigma_b=0.0, sigma_e=0.0)
    >>> wm = KGWWatermark(40, delta=2.0, h=1, key=3)
    >>> prober = RandomSelectionProber(WatermarkedOracle(lm, wm), t)
    >>> R = prober.ratio_matrix([10], [11, 12, 13])
    >>> bool(np.allclose(R, -R.T)), sorted({float(round(abs(x), 6)) for x in R.ravel()} - {0.0})
    (True, [2.0])
    """

    def __init__(self, oracle: Any, template: ProbeTemplate, mode: str = "graybox", n_samples: int = 10,
                 top_k: int = 20, batch_size: int = 32, cache: bool = True, combine: str = "sum",
                 reference_contexts: Any = None):
        if not (hasattr(oracle, "topk_logprobs") and hasattr(oracle, "sample")):
            raise TypeError(f"oracle must have topk_logprobs and sample methods, got {type(oracle).__name__}")
        if not isinstance(template, ProbeTemplate):
            raise TypeError(f"template must be a ProbeTemplate, got {type(template).__name__}")
        self.oracle, self.template = oracle, template
        self.mode = check_option(mode, "mode", ("graybox", "blackbox"))
        self.n_samples = check_int(n_samples, "n_samples", low=1)
        self.top_k = check_int(top_k, "top_k", low=2)
        self.batch_size = check_int(batch_size, "batch_size", low=1)
        self.cache = bool(cache)
        self.combine = check_option(combine, "combine", ("sum", "logmean"))
        self.vocab_size = int(oracle.vocab_size)
        refs = list(reference_contexts) if reference_contexts is not None else []
        self.reference_contexts = ([tuple(r) for r in check_id_batch(refs, self.vocab_size, "reference_contexts")]
                                   if refs else [])
        self._store: dict[tuple[Any, ...], Any] = {}
        self.n_probe_queries = 0

    def _answers(self, keys: list[tuple[tuple[int, ...], int, int]]) -> list[Any]:
        """Answer of each probe ``(c, first, second)``: gray-box ``{id: prob}`` of the top-K, black-box samples."""
        todo = [k for k in dict.fromkeys(keys) if k not in self._store]
        for s in range(0, len(todo), self.batch_size):
            chunk = todo[s: s + self.batch_size]
            seqs = [self.template.build(c, u, v) for c, u, v in chunk]
            self.n_probe_queries += len(seqs)
            if self.mode == "graybox":
                ids, lps = self.oracle.topk_logprobs(seqs, self.top_k)
                for k, row_i, row_l in zip(chunk, ids, lps):
                    self._store[k] = dict(zip(row_i.tolist(), np.exp(row_l).tolist()))
            else:
                draws = self.oracle.sample(seqs, self.n_samples)
                for k, row in zip(chunk, draws):
                    self._store[k] = np.asarray(row)
        out = [self._store[k] for k in keys]
        if not self.cache:
            self._store.clear()
        return out

    def ratio_matrix(self, context_ids: Any, candidate_ids: Any) -> np.ndarray:
        """The antisymmetric ratio matrix ``R_ij = R(T_i, T_j)`` (Algorithm 1) over all pairs of candidates.

        Parameters
        ----------
        context_ids : sequence of int (L,)
            The context ``c`` (at least one id).
        candidate_ids : sequence of int (m,)
            Distinct single-token candidates ``T_1..T_m`` (m >= 2).

        Returns
        -------
        float array (m, m), zero diagonal, ``R = -R.T``; NaN where the pair is unknown.
        """
        c = check_id_batch([context_ids], self.vocab_size, "context_ids")[0]
        cand = check_id_batch([candidate_ids], self.vocab_size, "candidate_ids")[0]
        if len(cand) < 2 or len(set(cand)) != len(cand):
            raise ValueError(f"candidate_ids must hold at least 2 distinct ids, got {cand}")
        R = self._raw_matrix(tuple(c), cand)
        if self.reference_contexts:
            refs = [r[-len(c):] for r in self.reference_contexts]
            with warnings.catch_warnings():  # an all-NaN entry (unknown in every reference) stays NaN
                warnings.simplefilter("ignore", RuntimeWarning)
                R = R - np.nanmean(np.stack([self._raw_matrix(r, cand) for r in refs]), axis=0)
        return R

    def _raw_matrix(self, c_t: tuple[int, ...], cand: list[int]) -> np.ndarray:
        m = len(cand)
        pairs = [(i, j) for i in range(m) for j in range(i + 1, m)]
        keys = []
        for i, j in pairs:
            keys += [(c_t, cand[i], cand[j]), (c_t, cand[j], cand[i])]
        ans = self._answers(keys)
        R = np.zeros((m, m))
        for q, (i, j) in enumerate(pairs):
            r = self._pair_ratio(ans[2 * q], ans[2 * q + 1], cand[i], cand[j])
            R[i, j], R[j, i] = r, -r
        return R

    def _pair_ratio(self, a1: Any, a2: Any, u: int, v: int) -> float:
        if self.mode == "graybox":
            if u not in a1 or v not in a1 or u not in a2 or v not in a2:
                return float("nan")  # a probability outside the returned top-K is unknown, never 0 (spec §8)
            if self.combine == "logmean":
                return float(0.5 * (np.log(a1[u] / a1[v]) + np.log(a2[u] / a2[v])))
            return float(np.log((a1[u] + a2[u]) / (a1[v] + a2[v])))
        if self.combine == "logmean":
            rs = []
            for a in (a1, a2):
                k = int(((a == u) | (a == v)).sum())
                if k < 2:
                    return float("nan")
                n_u = int(np.clip((a == u).sum(), 1, k - 1))
                rs.append(np.log(n_u / (k - n_u)))
            return float(np.mean(rs))
        kept = np.concatenate([a1[(a1 == u) | (a1 == v)], a2[(a2 == u) | (a2 == v)]])
        K = len(kept)
        if K < 2:
            return float("nan")
        n_u = int(np.clip((kept == u).sum(), 1, K - 1))
        return float(np.log(n_u / (K - n_u)))
