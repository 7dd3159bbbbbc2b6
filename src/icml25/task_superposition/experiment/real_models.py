"""The real pretrained models of the reproduction (C1, C5; spec §6): loading by name or spec, the two-task grid of
one (model, setting), the exactness check of the shared-prefix scorer and the scale claims C5a / C5c (sizes of one
family only)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from icml25.core import Report, Scale

from .._validation import parse_setting
from .scratch import majority

if TYPE_CHECKING:
    from ..reproduce import Config


def _probs(model: Any, items: list[Any], stub: bool) -> np.ndarray:
    """Answer probabilities of ``items`` (the majority chooser's for the stub)."""
    from ..scoring import answer_probabilities

    return majority(items) if stub else answer_probabilities(model, items)


def load_real(name: str, device: str = "cpu") -> Any:
    """Load a real model by pretrained name or load_model spec; a failure names what to pass instead."""
    from icml25.llm import load_configured_model

    spec = name if ":" in name else f"pretrained:{name}"
    return load_configured_model(spec, field="real_models", paper="task_superposition", device=device,
                                 hint="tv_model likewise; an OpenAI-compatible server must return prompt log-probs "
                                      "(echo)")


def real_eval(model: Any, cfg: Config, spec: str, seed: int, stub: bool,
              acc: list[float] | None = None) -> dict[str, Any]:
    """Single-task accuracies (``acc`` when the competence stage measured them) and the two-task grid
    ``cfg.real_lams`` of one model on one setting; ``multi`` holds, per mixed prompt, whether both answers >= 0.1."""
    from scipy.stats import spearmanr

    from ..metrics import calibration_error, superposition_stats
    from ..prompts import MixturePromptBuilder
    from ..scoring import LAST_STATS
    from ..training import single_task_accuracy

    fam = parse_setting(spec)
    tasks = fam.task_names
    if acc is None:
        acc = [1.0 if stub else single_task_accuracy(model, fam, k, cfg.real_m, cfg.real_prompts, seed=seed + 5)
               for k in range(2)]
    rows, means, lams, mixed, multi, mismatch = [], [], [], [], [], 0
    order = np.argsort(-np.asarray(cfg.real_lams))
    for j, lam in enumerate(cfg.real_lams):
        b = MixturePromptBuilder(fam, cfg.real_m, [lam, 1 - lam], random_state=seed * 1000 + j)
        items = b.sample(cfg.real_prompts)
        p = _probs(model, items, stub)
        mismatch += LAST_STATS["boundary_mismatch"] if not stub else 0
        s = superposition_stats(p, items[0].lam_hat)
        means.append(s["mean"])
        lams.append(items[0].lam_hat)
        if 0 < lam < 1:
            mixed.append(s["frac_multi"])
            multi.extend(((p >= 0.1).sum(axis=1) >= 2).astype(float).tolist())
        rows.append({"setting": spec, "share of task 1": lam, f"mean P({tasks[0]})": s["mean"][0],
                     f"mean P({tasks[1]})": s["mean"][1], "other": s["other"], ">=2 tasks >= 0.1": s["frac_multi"],
                     "KL raw": s["kl_raw"], "KL norm": s["kl_norm"]})
    means, lams = np.array(means), np.array(lams)
    rho = float(spearmanr(lams.ravel(), means.ravel()).statistic)
    m_sorted, l_sorted = means[order], lams[order]  # task 1's share decreasing
    mono = bool(np.all(np.diff(m_sorted[:, 0]) < 0) and np.all(np.diff(m_sorted[:, 1]) > 0)
                and np.all(np.diff(l_sorted[:, 0]) < 0))
    return {"mono": mono, "acc": list(acc), "multi": multi, "rows": rows, "rho": rho if np.isfinite(rho) else 0.0, "frac_multi": float(np.mean(mixed)),
            "calib": calibration_error(means, lams), "other": float(np.mean([r["other"] for r in rows])),
            "mismatch": mismatch}


def exactness(model: Any, cfg: Config, spec: str, seed: int) -> float:
    """max |log P(shared-prefix scorer) - log P(plain per-pair teacher forcing of icml25.llm)| on 2 prompts."""
    from ..prompts import MixturePromptBuilder
    from ..scoring import answer_probabilities

    items = MixturePromptBuilder(parse_setting(spec), cfg.real_m, random_state=seed).sample(2)
    p = answer_probabilities(model, items)
    ps = [it.prompt for it in items for _ in it.answers]
    cs = [a + "\n" for it in items for a in it.answers]
    ref = np.array([lp.sum() for lp in model.logprobs(ps, cs, fast=False)]).reshape(p.shape)
    return float(np.max(np.abs(np.log(np.maximum(p, 1e-300)) - ref)))


def real_scale_claims(rep: Report, cfg: Config, real: dict[tuple[str, str], dict[str, Any]], stub: bool,
                      scale: Scale) -> None:
    """C5a / C5c (paper §6): the larger of two sizes of ONE model family (``cfg.scale_models``) keeps more tasks in
    play and is better calibrated, measured only on the settings where both sizes pass the single-task precondition.

    Paper-scale claims: offline there are only SmolLM2-135M and Gemma-3-270M, two different families (tokeniser,
    data, instruction tuning), so their difference is not a scale effect (issue 48); without ``scale_models`` the
    claims are not measured (the paper preset compares Qwen1.5-0.5B with Qwen1.5-72B)."""
    models = list(cfg.scale_models)
    kw_a = dict(id="C5a", paper_value=None, comparison=">=", threshold=0.0, kind="paper", scale=Scale.PAPER,
                headline=True)
    kw_c = dict(id="C5c", paper_value=None, comparison="<=", threshold=0.0, kind="paper", scale=Scale.PAPER,
                headline=True)
    if not models or stub:
        why = ("two sizes of one model family (--set scale_models=..., smallest first; the paper preset: "
               "Qwen1.5-0.5B and Qwen1.5-72B). The two offline models, SmolLM2-135M-Instruct and Gemma-3-270M, are "
               "different families, not two sizes of one, so they are not compared as a scale trend"
               if not models else "the real models (the stub scores none)")
        for kw, what in ((kw_a, "frac(>=2 tasks >= 0.1) difference large - small >= 0"),
                         (kw_c, "calibration error difference large - small <= 0")):
            statement = f"larger vs smaller size of one family: {what}, over the settings both pass"
            if scale.rank < Scale.PAPER.rank:
                rep.add_unmeasured_claim(statement=statement, **kw, needs=f"--scale paper: {why}")
            else:
                rep.add_claim(statement=statement, measured=math.nan, **kw, note=f"not measured: needs {why}")
        return
    small, large = models[0], models[-1]
    both = [s for (mname, s) in real if mname == small and (large, s) in real]
    shared = [s for s in both if min(real[(small, s)]["acc"] + real[(large, s)]["acc"]) >= cfg.real_acc_threshold]
    fm = [real[(large, s)]["frac_multi"] - real[(small, s)]["frac_multi"] for s in shared]
    cal = [real[(large, s)]["calib"] - real[(small, s)]["calib"] for s in shared]
    note = (f"over the settings where both models pass the single-task precondition: {shared}" if shared else
            "not measured: no setting where both models pass the single-task precondition (A-* claims)")
    # fails if: the larger model keeps fewer tasks in play (paper §6: more tasks in parallel with scale)
    rep.add_claim(statement=f"{large} vs {small}: mean over the settings both pass of frac(>=2 tasks >= 0.1) "
                  "difference >= 0", measured=float(np.mean(fm)) if shared else math.nan, note=note, **kw_a)
    # fails if: the larger model is less calibrated (paper §6: lower KL with scale)
    rep.add_claim(statement=f"{large} vs {small}: calibration error difference (large - small) over the settings "
                  "both pass <= 0", measured=float(np.mean(cal)) if shared else math.nan, note=note, **kw_c)
