"""The abstract's 7.8x as the paper measures it, alone: claim F_speedup_ea on ibm01 without the rest of the full run.

For each seed: WireMask-EA (vectorised masks, genotypes recorded) and EGPlace to the same evaluation budget; the
loop-mask WireMask-EA's CPU time is estimated from ``--samples`` of WireMask-EA's genotypes re-decoded with the
official loop masks (``experiment.loop_ea_seconds``), and the claim is Σ estimated loop time / Σ EGPlace CPU time.
Optionally (``--full-loop``) the first seed's loop-mask WireMask-EA is also run in full, to check the estimate.

    python benchmarks/egplace/bench_speedup.py --seeds 1000 1001 --evals 1000
"""

from __future__ import annotations

import argparse
import os
import time

from icml25.core import Report, Scale
from icml25.egplace import Canvas, GreedyDecoder, WireMaskEA, load_ibm01
from icml25.egplace import experiment as ex
from icml25.egplace.reproduce import Config


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1000, 1001])
    ap.add_argument("--evals", type=int, default=Config.full().search_evals)
    ap.add_argument("--grid", type=int, default=Config.full().search_grid)
    ap.add_argument("--samples", type=int, default=Config.full().speedup_samples)
    ap.add_argument("--full-loop", action="store_true", help="also run the first seed's loop-mask WireMask-EA")
    args = ap.parse_args()
    cfg = Config(search_grid=args.grid, search_evals=args.evals, n_seeds=len(args.seeds),
                 speedup_samples=args.samples)
    print(f"load average before: {os.getloadavg()}")
    nl = load_ibm01()
    dec = GreedyDecoder(nl, Canvas(cfg.search_grid, nl.size))
    runs: dict = {"WireMask-EA": [], "EGPlace": []}
    for s in args.seeds:
        runs["WireMask-EA"].append(ex._search("WireMask-EA", dec, cfg, s, cfg.search_evals, ex.guided_egplace,
                                              record_guides=True))
        runs["EGPlace"].append(ex._search("EGPlace", dec, cfg, s, cfg.search_evals, ex.guided_egplace))
    check = None
    if args.full_loop:
        t = time.thread_time()
        lp = WireMaskEA(dec, init_round=cfg.init_round, random_state=args.seeds[0], masks="loop").run(
            budget_evals=cfg.search_evals)
        check = (time.thread_time() - t, lp.hpwl == runs["WireMask-EA"][0].hpwl)
    rep = Report(slug="egplace", title="bench", scale=Scale.FULL)
    ex.add_paper_speedup(rep, Scale.FULL, cfg, dec, runs, list(args.seeds))
    for name, rows in rep.tables.items():
        print(name)
        for r in rows:
            print("  " + ", ".join(f"{k}: {v:.4g}" if isinstance(v, float) else f"{k}: {v}" for k, v in r.items()))
    print("HPWL (1e5) WireMask-EA / EGPlace:",
          [(round(a.hpwl / 1e5, 3), round(b.hpwl / 1e5, 3)) for a, b in zip(runs["WireMask-EA"], runs["EGPlace"])])
    (c,) = rep.claims
    print(f"{c.id}: {c.measured:.3f} (threshold {c.threshold_text()}, held: {c.held}); {c.note}")
    if check is not None:
        print(f"full loop-mask WireMask-EA run, seed {args.seeds[0]}: {check[0]:.1f} CPU s, same final HPWL: {check[1]}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
