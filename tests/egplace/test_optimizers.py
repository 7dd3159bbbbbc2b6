"""Optimisers: budgets, elitism, determinism, and the equal-inits property the comparison relies on."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.egplace import Canvas, EGPlace, GreedyDecoder, WireMaskEA, WireMaskRS, synthetic_netlist


@pytest.fixture(scope="module")
def dec():
    nl = synthetic_netlist(20, 0.35, seed=2)
    return GreedyDecoder(nl, Canvas(16, nl.size))


@pytest.mark.parametrize("cls", [WireMaskRS, WireMaskEA, EGPlace])
def test_budget_elitism_and_determinism(dec, cls) -> None:
    a = cls(dec, init_round=4, random_state=0).run(budget_evals=30)
    b = cls(dec, init_round=4, random_state=0).run(budget_evals=30)
    assert a.n_evals == 30 and len(a.history) == 30
    best = [h[2] for h in a.history]
    assert all(x >= y for x, y in zip(best, best[1:])), "the best HPWL never increases"
    assert a.hpwl == best[-1] <= a.init_hpwl
    assert a.hpwl == b.hpwl and np.array_equal(a.layout.cells, b.layout.cells)


def test_same_seed_same_initial_genotypes(dec) -> None:
    ea = WireMaskEA(dec, init_round=5, random_state=3).run(budget_evals=5)
    eg = EGPlace(dec, init_round=5, random_state=3).run(budget_evals=5)
    assert ea.init_hpwl == eg.init_hpwl


def test_egplace_moves_high_gain_macros(dec) -> None:
    opt = EGPlace(dec, m=1, p_swap=0.0, selection="top", init_round=2, random_state=0)
    opt.run(budget_evals=2)
    gains, cells = dec.reposition_gains(opt.best)
    g = opt._mutate(opt.best)
    changed = np.flatnonzero(np.any(g != opt.best.guides, axis=1))
    assert list(changed) == [int(np.argmax(gains))] and np.array_equal(g[changed[0]], cells[changed[0]])


def test_budget_arguments(dec) -> None:
    with pytest.raises(ValueError, match="budget"):
        WireMaskEA(dec, random_state=0).run()
    r = WireMaskEA(dec, init_round=2, random_state=0).run(budget_seconds=0.05)
    assert r.seconds >= 0.05 and r.n_evals >= 1
    with pytest.raises(ValueError, match="selection"):
        EGPlace(dec, selection="best")
    with pytest.raises(TypeError, match="decoder"):
        EGPlace("not a decoder")
