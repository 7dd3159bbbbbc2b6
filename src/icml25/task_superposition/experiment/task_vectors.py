"""The task-vector experiment (paper §5; spec §2.6 / E4), shared by the real-model and the from-scratch parts.

Single-task prompts of tasks 1 and 2 define ``v_1``, ``v_2`` at every layer; a layer sweep patches ``v_k`` into
zero-shot queries and keeps the layer with the highest mean ``P(y_k)``; at that layer convex combinations
``w v_1 + (1 - w) v_2`` are patched, and the states of mixed prompts are compared with the two vectors (position
``t`` and projection coefficient ``kappa``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.core.progress import progress

#: patching weights w_1 (spec E4)
WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0)
#: shares lambda_1 of the mixed prompts whose states are located between v_2 and v_1
SHARES = (0.25, 0.5, 0.75)


def task_vector_experiment(model: Any, fam: Any, m: int, n_prompts: int, seed: int) -> dict[str, Any]:
    """Run the experiment on ``model`` (HFModel or TinyGPT) with tasks 0 and 1 of ``fam``.

    Parameters
    ----------
    model : HFModel or TinyGPT
    fam : TaskFamily
        K >= 2 tasks; the vectors are those of tasks 0 and 1 (zero-shot queries are scored on all K answers).
    m : int
        Examples in the single-task and mixed prompts.
    n_prompts : int
        Prompts per task (extraction), zero-shot queries (patching) and mixed prompts per share.
    seed : int

    Returns
    -------
    dict
        ``sweep`` (rows), ``best`` layer, ``ws``, ``patched`` (mean P per w), ``rho`` (Spearman(w, mean P(y_1))),
        ``delta`` (mean P(y_1) at w = 1 minus at w = 0), ``t`` and ``kappa`` (per share; kappa is undefined at 0.5
        for two vectors and omitted there), ``zero_shot`` (mean P without patching).
    """
    from scipy.stats import spearmanr

    from ..prompts import build_prompt
    from ..scoring import answer_probabilities
    from ..task_vectors import TaskVectorExtractor, layer_hidden_states, num_layers

    rng = np.random.default_rng(seed + 303)
    eye = np.eye(fam.K, dtype=int)
    single = [[build_prompt(fam, eye[k] * m, rng).prompt for _ in range(n_prompts)] for k in range(2)]
    zs = [build_prompt(fam, np.zeros(fam.K, dtype=int), rng) for _ in range(n_prompts)]
    zq, za = [z.prompt for z in zs], [list(z.answers) for z in zs]
    layers = list(range(1, num_layers(model) + 1))
    H = [layer_hidden_states(model, ps, layers) for ps in single]  # (L, n, d) per task
    base = answer_probabilities(model, zq, za)
    sweep = []
    for li, layer in enumerate(progress(layers, "task-vector layer sweep")):
        v = np.stack([H[0][li].mean(0), H[1][li].mean(0)])
        acc = [float(np.mean(answer_probabilities(model, zq, za, patch=(layer, v[k]))[:, k])) for k in range(2)]
        sweep.append({"layer": layer, "P(y1), v1 patched": acc[0], "P(y2), v2 patched": acc[1], "mean": float(np.mean(acc))})
    best = max(sweep, key=lambda r: r["mean"])["layer"]
    tv = TaskVectorExtractor(model, best)
    tv.vectors_ = np.stack([H[0][best - 1].mean(0), H[1][best - 1].mean(0)])
    patched = [answer_probabilities(model, zq, za, patch=(best, tv.combination([w, 1 - w]))).mean(0)
               for w in WEIGHTS]
    t_by_lam: dict[float, float] = {}
    kappa: dict[float, float] = {}
    for lam in SHARES:
        c1 = int(round(lam * m))
        counts = np.zeros(fam.K, dtype=int)
        counts[:2] = (c1, m - c1)
        h = layer_hidden_states(model, [build_prompt(fam, counts, rng).prompt for _ in range(n_prompts)], best)
        t_by_lam[lam] = float(np.mean(tv.position(h)))
        if c1 * 2 != m:  # the convex prediction is the centroid at lambda = 0.5: kappa undefined
            kappa[lam] = float(np.mean(tv.mixture_coefficient(h, [c1 / m, 1 - c1 / m])))
    p1 = [float(p[0]) for p in patched]
    rho = float(spearmanr(WEIGHTS, p1).statistic)
    return {"sweep": sweep, "best": best, "ws": WEIGHTS, "patched": patched, "rho": rho if np.isfinite(rho) else 0.0,
            "delta": p1[-1] - p1[0], "t": t_by_lam, "kappa": kappa, "zero_shot": base.mean(0)}


def add_task_vector_results(rep: Any, tv: dict[str, Any], tag: str, label: str, requires: Any = ()) -> None:
    """Tables and the C4 claims (all full scale, kind ``paper``) of one task-vector run, ids ``C4?-{tag}``; every
    claim requires the claims ``requires`` (e.g. that the model learned the single tasks)."""
    from icml25.core import Scale

    rep.add_table(f"task vectors on {label}: layer sweep, patching v_k into zero-shot queries", tv["sweep"])
    rep.add_table(f"task vectors on {label}: patching w v_1 + (1-w) v_2 at layer {tv['best']}",
                  [{"w_1": w, "mean P(y_1)": float(p[0]), "mean P(y_2)": float(p[1])}
                   for w, p in zip(tv["ws"], tv["patched"])]
                  + [{"w_1": "no patch", "mean P(y_1)": float(tv["zero_shot"][0]),
                      "mean P(y_2)": float(tv["zero_shot"][1])}])
    rep.add_table(f"task vectors on {label}: mixed-prompt states",
                  [{"lambda_1": lam, "position t": tv["t"][lam], "kappa": tv["kappa"].get(lam, float("nan"))}
                   for lam in sorted(tv["t"])])
    # fails if: patching does not steer the output (wrong position/layer, addition instead of replacement)
    rep.add_claim(f"C4a-{tag}", f"{label}: patching convex combinations moves mean P(y_1) monotonically: "
                  "Spearman(w_1, mean P(y_1)) >= 0.9", None, tv["rho"], ">=", 0.9, kind="paper",
                  scale=Scale.FULL, reference_value=0.9, reference_source="spec §6 E4 threshold", requires=requires,
                  note=f"layer {tv['best']} (best single-task patching)")
    # fails if: the effect is negligible
    rep.add_claim(f"C4b-{tag}", f"{label}: mean P(y_1) at w=1 minus at w=0 >= 0.4", None, tv["delta"], ">=", 0.4,
                  kind="paper", scale=Scale.FULL, reference_value=0.4, reference_source="spec §6 E4 threshold",
                  requires=requires)
    ts = [tv["t"][k] for k in sorted(tv["t"])]
    # fails if: mixed-prompt states do not move between the single-task vectors as the share grows
    rep.add_claim(f"C4c-{tag}", f"{label}: mixed-prompt states: position t between v_2 (0) and v_1 (1) increases "
                  "with lambda_1 (0.25, 0.5, 0.75)", None, bool(np.all(np.diff(ts) > 0)), "is_true", True,
                  kind="paper", scale=Scale.FULL, aggregate="all", requires=requires, note="t = " + ", ".join(f"{x:.2f}" for x in ts))
    ks = list(tv["kappa"].values())
    # fails if: mixed-prompt states are not along the convex combination of the task vectors (kappa far from 1)
    rep.add_claim(f"C4d-{tag}", f"{label}: projection coefficient kappa of mixed-prompt states on the convex "
                  "prediction (lambda_1 = 0.25, 0.75), worst of the two, within [0.5, 1.5]", None,
                  float(ks[int(np.argmax(np.abs(np.asarray(ks) - 1.0)))]), "within", (0.5, 1.5), kind="paper",
                  scale=Scale.FULL, requires=requires, note="kappa = " + ", ".join(f"{x:.2f}" for x in ks)
                  + " (lambda 0.5 omitted: the convex prediction is the centroid there)")
