"""Decodes per second: the vectorised decoder (fast masks) vs the WireMask-style loop decoder, same run.

Also the time of one macro's masks (median) on a half-placed ibm01 layout and of an incremental re-decode.
There is no pip-installable peer placer; the loop decoder follows WireMask-BBO's official implementation pattern
(Python loops over placed macros and over grid columns), which is what EGPlace's mask computation replaces.

    python benchmarks/egplace/bench_decoder.py
"""

from __future__ import annotations

import time

import numpy as np

from icml25.egplace import Canvas, GreedyDecoder, load_ibm01, loop_decode


def main() -> None:
    nl = load_ibm01()
    print(f"ibm01: {nl.n_macros} macros, {nl.n_nets} nets")
    print("| grid | vectorised decode (s) | loop decode (s) | speed-up | decodes/s (vectorised) | incremental / full |")
    print("|---|---|---|---|---|---|")
    for G in (32, 64, 128):
        cv = Canvas(G, nl.size)
        dec = GreedyDecoder(nl, cv)
        guides = [dec.random_guides(s) for s in range(3)]
        t = time.perf_counter()
        lays = [dec.decode(g) for g in guides]
        t_vec = (time.perf_counter() - t) / len(guides)
        t = time.perf_counter()
        cells, _ = loop_decode(nl, cv, guides[0])
        t_loop = time.perf_counter() - t
        assert np.array_equal(cells, lays[0].cells), "vectorised and loop decoders disagree"
        rng = np.random.default_rng(0)
        t_inc = t_full = 0.0
        for _ in range(10):
            g = lays[0].guides.copy()
            g[rng.integers(nl.n_macros)] = rng.integers(0, G, size=2)
            t = time.perf_counter()
            dec.decode_from(lays[0], g)
            t_inc += time.perf_counter() - t
            t = time.perf_counter()
            dec.decode(g)
            t_full += time.perf_counter() - t
        print(f"| {G} | {t_vec:.3f} | {t_loop:.3f} | {t_loop / t_vec:.1f}x | {1 / t_vec:.1f} | {t_inc / t_full:.2f} |")


if __name__ == "__main__":
    main()
