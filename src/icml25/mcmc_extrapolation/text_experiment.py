"""The paper's text tasks at ``--scale paper`` (spec §3): Yelp sentiment extrapolation (claim X2) and text
anonymisation (claim X3), with the user's pretrained models and data.

Per task: chain starts and disjoint test inputs from the training range; MH chains with the masked-LM
mask-and-infill proposal (:class:`~.text_models.MLMInfill`, exact Hastings ratio) targeting
``p(x) ∝ exp(beta · s(x))`` for the task's guide score ``s``; episodes of the selected states (``improve``);
q_θ = the causal LM LoRA-fine-tuned on them (:class:`~.text_qtheta.TextQTheta`); on the test inputs q_θ
(``text_steps`` steps × best-of-``text_candidates``) against MH at the same number of guide calls and at the chains'
full length, all judged by the task's *oracle* (spec §2.4, §8: a model other than the guide).

- sentiment: guide = expected rating of a classifier trained on ratings 2-4 (``sentiment_guide_ratings``), signed by
  ``sentiment_direction``; oracle = a classifier on all ratings; extrapolation = the oracle's top class is 5 stars
  (1 star for "negative"), outside the guide's training range.
- anonymisation: guide = ``-author_weight · p_guide(true author | x) + similarity_weight · cos(emb(x), emb(x_0))``;
  oracle = a second attribution model; success = the oracle's top author is not the true one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .episodes import episodes_from_chains
from .mcmc import MaskInfillProposal, MetropolisHastings

if TYPE_CHECKING:
    from .reproduce import Config

TASKS = ("sentiment", "anonymisation")


class TextTaskUnavailable(ValueError):
    """The user's data or models cannot run the task as configured (too few texts, unknown authors)."""

#: claim id of each task
CLAIM = {"sentiment": "X2", "anonymisation": "X3"}


def model_fields(task: str) -> tuple[str, ...]:
    """The config fields naming the models ``task`` needs."""
    if task == "sentiment":
        return ("mlm_model", "qtheta_model", "sentiment_guide_model", "sentiment_oracle_model")
    return ("mlm_model", "qtheta_model", "author_guide_model", "author_oracle_model", "similarity_model")


def missing_models(cfg: Config, task: str) -> list[str]:
    """One message per model of ``task`` that cannot be found (empty: all there). Nothing is loaded."""
    from ..llm.transformers_models import model_folder

    out = []
    for field in model_fields(task):
        try:
            model_folder(getattr(cfg, field), field)
        except (FileNotFoundError, TypeError) as exc:
            out.append(str(exc))
    return out


@dataclass
class _Task:
    """Sources (decoded chain starts / test inputs), guide and oracle of one task."""

    train: list[str]
    test: list[str]
    guide: Any  # make_guide(sources, meta) -> fn(texts, rows)
    oracle: Any  # fn(texts, rows, sources, meta) -> (score (n,), success (n,) bool)
    train_meta: Any
    test_meta: Any
    similarity: Any  # SentenceSimilarity or None
    success_name: str


def _pick(n_have: int, n_chains: int, n_test: int, rng: np.random.Generator, what: str) -> np.ndarray:
    if n_have < n_chains + n_test:
        raise TextTaskUnavailable(f"{what}: {n_have} usable texts, but text_n_chains + text_n_test = {n_chains + n_test}; "
                         "lower them or raise text_max_words")
    return rng.permutation(n_have)[: n_chains + n_test]


def _sentiment(cfg: Config, seed: int) -> _Task:
    from .text_data import load_yelp
    from .text_models import SentenceSimilarity, SequenceClassifier

    path = cfg.yelp_path or None
    tr, r_tr = load_yelp("train", path=path, max_words=cfg.text_max_words)
    te, r_te = load_yelp("test", path=path, max_words=cfg.text_max_words)
    rng = np.random.default_rng([seed, 30])
    in_range = set(cfg.sentiment_guide_ratings)  # the guide's training range: starts and test inputs come from it
    tr = [t for t, r in zip(tr, r_tr) if r in in_range]
    te = [t for t, r in zip(te, r_te) if r in in_range]
    i_tr = _pick(len(tr), cfg.text_n_chains, 0, rng, "Yelp train")
    i_te = _pick(len(te), cfg.text_n_test, 0, rng, "Yelp test")
    guide = SequenceClassifier(cfg.sentiment_guide_model, device=cfg.device)
    oracle = SequenceClassifier(cfg.sentiment_oracle_model, device=cfg.device)
    sign = 1.0 if cfg.sentiment_direction == "positive" else -1.0
    g_vals, o_vals = np.asarray(cfg.sentiment_guide_ratings, float), np.asarray(cfg.sentiment_oracle_ratings, float)
    extreme = max(o_vals) if sign > 0 else min(o_vals)

    def make_guide(sources: list[str], meta: Any) -> Any:
        return lambda texts, rows: sign * guide.expected_value(texts, g_vals)

    def judge(texts: list[str], rows: np.ndarray, sources: list[str], meta: Any) -> tuple[np.ndarray, np.ndarray]:
        p = oracle.probs(texts)
        if oracle.num_labels == 1:
            return sign * p[:, 0], np.rint(p[:, 0]) == extreme
        return sign * (p @ o_vals), o_vals[np.argmax(p, axis=1)] == extreme

    try:
        sim = SentenceSimilarity(cfg.similarity_model, device=cfg.device)
    except FileNotFoundError:
        sim = None  # only reported for sentiment
    return _Task([tr[i] for i in i_tr], [te[i] for i in i_te], make_guide, judge, None, None, sim,
                 f"oracle rates {int(extreme)} stars")


def _anonymisation(cfg: Config, seed: int) -> _Task:
    from .text_data import load_authorship
    from .text_models import SentenceSimilarity, SequenceClassifier

    texts, authors = load_authorship(cfg.authorship_path)
    keep = [i for i, t in enumerate(texts) if len(t.split()) <= cfg.text_max_words]
    rng = np.random.default_rng([seed, 31])
    idx = _pick(len(keep), cfg.text_n_chains, cfg.text_n_test, rng, "authorship data")
    texts, authors = [texts[keep[i]] for i in idx], [authors[keep[i]] for i in idx]
    guide = SequenceClassifier(cfg.author_guide_model, device=cfg.device)
    oracle = SequenceClassifier(cfg.author_oracle_model, device=cfg.device)
    sim = SentenceSimilarity(cfg.similarity_model, device=cfg.device)

    def label_ids(clf: Any, who: list[str], field: str) -> np.ndarray:
        index = {lab: i for i, lab in enumerate(clf.labels)}
        bad = sorted({a for a in who if a not in index})
        if bad:
            raise TextTaskUnavailable(f"{field}: authors {bad[:5]} of the data are not classes of the model ({clf.labels[:5]}"
                             " ...); the attribution model must be trained on the corpus' authors")
        return np.array([index[a] for a in who])

    def make_guide(sources: list[str], meta: list[str]) -> Any:
        ids = label_ids(guide, meta, "author_guide_model")

        def fn(texts: list[str], rows: np.ndarray) -> np.ndarray:
            p = guide.probs(texts)[np.arange(len(texts)), ids[rows]]
            return -cfg.author_weight * p + cfg.similarity_weight * sim(texts, [sources[r] for r in rows])

        return fn

    def judge(out: list[str], rows: np.ndarray, sources: list[str], meta: list[str]) -> tuple[np.ndarray, np.ndarray]:
        ids = label_ids(oracle, meta, "author_oracle_model")[rows]
        p = oracle.probs(out)
        return -p[np.arange(len(out)), ids], np.argmax(p, axis=1) != ids

    n = cfg.text_n_chains
    return _Task(texts[:n], texts[n:], make_guide, judge, authors[:n], authors[n:], sim,
                 "oracle does not name the author")


@dataclass
class TextResult:
    """What one text task measured: the table rows and the claim's numbers."""

    rows: list[dict[str, Any]]
    qtheta_minus_mh: float  # q_θ's mean oracle score minus MH's at the same number of guide calls
    note: str


def run_text_task(cfg: Config, task: str, seed: int) -> TextResult:
    """Phase 1 (MH chains), phase 2 (episodes, q_θ) and the test comparison of one text task."""
    from .text_models import MLMInfill
    from .text_qtheta import TextQTheta

    t = _sentiment(cfg, seed) if task == "sentiment" else _anonymisation(cfg, seed)
    infill = MLMInfill(cfg.mlm_model, device=cfg.device)
    X_tr, X_te = infill.encode(t.train, cfg.text_length), infill.encode(t.test, cfg.text_length)
    src_tr, src_te = infill.decode(X_tr), infill.decode(X_te)  # the states' own text (truncated to text_length)
    g_tr, g_te = t.guide(src_tr, t.train_meta), t.guide(src_te, t.test_meta)

    def energy(guide: Any) -> Any:
        return lambda X: np.asarray(guide(infill.decode(X), np.arange(len(X))), dtype=float)

    prop = MaskInfillProposal(infill, n_positions=cfg.text_n_positions)
    chains = MetropolisHastings(energy(g_tr), prop, beta=cfg.text_beta).run(X_tr, cfg.text_chain_steps,
                                                                           seed=[seed, 32], show_progress=True)
    eps = episodes_from_chains(chains.states, chains.scores, "improve", k_max=cfg.k_max, seed=[seed, 33])
    if not eps:
        raise TextTaskUnavailable(f"{task}: no MH chain improved its guide score ({cfg.text_n_chains} chains x "
                                  f"{cfg.text_chain_steps} steps), so there are no episodes to train q_θ on; raise "
                                  "text_n_chains or text_chain_steps")
    episodes = [(infill.decode(s), sc) for s, sc in eps]
    q = TextQTheta(cfg.qtheta_model, device=cfg.device, history=cfg.qtheta_history, n_bins=cfg.qtheta_bins)
    q.fit(episodes, steps=cfg.qtheta_steps, lr=cfg.qtheta_lr, batch_size=cfg.qtheta_batch, r=cfg.qtheta_lora_r,
          seed=seed, progress=True)
    budget = cfg.text_steps * cfg.text_candidates
    res = q.transform(src_te, g_te, steps=cfg.text_steps, n_candidates=cfg.text_candidates,
                      max_tokens=cfg.text_max_new_tokens, seed=seed)
    test_chains = MetropolisHastings(energy(g_te), prop, beta=cfg.text_beta).run(X_te, cfg.text_chain_steps,
                                                                                seed=[seed, 34])
    rows_te = np.arange(len(src_te))

    def mh_out(b: int) -> list[str]:
        best = np.argmax(test_chains.scores[:, : b + 1], axis=1)
        return infill.decode(test_chains.states[rows_te, best])

    outputs = {"start": (src_te, 0, 0), f"q_θ ({cfg.text_steps} steps × best-of-{cfg.text_candidates})":
               ([r[-1] for r in res.texts], budget, cfg.text_steps),
               f"MH, best within {budget} guide calls": (mh_out(budget), budget, budget),
               f"MH, best within {cfg.text_chain_steps} guide calls": (mh_out(cfg.text_chain_steps),
                                                                     cfg.text_chain_steps, cfg.text_chain_steps)}
    table, score = [], {}
    for name, (texts, calls, steps) in outputs.items():
        o, ok = t.oracle(texts, rows_te, src_te, t.test_meta)
        score[name] = float(np.mean(o))
        row = {"task": task, "method": name, "mean oracle score": score[name], t.success_name: float(np.mean(ok)),
               "guide calls per input": calls, "sequential steps": steps, "oracle calls per input": 1,
               "mean guide score": float(np.mean(g_te(texts, rows_te)))}
        row["similarity to input"] = float(np.mean(t.similarity(texts, src_te))) if t.similarity else float("nan")
        row["perplexity (q_θ base LM)"] = float(np.nanmedian(q.base_perplexity(texts)))
        table.append(row)
    names = list(outputs)
    diff = score[names[1]] - score[names[2]]
    note = (f"{len(eps)} episodes ({sum(len(s) - 1 for s, _ in eps)} transitions) from {cfg.text_n_chains} chains × "
            f"{cfg.text_chain_steps} steps (acceptance {chains.acceptance_rate:.2f}); q_θ final LoRA loss "
            f"{q.losses[-1]:.3f}; oracle score start {score[names[0]]:.3f}, q_θ {score[names[1]]:.3f}, MH@{budget} "
            f"{score[names[2]]:.3f}, MH@{cfg.text_chain_steps} {score[names[3]]:.3f}; empty q_θ samples "
            f"{res.invalid_rate:.2f}")
    return TextResult(table, diff, note)
