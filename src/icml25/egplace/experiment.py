"""The EGPlace experiment (spec §6): decoder equivalence, incremental decoding and mask speed, guided vs swap-only
search on ibm01, the ablations, the synthetic transfer and the abstract's ISPD2005 comparison, with the claims each
supports. One function per stage or claim group; ``reproduce.py`` calls them in order.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from icml25.core import Report, Scale
from icml25.core.progress import progress
from icml25.core.validation import check_array, check_int

from ._plan import ISPD_GRID
from .data import ispd_aux, load_efficientplace_results
from .decoder import Canvas, GreedyDecoder, loop_cell_costs, loop_decode
from .netlist import Netlist, load_ibm01, synthetic_netlist
from .optimizers import EGPlace, SearchResult, WireMaskEA
from .wirelength import hpwl, overlap_area

if TYPE_CHECKING:
    from .reproduce import Config

PAPER_RATIO_VS_EA = 1 - 0.108
PAPER_SPEEDUP_VS_EA = 7.8
#: the tolerance on the abstract's 7.8x (claims F_speedup_ea, ispd_speedup_ea): a CPU-time ratio moves with the
#: machine, the Python/numpy versions and the netlist, so a quarter below the paper's value is accepted
SPEEDUP_TOLERANCE = 0.25
#: interleaved runs of the loop and the vectorised decode per sampled genotype; the least of each is kept (as S1)
SPEEDUP_REPEATS = 2
#: the abstract's numbers against EfficientPlace (ICML'24, RL + MCTS): −9.3 % HPWL, 2.8x speed-up
PAPER_REDUCTION_VS_EP, PAPER_SPEEDUP_VS_EP = 9.3, 2.8


def exp_decoder_equivalence(cfg: Config, seed: int) -> dict[str, float]:
    """Vectorised vs loop decoder on random genotypes: identical cells, HPWL agreement, no overlap."""
    nl = synthetic_netlist(cfg.synth_macros, 0.4, seed=seed)
    cv = Canvas(cfg.synth_grid, nl.size)
    dec = GreedyDecoder(nl, cv)
    same, rel_err, overlap, feasible = 0, 0.0, 0.0, 0
    for k in range(cfg.n_equiv):
        g = dec.random_guides([seed, k])
        lay = dec.decode(g, cache=False)
        cells, h_loop = loop_decode(nl, cv, g)
        same += bool(np.array_equal(cells, lay.cells))
        if lay.feasible:
            feasible += 1
            rel_err = max(rel_err, abs(lay.hpwl - hpwl(nl, lay.x, lay.y)) / max(lay.hpwl, 1e-12),
                          abs(h_loop - lay.hpwl) / max(lay.hpwl, 1e-12))
            overlap += overlap_area(nl, lay.x, lay.y)
    return {"identical": same / cfg.n_equiv, "max_rel_err": rel_err, "overlap": overlap,
            "feasible": feasible / cfg.n_equiv}


def exp_incremental(cfg: Config, seed: int) -> float:
    """Fraction of random guide mutations for which resuming from the first changed step equals a full decode."""
    nl = synthetic_netlist(cfg.synth_macros, 0.4, seed=seed + 1)
    dec = GreedyDecoder(nl, Canvas(cfg.synth_grid, nl.size))
    base = dec.decode(dec.random_guides(seed))
    rng = np.random.default_rng(seed)
    same = 0
    for _ in range(cfg.n_incr):
        g = base.guides.copy()
        idx = rng.choice(nl.n_macros, size=int(rng.integers(1, 4)), replace=False)
        g[idx] = rng.integers(0, dec.G, size=(len(idx), 2))
        a, b = dec.decode_from(base, g), dec.decode(g)
        same += bool(np.array_equal(a.cells, b.cells) and (a.hpwl == b.hpwl or abs(a.hpwl - b.hpwl) <= 1e-9 * b.hpwl))
    return same / cfg.n_incr


def exp_incremental_speed(dec: GreedyDecoder, n: int, seed: int) -> dict[str, float]:
    """Time of resuming vs fully re-decoding after single-macro guide changes (uniform first changed step)."""
    base = dec.decode(dec.random_guides(seed))
    rng = np.random.default_rng(seed + 7)
    t_inc, t_full = [], []
    for _ in range(n):
        g = base.guides.copy()
        g[rng.integers(len(g))] = rng.integers(0, dec.G, size=2)
        t = time.thread_time()
        dec.decode_from(base, g)
        t_inc.append(time.thread_time() - t)
        t = time.thread_time()
        dec.decode(g)
        t_full.append(time.thread_time() - t)
    return {"incremental_s": float(np.mean(t_inc)), "full_s": float(np.mean(t_full)),
            "ratio": float(np.sum(t_inc) / np.sum(t_full))}


def exp_mask_speed(nl: Netlist, cfg: Config, seed: int) -> dict[str, float]:
    """Median time of one macro's masks, loop (WireMask-style) vs vectorised, on a half-placed ibm01 layout."""
    dec = GreedyDecoder(nl, Canvas(cfg.mask_grid, nl.size))
    lay = dec.decode(dec.random_guides(seed))
    half = nl.n_macros // 2
    occ, box, _ = lay.states[half]
    placed = dec.order[:half]
    cells = -np.ones_like(lay.cells)
    cells[placed] = lay.cells[placed]
    boxes = {int(e): list(box[e]) for e in np.flatnonzero(np.isfinite(box[:, 0]))}
    from icml25.core.timing import time_interleaved

    t_loop, t_vec, same = [], [], 0
    for i in dec.order[half:half + cfg.mask_macros]:
        # least of 3 interleaved runs per macro: a burst of load on a shared machine does not enter the ratio
        W, secs = time_interleaved({"loop": lambda i=int(i): loop_cell_costs(dec, i, cells, boxes),
                                    "vec": lambda i=int(i): dec.cell_costs(i, occ, box)}, repeats=3)
        t_loop.append(secs["loop"])
        t_vec.append(secs["vec"])
        same += bool(_argmin_set(W["loop"]) == _argmin_set(W["vec"]))
    return {"loop_ms": 1e3 * float(np.median(t_loop)), "vectorised_ms": 1e3 * float(np.median(t_vec)),
            "speedup": float(np.median(t_loop) / np.median(t_vec)), "identical_argmins": same / cfg.mask_macros}


def _argmin_set(W: np.ndarray) -> frozenset:
    wmin = W.min()
    if not np.isfinite(wmin):
        return frozenset()
    return frozenset(map(tuple, np.argwhere(W <= wmin + 1e-9 * max(1.0, abs(wmin)))))


def sample_indices(n: int, k: int, seed: Any) -> np.ndarray:
    """``min(k, n)`` distinct indices drawn uniformly from ``range(n)`` (without replacement), sorted."""
    n, k = check_int(n, "n", low=1), check_int(k, "k", low=1)
    return np.sort(np.random.default_rng(seed).choice(n, size=min(k, n), replace=False))


def estimate_total(sample_seconds: Any, n_total: int) -> tuple[float, float]:
    """Estimate the sum of a quantity over ``n_total`` items from its values on a uniform sample without replacement.

    Returns ``(total, se)``: ``n_total`` x the sample mean (unbiased) and its standard error, ``n_total`` x s/√k x
    √(1 − k/n_total) (s the sample standard deviation, k the sample size; 0 when the sample is everything, NaN for
    a sample of one out of more).
    """
    t = check_array(sample_seconds, "sample_seconds", ndim=1, low=0.0)
    n_total = check_int(n_total, "n_total", low=1)
    k = len(t)
    if k > n_total:
        raise ValueError(f"sample_seconds has {k} values, more than n_total={n_total}")
    total = n_total * float(t.mean())
    if k == n_total:
        return total, 0.0
    if k < 2:
        return total, float("nan")
    return total, n_total * float(t.std(ddof=1)) / np.sqrt(k) * np.sqrt(1.0 - k / n_total)


def ratio_estimate(num_seconds: Any, den_seconds: Any, n_total: int) -> tuple[float, float]:
    """The ratio Σ num / Σ den over ``n_total`` items estimated from paired values on a uniform sample without
    replacement (the ratio estimator of survey sampling).

    Returns ``(ratio, se)``: Σ num / Σ den over the sample and its standard error √((1 − k/n_total)/k · s_d²) / mean
    den, with d = num − ratio · den (k the sample size; 0 when the sample is everything, NaN for one out of more).
    """
    y = check_array(num_seconds, "num_seconds", ndim=1, low=0.0)
    x = check_array(den_seconds, "den_seconds", ndim=1, low=0.0)
    n_total = check_int(n_total, "n_total", low=1)
    if len(x) != len(y):
        raise ValueError(f"num_seconds and den_seconds must be paired, got lengths {len(y)} and {len(x)}")
    k = len(y)
    if k > n_total:
        raise ValueError(f"num_seconds has {k} values, more than n_total={n_total}")
    if x.sum() <= 0:
        raise ValueError("den_seconds must not all be 0")
    ratio = float(y.sum() / x.sum())
    if k == n_total:
        return ratio, 0.0
    if k < 2:
        return ratio, float("nan")
    d = y - ratio * x
    return ratio, float(np.sqrt((1.0 - k / n_total) / k * d.var(ddof=1)) / x.mean())


def speedup_ratio(loop_seconds: Any, loop_se: Any, egplace_seconds: Any) -> dict[str, Any]:
    """The abstract's speed-up from per-seed times: Σ loop WireMask-EA seconds / Σ EGPlace seconds.

    ``loop_seconds`` and ``loop_se`` are the per-seed estimates of the loop WireMask-EA's run time and their
    standard errors (:func:`estimate_total`), ``egplace_seconds`` EGPlace's measured run times. Returns the pooled
    ``ratio``, its standard error ``se`` from the estimates' errors (EGPlace's times are measured, not estimated),
    the interval ``low``/``high`` = ratio ± 2 se, and the ``per_seed`` ratios.
    """
    loop = check_array(loop_seconds, "loop_seconds", ndim=1, low=0.0)
    se = check_array(loop_se, "loop_se", ndim=1, finite=False)
    eg = check_array(egplace_seconds, "egplace_seconds", ndim=1)
    if not (len(loop) == len(se) == len(eg)):
        raise ValueError(f"loop_seconds, loop_se and egplace_seconds must have one value per seed, got lengths "
                         f"{len(loop)}, {len(se)}, {len(eg)}")
    if np.any(eg <= 0):
        raise ValueError("egplace_seconds must be > 0")
    ratio = float(loop.sum() / eg.sum())
    r_se = float(np.sqrt(np.sum(se**2)) / eg.sum())
    return {"ratio": ratio, "se": r_se, "low": ratio - 2 * r_se, "high": ratio + 2 * r_se,
            "per_seed": [float(x) for x in loop / eg]}


def loop_ea_seconds(dec: GreedyDecoder, ea: SearchResult, n_samples: int, seed: Any) -> dict[str, Any]:
    """Estimate the CPU time WireMask-EA with the official loop masks takes for the run ``ea`` (recorded guides).

    The loop and the vectorised decoders give the same cells, so the loop run evaluates exactly ``ea``'s
    genotypes. ``n_samples`` of them are drawn uniformly (:func:`sample_indices`) and each is decoded by
    :meth:`GreedyDecoder.decode_loop` and, interleaved, by :meth:`GreedyDecoder.decode` (thread clock, least of
    ``SPEEDUP_REPEATS`` runs each, as S1). The estimate (``seconds``, ``se``) is ``ea``'s measured CPU time x the
    sample's loop / vectorised time ratio (:func:`ratio_estimate`): a run's single-pass time and a least-of-repeats
    decode time differ on a loaded machine, and the ratio keeps both methods' times single-run measurements.
    ``direct_seconds`` (``direct_se``) is the plain n_evals x mean loop decode time (:func:`estimate_total`), a
    cross-check that runs low by the same least-of-repeats effect. Also: the sample's mean decode times and the
    fraction of sampled genotypes whose loop and vectorised cells agreed.
    """
    if ea.guides is None:
        raise ValueError("the WireMask-EA run must be made with run(record_guides=True)")
    if not ea.cpu_seconds > 0:
        raise ValueError(f"the WireMask-EA run has no CPU time (cpu_seconds={ea.cpu_seconds})")
    from icml25.core.timing import time_interleaved

    idx = sample_indices(len(ea.guides), n_samples, seed)
    t_loop, t_vec, same = [], [], 0
    for i in idx:
        g = ea.guides[i]
        out, secs = time_interleaved({"loop": lambda g=g: dec.decode_loop(g), "vec": lambda g=g: dec.decode(g)},
                                     repeats=SPEEDUP_REPEATS)
        t_loop.append(secs["loop"])
        t_vec.append(secs["vec"])
        same += bool(np.array_equal(out["loop"].cells, out["vec"].cells))
    factor, factor_se = ratio_estimate(t_loop, t_vec, len(ea.guides))
    direct, direct_se = estimate_total(t_loop, len(ea.guides))
    return {"seconds": ea.cpu_seconds * factor, "se": ea.cpu_seconds * factor_se, "samples": len(idx),
            "loop_over_vec": factor, "loop_decode_s": float(np.mean(t_loop)), "vec_decode_s": float(np.mean(t_vec)),
            "direct_seconds": direct, "direct_se": direct_se, "identical": same / len(idx)}


def loop_speedup(dec: GreedyDecoder, ea_runs: list[SearchResult], eg_runs: list[SearchResult], n_samples: int,
                 seeds: list[int]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Per seed, the loop-mask WireMask-EA time estimate of each recorded WireMask-EA run (:func:`loop_ea_seconds`,
    its recorded genotypes released afterwards), and the pooled speed-up over the EGPlace runs of the same seeds
    (:func:`speedup_ratio`). Returns ``(estimates, speed-up)``."""
    est = []
    for ea, s in zip(ea_runs, progress(seeds, "loop-mask WireMask-EA time (sampled)")):
        est.append(loop_ea_seconds(dec, ea, n_samples, [s, 50]))
        ea.guides = None  # the recorded genotypes are no longer needed
    sp = speedup_ratio([e["seconds"] for e in est], [e["se"] for e in est], [r.cpu_seconds for r in eg_runs])
    return est, sp

def _search(method: str, dec: GreedyDecoder, cfg: Config, seed: int, evals: int, guided: Any,
            record_guides: bool = False) -> SearchResult:
    """One search run; ``guided`` builds the guided optimiser (replaced by WireMask-EA in the stub)."""
    if method == "WireMask-EA":
        opt = WireMaskEA(dec, init_round=cfg.init_round, random_state=seed)
    else:
        opt = guided(dec, cfg, seed, method)
    return opt.run(budget_evals=evals, record_guides=record_guides)


def guided_egplace(dec: GreedyDecoder, cfg: Config, seed: int, method: str) -> EGPlace:
    """EGPlace (or one of its ablations, by ``method``) with the config's m, p_swap and init_round."""
    kwargs = {"EGPlace": {}, "EGPlace (no incremental)": {"incremental": False}, "EGPlace (m=1)": {"m": 1}}[method]
    return EGPlace(dec, **{"m": cfg.m, "p_swap": cfg.p_swap, "init_round": cfg.init_round, "random_state": seed,
                           **kwargs})


def guided_stub(dec: GreedyDecoder, cfg: Config, seed: int, method: str) -> WireMaskEA:
    """The stub: the guided search replaced by WireMask-EA's random swap (its naive baseline)."""
    return WireMaskEA(dec, init_round=cfg.init_round, random_state=seed)



def add_decoder_checks(rep: Report, cfg: Config, seed: int) -> tuple[Netlist, GreedyDecoder]:
    """Decoder equivalence, incremental decoding and mask speed (claims D1-D4, S1-S3); returns ibm01 and its decoder
    on the search grid."""
    eq = exp_decoder_equivalence(cfg, seed)
    incr = exp_incremental(cfg, seed)
    ibm = load_ibm01()
    mask = exp_mask_speed(ibm, cfg, seed)
    rep.add_table(f"decoder checks (synthetic, M={cfg.synth_macros}, G={cfg.synth_grid})",
                  [{**eq, "incremental_identical": incr}])
    rep.add_table(f"mask speed (ibm01, G={cfg.mask_grid}, median over {cfg.mask_macros} macros)", [mask])
    dec = GreedyDecoder(ibm, Canvas(cfg.search_grid, ibm.size))
    inc_speed = exp_incremental_speed(dec, cfg.n_incr, seed)
    rep.add_table(f"incremental decoding speed (ibm01, G={cfg.search_grid}, {cfg.n_incr} single-macro changes)",
                  [inc_speed])
    # fails if: the vectorised masks or the summed-area legality differ from WireMask's stamped loop masks
    rep.add_claim("D1", "the fast (vectorised, summed-area) decoder returns exactly the cells of the loop decoder",
                  None, eq["identical"], ">=", 1.0, kind="mechanism", note=f"{cfg.n_equiv} random genotypes")
    # fails if: the decoder's incremental HPWL bookkeeping (wire-mask minima) drifts from the true HPWL
    rep.add_claim("D2", "decoder HPWL (sum of wire-mask minima) equals the HPWL of the layout (relative error)",
                  None, eq["max_rel_err"], "<=", 1e-6, kind="mechanism")
    # fails if: the legality mask lets footprints overlap
    rep.add_claim("D3", "decoded layouts are overlap-free (total overlap area)", None, eq["overlap"], "<=", 0.0,
                  kind="mechanism")
    # fails if: the resumed decode restores the wrong occupancy or net boxes (spec §8 pitfall)
    rep.add_claim("D4", "incremental re-decoding from the first changed step equals a full re-decode",
                  None, incr, ">=", 1.0, kind="mechanism", note=f"{cfg.n_incr} random 1-3 macro guide mutations")
    # fails if: the fast masks are not faster (e.g. a Python loop over columns remains)
    rep.add_claim("S1", "fast mask computation is >= 4x faster than the loop masks (ibm01, half-placed layout)",
                  None, mask["speedup"], ">=", 4.0, kind="mechanism", unit="x", timing=True, reference_value=7.6,
                  reference_source="spec §6 calibration (3.2 ms vs 0.43 ms)")
    # fails if: the fast masks change which cells are optimal
    rep.add_claim("S2", "the fast masks have the same argmin sets as the loop masks", None,
                  mask["identical_argmins"], ">=", 1.0, kind="mechanism")

    # fails if: decode_from re-decodes the whole layout instead of resuming from the cached prefix
    rep.add_claim("S3", "resuming from the first changed step costs <= 0.75 of a full decode (single-macro changes)",
                  None, inc_speed["ratio"], "<=", 0.75, kind="mechanism", reference_value=0.5, timing=True,
                  reference_source="spec §2.5: about half a decode for a uniform first changed step")
    return ibm, dec


def run_ibm01(rep: Report, cfg: Config, seed: int, dec: GreedyDecoder,
              guided: Any) -> tuple[dict[str, list[SearchResult]], list[int], list[dict[str, Any]]]:
    """WireMask-EA and the guided search on ibm01 for every seed (same initial genotypes), with the runs' table."""
    runs: dict[str, list[SearchResult]] = {"WireMask-EA": [], "EGPlace": []}
    seeds = [seed + k for k in range(cfg.n_seeds)]
    for method, s in progress([(m, s) for s in seeds for m in runs], "ibm01 search runs"):
        # WireMask-EA's genotypes are kept for the loop-mask time estimate (F_speedup_ea)
        record = method == "WireMask-EA" and cfg.speedup_samples > 0
        runs[method].append(_search(method, dec, cfg, s, cfg.search_evals, guided, record_guides=record))
    rows = []
    for k, s in enumerate(seeds):
        ea, eg = runs["WireMask-EA"][k], runs["EGPlace"][k]
        rows.append({"seed": s, "init best (1e5)": ea.init_hpwl / 1e5, "WireMask-EA (1e5)": ea.hpwl / 1e5,
                     "EGPlace (1e5)": eg.hpwl / 1e5, "ratio": eg.hpwl / ea.hpwl, "EA s": ea.seconds,
                     "EGPlace s": eg.seconds, "analyses": eg.n_analyses})
    rep.add_table(f"ibm01 search (G={cfg.search_grid}, {cfg.search_evals} evaluations, {cfg.init_round} random inits)",
                  rows)
    return runs, seeds, rows


def add_search_claims(rep: Report, rows: list[dict[str, Any]]) -> None:
    """The quick search claims: guided mutation beats the swap (P1) and improves on its initial genotypes (P2)."""
    ratios = [r["ratio"] for r in rows]
    # fails if: the guided mutation is no better than a random swap (the stub: WireMask-EA in its place)
    rep.add_claim("P1", "guided mutation reaches lower HPWL than WireMask-EA's swap at an equal evaluation budget "
                  "(EGPlace / WireMask-EA, worst seed)", PAPER_RATIO_VS_EA, max(ratios), "<=", 0.97, kind="paper",
                  headline=True, threshold_reason="ibm01 with 160 evaluations, not ISPD2005 at 1k: a 3 % gain asked",
                  source="abstract: −10.8 % vs WireMask-EA (ISPD2005 mean, 1k evaluations)",
                  reference_value=0.934, reference_source="spec §6 prototype, ibm01 G=64, worst of 2 seeds",
                  aggregate="max", note="ours: ibm01 (the ISPD2005 netlists are not obtainable here)")
    improvement = max(r["EGPlace (1e5)"] / r["init best (1e5)"] for r in rows)
    # fails if: the search does not improve on its random initial genotypes
    rep.add_claim("P2", "the guided search ends <= 0.9 x the best of its random initial genotypes (worst seed)",
                  None, improvement, "<=", 0.9, kind="mechanism", aggregate="max")


def add_full_claims(rep: Report, runs: dict[str, list[SearchResult]], seeds: list[int],
                    rows: list[dict[str, Any]]) -> None:
    """The full-scale search claims: mean HPWL (F1), wins per seed (F2), time to WireMask-EA's quality (F3)."""
    mean_ea = float(np.mean([r.hpwl for r in runs["WireMask-EA"]]))
    mean_eg = float(np.mean([r.hpwl for r in runs["EGPlace"]]))
    wins = sum(r["ratio"] < 1 for r in rows)
    # fails if: guided mutation does not help on average at the paper-sized budget
    rep.add_claim("F1", "mean EGPlace HPWL <= 0.97 x mean WireMask-EA HPWL (ibm01, G=128, 1000 evaluations)",
                  PAPER_RATIO_VS_EA, mean_eg / mean_ea, "<=", 0.97, kind="paper", scale=Scale.FULL,
                  source="abstract: −10.8 % vs WireMask-EA", aggregate="max", headline=True,
                  threshold_reason="ibm01, not ISPD2005: a 3 % gain asked (the ISPD2005 number is claim ispd_hpwl_ea)")
    # fails if: the gain is carried by one lucky seed
    rep.add_claim("F2", "EGPlace beats WireMask-EA on at least 4 of 5 seeds (fraction of seeds)", None,
                  wins / len(rows), ">=", 0.8, kind="paper", scale=Scale.FULL, aggregate="min")
    t_target = [runs["EGPlace"][k].time_to(mean_ea) for k in range(len(seeds))]
    t_ea = float(np.mean([r.seconds for r in runs["WireMask-EA"]]))
    speed = float(np.mean(t_target)) / t_ea
    # fails if: EGPlace needs as long as WireMask-EA to reach WireMask-EA's final quality
    rep.add_claim("F3", "EGPlace reaches WireMask-EA's mean final HPWL in <= 0.5 x WireMask-EA's run time "
                  "(time-to-target ratio, both on the vectorised decoder; the abstract's 7.8x is F_speedup_ea)",
                  None, speed, "<=", 0.5, kind="paper", scale=Scale.FULL, source="spec §6 (time-to-target)",
                  aggregate="max", timing=True, note="inf when a seed never reaches the target")


_SPEEDUP_NEEDS = ("--scale full: speedup_samples > 0 genotypes of each WireMask-EA run timed with the official loop "
                  "masks (about 0.35 s CPU each on ibm01 at G=128, twice)")


def speedup_claim_kwargs(where: str, scale: Scale, pooled: str = "pooled over seeds") -> dict[str, Any]:
    """The abstract's 7.8x as the paper measures it (claims ``F_speedup_ea`` on ibm01, ``ispd_speedup_ea``)."""
    low = PAPER_SPEEDUP_VS_EA * (1 - SPEEDUP_TOLERANCE)
    return dict(statement=f"{where}: run time of WireMask-EA with the official loop masks (full re-decode per "
                f"evaluation) / EGPlace's run time, both to the same budget of evaluations (CPU time, {pooled}) "
                f"≥ the paper's 7.8x less {SPEEDUP_TOLERANCE:.0%}", paper_value=PAPER_SPEEDUP_VS_EA,
                source="abstract: 7.8x speed-up over WireMask-EA", comparison=">=", threshold=round(low, 3),
                kind="paper", scale=scale, unit="x", timing=True)


def add_paper_speedup(rep: Report, scale: Scale, cfg: Config, dec: GreedyDecoder, runs: dict[str, list[SearchResult]],
                      seeds: list[int]) -> None:
    """Claim ``F_speedup_ea``: the abstract's 7.8x as the paper measures it, on ibm01 at the run's budget.

    WireMask-EA with the loop masks evaluates the same genotypes as the vectorised run made here (same argmins), so
    its CPU time is estimated from ``cfg.speedup_samples`` of them per seed (:func:`loop_ea_seconds`) and divided
    by EGPlace's measured CPU time for its whole run (repositioning analyses included)."""
    kw = speedup_claim_kwargs(f"ibm01 (G={cfg.search_grid}, {cfg.search_evals} evaluations)", Scale.FULL)
    if cfg.speedup_samples <= 0:
        if scale.rank < Scale.FULL.rank:
            rep.add_unmeasured_claim("F_speedup_ea", needs=_SPEEDUP_NEEDS, **kw)
        else:
            rep.add_claim("F_speedup_ea", measured=float("nan"), note=f"not measured: speedup_samples = 0; "
                          f"{_SPEEDUP_NEEDS}", **kw)
        return
    est, sp = loop_speedup(dec, runs["WireMask-EA"], runs["EGPlace"], cfg.speedup_samples, seeds)
    rows = []
    for s, e, ea, eg in zip(seeds, est, runs["WireMask-EA"], runs["EGPlace"]):
        rows.append({"seed": s, "evaluations": ea.n_evals, "sampled": e["samples"],
                     "loop decode s": e["loop_decode_s"], "vectorised decode s": e["vec_decode_s"],
                     "loop / vectorised": e["loop_over_vec"],
                     "WireMask-EA vectorised s (measured)": ea.cpu_seconds,
                     "WireMask-EA loop s (estimate)": e["seconds"], "± se": e["se"],
                     "direct estimate s": e["direct_seconds"], "EGPlace s (measured)": eg.cpu_seconds,
                     "speed-up": e["seconds"] / eg.cpu_seconds, "loop = vectorised cells": e["identical"]})
    rep.add_table(f"the abstract's speed-up on ibm01: loop-mask WireMask-EA (its vectorised run's CPU time x the loop / "
                  f"vectorised decode time of {cfg.speedup_samples} sampled genotypes per seed) vs EGPlace, CPU seconds "
                  "to the same budget", rows)
    ident = min(e["identical"] for e in est)
    # fails if: EGPlace's search (guided mutation + incremental decoding + fast masks) is not several times faster
    # than the official WireMask-EA at the same budget; the stub (WireMask-EA's swap on the fast masks) gives ≈ 5x
    per_seed = ", ".join(f"{r:.2f}" for r in sp["per_seed"])
    rep.add_claim("F_speedup_ea", measured=sp["ratio"], aggregate="min",
                  note=(f"{len(seeds)} seeds x {cfg.search_evals} evaluations; WireMask-EA's loop time = its vectorised "
                        f"run's CPU time x the loop / vectorised decode time of {cfg.speedup_samples} of its "
                        f"genotypes per seed (least of {SPEEDUP_REPEATS} interleaved runs each): ratio ± 2 se of the "
                        f"estimate [{sp['low']:.2f}, {sp['high']:.2f}], per seed "
                        f"{per_seed}; loop and vectorised cells identical on {ident:.0%} of the sample"),
                  **kw)


def add_ablations_transfer(rep: Report, cfg: Config, seed: int, dec: GreedyDecoder, seeds: list[int],
                           guided: Any) -> None:
    """The ablations on ibm01 (no incremental decoding; m=1) and the synthetic transfer check (F5)."""
    abl_rows = _ablations(dec, cfg, seeds[: cfg.ablation_seeds], guided)
    if abl_rows:
        rep.add_table("ablations (ibm01)", abl_rows)
    tr_rows = _transfer(cfg, seed, guided)
    if tr_rows:
        rep.add_table("synthetic transfer (u=0.4)", tr_rows)
        # fails if: the guided mutation only helps on ibm01's particular structure
        rep.add_claim("F5", "the guided search beats WireMask-EA on synthetic netlists too (worst instance ratio)",
                      None, max(r["ratio"] for r in tr_rows), "<=", 0.97, kind="paper", scale=Scale.FULL,
                      aggregate="max")


def add_figures_notes(rep: Report, ibm: Netlist, runs: dict[str, list[SearchResult]]) -> None:
    """HPWL vs time, the best EGPlace layout, and the notes on ibm01 and the reconstructed operators."""
    rep.add_figure("hpwl_vs_time", _figure_curves(runs))
    rep.add_figure("placement", _figure_layout(ibm, runs["EGPlace"][0]))
    rep.notes.append("ibm01 (IBM-MS, 246 macros) replaces ISPD2005, whose netlists cannot be obtained here; the paper "
                     "column holds the abstract's ISPD2005 numbers for comparison of the effect's size.")
    rep.notes.append("EGPlace's operators are reconstructed from the abstract (spec §2.4-2.6); WireMask-EA follows "
                     "its official code. Evaluations count decodes; EGPlace's repositioning analyses are in the time.")


_ISPD_NEEDS = ("--scale paper: the ISPD2005 bookshelf netlists (adaptec1-4, bigblue1, bigblue3; not shipped, not "
               "downloadable here) in <ispd_dir>/<circuit>/<circuit>.aux (--set ispd_dir=<folder>)")
_EP_FORMAT = ("efficientplace_results: a .csv (header row) or .json (list of objects) file from your own run of the "
              "official EfficientPlace code (MIRALab-USTC/AI4EDA-EfficientPlace, ICML'24, RL policy inside MCTS on a "
              "GPU; not re-implemented here), one row per benchmark and seed with benchmark, hpwl, seconds (wall "
              "time), optionally seed, evaluations (see the README); --set efficientplace_results=<path>")
_EP_NEEDS = f"--scale paper (ISPD2005 netlists in ispd_dir) and {_EP_FORMAT}"


def load_efficientplace(cfg: Config) -> dict[str, dict[str, float]] | None:
    """The user's EfficientPlace results (``cfg.efficientplace_results``) averaged over seeds, checked against the
    circuits this run places before any search starts; None when the field is empty."""
    if not cfg.efficientplace_results:
        return None
    return load_efficientplace_results(cfg.efficientplace_results, benchmarks=tuple(cfg.ispd_circuits))


def compare_with_efficientplace(ours: dict[str, dict[str, float]], theirs: dict[str, dict[str, float]]
                                ) -> tuple[list[dict[str, Any]], float, float]:
    """Per-benchmark rows and the two abstract quantities over the benchmarks both have (in ``ours``' order):
    mean of 100 (1 − EGPlace HPWL / EfficientPlace HPWL) and mean of EfficientPlace seconds / EGPlace seconds.
    ``ours`` and ``theirs`` map a benchmark to its mean ``hpwl`` and mean wall ``seconds``."""
    rows = []
    for name in ours:
        if name not in theirs:
            continue
        eg, ep = ours[name], theirs[name]
        rows.append({"benchmark": name, "EfficientPlace (1e5)": ep["hpwl"] / 1e5, "EGPlace (1e5)": eg["hpwl"] / 1e5,
                     "reduction %": 100 * (1 - eg["hpwl"] / ep["hpwl"]), "EfficientPlace s": ep["seconds"],
                     "EGPlace s": eg["seconds"], "speed-up": ep["seconds"] / eg["seconds"],
                     "EfficientPlace runs": int(ep.get("runs", 1)),
                     "EfficientPlace evaluations": ep.get("evaluations", float("nan"))})
    if not rows:
        return rows, float("nan"), float("nan")
    return (rows, float(np.mean([r["reduction %"] for r in rows])), float(np.mean([r["speed-up"] for r in rows])))


def add_ispd_claims(rep: Report, scale: Scale, cfg: Config, seed: int, guided: Any,
                    efficientplace: dict[str, dict[str, float]] | None = None) -> None:
    """The abstract's ISPD2005 numbers: measured on the user's netlists when ``ispd_circuits`` is set, else not here;
    the EfficientPlace ones also need the user's results (``efficientplace``, else read from the config's file)."""
    hpwl = dict(id="ispd_hpwl_ea", statement="ISPD2005: mean per-circuit HPWL reduction of EGPlace vs WireMask-EA at "
                "1k evaluations ≥ the paper's 10.8 % − 3 points", paper_value=10.8,
                source="abstract; spec §3 table (mean of 8 circuits)", comparison=">=", threshold=10.8 - 3.0,
                kind="paper", scale=Scale.PAPER, unit="%", headline=True)
    speed = dict(id="ispd_speedup_ea", headline=True,
                 **speedup_claim_kwargs(f"ISPD2005 ({cfg.search_evals} evaluations)", Scale.PAPER,
                                        "pooled over seeds, mean over circuits"))
    # the quantity this claim measured before issue 50: how much sooner EGPlace reaches WireMask-EA's final quality
    ttt = dict(id="ispd_time_to_target_ea", statement="ISPD2005: WireMask-EA's run time / EGPlace's time to reach "
               "WireMask-EA's mean final HPWL, both on the same vectorised decoder (time-to-target ratio, wall "
               "clock, mean over circuits; not the abstract's quantity, which is ispd_speedup_ea)", paper_value=None,
               comparison=">=", threshold=PAPER_SPEEDUP_VS_EA / 2, kind="mechanism", scale=Scale.PAPER, unit="x",
               timing=True, threshold_reason="half the abstract's 7.8x, which was measured against the loop-mask "
               "WireMask-EA (S1: ≥ 4x slower masks)")
    rows: list[dict[str, Any]] = []
    if not cfg.ispd_circuits:
        for kw in (hpwl, speed, ttt):
            if scale is Scale.PAPER:
                rep.add_claim(measured=float("nan"), note=f"not measured: ispd_circuits is empty; {_ISPD_NEEDS}", **kw)
            else:
                rep.add_unmeasured_claim(needs=_ISPD_NEEDS, **kw)
    else:
        if efficientplace is None:
            efficientplace = load_efficientplace(cfg)  # before the searches: a bad file fails at once
        rows = _ispd_rows(cfg, seed, guided)
        rep.add_table(f"ISPD2005 ({cfg.search_evals} evaluations, {cfg.n_seeds} seeds, {cfg.init_round} inits)", rows)
        note = f"{len(rows)} circuits: {', '.join(cfg.ispd_circuits)}; the paper's mean also has bigblue2/4 subsets"
        rep.add_claim(measured=float(np.mean([r["reduction %"] for r in rows])), note=note, **hpwl)
        if cfg.speedup_samples > 0:
            rep.add_claim(measured=float(np.mean([r["speed-up (loop EA, budget)"] for r in rows])),
                          note=f"{note}; WireMask-EA's loop time = its vectorised run's CPU time x the loop / "
                          f"vectorised decode time of {cfg.speedup_samples} of its genotypes per seed (least of "
                          f"{SPEEDUP_REPEATS} interleaved runs each; ± 2 se per circuit in the table)", **speed)
        else:
            rep.add_claim(measured=float("nan"), note=f"not measured: speedup_samples = 0; {_SPEEDUP_NEEDS}", **speed)
        rep.add_claim(measured=float(np.mean([r["speed-up (time to target)"] for r in rows])), note=note, **ttt)
    add_efficientplace_claims(rep, scale, cfg, rows, efficientplace)


def _ispd_rows(cfg: Config, seed: int, guided: Any) -> list[dict[str, Any]]:
    """WireMask-EA and EGPlace on each of the user's ISPD2005 circuits, ``cfg.n_seeds`` seeds each (one row each)."""
    from .netlist import read_bookshelf

    rows = []
    for circuit in progress(cfg.ispd_circuits, "ISPD2005 circuits"):
        nl = read_bookshelf(ispd_aux(circuit, cfg.ispd_dir), macro_rule="terminals")
        dec = GreedyDecoder(nl, Canvas(ISPD_GRID[circuit], nl.size))
        seeds = [seed + k for k in range(cfg.n_seeds)]
        record = cfg.speedup_samples > 0
        ea = [_search("WireMask-EA", dec, cfg, s, cfg.search_evals, guided, record_guides=record) for s in seeds]
        eg = [_search("EGPlace", dec, cfg, s, cfg.search_evals, guided) for s in seeds]
        mean_ea = float(np.mean([r.hpwl for r in ea]))
        mean_eg = float(np.mean([r.hpwl for r in eg]))
        t_ea = float(np.mean([r.seconds for r in ea]))
        t_eg = float(np.mean([r.time_to(mean_ea) for r in eg]))
        row = {"circuit": circuit, "macros": nl.n_macros, "G": ISPD_GRID[circuit],
               "WireMask-EA (1e5)": mean_ea / 1e5, "EGPlace (1e5)": mean_eg / 1e5,
               "reduction %": 100 * (1 - mean_eg / mean_ea), "EA s": t_ea, "EGPlace s to EA's HPWL": t_eg,
               "speed-up (time to target)": t_ea / t_eg if t_eg > 0 else float("inf"),
               "EGPlace s": float(np.mean([r.seconds for r in eg]))}
        if record:
            est, sp = loop_speedup(dec, ea, eg, cfg.speedup_samples, seeds)
            row.update({"EA loop CPU s (estimate)": float(np.mean([e["seconds"] for e in est])),
                        "EGPlace CPU s": float(np.mean([r.cpu_seconds for r in eg])),
                        "speed-up (loop EA, budget)": sp["ratio"], "± 2 se": 2 * sp["se"]})
        rows.append(row)
    return rows


def add_efficientplace_claims(rep: Report, scale: Scale, cfg: Config, rows: list[dict[str, Any]],
                              efficientplace: dict[str, dict[str, float]] | None) -> None:
    """The abstract's −9.3 % and 2.8x against EfficientPlace: EGPlace's ISPD2005 ``rows`` (run here) against the
    user's EfficientPlace results; not measured without them."""
    ep = [dict(id="ispd_hpwl_efficientplace", statement="ISPD2005: mean per-circuit HPWL reduction of EGPlace (run "
               "here) vs EfficientPlace (the user's results file) ≥ the paper's 9.3 % − 3 points",
               paper_value=PAPER_REDUCTION_VS_EP, source="abstract; spec §3 table (mean of 17 circuits)",
               comparison=">=", threshold=PAPER_REDUCTION_VS_EP - 3.0, kind="paper", scale=Scale.PAPER, unit="%"),
          dict(id="ispd_speedup_efficientplace", statement="ISPD2005: EfficientPlace's wall time (the user's file) / "
               "EGPlace's wall time for its whole run here (mean over circuits)",
               paper_value=PAPER_SPEEDUP_VS_EP, source="abstract", comparison=">=", threshold=PAPER_SPEEDUP_VS_EP / 2,
               kind="paper", scale=Scale.PAPER, unit="x", timing=True,
               threshold_reason="half the paper's, as ispd_speedup_ea")]
    ours = {r["circuit"]: {"hpwl": 1e5 * r["EGPlace (1e5)"], "seconds": r["EGPlace s"]} for r in rows}
    table, reduction, speedup = compare_with_efficientplace(ours, efficientplace or {})
    if not table:
        why = ("no ISPD2005 circuit of this run is in efficientplace_results" if efficientplace else
               "efficientplace_results is empty" if cfg.ispd_circuits else "ispd_circuits is empty")
        for kw in ep:
            if scale is Scale.PAPER:
                rep.add_claim(measured=float("nan"), note=f"not measured: {why}; give {_EP_FORMAT}", **kw)
            else:
                rep.add_unmeasured_claim(needs=_EP_NEEDS, **kw)
        return
    rep.add_table("ISPD2005 vs EfficientPlace (the user's results)", table)
    evs = sorted({f"{r['EfficientPlace evaluations']:g}" for r in table if np.isfinite(r["EfficientPlace evaluations"])})
    note = (f"{len(table)} circuits: {', '.join(r['benchmark'] for r in table)}; EGPlace run here with "
            f"{cfg.search_evals} evaluations x {cfg.n_seeds} seeds (wall time of the whole run); EfficientPlace's "
            f"HPWL and wall time come from {cfg.efficientplace_results} (the user's run on their hardware"
            f"{', ' + '/'.join(evs) + ' evaluations' if evs else ''}); the paper's mean has 17 circuits")
    rep.add_claim(measured=reduction, note=note, **ep[0])
    rep.add_claim(measured=speedup, note=note, **ep[1])


def _ablations(dec: GreedyDecoder, cfg: Config, seeds: list[int], guided: Any) -> list[dict[str, Any]]:
    rows = []
    methods = ("EGPlace", "EGPlace (no incremental)", "EGPlace (m=1)")
    for s, method in progress([(s, m) for s in seeds for m in methods], "ablations"):
        r = _search(method, dec, cfg, s, cfg.ablation_evals, guided)
        rows.append({"seed": s, "method": method, "HPWL (1e5)": r.hpwl / 1e5, "seconds": r.seconds,
                     "s/eval": r.seconds / r.n_evals})
    return rows


def _transfer(cfg: Config, seed: int, guided: Any) -> list[dict[str, Any]]:
    rows = []
    for k in progress(range(cfg.transfer_instances), "synthetic transfer"):
        nl = synthetic_netlist(cfg.transfer_macros, 0.4, seed=1000 + seed + k)
        dec = GreedyDecoder(nl, Canvas(cfg.transfer_grid, nl.size))
        ea = _search("WireMask-EA", dec, cfg, seed + k, cfg.transfer_evals, guided)
        eg = _search("EGPlace", dec, cfg, seed + k, cfg.transfer_evals, guided)
        rows.append({"instance": nl.name, "WireMask-EA": ea.hpwl, "EGPlace": eg.hpwl, "ratio": eg.hpwl / ea.hpwl})
    return rows


def _figure_curves(runs: dict[str, list[SearchResult]]) -> Any:
    from icml25.core.plotting import new_figure

    fig, ax = new_figure()
    for (method, results), colour in zip(runs.items(), ("tab:grey", "tab:red")):
        for k, r in enumerate(results):
            t = [h[0] for h in r.history]
            ax.plot(t, [h[2] / 1e5 for h in r.history], color=colour, lw=1, label=method if k == 0 else None)
    ax.set_xlabel("wall time (s)")
    ax.set_ylabel("best HPWL (×1e5)")
    ax.set_title("ibm01: HPWL vs time (one line per seed)")
    ax.legend()
    return fig


def _figure_layout(nl: Netlist, res: SearchResult) -> Any:
    from matplotlib.patches import Rectangle

    from icml25.core.plotting import new_figure

    fig, ax = new_figure(width=5.0, height=5.0)
    x, y = res.layout.x, res.layout.y
    for i in range(nl.n_macros):
        ax.add_patch(Rectangle((x[i], y[i]), nl.w[i], nl.h[i], fc="tab:blue", ec="k", lw=0.3, alpha=0.6))
    ax.set_xlim(0, nl.size)
    ax.set_ylim(0, nl.size)
    ax.set_aspect("equal")
    ax.set_xlabel("x (layout units)")
    ax.set_ylabel("y (layout units)")
    ax.set_title(f"EGPlace on ibm01: HPWL {res.hpwl / 1e5:.3f}e5")
    return fig
