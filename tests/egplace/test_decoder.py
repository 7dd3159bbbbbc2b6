"""The greedy decoder against brute force, the loop reference, and its own incremental mode."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.egplace import Canvas, GreedyDecoder, hpwl, loop_decode, overlap_area, synthetic_netlist


@pytest.fixture(scope="module")
def small():
    nl = synthetic_netlist(10, 0.35, seed=4)
    return nl, Canvas(12, nl.size), GreedyDecoder(nl, Canvas(12, nl.size))


def test_every_step_picks_a_brute_force_best_cell(small) -> None:
    """At each step the chosen cell minimises the HPWL of the partial layout over all legal cells (brute force)."""
    nl, cv, dec = small
    lay = dec.decode(dec.random_guides(1))
    assert lay.feasible
    s = cv.cell
    for t, i in enumerate(dec.order):
        placed = list(dec.order[:t])
        best, chosen = np.inf, None
        for a in range(cv.grid - dec.fw[i] + 1):
            for b in range(cv.grid - dec.fh[i] + 1):
                overl = any(a < lay.cells[j, 0] + dec.fw[j] and lay.cells[j, 0] < a + dec.fw[i]
                            and b < lay.cells[j, 1] + dec.fh[j] and lay.cells[j, 1] < b + dec.fh[i] for j in placed)
                if overl:
                    continue
                h = _partial_hpwl(nl, lay.cells, placed + [i], i, (a, b), s)
                if (a, b) == tuple(lay.cells[i]):
                    chosen = h
                best = min(best, h)
        assert chosen == pytest.approx(best, rel=1e-9, abs=1e-9), f"step {t}: chose {chosen}, best {best}"


def _partial_hpwl(nl, cells, members, i, cell, s) -> float:
    pos = cells.astype(float) * s
    pos[i] = np.array(cell) * s
    total = 0.0
    for e in range(nl.n_nets):
        pins = [p for p in range(nl.net_ptr[e], nl.net_ptr[e + 1]) if nl.pin_macro[p] in members]
        if not pins:
            continue
        xs = [pos[nl.pin_macro[p], 0] + nl.w[nl.pin_macro[p]] / 2 + nl.pin_ox[p] for p in pins]
        ys = [pos[nl.pin_macro[p], 1] + nl.h[nl.pin_macro[p]] / 2 + nl.pin_oy[p] for p in pins]
        total += max(xs) - min(xs) + max(ys) - min(ys)
    return total


@pytest.mark.parametrize("seed", range(5))
def test_vectorised_decoder_equals_loop_decoder(seed: int) -> None:
    nl = synthetic_netlist(20, 0.4, seed=seed)
    cv = Canvas(24, nl.size)
    dec = GreedyDecoder(nl, cv)
    g = dec.random_guides(seed)
    lay = dec.decode(g)
    cells, h = loop_decode(nl, cv, g)
    np.testing.assert_array_equal(cells, lay.cells)
    assert lay.hpwl == pytest.approx(h, rel=1e-9)
    assert lay.hpwl == pytest.approx(hpwl(nl, lay.x, lay.y), rel=1e-9)
    assert overlap_area(nl, lay.x, lay.y) == 0.0


def test_guides_matter_through_tie_breaking(small) -> None:
    nl, cv, dec = small
    a, b = dec.decode(dec.random_guides(0)), dec.decode(dec.random_guides(1))
    assert not np.array_equal(a.cells, b.cells)
    # the first macro has no placed neighbour: every legal cell ties, so it lands on its guide when that fits
    i = dec.order[0]
    g = dec.random_guides(2)
    g[i] = (0, 0)
    assert tuple(dec.decode(g).cells[i]) == (0, 0)


@pytest.mark.parametrize("seed", range(4))
def test_incremental_decoding_equals_full(seed: int) -> None:
    nl = synthetic_netlist(25, 0.4, seed=seed)
    dec = GreedyDecoder(nl, Canvas(20, nl.size))
    base = dec.decode(dec.random_guides(seed))
    rng = np.random.default_rng(seed)
    for _ in range(10):
        g = base.guides.copy()
        g[rng.choice(25, size=2, replace=False)] = rng.integers(0, 20, size=(2, 2))
        a, b = dec.decode_from(base, g), dec.decode(g)
        np.testing.assert_array_equal(a.cells, b.cells)
        assert a.hpwl == pytest.approx(b.hpwl, rel=1e-12)
        base = a  # chains of resumed decodes stay exact


def test_reposition_gains_are_exact_single_moves(small) -> None:
    nl, cv, dec = small
    lay = dec.decode(dec.random_guides(3))
    gains, best = dec.reposition_gains(lay)
    assert np.all(gains >= 0)
    base = hpwl(nl, lay.x, lay.y)
    for i in np.flatnonzero(gains > 0):
        cells = lay.cells.copy()
        cells[i] = best[i]
        moved = hpwl(nl, cells[:, 0] * cv.cell, cells[:, 1] * cv.cell)
        assert base - moved == pytest.approx(gains[i], rel=1e-9)
        assert overlap_area(nl, cells[:, 0] * cv.cell, cells[:, 1] * cv.cell) == 0.0


def test_infeasible_and_oversized() -> None:
    nl = synthetic_netlist(30, 0.75, seed=0)
    dec = GreedyDecoder(nl, Canvas(6, nl.size))  # coarse grid: footprints round up and cannot all fit
    lay = dec.decode(dec.random_guides(0))
    assert not lay.feasible and lay.hpwl == float("inf")
    again = dec.decode_from(lay, dec.random_guides(1))
    assert again.hpwl == dec.decode(dec.random_guides(1)).hpwl
    with pytest.raises(ValueError, match="does not fit the canvas"):
        GreedyDecoder(nl, Canvas(8, nl.size / 10))
    with pytest.raises(ValueError, match="guides must be grid cells"):
        dec.decode(np.full((30, 2), 6))
