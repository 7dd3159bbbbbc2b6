"""A real watermarked deployment for De-mark: SmolLM2-135M-Instruct (or any chat model) served through KGW, its
probe template from the chat template, candidate words from its vocabulary, prompts in its chat format, and the
measured chooser bias of the clean model."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml25.core.validation import check_int

from .oracles import HFNextTokenLM, LMOracle, WatermarkedOracle
from .probing import COMPLETION_PROBE, DEFAULT_INSTRUCTION, ProbeTemplate, RandomSelectionProber

__all__ = ["ChatDeployment", "vocabulary_words", "chat_prompt_ids", "chooser_bias"]


def vocabulary_words(tokenizer: Any, corpus_words: Any = None, lo: int = 200, hi: int = 4000,
                     min_len: int = 3) -> np.ndarray:
    """Candidate probe words: single tokens ``" word"`` (leading space) of lower-case letters, length >= ``min_len``.

    With ``corpus_words`` (English words ordered by decreasing frequency) the candidates follow that order, ranks
    ``lo..hi`` (the paper: Brown-corpus frequency ranks 200..4000); without it, the tokenizer's id order (BPE merge
    order, which approximates frequency but also yields word pieces).

    Returns
    -------
    int array of token ids
    """
    lo, hi = check_int(lo, "lo", low=0), check_int(hi, "hi", low=1)
    if hi <= lo:
        raise ValueError(f"hi must be > lo, got lo={lo}, hi={hi}")
    pat = re.compile(rf"^[a-z]{{{min_len},}}$")
    if corpus_words is None:
        vocab = tokenizer.get_vocab()
        ids = sorted(i for t, i in vocab.items() if t[:1] in "Ġ▁" and pat.match(t[1:]))
        return np.asarray(ids[lo:hi], dtype=np.int64)
    out = []
    for w in list(corpus_words)[lo:hi]:
        if isinstance(w, str) and pat.match(w):
            t = tokenizer(" " + w, add_special_tokens=False)["input_ids"]
            if len(t) == 1:
                out.append(int(t[0]))
    return np.asarray(sorted(set(out)), dtype=np.int64)


def chat_prompt_ids(tokenizer: Any, text: str) -> list[int]:
    """Token ids of a user message rendered in the tokenizer's chat template with the assistant header; for a
    tokenizer without a chat template (a base model), BOS (if any) followed by the text."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"text must be a non-empty string, got {text!r}")
    if not getattr(tokenizer, "chat_template", None):
        bos = getattr(tokenizer, "bos_token_id", None)
        return ([int(bos)] if bos is not None else []) + [int(i) for i in tokenizer(
            text + "\n\n", add_special_tokens=False)["input_ids"]]
    s = tokenizer.apply_chat_template([{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True)
    return [int(i) for i in tokenizer(s, add_special_tokens=False)["input_ids"]]


@dataclass
class ChatDeployment:
    """A chat model served with a KGW watermark, and what an attacker knows about it (tokenizer, chat format).

    Attributes
    ----------
    lm : HFNextTokenLM
        The clean served model (the deployment's internals; evaluation only).
    oracle : WatermarkedOracle
        The watermarked API (all the attack sees).
    clean_oracle : LMOracle
        The same model without watermark (baseline generations, chooser-bias measurement).
    template : ProbeTemplate
    words : int array
        Candidate single-token words.
    eos_ids : list of int
    """

    lm: HFNextTokenLM
    oracle: WatermarkedOracle
    clean_oracle: LMOracle
    template: ProbeTemplate
    words: np.ndarray
    eos_ids: list[int]
    tokenizer: Any

    @classmethod
    def from_hf(cls, model: Any, watermark: Any, instruction: str | None = None,
                corpus_words: Any = None, batch_size: int = 32, random_state: int = 0,
                probe_style: str = "auto") -> ChatDeployment:
        """Serve an :class:`icml25.llm.HFModel` (e.g. ``load_model("pretrained:smollm2-135m-instruct")``) through
        ``watermark`` (a :class:`KGWWatermark`, any object with ``apply(logits, contexts)``, or a transformers
        ``LogitsProcessor`` such as MarkLLM's); ``corpus_words`` (frequency-ordered English words) select the probe
        words (:func:`vocabulary_words`). ``probe_style``: ``"chat"`` (``instruction`` in the chat template,
        default :data:`DEFAULT_INSTRUCTION`), ``"completion"`` (plain text for base models, default
        :data:`COMPLETION_PROBE`) or ``"auto"`` (chat when the tokenizer has a chat template)."""
        from icml25.core.validation import check_option

        tok = getattr(model, "tokenizer", None)
        if tok is None:
            raise TypeError(f"model must be an icml25.llm.HFModel with a tokenizer, got {type(model).__name__}")
        style = check_option(probe_style, "probe_style", ("auto", "chat", "completion"))
        if style == "auto":
            style = "chat" if getattr(tok, "chat_template", None) else "completion"
        template = (ProbeTemplate.from_chat_template(tok, instruction or DEFAULT_INSTRUCTION) if style == "chat"
                    else ProbeTemplate.from_text(tok, instruction or COMPLETION_PROBE))
        lm = HFNextTokenLM(model, batch_size=batch_size)
        return cls(lm=lm, oracle=WatermarkedOracle(lm, watermark, random_state=random_state),
                   clean_oracle=LMOracle(lm, random_state=random_state),
                   template=template, words=vocabulary_words(tok, corpus_words),
                   eos_ids=list(getattr(model, "eos_ids", [tok.eos_token_id])), tokenizer=tok)


def chooser_bias(clean_prober: RandomSelectionProber, words: Any, n_pairs: int = 40, context_len: int = 3,
                 random_state: int = 0) -> dict[str, float]:
    """Chooser bias of an unwatermarked model under the probe: the spread of ``R(u, v)`` for random pairs.

    An ideal chooser gives ``R = 0``; ``sigma_base`` (the std of ``R`` over pairs) compares with the simulator's
    ``sqrt(2) sigma_b`` (spec §5). Also reports the fraction of pairs whose four probabilities are in the top-K and the
    mean probability mass the model puts on the two candidates.

    Returns
    -------
    dict with ``sigma_base``, ``mean_abs_R``, ``known_fraction``, ``mass_on_pair`` and ``sigma_b_equivalent``.
    """
    n_pairs = check_int(n_pairs, "n_pairs", low=2)
    context_len = check_int(context_len, "context_len", low=1)
    rng = np.random.default_rng(check_int(random_state, "random_state", low=0))
    w = np.asarray(words)
    Rs, mass = [], []
    for _ in range(n_pairs):
        c = rng.choice(w, context_len).tolist()
        u, v = rng.choice(w, 2, replace=False).tolist()
        Rs.append(clean_prober.ratio_matrix(c, [u, v])[0, 1])
        a1, a2 = clean_prober._answers([(tuple(c), u, v), (tuple(c), v, u)])
        if clean_prober.mode == "graybox":
            mass.append(0.5 * (a1.get(u, 0) + a1.get(v, 0) + a2.get(u, 0) + a2.get(v, 0)))
    R = np.asarray(Rs)
    known = R[np.isfinite(R)]
    sd = float(known.std(ddof=1)) if known.size > 1 else float("nan")
    return {"sigma_base": sd, "mean_abs_R": float(np.abs(known).mean()) if known.size else float("nan"),
            "known_fraction": float(np.isfinite(R).mean()), "mass_on_pair": float(np.mean(mass)) if mass else
            float("nan"), "sigma_b_equivalent": sd / np.sqrt(2)}
