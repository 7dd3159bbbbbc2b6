"""The Ehrlich experiment of the reproduction (spec §6): MH exactness, MH chains (phase 1), q_θ trained on the
selected states (phase 2) against MH and hill climbing at equal and longer budgets, and the abstract's paper-scale
tasks (registered, never measured). One function per stage or claim group; ``reproduce.py`` calls them in order.

``trained=False`` (the stub): q_θ left untrained (random initialisation), everything else unchanged.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from icml25.core import Report, Scale
from icml25.core.progress import progress

from .ehrlich import Ehrlich
from .episodes import episodes_from_chains, transitions
from .mcmc import MarkovPriorGibbsProposal, MetropolisHastings
from .search import hill_climb, mh_best_at_budget

if TYPE_CHECKING:
    from .reproduce import Config

def exp_mh_exactness(cfg: Config, seed: int) -> float:
    """Total variation between MH samples and the exact target on an enumerable space (v=3, L=4: 81 states)."""
    P = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5], [0.4, 0.0, 0.6]])
    f = Ehrlich.from_parts(P, motifs=[[1, 2]], spacings=[[0, 1]], dim=4)
    beta = 2.0
    X = np.array(list(itertools.product(range(3), repeat=4)))
    logp = f.log_prior(X) + beta * np.where(f.is_feasible(X), f(X), 0.0)
    target = np.exp(logp - logp.max())
    target /= target.sum()
    mh = MetropolisHastings(f, MarkovPriorGibbsProposal(P, f.initial_dist, n_sites=2), beta=beta)
    ch = mh.run(f.sample_prior(cfg.exact_chains, seed=seed), cfg.exact_steps, seed=seed)
    samples = ch.states[:, 20:].reshape(-1, 4).astype(np.int64)
    code = samples @ (3 ** np.arange(3, -1, -1))
    emp = np.bincount(code, minlength=81) / len(code)
    return float(0.5 * np.abs(emp - target).sum())


def _setup(cfg: Config, seed: int) -> tuple[Ehrlich, np.ndarray, np.ndarray]:
    f = Ehrlich(cfg.num_states, cfg.dim, cfg.num_motifs, cfg.motif_length, seed=cfg.instance_seed)
    pool, need = [], cfg.n_chains + cfg.n_test
    rng = np.random.default_rng([seed, 1])
    for _ in range(200):
        x = f.sample_prior(20 * need, seed=rng)
        pool.append(x[f(x) <= cfg.train_max])
        if sum(map(len, pool)) >= need:
            break
    X = np.concatenate(pool)
    if len(X) < need:
        raise ValueError(f"could not draw {need} prior sequences with f <= train_max={cfg.train_max}")
    X = X[rng.permutation(len(X))[:need]]
    return f, X[: cfg.n_chains], X[cfg.n_chains:]


def _train_qtheta(cfg: Config, f: Ehrlich, prev: np.ndarray, nxt: np.ndarray, seed: int, trained: bool) -> Any:
    from .qtheta import QTheta

    q = QTheta(cfg.num_states, cfg.dim, cfg.n_layer, cfg.n_head, cfg.n_embd, seed=seed, device=cfg.device)
    if trained:
        q.fit(prev, nxt, epochs=cfg.epochs, batch_size=cfg.batch_size, lr=cfg.lr, seed=seed, show_progress=True)
    return q



def run_mh_exactness(rep: Report, cfg: Config, seed: int) -> None:
    """MH against the exact target on an 81-state space; claim M1."""
    tv = exp_mh_exactness(cfg, seed)
    # fails if: the proposal is not reversible for the prior or the acceptance ratio is wrong
    rep.add_claim("M1", "MH with the prior-Gibbs proposal samples the exact target prior(x)·exp(β f(x)) (total "
                  "variation, 81-state space)", None, tv, "<=", 0.03, kind="mechanism",
                  note=f"{cfg.exact_chains} chains × {cfg.exact_steps - 20} steps after burn-in")


@dataclass(frozen=True)
class Phase1:
    """The MH chains (training data) and the baselines on the test inputs."""

    f: Ehrlich  # the Ehrlich instance
    test: np.ndarray  # test inputs (f <= train_max, disjoint from the chain starts)
    chains: Any  # MH chains from the training starts (phase 1)
    test_chains: Any  # long MH runs from the test inputs (the MH references)
    budget: int  # q_θ's evaluations per input: steps x best-of-n
    start_mean: float  # mean f of the test inputs
    mh_at: dict[int, float]  # mean best f of MH within b evaluations, per budget b
    hill_climb: float  # mean f of hill climbing at the matched budget
    mh_extrap: float  # fraction of MH's best states at the matched budget beyond the training range


def run_chains(cfg: Config, seed: int) -> Phase1:
    """Phase 1: MH chains from the training starts, MH references and hill climbing on the test inputs."""
    f, starts, test = _setup(cfg, seed)
    mh = MetropolisHastings(f, MarkovPriorGibbsProposal(f.transition_matrix, f.initial_dist, cfg.n_sites),
                            beta=cfg.beta)
    chains = mh.run(starts, cfg.chain_steps, seed=[seed, 2], show_progress=True)
    budget = cfg.steps * cfg.n_candidates
    test_chains = mh.run(test, cfg.mh_long_steps, seed=[seed, 3])
    start_mean = float(f(test).mean())
    mh_at = {b: float(mh_best_at_budget(test_chains, b).mean()) for b in sorted({budget, cfg.long_budget,
                                                                                 cfg.mh_long_steps})}
    hc = float(hill_climb(f, test, cfg.num_states, budget, seed=[seed, 4]).mean())
    mh_extrap = float(np.mean(mh_best_at_budget(test_chains, budget) > cfg.train_max))
    return Phase1(f, test, chains, test_chains, budget, start_mean, mh_at, hc, mh_extrap)


def run_qtheta(cfg: Config, seed: int, p1: Phase1, trained: bool) -> tuple[list[dict[str, Any]], dict[str, dict]]:
    """Phase 2 per selection: episodes, q_θ training (``trained``), guided and unguided transformations.

    Returns the table rows and, per selection, the final and per-step mean scores, infeasible and extrapolation
    rates.
    """
    f, test = p1.f, p1.test
    rows, per_sel = [], {}
    for sel in progress((*cfg.selections, *cfg.ablation_selections), "selections"):
        eps = episodes_from_chains(p1.chains.states, p1.chains.scores, sel, k_max=cfg.k_max, seed=[seed, 5])
        prev, nxt = transitions(eps)
        q = _train_qtheta(cfg, f, prev, nxt, seed, trained)
        guided = q.transform(test, cfg.steps, cfg.n_candidates, guide=f, seed=[seed, 6])
        unguided = q.transform(test, cfg.steps, 1, feasible=f.is_feasible, seed=[seed, 7])
        means = guided.values.mean(axis=0)
        per_sel[sel] = {"final": float(means[-1]), "means": means, "infeasible": guided.infeasible_rate,
                        "extrap": float(np.mean(guided.values[:, -1] > cfg.train_max))}
        rows.append({"selection": sel, "transitions": len(prev), "start f": p1.start_mean,
                     "q_theta best-of-n final f": float(means[-1]), "after 1 step": float(means[1]),
                     "unguided final f": float(np.mean(np.maximum(f(unguided.states[:, -1]), 0))),
                     "infeasible rate": guided.infeasible_rate, "beyond training range": per_sel[sel]["extrap"],
                     "final loss": q.losses[-1] if q.losses else float("nan")})
    return rows, per_sel


def add_tables(rep: Report, cfg: Config, p1: Phase1, rows: list[dict[str, Any]]) -> None:
    """The q_θ table and the baselines table."""
    rep.add_table(f"q_theta on {cfg.n_test} test inputs ({cfg.steps} steps × best-of-{cfg.n_candidates} = "
                  f"{p1.budget} evaluations)", rows)
    rep.add_table("baselines on the same test inputs", [
        {"method": f"MH best within {b} evaluations", "mean f": v} for b, v in p1.mh_at.items()]
        + [{"method": f"hill climbing, {p1.budget} evaluations", "mean f": p1.hill_climb},
           {"method": "start", "mean f": p1.start_mean}])


def add_quick_claims(rep: Report, cfg: Config, seed: int, p1: Phase1, per_sel: dict[str, dict],
                     trained: bool) -> None:
    """Claims P1 (q_θ vs MH at an equal budget), P2 (extrapolation), P3 (an untrained q_θ gains less)."""
    budget, asserted = p1.budget, list(cfg.selections)
    worst = min(per_sel[s]["final"] for s in asserted)
    # fails if: q_theta learned nothing from the chains (the stub: an untrained q_theta with the same best-of-n)
    rep.add_claim("P1", f"q_θ reaches a higher mean score than MH at an equal budget of {budget} evaluations "
                  "(q_θ − MH, worst selection)", None, worst - p1.mh_at[budget], ">=", 0.05, kind="paper",
                  headline=True, reference_value=round(0.5875 - 0.4435, 4),
                  reference_source="spec §6 quick calibration (2 seeds: 0.625/0.550 vs 0.462/0.425)",
                  aggregate="min", note=f"MH@{budget} = {p1.mh_at[budget]:.3f}; guide = oracle = f (spec §6)")
    extrap = min(per_sel[s]["extrap"] for s in asserted)
    # fails if: q_theta's outputs stay inside the training range as often as MH's do
    rep.add_claim("P2", "q_θ outputs beyond the training range more often than MH at the same budget "
                  "(fraction with f > train_max, q_θ − MH)", None, extrap - p1.mh_extrap, ">", 0.0, kind="paper",
                  aggregate="min")
    if trained:
        untrained = _train_qtheta(cfg, p1.f, *transitions(episodes_from_chains(
            p1.chains.states, p1.chains.scores, asserted[0], k_max=cfg.k_max, seed=[seed, 5])), seed, trained=False)
        u_final = float(untrained.transform(p1.test, cfg.steps, cfg.n_candidates, guide=p1.f, seed=[seed, 6])
                        .values[:, -1].mean())
    else:
        u_final = per_sel[asserted[0]]["final"]
    gain, u_gain = per_sel[asserted[0]]["final"] - p1.start_mean, u_final - p1.start_mean
    # fails if: the best-of-n guide does the work alone (an untrained q_theta gains as much)
    rep.add_claim("P3", "an untrained q_θ with the same best-of-n gains less than half of the trained one's gain",
                  None, u_gain / gain if gain > 0 else float("inf"), "<", 0.5, kind="mechanism",
                  note=f"gain trained {gain:.3f}, untrained {u_gain:.3f}")


def add_full_claims(rep: Report, cfg: Config, p1: Phase1, per_sel: dict[str, dict]) -> None:
    """Claims F1-F4: q_θ vs long MH runs, the matched-budget margin, monotone steps, infeasible samples."""
    budget, asserted = p1.budget, list(cfg.selections)
    worst = min(per_sel[s]["final"] for s in asserted)
    # fails if: q_theta is no better than MH run for many more evaluations (full scale: 500)
    rep.add_claim("F1", f"q_θ at {budget} evaluations ≥ MH at {cfg.long_budget} evaluations − 0.02 (worst "
                  "selection)", None, worst - p1.mh_at[cfg.long_budget], ">=", -0.02, kind="paper",
                  scale=Scale.FULL, headline=True,
                  reference_value=round(0.405 - 0.359, 3), reference_source="spec §6 full calibration (improve)",
                  aggregate="min")
    # fails if: the matched-budget gain is small at the paper-like size (spec full: + 0.15 at 80 evaluations)
    rep.add_claim("F2", f"q_θ at {budget} evaluations ≥ MH at {budget} + 0.15 (worst selection)", None,
                  worst - p1.mh_at[budget], ">=", 0.15, kind="paper", scale=Scale.FULL, aggregate="min",
                  reference_value=round(0.405 - 0.176, 3), reference_source="spec §6 full calibration (improve)")
    drop = min(float(np.min(np.diff(per_sel[s]["means"]))) for s in asserted)
    # fails if: later steps undo earlier progress (q_theta does not model improving transitions)
    rep.add_claim("F3", "q_θ's mean score is non-decreasing over steps (smallest step-to-step change)", None,
                  drop, ">=", 0.0, kind="mechanism", scale=Scale.FULL, aggregate="min")
    worst_inf = max(per_sel[s]["infeasible"] for s in asserted)
    # fails if: q_theta has not learned the landscape's feasible transitions
    rep.add_claim("F4", "infeasible-sample rate of q_θ ≤ 35 %", None, worst_inf, "<=", 0.35, kind="mechanism",
                  scale=Scale.FULL, aggregate="max", reference_value=0.23,
                  reference_source="spec §6 calibration (improve)")


def add_figure_and_notes(rep: Report, cfg: Config, p1: Phase1, per_sel: dict[str, dict]) -> None:
    """The score-vs-evaluations figure and the closing notes."""
    rep.add_figure("score_vs_evaluations", _figure(per_sel, p1.test_chains, cfg))
    rep.notes.append("Ehrlich functions stand in for the paper's ACE2/FoldX task; the guide used by MH and by "
                     "best-of-n is f itself (as in the spec's calibration), so 'beyond the training range' means "
                     f"f > {cfg.train_max}, the largest value among chain starts and test inputs.")
    rep.notes.append("The paper prints no numbers that could be retrieved (spec §3); the reference column holds the "
                     "spec's calibration runs.")


#: the abstract's three problems and what measuring each takes
_PAPER_TASKS = (
    ("X1", "protein sequence design (ACE2 stability): q_θ extrapolates as well as or better than MCMC, with far "
     "fewer score evaluations", True,
     "the ACE2 variant data (Genhance/ICE), the FoldX binary (proprietary) as oracle, a ddG guide regressor and a "
     "protein masked LM (e.g. ProtBERT); this task is not implemented (the Ehrlich claims stand in for it)"),
    ("X2", "text sentiment control (Yelp): q_θ reaches extreme sentiment in few steps, as well as or better than "
     "MCMC", False,
     "text_tasks with 'sentiment', the yelp_review_full data (yelp_path or --allow-download) and local models "
     "mlm_model, qtheta_model, sentiment_guide_model (ratings 2-4), sentiment_oracle_model (ratings 1-5)"),
    ("X3", "text anonymisation: q_θ comparable to MCMC at far lower cost", False,
     "text_tasks with 'anonymisation', an authorship CSV (authorship_path) and local models mlm_model, "
     "qtheta_model, author_guide_model, author_oracle_model, similarity_model"),
)


def add_paper_task_claims(rep: Report, scale: Scale, cfg: Config | None = None, seed: int = 0) -> None:
    """The abstract's tasks at paper scale: X2 / X3 measured by :mod:`.text_experiment` when ``cfg.text_tasks``
    asks for them and their models and data are there; otherwise (and X1 always) registered as not measured, with
    what is missing."""
    from icml25.core.errors import DataNotFoundError

    from . import text_experiment as tx

    tasks = {v: k for k, v in tx.CLAIM.items()}
    for cid, statement, headline, needs in _PAPER_TASKS:
        kw = dict(id=cid, statement=statement + " (oracle score, q_θ − MCMC at a matched budget)", paper_value=None,
                  comparison=">=", threshold=0.0, kind="paper", scale=Scale.PAPER, headline=headline,
                  source="abstract; Sec. 5 (no number retrievable)")
        if Scale.parse(scale).rank < Scale.PAPER.rank:
            rep.add_unmeasured_claim(**kw, needs=f"--scale paper and {needs}")
            continue
        task = tasks.get(cid)
        why = None
        if task is None:
            why = needs
        elif cfg is None or task not in cfg.text_tasks:
            why = f"text_tasks does not include {task!r}; it needs {needs}"
        elif problems := tx.missing_models(cfg, task):
            why = "; ".join(problems)
        if why is None:
            try:
                res = tx.run_text_task(cfg, task, seed)
            except (DataNotFoundError, tx.TextTaskUnavailable) as exc:
                why = str(exc)
            else:
                rep.add_table(f"{task}: q_θ vs MH on {cfg.text_n_test} test inputs, judged by the oracle", res.rows)
                # fails if: q_theta's outputs score lower under the oracle than MH's at the same guide calls
                rep.add_claim(**kw, measured=res.qtheta_minus_mh, note=res.note)
                continue
        # never a fabricated number: NaN with the reason
        rep.add_claim(**kw, measured=math.nan, note=f"not measured here: {why}")


def _figure(per_sel: dict, test_chains: Any, cfg: Config) -> Any:
    from icml25.core.plotting import new_figure

    fig, ax = new_figure()
    best = test_chains.best_so_far().mean(axis=0)
    ax.plot(np.arange(len(best)), best, color="tab:grey", label="MH (best so far)")
    for sel, d in per_sel.items():
        ax.plot(np.arange(cfg.steps + 1) * cfg.n_candidates, d["means"], marker="o", label=f"q_θ ({sel})")
    ax.axhline(cfg.train_max, ls=":", color="k", lw=1, label="training range max")
    ax.set_xscale("symlog")
    ax.set_xlabel("guide evaluations per input")
    ax.set_ylabel("mean Ehrlich score f")
    ax.legend(fontsize=7)
    return fig
