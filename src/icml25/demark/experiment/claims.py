"""The claims, tables and notes of the reproduction: Q1 (simulated oracle), Q2 and F3-F5 (simulated deployment),
F6 (the chooser-bias curve), R1-R7 (the real model) and P3-P4 (the paper's own deployment)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from icml25.core import Report, Scale

from ..metrics import median_p, tpr_at_fpr
from .simulated import simulated_recovery

if TYPE_CHECKING:
    from ..reproduce import Config

#: spec §3 (the paper's table as quoted by igotyabingo/wmstealing): De-mark removal on Llama-3.1-8B, MMW book report
PAPER_TPR1_REMOVAL = 0.01
PAPER_MEDIAN_P_REMOVAL = 0.178
#: De-mark gray-box spoofing, TPR@1%FPR on Llama-3.1-8B: a third-party run quoted in spec §3, not the paper's number
THIRD_PARTY_TPR1_SPOOF = 0.96
PAPER_SRC = "spec §3 table (MMW book report, Llama-3.1-8B-Instruct, the paper's numbers as quoted by igotyabingo/wmstealing)"


def add_q1_claims(rep: Report, q1: dict[str, Any]) -> None:
    """Q1a-Q1d: h, delta and green lists recovered on the simulated probe oracle, and its trials table."""
    spec = "spec §6 Q1 (simulated oracle, sigma_b = sigma_e = 0.2)"
    # fails if: Algorithm 3 compares the wrong widths, hashes the candidates, or thresholds a(w) wrongly
    rep.add_claim("Q1a", "h recovered exactly (h_hat = h) in >= 90 % of trials, simulated oracle", None,
                  q1["h_rate"], ">=", 0.9, kind="paper", reference_value=0.9, reference_source=spec,
                  note="paper: h is recovered accurately for Llama-3.1-8B / Llama-3.2-3B / Mistral-7B (no number "
                       "retrievable here)")
    # fails if: delta_hat is not the mean over confidently green-vs-red pairs (e.g. all non-zero R, or |R| of
    # random pairs), or the alpha/kappa thresholds are swapped
    rep.add_claim("Q1b", "mean |delta_hat - delta| <= 0.15 over trials (delta in {1, 2, 3})", None, q1["delta_err"],
                  "<=", 0.15, kind="paper", reference_value=0.03, reference_source="spec §5 calibration")
    # fails if: Algorithm 5 uses raw R instead of normalised pair scores, or the sign of sigma is flipped
    rep.add_claim("Q1c", "green-list precision >= 0.95 on random candidate sets (m = top_k)", None,
                  q1["precision"], ">=", 0.95, kind="paper", reference_value=0.99, reference_source="spec §5 calibration")
    # fails if: as Q1c (a high-precision but timid rule, e.g. requiring sigma > m/2, loses recall)
    rep.add_claim("Q1d", "green-list recall >= 0.90 on random candidate sets", None, q1["recall"], ">=", 0.90,
                  kind="paper", reference_value=0.99, reference_source="spec §5 calibration")
    rep.add_table("Q1 simulated oracle: trials", q1["rows"])


def add_q2_claims(rep: Report, cfg: Config, d: dict[str, Any]) -> None:
    """Q2*: detection, estimation, removal, per-step KL and green lists on the simulated deployment."""
    dep = (f"simulated deployment: {cfg.ngram_order}-gram word model on tinyshakespeare (vocab {d['V']}), "
           f"InstructionFollowingLM sigma_b = sigma_e = {cfg.sim_sigma_b}, KGW delta {cfg.wm_delta}, h {cfg.wm_h}")
    zw, zc, zd = float(np.mean(d["z_wm"])), float(np.mean(d["z_clean"])), float(np.mean(d["z_demark"]))
    # fails if: the watermark is not applied to the served logits (then nothing is there to remove)
    rep.add_claim("Q2w", f"watermarked text detected: mean z >= 2.33 ({cfg.n_prompts} prompts x {cfg.new_tokens} "
                  "tokens)", None, zw, ">=", 2.33, kind="check", note=dep)
    # fails if: the detector scores the prompt or uses the wrong window (clean z drifts)
    rep.add_claim("Q2c", "unwatermarked text: mean z in [-1.2, 1.2]", None, zc, "within", (-1.2, 1.2), kind="check")
    # fails if: h is estimated on the wrong side of the agreement drop or the probes hash the candidates
    rep.add_claim("Q2h", f"h recovered on the deployment (h_hat = {cfg.wm_h})", None, float(d["h_hat"] == cfg.wm_h),
                  ">=", 1.0, kind="paper", note=f"agreement a(w), w = 1..{cfg.h_max - 1}: "
                  + ", ".join(f"{a:.2f}" for a in d["agreement"]))
    # fails if: position bias not cancelled (one ordering only) or delta averaged over all pairs
    rep.add_claim("Q2d", f"|delta_hat - {cfg.wm_delta}| <= 0.3 on the deployment", None,
                  abs(d["delta_hat"] - cfg.wm_delta) if np.isfinite(d["delta_hat"]) else float("inf"), "<=", 0.3,
                  kind="paper", reference_source="spec §6 Q2", reference_value=0.3,
                  note=f"delta_hat = {d['delta_hat']:.3f}")
    # fails if: removal subtracts from the wrong tokens (random scrubbing lowers z by ~1)
    rep.add_claim("Q2a", "De-mark lowers the mean z-score by >= 1.5", None, zw - zd, ">=", 1.5, kind="paper",
                  headline=True,
                  requires=("Q2w",), reference_source="spec §6 Q2", reference_value=1.5,
                  note=f"mean z watermarked {zw:.2f}, De-marked {zd:.2f}, clean {zc:.2f}")
    st = d["steps"]
    # fails if: delta_hat is far from delta or the green list is wrong (Hoeffding bound of spec §2.10)
    rep.add_claim("Q2k", "per-step exact KL(p_clean,topk || p_demarked,topk) <= 0.05 nats", None, st["kl_demark"],
                  "<=", 0.05, kind="mechanism", note=f"KL(clean || watermarked) = {st['kl_wm']:.3f}")
    # fails if: as Q2k; random scrubbing leaves about the watermark's own KL
    rep.add_claim("Q2r", "per-step KL after De-mark <= 1/5 of the watermark's KL", None,
                  st["kl_demark"] / max(st["kl_wm"], 1e-12), "<=", 0.2, kind="mechanism")
    # fails if: Algorithm 5 misclassifies at real generation steps
    rep.add_claim("Q2p", "green-list precision at real generation steps >= 0.95", None, st["precision"], ">=",
                  0.95, kind="paper", reference_source="spec §6 F2", reference_value=0.95)
    # fails if: as Q2p
    rep.add_claim("Q2q", "green-list recall at real generation steps >= 0.90", None, st["recall"], ">=", 0.90,
                  kind="paper", reference_source="spec §6 F2", reference_value=0.90)
    # the spec's "to <= 1.0" target, which the top-k support effect can defeat on a flat text model (README)
    rep.add_claim("Q2z", "mean z after De-mark <= 1.0", None, zd, "<=", 1.0, kind="paper", scale=Scale.FULL,
                  requires=("Q2w",), reference_source="spec §6 Q2", reference_value=1.0,
                  note="asserted at full scale only: see the README (top-k support enrichment)")


def add_full_claims(rep: Report, cfg: Config, d: dict[str, Any]) -> None:
    """F3-F5 (full scale): TPR@1%FPR before and after removal, perplexity, the scrubbing baseline, black-box
    removal and spoofing on the simulated deployment."""
    null = d["p_null"]
    tw = tpr_at_fpr(d["p_wm"], null, (0.01,))[0.01]
    tdm = tpr_at_fpr(d["p_demark"], null, (0.01,))[0.01]
    tsc = tpr_at_fpr(d["p_scrub"], null, (0.01,))[0.01]
    src = "spec §3 table (MMW book report, Llama-3.1-8B-Instruct, as quoted by igotyabingo/wmstealing)"
    # fails if: the watermark is too weak at this length to measure removal
    rep.add_claim("F3w", "watermarked text TPR@1%FPR >= 0.90 (empirical threshold from unwatermarked texts)", None,
                  tw, ">=", 0.90, kind="check", scale=Scale.FULL)
    # fails if: the removal leaves the green bias (wrong lists or delta_hat)
    rep.add_claim("F3a", "after De-mark TPR@1%FPR <= 0.10", PAPER_TPR1_REMOVAL, tdm, "<=", 0.10, kind="paper",
                  headline=True,
                  source=src, scale=Scale.FULL, requires=("F3w",),
                  note=f"Gaussian p < 0.01: {float(np.mean(d['p_demark'] < 0.01)):.2f}")
    # fails if: as F3a
    rep.add_claim("F3b", "after De-mark median p-value >= 0.05", PAPER_MEDIAN_P_REMOVAL, median_p(d["p_demark"]),
                  ">=", 0.05, kind="paper", source=src, scale=Scale.FULL, requires=("F3w",))
    # fails if: the correction distorts the text distribution (ppl drifts from clean)
    ratio = d["ppl"]["demark"] / d["ppl"]["clean"]
    rep.add_claim("F3q", "perplexity of De-marked text under the clean model within +-10 % of clean generations",
                  None, ratio, "within", (0.9, 1.1), kind="paper", scale=Scale.FULL,
                  note="paper: GPT-3.5 quality 94.6 (De-mark) on Llama-3.1-8B; here ppl ratio De-marked / clean")
    # fails if: the baseline were as good as De-mark (then the probes would add nothing)
    rep.add_claim("F3s", "oracle-free random scrubbing leaves TPR@1%FPR >= 0.5", None, tsc, ">=", 0.5,
                  kind="mechanism", scale=Scale.FULL)
    if "z_blackbox" in d:
        # fails if: black-box ratios are not clipped or the kept answers are miscounted
        rep.add_claim("F5", f"black-box De-mark (n = {cfg.blackbox_n}) TPR@1%FPR <= 0.25", None,
                      tpr_at_fpr(d["p_blackbox"], null, (0.01,))[0.01], "<=", 0.25, kind="paper", scale=Scale.FULL)
    if "z_spoof" in d:
        # fails if: the spoofer adds delta to the wrong tokens or uses the wrong context window
        rep.add_claim("F4a", "spoofed texts detected by the target's detector: TPR@1%FPR >= 0.70", None,
                      tpr_at_fpr(d["p_spoof"], null, (0.01,))[0.01], ">=", 0.70, kind="paper", scale=Scale.FULL,
                      headline=True, reference_value=THIRD_PARTY_TPR1_SPOOF,
                      reference_source="spec §3 table: a third-party run (igotyabingo/wmstealing), target "
                                       "Llama-3.1-8B, gray-box; not a number printed in the paper")
        # fails if: the surrogate shares the key (it must be unwatermarked)
        rep.add_claim("F4b", "surrogate alone: TPR@1%FPR <= 0.05", None,
                      tpr_at_fpr(d["p_surrogate"], null, (0.01,))[0.01], "<=", 0.05, kind="check", scale=Scale.FULL)
    if "zm_demark" in d:
        _add_markllm_rows(rep, cfg, d, src)


def _add_markllm_rows(rep: Report, cfg: Config, d: dict[str, Any], src: str) -> None:
    """Removal vs MarkLLM's detector (an independent KGW implementation, same texts; needs wm_prf = markllm-*)."""
    null = d["pm_null"]
    tw = tpr_at_fpr(d["pm_wm"], null, (0.01,))[0.01]
    tdm = tpr_at_fpr(d["pm_demark"], null, (0.01,))[0.01]
    # fails if: MarkLLM's detector does not see our watermark (seeding schemes differ)
    rep.add_claim("F3mw", "MarkLLM's detector: watermarked TPR@1%FPR >= 0.90 (empirical threshold from its z on "
                  "unwatermarked texts)", None, tw, ">=", 0.90, kind="check", scale=Scale.FULL,
                  note=f"wm_prf = {cfg.wm_prf}")
    # fails if: as F3a, judged by the independent detector
    rep.add_claim("F3m", "removal vs MarkLLM's detector: after De-mark TPR@1%FPR <= 0.10", PAPER_TPR1_REMOVAL, tdm,
                  "<=", 0.10, kind="paper", source=src, scale=Scale.FULL, requires=("F3mw",),
                  note=f"MarkLLM's default rule z > 4 flags {float(np.mean(d['zm_demark'] > 4)):.2f} of De-marked "
                       f"and {float(np.mean(d['zm_wm'] > 4)):.2f} of watermarked texts")
    rows = []
    for k in ("clean", "null", "wm", "demark", "scrub"):
        if f"zm_{k}" not in d:
            continue
        z, zm = d[f"z_{k}"], d[f"zm_{k}"]
        rows.append({"text": k, "n": len(z), "mean z (ours)": float(np.mean(z)), "mean z (MarkLLM)": float(np.mean(zm)),
                     "max |z ours - z MarkLLM|": float(np.max(np.abs(z - zm))),
                     "TPR@1% ours": tpr_at_fpr(d[f"p_{k}"], d["p_null"], (0.01,))[0.01],
                     "TPR@1% MarkLLM": tpr_at_fpr(d[f"pm_{k}"], null, (0.01,))[0.01],
                     "z > 4 (MarkLLM's rule)": float(np.mean(zm > 4))})
    rep.add_table("removal vs MarkLLM's detector (simulated deployment)", rows)


def add_deployment_tables(rep: Report, d: dict[str, Any]) -> None:
    """The simulated deployment's detection and estimation/cost tables and a sample."""
    st = d["steps"]
    rep.add_table("simulated deployment: detection", [
        {"text": k, "mean z": float(np.mean(d[f"z_{k}"])), "median p": float(np.median(d[f"p_{k}"])),
         "TPR@1% (p<0.01)": float(np.mean(d[f"p_{k}"] < 0.01))}
        for k in ("clean", "null", "wm", "demark", "scrub", "blackbox", "surrogate", "spoof") if f"z_{k}" in d])
    rep.add_table("simulated deployment: estimation and cost", [
        {"h_hat": d["h_hat"], "delta_hat": d["delta_hat"], "estimation probe queries": d["estimation_queries"],
         "estimation s": d["estimation_s"], "removal probe queries per token": d["queries_per_token"],
         "removal s": d["removal_s"], **{f"ppl {k}": v for k, v in d["ppl"].items()},
         "KL(clean||wm)": st["kl_wm"], "KL(clean||demark)": st["kl_demark"], "green accuracy": st["accuracy"]}])
    rep.notes.append("Sample (simulated deployment): prompt «" + d["sample"]["prompt"] + "» watermarked «"
                     + d["sample"]["watermarked"] + "» De-marked «" + d["sample"]["de-marked"] + "»")


def add_chooser_bias_curve(rep: Report, cfg: Config, seed: int, method: bool,
                           q1: dict[str, Any]) -> list[dict[str, float]]:
    """F6: the simulated oracle at each ``sigma_curve`` chooser bias (beside Q1's), the claim that accuracy falls
    with the bias (when there are more than two points) and the table; returns the curve sorted by sigma_b."""
    curve = [{"sigma_b": cfg.sim_sigma_b, "h rate": q1["h_rate"], "delta err": q1["delta_err"],
              "precision": q1["precision"], "recall": q1["recall"], "accuracy": q1["accuracy"]}]
    for s in cfg.sigma_curve:
        r = simulated_recovery(cfg, seed, s, method)
        curve.append({"sigma_b": s, "h rate": r["h_rate"], "delta err": r["delta_err"], "precision": r["precision"],
                      "recall": r["recall"], "accuracy": r["accuracy"]})
    curve.sort(key=lambda r: r["sigma_b"])
    if len(curve) > 2:
        lo, hi = curve[0], curve[-1]
        # fails if: the estimators do not depend on the chooser's bias (they then cannot be the paper's)
        rep.add_claim("F6", f"green-list accuracy at sigma_b = {hi['sigma_b']} below that at {lo['sigma_b']}", None,
                      hi["accuracy"] - lo["accuracy"], "<", 0.0, kind="mechanism", scale=Scale.FULL)
    rep.add_table("robustness to chooser bias (simulated oracle)", curve)
    return curve


def add_real_claims(rep: Report, cfg: Config, r: dict[str, Any], name: str) -> None:
    """R1-R7 on the real model ``name``: detection, chooser bias, green lists, estimation and removal; its table
    and notes."""
    b = r["bias"]
    note = (f"{name}, {cfg.real_pairs} random pairs: sigma_base = std R = {b['sigma_base']:.2f} "
            f"(sigma_b equivalent {b['sigma_b_equivalent']:.2f}), mean |R| {b['mean_abs_R']:.2f}, mass on the two "
            f"candidates {b['mass_on_pair']:.2f}, pairs inside the top-{cfg.top_k} {b['known_fraction']:.2f}")
    # fails if: the watermark is not applied to the real model's served logits
    rep.add_claim("R1", f"real watermarked {name} text: mean z >= 2.0", None, float(np.mean(r["z_wm"])), ">=", 2.0,
                  kind="check", note=f"clean mean z {float(np.mean(r['z_clean'])):.2f}; {cfg.real_gen_prompts} "
                  f"MMW book-report prompts x {cfg.real_gen_tokens} tokens")
    # the paper's working assumption, measured: fails honestly for a biased small chooser
    rep.add_claim("R2", "real chooser near-unbiased: sigma_base <= 0.5 (the estimators' regime in the simulator)",
                  None, b["sigma_base"], "<=", 0.5, kind="mechanism", scale=Scale.FULL,
                  reference_value=0.28, reference_source="spec §5 calibration: sigma_b = 0.2 gives std R = 0.28",
                  note=note)
    g = r["green"]
    # fails if: the probes do not expose the watermark on the real model (bias swamps delta)
    rep.add_claim("R3", "real model: green-list precision at real steps >= 0.95", None, g["precision"], ">=", 0.95,
                  kind="paper", scale=Scale.FULL, reference_value=0.95, reference_source="spec §6 F2",
                  note=f"recall {g['recall']:.2f}, accuracy {g['accuracy']:.2f} over {g['steps']} steps x "
                       f"m = {cfg.real_m}; context width {g['width']}, delta used {g['delta_used']:.2f}")
    rep.add_claim("R4", "real model: green-list recall at real steps >= 0.90", None, g["recall"], ">=", 0.90,
                  kind="paper", scale=Scale.FULL, reference_value=0.90, reference_source="spec §6 F2")
    _add_real_estimation_removal_claims(rep, cfg, r, name)
    rep.add_table("real model (SmolLM2-135M-Instruct + KGW): chooser bias and detection", [
        {**{k: round(v, 3) for k, v in b.items()}, "mean z wm": float(np.mean(r["z_wm"])),
         "mean z clean": float(np.mean(r["z_clean"])), "green precision": g["precision"],
         "green recall": g["recall"], "h_hat": r.get("h_hat"), "delta_hat": r.get("delta_hat"),
         "mean z De-marked": float(np.mean(r["z_demark"])) if "z_demark" in r else None,
         "probe queries": r["probe_queries"], "seconds": r["seconds"]}])
    rep.notes.append("Real watermarked sample: «" + r["sample_wm"].replace("\n", " ") + "»")
    if "sample_demark" in r:
        rep.notes.append("Real De-marked sample: «" + r["sample_demark"].replace("\n", " ") + "»")
    rep.notes.append("Gemma-3-270M cannot be the spoofing surrogate: its vocabulary (262,144) differs from "
                     "SmolLM2's (49,152); spoofing is measured on the simulated deployment with a second n-gram "
                     "model of the same vocabulary (spec F4).")


def _add_real_estimation_removal_claims(rep: Report, cfg: Config, r: dict[str, Any], name: str) -> None:
    """R5-R6 (when h and delta were estimated) and R7 (when the real model's text was De-marked)."""
    if "h_hat" in r:
        # fails if: a biased chooser flips scores between widths (agreement never rises above beta)
        rep.add_claim("R5", f"real model: h recovered (h_hat = {cfg.real_h})", None, float(r["h_hat"] == cfg.real_h),
                      ">=", 1.0, kind="paper", scale=Scale.FULL,
                      note=f"h_hat = {r['h_hat']}; a(w): " + ", ".join(f"{a:.2f}" for a in r["agreement"]))
        # fails if: chooser bias inflates |R| of the confidently classified pairs
        rep.add_claim("R6", f"real model: |delta_hat - {cfg.wm_delta}| <= 0.3", None,
                      abs(r["delta_hat"] - cfg.wm_delta) if np.isfinite(r["delta_hat"]) else float("inf"), "<=", 0.3,
                      kind="paper", scale=Scale.FULL, note=f"delta_hat = {r['delta_hat']:.3f} from "
                      f"{len(r['delta_samples'])} pairs")
    if "z_demark" in r:
        zw = float(np.mean(r["z_wm"][: cfg.real_remove_prompts]))
        # fails if: removal fails on the real model (biased chooser -> wrong lists)
        rep.add_claim("R7", f"real model ({name}): De-mark lowers the mean z-score by >= 1.5", None,
                      zw - float(np.mean(r["z_demark"])), ">=", 1.5, kind="paper", scale=Scale.FULL,
                      note=f"z watermarked {zw:.2f} -> De-marked {float(np.mean(r['z_demark'])):.2f}; "
                           f"{r['queries_per_token']:.0f} probe queries per token; ppl SmolLM2 "
                           + ", ".join(f"{k} {v:.1f}" for k, v in r["ppl_smollm2"].items()) + "; ppl Gemma "
                           + ", ".join(f"{k} {v if isinstance(v, str) else round(v, 1)}"
                                       for k, v in r["ppl_gemma"].items()))
    if "zm_demark" in r:
        _add_real_markllm_rows(rep, cfg, r, name)


def _add_real_markllm_rows(rep: Report, cfg: Config, r: dict[str, Any], name: str) -> None:
    """R7m: real-model removal judged by MarkLLM's detector (same ids), and its table."""
    zw, zd = float(np.mean(r["zm_wm"])), float(np.mean(r["zm_demark"]))
    # fails if: as R7, judged by the independent detector
    rep.add_claim("R7m", f"real model ({name}), removal vs MarkLLM's detector: mean z lowered by >= 1.5", None,
                  zw - zd, ">=", 1.5, kind="paper", scale=Scale.FULL,
                  note=f"MarkLLM z watermarked {zw:.2f} -> De-marked {zd:.2f}; z > 4: "
                       f"{float(np.mean(r['zm_wm'] > 4)):.2f} -> {float(np.mean(r['zm_demark'] > 4)):.2f}")
    rep.add_table("real model: removal vs MarkLLM's detector", [
        {"text": k, "n": len(r[f"zm_{k}"]), "mean z (ours)": float(np.mean(r[f"z_{k}"][: len(r[f"zm_{k}"])])),
         "mean z (MarkLLM)": float(np.mean(r[f"zm_{k}"])), "p < 0.01 (MarkLLM)": float(np.mean(r[f"pm_{k}"] < 0.01)),
         "z > 4 (MarkLLM's rule)": float(np.mean(r[f"zm_{k}"] > 4))} for k in ("wm", "clean", "demark")])


def add_paper_claims(rep: Report, cfg: Config, r: dict[str, Any] | None, scale: Scale) -> None:
    """The paper's own deployment (Llama-3.1-8B-Instruct, 100 MMW book reports x 300 tokens): removal and spoofing on
    the real model, measured by a paper-scale run, *not measured here* by quick and full runs."""
    needs = ("--scale paper: the paper's deployment (Llama-3.1-8B-Instruct weights as real_model on a GPU, 100 MMW "
             "book-report prompts x 300 tokens, m = 20; spoofing also needs real_surrogate, a model with its tokenizer)")
    p_dm = r.get("p_demark") if r else None
    p_sp = r.get("p_spoof") if r else None
    items = (
        # fails if: the removal leaves the green bias on the paper's deployment
        ("P3a", "paper's deployment: after De-mark TPR@1%FPR (Gaussian p < 0.01) <= 0.10", PAPER_TPR1_REMOVAL, "<=",
         0.10, None if p_dm is None else float(np.mean(p_dm < 0.01)), True, "real_remove_prompts > 0"),
        ("P3b", "paper's deployment: after De-mark median p-value >= 0.05", PAPER_MEDIAN_P_REMOVAL, ">=", 0.05,
         None if p_dm is None else median_p(p_dm), False, "real_remove_prompts > 0"),
        # fails if: the spoofer pushes the surrogate onto the wrong tokens
        ("P4a", "paper's deployment: spoofed texts TPR@1%FPR (Gaussian p < 0.01) >= 0.70", None, ">=", 0.70,
         None if p_sp is None else float(np.mean(p_sp < 0.01)), False, "real_surrogate"),
    )
    for cid, statement, paper, cmp, thr, value, head, field in items:
        kw = dict(id=cid, statement=statement, paper_value=paper, comparison=cmp, threshold=thr, kind="paper",
                  scale=Scale.PAPER, headline=head, source=PAPER_SRC if paper is not None else "")
        if cid == "P4a":
            kw.update(reference_value=THIRD_PARTY_TPR1_SPOOF,
                      reference_source="spec §3: a third-party run (gray-box, target Llama-3.1-8B)")
        if scale.rank < Scale.PAPER.rank:
            rep.add_unmeasured_claim(**kw, needs=needs)
        elif value is None:
            rep.add_claim(**kw, measured=math.nan, note=f"not measured: the real-model part did not run it (needs "
                                                       f"{field} and the real model loaded)")
        else:
            texts = p_dm if cid != "P4a" else p_sp
            assert texts is not None  # value is measured from them
            rep.add_claim(**kw, measured=value, note=f"{cfg.real_model}, {len(texts)} "
                                                     f"prompts x {cfg.real_gen_tokens} tokens, m = {cfg.real_m}")
