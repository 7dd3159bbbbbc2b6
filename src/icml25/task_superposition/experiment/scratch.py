"""The from-scratch experiment (paper §3, §5, §6 in miniature; spec §6 quick acceptance, E2, E4, E5).

TinyGPTs are trained on F-AB prompts that each hold ONE task, then scored on prompts that mix the tasks: the
two-task grid (8,0), (6,2), ..., (0,8) of tasks 1/2 (C2, C3, E2), three-task points when the family has three tasks
(E2), the sizes S/M/L (E5) and task vectors of the seed-0 model of one size (E4).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.core import Report, Scale
from icml25.core.progress import progress

#: three-task evaluation points (m = 8; spec E2 "(3,3,2), (4,2,2)-style")
THREE_TASK_POINTS = ((3, 3, 2), (4, 2, 2), (2, 4, 2), (2, 2, 4))


def _family(cfg: Any) -> Any:
    from ..tasks import synthetic_family

    return synthetic_family("F-AB", list(cfg.tasks))


def majority(items: list[Any]) -> np.ndarray:
    """The strongest simple baseline (issue 44): all mass on the prompt's majority task, split evenly among tied
    majority tasks, i.e. no superposition beyond ties. On a two-task grid it is exact at lambda in {0, 1/2, 1} and
    one-hot elsewhere (calibration error 0.10 on the five-point grid (8,0), (6,2), ..., (0,8))."""
    out = np.zeros((len(items), len(items[0].answers)))
    for i, it in enumerate(items):
        c = np.asarray(it.counts, dtype=float)
        top = c == c.max()
        out[i, top] = 1.0 / top.sum()
    return out


def train(cfg: Any, seed: int, size: str) -> tuple[Any, dict[str, Any]]:
    """Train one TinyGPT with the config's settings; returns the model and a summary of its history."""
    from ..training import train_icl_model

    model, hist = train_icl_model(_family(cfg), size=size, steps=cfg.steps, seed=seed, lr=cfg.lr,
                                  batch_size=cfg.batch_size, schedule=cfg.schedule, init=cfg.init,
                                  tie_embeddings=cfg.tie_embeddings, include_zero_shot=cfg.zero_shot)
    loss = hist["loss"]
    return model, {"steps_run": hist["steps_run"], "emerged_at": hist["emerged_at"],
                   "final_loss": float(np.mean(loss[-50:])), "seconds": hist["seconds"],
                   "loss_per_100": [round(float(np.mean(loss[i:i + 100])), 3) for i in range(0, len(loss), 100)]}


def grid_eval(model: Any, cfg: Any, seed: int, stub: bool) -> dict[str, Any]:
    """Single-task accuracy and the answer probabilities at every evaluation point."""
    from ..metrics import calibration_error, superposition_stats
    from ..prompts import build_prompt
    from ..scoring import answer_probabilities
    from ..training import single_task_accuracy

    fam = _family(cfg)
    K = fam.K
    acc = [1.0 if stub else single_task_accuracy(model, fam, k, cfg.m_eval, cfg.acc_prompts, seed=seed + 11)
           for k in range(K)]
    rng = np.random.default_rng(seed + 101)
    two = [(cfg.m_eval - j, j) + (0,) * (K - 2) for j in range(0, cfg.m_eval + 1, max(1, cfg.m_eval // 4))]
    three = [c for c in THREE_TASK_POINTS if sum(c) == cfg.m_eval] if K == 3 else []
    rows, stats, base = [], [], []
    for c in [*two, *three]:
        items = [build_prompt(fam, c, rng) for _ in range(cfg.grid_prompts)]
        p = majority(items) if stub else answer_probabilities(model, items)
        s = superposition_stats(p, items[0].lam_hat)
        stats.append((s, items[0].lam_hat))
        base.append(majority(items).mean(axis=0))  # the majority chooser on the same prompts
        rows.append({"counts": str(c), **{f"lambda_{k + 1}": items[0].lam_hat[k] for k in range(K)},
                     **{f"mean P(y_{k + 1})": s["mean"][k] for k in range(K)}, "other": s["other"],
                     ">=2 tasks >= 0.1": s["frac_multi"], "median 2nd prob": s["median_second"],
                     "KL raw (per prompt)": s["kl_raw"], "KL population": s["kl_population"]})
    n2 = len(two)
    means = np.array([s["mean"] for s, _ in stats])
    lams = np.array([lam for _, lam in stats])
    mixed = [s["frac_multi"] for (s, _), c in zip(stats[:n2], two) if min(c[:2]) > 0]
    return {"acc": acc, "rows": rows, "mean": means, "lam": lams, "n2": n2,
            "calib2": calibration_error(means[:n2, :2], lams[:n2, :2]),
            "calib2_majority": calibration_error(np.array(base)[:n2, :2], lams[:n2, :2]),
            "calib_all": calibration_error(means, lams),
            "spearman": _spearman(lams[:n2, 0], means[:n2, 0]),
            "strict_dec": bool(np.all(np.diff(means[:n2, 0]) < 0)),
            "frac_multi": float(np.mean(mixed)), "other": float(np.mean([s["other"] for s, _ in stats])),
            "kl3": float(np.mean([s["kl_population"] for s, _ in stats[n2:]])) if three else None}


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    from scipy.stats import spearmanr

    r = float(spearmanr(x, y).statistic)
    return r if np.isfinite(r) else 0.0


def run_scratch(rep: Report, cfg: Any, seed: int, stub: bool) -> dict[str, Any]:
    """Train (unless ``stub``), evaluate and add the from-scratch tables and claims to ``rep``."""
    sizes = [cfg.size, *[s for s in cfg.scale_sizes if s != cfg.size]]
    seeds = [seed + k for k in range(cfg.n_seeds)]
    res: dict[str, list[dict[str, Any]]] = {s: [] for s in sizes}
    tv_model = None
    for s in progress(seeds, "from-scratch seeds"):
        for size in sizes:
            model, info = (None, {"source": "stub (majority task, no model)"}) if stub else train(cfg, s, size)
            res[size].append({"seed": s, "info": info, **grid_eval(model, cfg, s, stub)})
            if s == seed and size == cfg.tv_size:
                tv_model = model
    main = res[cfg.size]
    tasks = "/".join(cfg.tasks)
    rep.add_table(f"from scratch, F-AB {tasks}, size {cfg.size}, seed {seed}: evaluation points "
                  f"({cfg.grid_prompts} prompts each)", main[0]["rows"])
    rep.add_table("from-scratch runs", [
        {"size": size, "seed": r["seed"], "steps": r["info"].get("steps_run"),
         "emerged at step": r["info"].get("emerged_at"), "final loss": r["info"].get("final_loss"),
         "train s": r["info"].get("seconds"), "min single-task acc": min(r["acc"]),
         "calibration error (2-task grid)": r["calib2"], "calibration error (all points)": r["calib_all"],
         "other": r["other"], ">=2 tasks >= 0.1 (mixed)": r["frac_multi"]}
        for size in sizes for r in res[size]])
    _claims(rep, cfg, main, stub)
    _scale_claims(rep, cfg, res)
    if tv_model is not None and not stub:
        from .task_vectors import add_task_vector_results, task_vector_experiment

        tv = task_vector_experiment(tv_model, _family(cfg), cfg.m_eval, cfg.tv_prompts, seed)
        add_task_vector_results(rep, tv, "scratch", f"from-scratch TinyGPT {cfg.tv_size} (F-AB {tasks}, seed {seed})",
                                requires=[_learned(rep, cfg, res, cfg.tv_size)])
    return {"main": main[0]}


def _claims(rep: Report, cfg: Any, runs: list[dict[str, Any]], stub: bool) -> None:
    per = lambda key: [r[key] for r in runs]  # noqa: E731
    acc = [min(r["acc"]) for r in runs]
    # fails if: the model did not learn in-context learning from single-task prompts (untrained / plateau model:
    # it cannot tell copyA from copyB prompts, accuracy about 1/K). The majority stub solves single tasks, so this
    # is a precondition (check), not the paper's claim: the paper's claim is the superposition measured below.
    rep.add_claim("C2", f"from scratch: single-task greedy accuracy (min over the {len(cfg.tasks)} tasks, "
                  f"m={cfg.m_eval}) >= 0.9", None, float(np.mean(acc)), ">=", 0.9, kind="check",
                  reference_value=0.9, reference_source="spec §6 quick acceptance", per_seed=acc,
                  note="precondition of C3/E2: in-context learning emerged")
    # fails if: the model answers one task per prompt by majority (the tie-splitting majority chooser has error 0.10
    # on the five-point grid: difference 0) or ignores the context
    gap = [r["calib2"] - r["calib2_majority"] for r in runs]
    rep.add_claim("C3a", "from scratch, never trained on mixed prompts: population calibration error (mean "
                  "|mean P(y_k) - lambda_k| over the two-task grid) below that of the tie-splitting majority chooser "
                  "on the same prompts (difference < 0)", None, float(np.mean(gap)), "<", 0.0, kind="paper",
                  requires=["C2"], headline=True, reference_value=0.03 - 0.10,
                  reference_source="spec §6 pilot (2,500 steps: error 0.03) minus the majority chooser's 0.10",
                  note=f"error {np.mean(per('calib2')):.3f} vs majority chooser {np.mean(per('calib2_majority')):.3f} "
                       "(spec §6 quick acceptance, error <= 0.15, is implied); paper §3: output probabilities track "
                       "the in-context proportions (no number printed)", per_seed=gap)
    # fails if: P(y_1) does not fall as the share of task 1 falls (a majority-task predictor is flat on each side of
    # the middle point, a context-blind one everywhere)
    rep.add_claim("C3b", "from scratch: mean P(y_1) strictly decreasing along (8,0), (6,2), (4,4), (2,6), (0,8)", None,
                  all(per("strict_dec")), "is_true", True, kind="paper", requires=["C2"], aggregate="all",
                  per_seed=per("strict_dec"))
    # fails if: (informational) each prompt is answered one-hot; the spec's pilot found exactly this in tiny models
    rep.add_claim("C3c", "from scratch, per prompt: fraction of mixed two-task prompts with both tasks >= 0.1 >= 0.5",
                  None, float(np.mean(per("frac_multi"))), ">=", 0.5, kind="mechanism", scale=Scale.FULL,
                  requires=["C2"], reference_value=0.08, reference_source="spec §6 pilot (about 8 %)",
                  per_seed=per("frac_multi"),
                  note="our threshold (per-prompt superposition); the spec's pilot predicts this fails in tiny models")
    # ---- spec E2 (full acceptance) ----
    # fails if: mean P(y_1) is not ordered by the share of task 1 (majority stub: ties at 1 and 0)
    rep.add_claim("E2a", "from scratch: Spearman(lambda_1, mean P(y_1)) on the two-task grid >= 0.95", None,
                  float(np.mean(per("spearman"))), ">=", 0.95, kind="paper", scale=Scale.FULL, requires=["C2"],
                  reference_value=0.95, reference_source="spec §6 E2 threshold", per_seed=per("spearman"))
    # fails if: the population probabilities are not calibrated at every point (incl. three-task points)
    rep.add_claim("E2b", "from scratch: mean over all evaluation points and tasks of |mean P(y_k) - lambda_k| <= 0.10",
                  None, float(np.mean(per("calib_all"))), "<=", 0.10, kind="paper", scale=Scale.FULL,
                  requires=["C2"], reference_value=0.06, reference_source="spec §6 pilot (F-AB)",
                  per_seed=per("calib_all"))
    if runs[0]["kl3"] is not None:
        # fails if: the split among three tasks does not follow their shares (majority stub: KL = inf)
        rep.add_claim("E2c", "from scratch: population KL(lambda || normalised mean p) at the three-task points <= 0.05",
                      None, float(np.mean(per("kl3"))), "<=", 0.05, kind="paper", scale=Scale.FULL,
                      requires=["C2"], reference_value=0.01, reference_source="spec §6 pilot",
                      per_seed=per("kl3"))
    # fails if: the model puts mass on answers of no task (it did not learn the candidate answers)
    rep.add_claim("E2d", "from scratch: 'other' mass (1 - sum_k P(y_k)) averaged over the points <= 0.05", None,
                  float(np.mean(per("other"))), "<=", 0.05, kind="mechanism", scale=Scale.FULL, requires=["C2"],
                  reference_value=0.001, reference_source="spec §6 pilot", per_seed=per("other"))


def _learned(rep: Report, cfg: Any, res: dict[str, list[dict[str, Any]]], size: str) -> str:
    """The id of the claim that the ``size`` models learned in-context learning (C2 for the main size)."""
    if size == cfg.size:
        return "C2"
    cid = f"C2-{size}"
    if all(c.id != cid for c in rep.claims):
        acc = [min(r["acc"]) for r in res[size]]
        # fails if: the size-`size` models stayed on the plateau (then comparisons with them mean nothing)
        rep.add_claim(cid, f"from scratch, size {size}: single-task greedy accuracy (min over tasks) >= 0.9",
                      None, float(np.mean(acc)), ">=", 0.9, kind="check", scale=Scale.FULL, per_seed=acc)
    return cid


def _scale_claims(rep: Report, cfg: Any, res: dict[str, list[dict[str, Any]]]) -> None:
    if "S" not in res or "L" not in res:
        return
    pre = [_learned(rep, cfg, res, "L")]
    cal = {s: float(np.mean([r["calib_all"] for r in res[s]])) for s in ("S", "L")}
    # fails if: the larger model is worse calibrated (paper §6: calibration improves with scale)
    rep.add_claim("C5b", "from scratch: calibration error (all points, mean over seeds) of L <= that of S", None,
                  cal["L"] - cal["S"], "<=", 0.0, kind="paper", scale=Scale.FULL, requires=pre,
                  note=f"S {cal['S']:.3f}, L {cal['L']:.3f}")
    never = cfg.steps + 1  # a run that never left the plateau counts as emerging after the last step

    def em(s: str) -> float:
        return float(np.mean([r["info"].get("emerged_at") or never for r in res[s]]))

    # fails if: the larger model leaves the "answer is one of the K candidates" plateau later (spec E5)
    rep.add_claim("C5d", "from scratch: L leaves the loss plateau no later than S (step of emergence, mean over "
                  "seeds; L - S <= 0)", None, em("L") - em("S"), "<=", 0.0, kind="paper", scale=Scale.FULL, requires=pre,
                  note=f"S {em('S'):.0f}, L {em('L'):.0f} (never = steps + 1 = {never}); emergence = running loss "
                       "< ln(K)/4")
