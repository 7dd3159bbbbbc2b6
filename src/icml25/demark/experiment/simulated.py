"""The simulated stages (spec §6 Q1-Q2, F3-F6): parameter recovery on the simulated probe oracle, and estimation,
generation, removal, black-box removal and spoofing on the simulated deployment (word n-gram text model +
:class:`InstructionFollowingLM` + KGW)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from icml25.core.progress import progress

from .. import data
from ..attack import DeMark, RandomScrubber, Spoofer, StepRecord, sample_topk
from ..estimation import estimate_delta, estimate_prefix_length, identify_green_list
from ..metrics import perplexity, topk_kl
from ..oracles import LMOracle, WatermarkedOracle
from ..probing import RandomSelectionProber
from ..simulators import InstructionFollowingLM, SimulatedProbeOracle
from ..text_lm import SPECIALS, NGramLM
from ..watermark import KGWWatermark

if TYPE_CHECKING:
    from ..reproduce import Config


def prf(truth: list[np.ndarray], est: list[np.ndarray]) -> dict[str, float]:
    """Precision, recall and accuracy of estimated green flags pooled over candidate sets."""
    g = np.concatenate(truth).astype(bool) if truth else np.zeros(0, dtype=bool)
    e = np.concatenate(est).astype(bool) if est else np.zeros(0, dtype=bool)
    tp = int((g & e).sum())
    return {"precision": tp / max(int(e.sum()), 1), "recall": tp / max(int(g.sum()), 1),
            "accuracy": float((g == e).mean()) if g.size else float("nan")}


def markllm_detector(wm: KGWWatermark) -> Any:
    """MarkLLM's detector for ``wm`` when its seeding scheme is a markllm-* one and MarkLLM is installed, else None."""
    if not (isinstance(wm.prf, str) and wm.prf.startswith("markllm-")):
        return None
    from ..markllm_detector import MarkLLMDetector, markllm_available

    return MarkLLMDetector(wm) if markllm_available() else None


def z_scores(wm: Any, prompts: list[list[int]], gens: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """KGW z-scores and p-values of the generations (the prompts are not scored); ``wm``: anything with
    ``detect(ids, prompt_len)`` (our watermark or :class:`MarkLLMDetector`)."""
    d = [wm.detect(p + g, prompt_len=len(p)) for p, g in zip(prompts, gens)]
    return np.array([x.z for x in d]), np.array([x.p_value for x in d])


# ----------------------------------------------------------------------------------------------- Q1: simulated oracle
def simulated_recovery(cfg: Config, seed: int, sigma_b: float, method: bool) -> dict[str, Any]:
    """Per trial: h, delta, key drawn; estimate h and delta; green lists on random candidate sets."""
    rng = np.random.default_rng(seed)
    words = np.arange(len(SPECIALS), cfg.sim_vocab)
    hits, errs, rows, truth, est = 0, [], [], [], []
    for t in progress(range(cfg.sim_trials), f"Q1 simulated oracle (sigma_b={sigma_b})"):
        h, delta, key = int(rng.integers(1, 5)), float(rng.choice([1.0, 2.0, 3.0])), int(rng.integers(1, 2 ** 31))
        o = SimulatedProbeOracle(cfg.sim_vocab, delta=delta, h=h, key=key, sigma_b=sigma_b,
                                 sigma_e=cfg.sim_sigma_e, seed=int(rng.integers(2 ** 31)))
        if method:
            h_hat, _ = estimate_prefix_length(o, words, h_max=cfg.sim_h_max, m=cfg.sim_m_h,
                                              random_state=int(rng.integers(2 ** 31)))
            d_hat, _ = estimate_delta(o, words, h_hat, m=cfg.top_k, n_contexts=cfg.sim_delta_contexts,
                                      random_state=int(rng.integers(2 ** 31)))
        else:  # the naive baseline: no probing, fixed guesses
            h_hat, d_hat = 1, 1.0
        hits += h_hat == h
        errs.append(abs(d_hat - delta) if np.isfinite(d_hat) else np.inf)
        for _ in range(cfg.sim_green_sets):
            c = rng.choice(words, h).tolist()
            cand = rng.choice(words, cfg.top_k, replace=False)
            g = o.true_green(c, cand)
            gh = identify_green_list(o, c, cand, d_hat if np.isfinite(d_hat) else 1.0) if method else \
                rng.random(cfg.top_k) < 0.5
            truth.append(g)
            est.append(gh)
        rows.append({"trial": t, "h": h, "h_hat": h_hat, "delta": delta, "delta_hat": d_hat})
    return {"h_rate": hits / cfg.sim_trials, "delta_err": float(np.mean(errs)), **prf(truth, est), "rows": rows}


# -------------------------------------------------------------------------------------- Q2: simulated deployment
def _step_stats(steps: list[StepRecord], wm: KGWWatermark, clean: Any) -> dict[str, float]:
    kl_dm, kl_wm, truth, est = [], [], [], []
    for s in steps:
        pc = np.exp(clean.next_logprobs([s.context])[0])[s.candidates]
        kl_dm.append(topk_kl(pc, np.exp(s.used_logits - s.used_logits.max())))
        kl_wm.append(topk_kl(pc, np.exp(s.served_logps - s.served_logps.max())))
        truth.append(wm.green_mask(s.context)[s.candidates])
        est.append(s.green_hat)
    return {"kl_demark": float(np.mean(kl_dm)), "kl_wm": float(np.mean(kl_wm)), **prf(truth, est)}


def deployment(cfg: Config, seed: int, method: bool) -> dict[str, Any]:
    """The simulated deployment: estimate h and delta by probing, generate watermarked, clean and null texts, remove
    the watermark (De-mark, or the stub's random scrubbing) and the oracle-free scrubbing baseline, then the optional
    black-box removal and spoofing; z-scores, p-values, per-step statistics and perplexities."""
    txt = data.text_data(cfg.text_vocab)
    tok = txt["tok"]
    V = tok.vocab_size
    lm = NGramLM(txt["train"], V, order=cfg.ngram_order, n_special=len(SPECIALS))
    template = tok.probe_template()
    served = InstructionFollowingLM(template, lm, sigma_b=cfg.sim_sigma_b, sigma_e=cfg.sim_sigma_e, seed=seed)
    rng = np.random.default_rng(seed)
    wm = KGWWatermark(V, gamma=0.5, delta=cfg.wm_delta, h=cfg.wm_h, key=int(rng.integers(1, 2 ** 31)),
                      prf=cfg.wm_prf)
    oracle = WatermarkedOracle(served, wm, random_state=seed)
    prober = RandomSelectionProber(oracle, template, top_k=cfg.top_k, combine=cfg.probe_combine)
    words = tok.word_ids()
    res: dict[str, Any] = {"V": V, "words": len(words)}
    t0 = time.perf_counter()
    if method:
        res["h_hat"], res["agreement"] = estimate_prefix_length(prober, words, h_max=cfg.h_max, m=cfg.m_h,
                                                                random_state=seed)
        res["delta_hat"], _ = estimate_delta(prober, words, res["h_hat"], m=cfg.top_k,
                                             n_contexts=cfg.delta_contexts, random_state=seed)
    else:
        res["h_hat"], res["agreement"], res["delta_hat"] = 1, np.full(cfg.h_max - 1, np.nan), 1.0
    res["estimation_queries"] = prober.n_probe_queries
    res["estimation_s"] = time.perf_counter() - t0
    prompts = data.prompts(txt["held"], cfg.n_prompts, cfg.prompt_words)
    eos = [tok.eos]
    wm_gen = sample_topk(oracle, prompts, cfg.new_tokens, cfg.top_k, eos, random_state=seed)
    clean_gen = sample_topk(LMOracle(served), prompts, cfg.new_tokens, cfg.top_k, eos, random_state=seed + 1)
    null_prompts = data.prompts(txt["held"][len(txt["held"]) // 2:], cfg.n_null, cfg.prompt_words)
    null_gen = sample_topk(LMOracle(served), null_prompts, cfg.new_tokens, cfg.top_k, eos, random_state=seed + 2)
    d_hat = res["delta_hat"] if np.isfinite(res["delta_hat"]) else cfg.wm_delta
    steps: list[StepRecord] = []
    q0, t0 = prober.n_probe_queries, time.perf_counter()
    if method:
        dm = DeMark(prober, res["h_hat"], d_hat, top_k=cfg.top_k, random_state=seed)
        removed = [dm.remove(p, cfg.new_tokens, eos, steps=steps) for p in progress(prompts, "De-mark removal")]
    else:
        removed = _scrub_with_steps(oracle, d_hat, cfg, prompts, eos, seed, steps)
    res["removal_s"] = time.perf_counter() - t0
    res["queries_per_token"] = (prober.n_probe_queries - q0) / max(sum(len(r) for r in removed), 1)
    scrubbed = [RandomScrubber(oracle, d_hat, cfg.top_k, random_state=seed + i).remove(p, cfg.new_tokens, eos)
                for i, p in enumerate(prompts)]
    ext = markllm_detector(wm)
    res["markllm"] = ext is not None
    for name, gens, ps in (("wm", wm_gen, prompts), ("clean", clean_gen, prompts), ("null", null_gen, null_prompts),
                           ("demark", removed, prompts), ("scrub", scrubbed, prompts)):
        res[f"z_{name}"], res[f"p_{name}"] = z_scores(wm, ps, gens)
        if ext is not None:  # the same texts scored by MarkLLM's own detector (an independent implementation)
            res[f"zm_{name}"], res[f"pm_{name}"] = z_scores(ext, ps, gens)
    res["steps"] = _step_stats(steps, wm, lm)
    res["ppl"] = {name: perplexity(lm, prompts, [g if g else [tok.eos] for g in gens])
                  for name, gens in (("clean", clean_gen), ("wm", wm_gen), ("demark", removed))}
    res["sample"] = {"prompt": tok.decode(prompts[0]), "watermarked": tok.decode(wm_gen[0]),
                     "de-marked": tok.decode(removed[0])}
    res.update(_blackbox_and_spoof(cfg, seed, method, txt, oracle, prober, wm, prompts, eos, res["h_hat"], d_hat))
    return res


def _blackbox_and_spoof(cfg: Config, seed: int, method: bool, txt: dict[str, Any], oracle: WatermarkedOracle,
                        prober: RandomSelectionProber, wm: KGWWatermark, prompts: list[list[int]], eos: list[int],
                        h_hat: int, d_hat: float) -> dict[str, Any]:
    """F5: black-box De-mark (``blackbox_prompts``) and F4: spoofing with a surrogate n-gram model trained on the other
    half of the text (``spoof_prompts``; the stub's texts are the surrogate's alone)."""
    res: dict[str, Any] = {}
    if method and cfg.blackbox_prompts:
        bb = RandomSelectionProber(oracle, prober.template, mode="blackbox", n_samples=cfg.blackbox_n,
                                   combine=cfg.probe_combine)
        dmb = DeMark(bb, h_hat, d_hat, top_k=cfg.top_k, random_state=seed)
        bp = prompts[: cfg.blackbox_prompts]
        bb_gen = [dmb.remove(p, cfg.new_tokens, eos) for p in progress(bp, "De-mark black-box removal")]
        res["z_blackbox"], res["p_blackbox"] = z_scores(wm, bp, bb_gen)
    if cfg.spoof_prompts:
        half = len(txt["train"]) // 2
        surrogate = NGramLM(txt["train"][half:], wm.vocab_size, order=cfg.ngram_order, n_special=len(SPECIALS))
        sp_prompts = prompts[: cfg.spoof_prompts]
        sur = sample_topk(surrogate, sp_prompts, cfg.new_tokens, cfg.top_k, None, random_state=seed + 3)
        res["z_surrogate"], res["p_surrogate"] = z_scores(wm, sp_prompts, sur)
        if method:
            spf = Spoofer(prober, surrogate, h_hat, d_hat, top_k=cfg.top_k, random_state=seed)
            spoofed = [spf.generate(p, cfg.new_tokens, eos) for p in progress(sp_prompts, "De-mark spoofing")]
        else:
            spoofed = sur
        res["z_spoof"], res["p_spoof"] = z_scores(wm, sp_prompts, spoofed)
    return res


def _scrub_with_steps(oracle: Any, d_hat: float, cfg: Config, prompts: list[list[int]], eos: list[int], seed: int,
                      steps: list[StepRecord]) -> list[list[int]]:
    """The stub's removal: random scrubbing, recorded step by step like De-mark's."""
    rng = np.random.default_rng(seed)
    out = []
    for p in prompts:
        gen: list[int] = []
        for _ in range(cfg.new_tokens):
            ids, lps = oracle.topk_logprobs([p + gen], cfg.top_k)
            g = np.zeros(cfg.top_k, dtype=bool)
            g[rng.choice(cfg.top_k, cfg.top_k // 2, replace=False)] = True
            used = lps[0] - d_hat * g
            q = np.exp(used - used.max())
            tok = int(ids[0, rng.choice(cfg.top_k, p=q / q.sum())])
            steps.append(StepRecord(p + gen, ids[0], lps[0], g, used, tok))
            gen.append(tok)
            if tok in eos:
                break
        out.append(gen)
    return out
