"""The dry-run plan of the CGCIVL reproduction (``icml25 reproduce cgcivl --dry-run``): nothing is generated or
trained, torch is not imported."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from icml25.core.plan import Needs, Plan, UnitCost, closest_preset

from .data import OGBENCH_URL

if TYPE_CHECKING:
    from .reproduce import Config

#: CPU seconds per update of one agent at batch 256 and 2 x 256 hidden units, one thread (README, bench_updates.py):
#: plain-MLP GCIVL 17 ms, CGCIVL with the MRN head 29 ms, with the IQE head 35 ms (issue 50)
_UPDATE_S = {"mlp": 0.017, "mrn": 0.029, "iqe": 0.035}
#: seconds per generated stitch episode (spec §5: 1,000 episodes in 140-155 s on this machine) and per evaluation
#: episode (up to 1,000 env steps at ~0.17 ms each; the actor is called once per step for all parallel episodes)
_GEN_EPISODE_S, _EVAL_EPISODE_S = 0.15, 0.2
#: assumed GPU speed-up over one CPU thread for a batch-1024, 3 x 512 update (not measured: no GPU here)
_GPU_SPEEDUP = 100.0


def cgcivl_plan(cfg: Config) -> Any:
    """The dry-run plan: updates, rollouts and data generation times from measured per-unit costs."""
    gpu = cfg.device != "cpu"
    size = (cfg.batch_size / 256) * (cfg.layers * cfg.hidden**2) / (2 * 256**2)  # matmul work relative to the bench
    speed = _GPU_SPEEDUP if gpu else 1.0
    note = (f"scaled by batch x layers x width^2 from batch 256, 2x256 ({size:.3g}x)"
            + (f"; GPU assumed {_GPU_SPEEDUP:g}x one CPU thread (not measured)" if gpu else ""))
    where = "2-core CPU, one thread, bench_updates.py (README)"
    per_pair = (_UPDATE_S["mlp"] + _UPDATE_S[cfg.value_head]) * size / speed
    costs = [UnitCost("Q2 value training, medium-stitch (GCIVL + CGCIVL)", "update pair", cfg.q_updates * cfg.q_seeds,
                      per_pair, where, note)]
    stages = [f"Q1 checks; Q2: GCIVL and CGCIVL values on pointmaze-medium-stitch, {cfg.q_seeds} seed(s) x "
              f"{cfg.q_updates} updates"]
    datasets = []
    # the generator checks (Q1f) always use generated medium-stitch episodes
    gen = cfg.q_episodes + (cfg.f_episodes if cfg.large and cfg.data_source == "generated" else 0)
    costs.append(UnitCost("pointmaze stitch data generation (cached after the first run)", "episode", gen,
                          _GEN_EPISODE_S, "2-core CPU, spec §5 (1,000 episodes in 140-155 s)"))
    datasets.append(f"generated pointmaze-medium-stitch ({cfg.q_episodes} episodes)"
                    + (", for the generator checks" if cfg.data_source == "ogbench" else ""))
    if cfg.data_source == "ogbench":
        datasets.append("OGBench pointmaze-medium-stitch-v0 (download)")
    if cfg.large:
        jobs = cfg.f_seeds + (3 if cfg.ablations else 0)
        costs.append(UnitCost("F: large-stitch training, GCIVL + CGCIVL (+ ablations)", "update pair",
                              cfg.f_updates * jobs, per_pair, where, note))
        rollouts = 5 * cfg.eval_episodes * 2 * jobs + 5 * cfg.curve_episodes * 2 * cfg.f_seeds * (cfg.curve_points - 1)
        costs.append(UnitCost("F: evaluation rollouts (5 tasks; learning-curve checkpoints)", "episode", rollouts,
                              _EVAL_EPISODE_S, "2-core CPU, batched rollouts (estimate)"))
        stages.append(f"F: GCIVL and CGCIVL ({cfg.actor} actor) on pointmaze-large-stitch, {cfg.f_seeds} seeds x "
                      f"{cfg.f_updates} updates, {cfg.eval_episodes} episodes x 5 tasks, learning curves at "
                      f"{cfg.curve_points} checkpoints"
                      + ("; ablations on the first seed" if cfg.ablations else ""))
        datasets.append("OGBench pointmaze-large-stitch-v0 (download)" if cfg.data_source == "ogbench"
                        else f"generated pointmaze-large-stitch ({cfg.f_episodes} episodes)")
    scale = closest_preset(cfg)
    downloads = tuple(f"{OGBENCH_URL}/pointmaze-{m}-stitch-v0.npz" for m in ("medium", "large")
                      if cfg.data_source == "ogbench" and (m == "medium" or cfg.large))
    return Plan(slug="cgcivl", scale=scale, stages=stages,
                models=[f"GCIVL (MLP V) and CGCIVL ({cfg.value_head} V, alpha_c={cfg.alpha_c}), {cfg.layers} x "
                        f"{cfg.hidden} MLPs, batch {cfg.batch_size}"],
                datasets=datasets, runs=cfg.q_seeds + (cfg.f_seeds if cfg.large else 0),
                needs=Needs(cpu_cores=1, gpus=1 if gpu else 0, gpu_memory_gb=8.0 if gpu else 0.0,
                            ram_gb=8.0 if cfg.data_source == "ogbench" else 2.0, disk_gb=1.0, downloads=downloads),
                costs=costs)

