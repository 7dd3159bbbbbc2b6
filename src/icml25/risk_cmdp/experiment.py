"""The risk-sensitive CMDP experiments (spec §6): oracle checks, Env R learning curves of both learners, Garnet
instances and ablations (no truncation, budget ignored), each with the claims it supports.

Every ``run_*`` function takes ``stub``: the risk-neutral primal-dual baseline in place of the paper's learner.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from icml25.core import Report, Scale
from icml25.core.seeding import spawn_seeds

if TYPE_CHECKING:
    from .reproduce import Config

_SPEC = "spec §6 prototype"


def _mean(xs: Any) -> float:
    return float(np.mean(xs))


def _budget_grid(cfg: Config):  # type: ignore[no-untyped-def]
    """The budget grid of every experiment: Env R's horizon, step ``cfg.eps``."""
    from .env import env_risky_safe
    from .risk import BudgetGrid

    return BudgetGrid(env_risky_safe().H, cfg.eps)


def run_learner(learner, env, K: int, alpha: float, grid) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    """Run ``learner`` for ``K`` episodes, evaluating every (pi_k, lambda_k) exactly on the true model."""
    from .oracles import evaluate

    vals: list[tuple[float, float, float]] = []
    learner.run(env, K, callback=lambda k, pol, lam: vals.append(evaluate(env, pol, lam, alpha, grid)))
    arr = np.array(vals)
    return {"V_r": arr[:, 0], "ERM": arr[:, 1], "OCE": arr[:, 2], "dual": np.array(learner.duals_)}


def curves(res: dict[str, np.ndarray], V_star: float, c: float) -> dict[str, np.ndarray]:
    """Cumulative regret, signed violation, positive-part violation over episodes."""
    return {"regret": np.cumsum(V_star - res["V_r"]), "violation": np.maximum(np.cumsum(c - res["ERM"]), 0.0),
            "violation_pos": np.cumsum(np.maximum(c - res["ERM"], 0.0))}


def slope(y: np.ndarray, k1: int, k2: int) -> float:
    """Log-log slope of a cumulative curve between episodes ``k1`` and ``k2`` (1-based)."""
    a, b = max(y[k1 - 1], 1e-9), max(y[k2 - 1], 1e-9)
    return float(math.log(b / a) / math.log(k2 / k1))


def _learners(cfg: Config, c: float, K: int, seed: int, stub: bool = False, **kw):  # type: ignore[no-untyped-def]
    """``(risk-sensitive, risk-neutral)`` learners; the stub puts the risk-neutral baseline in the first slot."""
    from .learners import EntropicRiskCMDPLearner, RiskNeutralPrimalDualLearner

    eta, rho = cfg.c_eta / math.sqrt(K), cfg.c_rho * K**0.25
    if stub:
        return (RiskNeutralPrimalDualLearner(c, c_bonus=cfg.c_bonus, eta=eta, rho=rho, seed=seed),
                RiskNeutralPrimalDualLearner(c, c_bonus=cfg.c_bonus, eta=eta, rho=rho, seed=seed))
    rs = EntropicRiskCMDPLearner(cfg.alpha, c, eps=cfg.eps, c_bonus=cfg.c_bonus, eta=eta,
                                 rho=kw.get("rho", rho), budget_aware=kw.get("budget_aware", True), seed=seed)
    rn = RiskNeutralPrimalDualLearner(c, c_bonus=cfg.c_bonus, eta=eta, rho=rho, seed=seed)
    return rs, rn



def run_oracle_checks(cfg: Config, rng: np.random.Generator) -> dict[str, float]:
    """Q1: evaluator vs Monte Carlo, OCE identity, LP value, planner policies at fixed (y, lambda)."""
    from scipy.optimize import minimize_scalar

    from .env import env_risky_safe
    from .oracles import evaluate, monte_carlo, solve_lp
    from .planner import plan_augmented
    from .risk import BudgetGrid, erm, oce

    env = env_risky_safe()
    grid = BudgetGrid(env.H, cfg.eps)
    out: dict[str, float] = {}
    mixed = rng.integers(0, 2, size=(env.H, env.S, grid.n))
    err = 0.0
    for pol, lam in ((np.zeros((env.H, env.S), int), 0.0), (np.ones((env.H, env.S), int), 1.0), (mixed, 2.2)):
        vr, e, _ = evaluate(env, pol, lam, cfg.alpha, grid)
        mvr, me = monte_carlo(env, pol, lam, cfg.alpha, grid, cfg.mc_rollouts, rng)
        err = max(err, abs(vr - mvr), abs(e - me))
    out["mc_error"] = err
    gap = 0.0
    for _ in range(20):
        vals = rng.normal(2.0, 1.5, size=8)
        probs = rng.dirichlet(np.ones(8))
        best = minimize_scalar(lambda lam, v=vals, p=probs: -oce(v, p, lam, cfg.alpha),
                               bounds=(vals.min() - 1, vals.max() + 1), method="bounded",
                               options={"xatol": 1e-10})
        gap = max(gap, abs(-best.fun - erm(vals, probs, cfg.alpha)))
    out["oce_gap"] = gap
    sol = solve_lp(env, cfg.threshold_r, cfg.alpha, cfg.eps)
    out["lp_value"], out["lp_lambda"] = sol.value, sol.lam
    steps = grid.utility_steps(env.g)
    zero = np.zeros((env.H, env.S, env.A))
    i5 = grid.offset + int(round(5 / cfg.eps))
    plan = plan_augmented(env.P, env.r, steps, zero, 2.0, cfg.alpha, grid, rng)
    out["y2_reward"], out["y2_erm"], _ = evaluate(env, plan.policy, 5.0, cfg.alpha, grid)
    plan0 = plan_augmented(env.P, env.r, steps, zero, 0.0, cfg.alpha, grid, rng)
    out["y0_reward"], out["y0_erm"], _ = evaluate(env, plan0.policy, float(grid.budgets[i5]), cfg.alpha, grid)
    return out

def add_oracle_claims(report: Report, o: dict[str, float]) -> None:
    """Q1a-Q1e: the exact evaluator, the OCE identity, the LP oracle and the planner on Env R."""
    report.add_table("Q1 oracles", [o])
    # fails if: the forward pass over (state, budget) mis-shifts the budget index or mis-weights transitions
    report.add_claim("Q1a", "exact evaluator agrees with 20k Monte-Carlo rollouts (V_r and ERM)", None, o["mc_error"],
                     "<=", 0.02, kind="mechanism")
    # fails if: the OCE utility u(t) = (e^{αt} − 1)/α or the log-sum-exp ERM is wrong
    report.add_claim("Q1b", "OCE identity max_λ{λ + E u(G−λ)} = ERM on random discrete G", None, o["oce_gap"], "<=",
                     1e-6, kind="mechanism")
    # fails if: the occupancy-measure LP drops reachable (h, s, b) states or the OCE constraint row
    report.add_claim("Q1c", "LP oracle on Env R: V* = 4.351 at λ* = 2.2", None, o["lp_value"], "within",
                     (4.341, 4.361), kind="check", reference_value=4.351, reference_source=_SPEC)
    # fails if: the planner's utility part ignores the remaining budget (it would not stay safe)
    report.add_claim("Q1d", "planner, y=2, λ=5, true model: ERM 2.5 and reward 2.2 (safe until the last step)", None,
                     o["y2_reward"] if abs(o["y2_erm"] - 2.5) < 1e-6 else -1.0, "within", (2.19, 2.21),
                     kind="mechanism", reference_value=2.2, reference_source="closed form on Env R (spec §6)")
    # fails if: the y = 0 plan is not reward-greedy
    report.add_claim("Q1e", "planner, y=0: all-risky (reward 5.0, ERM 2.0195)", None,
                     o["y0_reward"] if abs(o["y0_erm"] - 2.0195) < 1e-3 else -1.0, "within", (4.99, 5.01),
                     kind="mechanism", reference_value=5.0, reference_source="closed form on Env R (spec §6)")


def run_env_r(cfg: Config, seed: int, stub: bool, V_star: float) -> dict[str, Any]:
    """Env R: both learners over ``cfg.seeds_r`` seeds of ``cfg.K_r`` episodes, with their regret/violation curves
    against the LP optimum ``V_star``."""
    from .env import env_risky_safe

    grid = _budget_grid(cfg)
    c = cfg.threshold_r
    K = cfg.K_r
    runs = []
    for s in spawn_seeds(seed, cfg.seeds_r):
        rs, rn = _learners(cfg, c, K, s, stub)
        runs.append((run_learner(rs, env_risky_safe(), K, cfg.alpha, grid),
                     run_learner(rn, env_risky_safe(), K, cfg.alpha, grid)))
    rs_c = [curves(a, V_star, c) for a, _ in runs]
    rn_c = [curves(b, V_star, c) for _, b in runs]
    return {"V_star": V_star, "runs": runs, "rs_c": rs_c, "rn_c": rn_c}


def _final_means(cfg: Config, env_r: dict[str, Any]) -> tuple[float, float, float]:
    """Seed means of the final-10% ERM and reward of the risk-sensitive learner and the baseline's final ERM."""
    runs, tail = env_r["runs"], max(1, cfg.K_r // 10)
    rs_erm = _mean([a["ERM"][-tail:].mean() for a, _ in runs])
    rs_rew = _mean([a["V_r"][-tail:].mean() for a, _ in runs])
    rn_erm = _mean([b["ERM"][-tail:].mean() for _, b in runs])
    return rs_erm, rs_rew, rn_erm


def add_env_r_claims(report: Report, cfg: Config, env_r: dict[str, Any]) -> None:
    """Q2a-Q2e: constraint met, reward near V*, the constraint binds, sublinear vs linear violation on Env R."""
    c, V_star, K = cfg.threshold_r, env_r["V_star"], cfg.K_r
    rs_c, rn_c = env_r["rs_c"], env_r["rn_c"]
    rs_erm, rs_rew, rn_erm = _final_means(cfg, env_r)
    # fails if: the learner ignores the risk constraint (the risk-neutral stub ends at ERM 2.02) or its dual
    # stalls at 0
    report.add_claim("Q2a", "abstract: the learner meets the entropic-risk constraint — Env R final-10% ERM ≥ c − 0.05",
                     None, rs_erm, ">=", c - 0.05, kind="paper", reference_value=2.193, reference_source=_SPEC,
                     requires=["Q1a"], headline=True)
    # fails if: the learner is over-conservative (all-safe: reward 1.5) or violates to gain reward (5.0)
    report.add_claim("Q2b", "abstract: sublinear regret — Env R final-10% reward within 0.15 of V*", None,
                     abs(rs_rew - V_star), "<=", 0.15, kind="paper", reference_value=4.395 - 4.351,
                     reference_source=_SPEC, requires=["Q1a", "Q1c"], headline=True)
    # fails if: Env R does not make the risk constraint bind (then Q2a/Q2d would show nothing)
    report.add_claim("Q2c", "the risk constraint binds: risk-neutral baseline final-10% ERM ≤ c − 0.15 (all-risky)",
                     None, rn_erm, "<=", c - 0.15, kind="check", reference_value=2.02, reference_source=_SPEC)
    # fails if: violation grows linearly (risk-neutral stub: 0.18 per episode) or the dual is truncated too early
    report.add_claim("Q2d", "abstract: sublinear violation — Env R risk-sensitive Violation(K)/K ≤ 0.08", None,
                     _mean([x["violation"][-1] / K for x in rs_c]), "<=", 0.08, kind="paper", reference_value=0.028,
                     reference_source=_SPEC, requires=["Q1a"])
    # fails if: as Q2c — the baseline must violate linearly for the comparison to mean anything
    report.add_claim("Q2e", "risk-neutral baseline Violation(K)/K ≥ 0.15 (linear violation)", None,
                     _mean([x["violation"][-1] / K for x in rn_c]), ">=", 0.15, kind="check", reference_value=0.180,
                     reference_source=_SPEC)


def add_env_r_rate_claims(report: Report, cfg: Config, env_r: dict[str, Any]) -> None:
    """F1a-F1e and V34 (the K^3/4 violation and regret rates on Env R) and the Env R table."""
    c, V_star, K = cfg.threshold_r, env_r["V_star"], cfg.K_r
    rs_c, rn_c = env_r["rs_c"], env_r["rn_c"]
    rs_erm, rs_rew, _ = _final_means(cfg, env_r)
    k1, k2 = max(1, K // 16), K
    # slope of the seed-mean curve (spec §6: "5-seed means"); per-seed slopes blow up when a seed's signed
    # cumulative violation returns to 0
    rs_slope = slope(np.mean([x["violation"] for x in rs_c], axis=0), k1, k2)
    rn_slope = slope(np.mean([x["violation"] for x in rn_c], axis=0), k1, k2)
    # fails if: violation is linear in k (slope ≈ 1), as for the risk-neutral learner
    report.add_claim("F1a", f"abstract: Violation = Õ(K^3/4) — log-log slope of risk-sensitive Violation(k), "
                     f"k={k1}..{k2}, ≤ 0.6", None, rs_slope, "<=", 0.6, scale=Scale.FULL, kind="paper")
    # fails if: violation grows faster than K^{3/4} (the risk-neutral stub grows linearly: slope 1.0)
    report.add_claim("V34", f"abstract: constraint violation Õ(V_g,max √(H³S²A log(1/δ)) K^3/4) — log-log slope of the "
                     f"risk-sensitive Violation(k) on Env R, k={k1}..{k2}, ≤ 3/4", "Õ(K^{3/4}): exponent 3/4", rs_slope,
                     "<=", 0.75, kind="paper", source="abstract (the bound's exponent of K)", headline=True,
                     note="the paper's exponent as the threshold, no tolerance: the bound's constant does not change a "
                          "log-log slope and its log factors add < 0.05 over these k; same measurement as F1a (≤ 0.6, the "
                          "spec's acceptance)")
    # fails if: the baseline is not linear (the constraint would not bind on Env R)
    report.add_claim("F1b", f"Env R: risk-neutral Violation(k) slope, k={k1}..{k2}, ≥ 0.95 (linear)", None, rn_slope,
                     ">=", 0.95, scale=Scale.FULL, kind="check", reference_value=1.0, reference_source=_SPEC)
    # fails if: the learner converges to a suboptimal (e.g. Markov, all-safe) policy
    report.add_claim("F1c", "abstract: Regret = Õ(K^3/4) — Env R Regret(K)/K ≤ 0.05", None,
                     _mean([x["regret"][-1] / K for x in rs_c]), "<=", 0.05, scale=Scale.FULL, kind="paper",
                     reference_value=-665 / 16000, reference_source=_SPEC, requires=["Q1c"])
    # fails if: the last iterates do not approach the constrained optimum
    report.add_claim("F1d", "Env R: |final-10% reward − V*| ≤ 0.1", None, abs(rs_rew - V_star), "<=", 0.1,
                     scale=Scale.FULL, kind="paper", reference_value=4.371 - 4.351, reference_source=_SPEC,
                     requires=["Q1c"])
    # fails if: the last iterates stay infeasible
    report.add_claim("F1e", "Env R: final-10% ERM ≥ c − 0.03", None, rs_erm, ">=", c - 0.03, scale=Scale.FULL,
                     kind="paper", reference_value=2.197, reference_source=_SPEC)
    checkpoints = sorted({max(1, K // 16), max(1, K // 4), K})
    report.add_table("Env R cumulative regret / signed violation (mean over seeds)", [
        {"k": k, "RS regret": _mean([x["regret"][k - 1] for x in rs_c]),
         "RS violation": _mean([x["violation"][k - 1] for x in rs_c]),
         "RS violation (positive parts)": _mean([x["violation_pos"][k - 1] for x in rs_c]),
         "RN regret": _mean([x["regret"][k - 1] for x in rn_c]),
         "RN violation": _mean([x["violation"][k - 1] for x in rn_c])} for k in checkpoints])


def run_garnet(cfg: Config, seed: int, stub: bool) -> dict[str, Any]:
    """Env G: per Garnet instance a threshold halfway between the reward-greedy and the max-ERM policy's ERM, the
    LP optimum, and both learners over ``cfg.K_garnet`` episodes."""
    from .env import env_garnet
    from .oracles import evaluate, max_erm_policy, solve_lp

    grid = _budget_grid(cfg)
    grows = []
    garnet_reg_slopes = []
    wins = 0
    ok_erm = True
    for gs in cfg.garnet_seeds:
        genv = env_garnet(gs)
        greedy = _reward_greedy_policy(genv)
        e_greedy = evaluate(genv, greedy, 0.0, cfg.alpha, grid)[1]
        e_max = max_erm_policy(genv, cfg.alpha)[1]
        cg = round(e_greedy + 0.5 * (e_max - e_greedy), 1)
        vs = solve_lp(genv, cg, cfg.alpha, cfg.eps).value
        rs, rn = _learners(cfg, cg, cfg.K_garnet, seed + gs, stub)
        a = run_learner(rs, env_garnet(gs), cfg.K_garnet, cfg.alpha, grid)
        b = run_learner(rn, env_garnet(gs), cfg.K_garnet, cfg.alpha, grid)
        ca, cb = curves(a, vs, cg), curves(b, vs, cg)
        garnet_reg_slopes.append(slope(np.maximum(ca["regret"], 0.0), max(1, cfg.K_garnet // 16), cfg.K_garnet))
        t = max(1, cfg.K_garnet // 10)
        wins += ca["violation"][-1] <= 0.7 * cb["violation"][-1]
        ok_erm &= a["ERM"][-t:].mean() >= cg - 0.05
        grows.append({"seed": gs, "c": cg, "V*": vs, "RS violation": ca["violation"][-1],
                      "RN violation": cb["violation"][-1], "RS regret": ca["regret"][-1], "RN regret": cb["regret"][-1],
                      "RS final ERM": a["ERM"][-t:].mean(), "RN final ERM": b["ERM"][-t:].mean()})
    return {"rows": grows, "reg_slopes": garnet_reg_slopes, "wins": wins, "ok_erm": ok_erm}


def add_garnet_claims(report: Report, cfg: Config, garnet: dict[str, Any], env_r: dict[str, Any]) -> None:
    """R34 (regret slope ≤ 3/4 on Env R and every Garnet instance), F2a-F2b (Garnet violation and feasibility)."""
    grows, garnet_reg_slopes, wins, ok_erm = garnet["rows"], garnet["reg_slopes"], garnet["wins"], garnet["ok_erm"]
    rs_c = env_r["rs_c"]
    k1, k2 = max(1, cfg.K_r // 16), cfg.K_r
    report.add_table("Env G (Garnet)", grows)
    # fails if: the learner's regret against the constrained optimum V* grows faster than K^{3/4} on some instance
    reg_slopes = {"Env R": slope(np.maximum(np.mean([x["regret"] for x in rs_c], axis=0), 0.0), k1, k2)}
    reg_slopes.update({f"Garnet {gs}": v for gs, v in zip(cfg.garnet_seeds, garnet_reg_slopes, strict=True)})
    report.add_claim("R34", "abstract: regret Õ(V_g,max K^3/4 + √(H⁴S²A log(1/δ)) K^3/4) — log-log slope of the "
                     "positive part of the cumulative regret, k = K/16..K, ≤ 3/4 on Env R and every Garnet instance",
                     "Õ(K^{3/4}): exponent 3/4", max(reg_slopes.values()), "<=", 0.75, scale=Scale.FULL, kind="paper",
                     source="abstract (the bound's exponent of K)", headline=True, aggregate="max",
                     note="max over instances (" + ", ".join(f"{k}: {v:.2f}" for k, v in reg_slopes.items()) + "); "
                          "a regret ≤ 0 (reward above V* while violating, as on Env R) meets the bound and counts as "
                          "slope 0; threshold = the paper's exponent, no tolerance")
    need = min(4, len(cfg.garnet_seeds))
    # fails if: the risk-sensitive learner violates as much as the risk-neutral one on random instances
    report.add_claim("F2a", f"Garnet: RS Violation(K) ≤ 0.7 × RN Violation(K) on ≥ {need} of {len(cfg.garnet_seeds)} seeds",
                     None, wins, ">=", need, scale=Scale.FULL, kind="paper")
    # fails if: the learner ends infeasible on some instance
    report.add_claim("F2b", "Garnet: RS final-10% ERM ≥ c − 0.05 on every seed", None, bool(ok_erm), "is_true",
                     scale=Scale.FULL, kind="paper", aggregate="all")


def run_ablations(cfg: Config, seed: int, stub: bool, V_star: float) -> list[dict]:
    """F3: the learner, without truncation of the dual (ρ = ∞) and ignoring the budget (Markov), on Env R."""
    from .env import env_risky_safe

    grid = _budget_grid(cfg)
    c = cfg.threshold_r
    abl = []
    Ka = cfg.K_ablation
    for name, kw in (("full method", {}), ("no truncation (ρ = ∞)", {"rho": math.inf}),
                     ("budget ignored (Markov)", {"budget_aware": False})):
        rs, _ = _learners(cfg, c, Ka, seed + 99, stub, **kw)
        a = run_learner(rs, env_risky_safe(), Ka, cfg.alpha, grid)
        ca = curves(a, V_star, c)
        t = max(1, Ka // 10)
        abl.append({"variant": name, "violation/K": ca["violation"][-1] / Ka, "regret/K": ca["regret"][-1] / Ka,
                    "final ERM": a["ERM"][-t:].mean(), "final reward": a["V_r"][-t:].mean(),
                    "final dual": a["dual"][-1]})
    return abl


def add_ablations_figure_and_notes(report: Report, abl: list[dict], env_r: dict[str, Any], stub: bool) -> None:
    """The F3 table (report only), the regret/violation figure and the report's notes."""
    rs_c, rn_c = env_r["rs_c"], env_r["rn_c"]
    report.add_table("F3 ablations on Env R (report only)", abl)
    report.add_figure("regret_violation", _figure(rs_c, rn_c))
    report.notes.append("The paper is theoretical (no experiments, no code): the learner and all experiments are "
                        "reconstructed (spec §2, §6). No claim has a paper number; reference_value holds the spec's "
                        "prototype numbers or closed forms on Env R.")
    if stub:
        report.notes.append("STUB: the risk-sensitive learner replaced by the risk-neutral primal-dual baseline.")


def _reward_greedy_policy(env) -> np.ndarray:  # type: ignore[no-untyped-def]
    V = np.zeros(env.S)
    pol = np.zeros((env.H, env.S), dtype=np.int64)
    for h in range(env.H - 1, -1, -1):
        Q = env.r[h] + env.P[h] @ V
        pol[h] = Q.argmax(1)
        V = Q.max(1)
    return pol


def _figure(rs_c: list[dict], rn_c: list[dict]):  # type: ignore[no-untyped-def]
    from icml25.core.plotting import new_figure

    fig, (ax1, ax2) = new_figure(ncols=2)
    k = np.arange(1, len(rs_c[0]["violation"]) + 1)
    for name, cs, col in (("risk-sensitive", rs_c, "C0"), ("risk-neutral", rn_c, "C3")):
        ax1.loglog(k, np.maximum(np.mean([x["violation"] for x in cs], 0), 1e-3), color=col, label=name)
        ax2.plot(k, np.mean([x["regret"] for x in cs], 0), color=col, label=name)
    ax1.loglog(k, 0.18 * k, "--", color="grey", lw=1, label="slope 1")
    ax1.loglog(k, 3 * k**0.75, ":", color="grey", lw=1, label="slope 3/4")
    ax1.set_xlabel("episode k")
    ax1.set_ylabel("cumulative violation [Σ(c − ERM_k)]₊")
    ax1.legend(fontsize=7)
    ax2.set_xlabel("episode k")
    ax2.set_ylabel("cumulative regret vs V*")
    ax2.legend(fontsize=7)
    return fig
