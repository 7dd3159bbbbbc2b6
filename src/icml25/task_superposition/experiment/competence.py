"""Competence first (issue 48): the single-task accuracy of a real model on every task of the official settings, with
the in-context prompt format of the grids, and the choice of the two-task settings on which per-prompt superposition
(C1) is measured: those where the model is competent on each single task.

A task is *competent* when the greedy single-task accuracy is at least ``cfg.real_acc_threshold`` (0.5, the
precondition of the C1 claims) **and** the lower end of its 95% Wilson interval is above chance. Chance is ``1 / K``
with K the setting's number of tasks: the accuracy of a model that answers with one of the K task answers at random
(it knows the candidates but not which task the examples show); a context-blind model cannot do better on the
weaker of two tasks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import pair_setting, parse_family

if TYPE_CHECKING:
    from ..reproduce import Config


def competence_eval(model: Any, cfg: Config, spec: str, seed: int, stub: bool) -> list[dict[str, Any]]:
    """One row per task of the competence setting ``spec``: greedy single-task accuracy (``cfg.competence_prompts``
    prompts of ``cfg.real_m`` examples), its Wilson interval, chance and whether the model is competent."""
    from ..metrics import wilson_interval
    from ..training import single_task_correct

    fam = parse_family(spec)
    chance = 1.0 / fam.K
    rows = []
    for k, name in enumerate(fam.task_names):
        n = cfg.competence_prompts
        ok = (np.ones(n, dtype=bool) if stub
              else single_task_correct(model, fam, k, cfg.real_m, n, seed=seed + 5))
        lo, hi = wilson_interval(int(ok.sum()), n)
        acc = float(ok.mean())
        rows.append({"setting": spec, "task": name, "m": cfg.real_m, "prompts": n, "accuracy": acc,
                     "95% interval": f"[{lo:.2f}, {hi:.2f}]", "low": lo, "chance": chance,
                     "competent": bool(acc >= cfg.real_acc_threshold and lo > chance)})
    return rows


def competent_setting(rows: list[dict[str, Any]]) -> tuple[str, list[float]] | None:
    """The two-task setting of the two most accurate competent tasks of one competence setting (ties: task order)
    and their accuracies, or None when fewer than two tasks are competent."""
    good = [r for r in rows if r["competent"]]
    if len(good) < 2:
        return None
    best = sorted(good, key=lambda r: -r["accuracy"])[:2]
    best.sort(key=lambda r: rows.index(r))  # keep the setting's task order
    return pair_setting(rows[0]["setting"], best[0]["task"], best[1]["task"]), [r["accuracy"] for r in best]
